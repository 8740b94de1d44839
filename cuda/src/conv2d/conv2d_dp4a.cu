// conv2d's dp4a variant: u8 images and kernels whose taps are small integers (sharpen,
// Laplacian, Sobel, Scharr, emboss, users' integer kernels), 3x3 and 5x5, u8 or f32 output.
//
// The tiled f32 kernels spend several instructions per input byte before the first multiply
// (widening, shared stores and loads, rounding on the way out): u8 filters are bound by
// instruction issue there, not by memory. Here a thread reads the 4-byte words of its rows
// straight from global memory (L1 serves the neighbours' overlap) and transposes each 4x4
// block of bytes (4 rows x 4 elements, 8 byte permutes) into column words: rows r .. r + 3 of
// one element. One dp4a (4 byte products and their sum, in one instruction) then applies
// one kernel column to 4 rows. Output row m of a thread takes kernel column j from the column
// word of element e + (j - K/2) * channels with the taps of rows 0 .. K-1 placed at bytes
// m .. m + K - 1 (cPackedTaps), so every channel count is the same stencil.
//
// Exact: the products and sums are integers well inside 32 bits, and equal the reference's f32
// sums, which are exact for these integers too.
#include "conv2d_device.cuh"

#include "kernellab/image.hpp"

#include <algorithm>
#include <cmath>

namespace kl::gpu {
namespace {

constexpr int kDp4aSizes[] = {3, 5};

/// Output rows per thread for a K x K kernel: M + K - 1 input rows, a whole number of 4-row groups.
/// More rows than the fewest (2 and 4) give each thread independent dp4a chains to issue while
/// its loads wait, and read fewer input rows per output row (docs/performance.md, "dp4a rows").
template <int K> struct Dp4aShape {
    static constexpr int rowsPerThread = K == 3 ? 6 : 8;
    static constexpr int groups = (rowsPerThread + K - 1) / 4;
    static_assert((rowsPerThread + K - 1) % 4 == 0, "whole groups of 4 rows");
    static constexpr int packedTaps = rowsPerThread * groups * K;  ///< cPackedTaps words
    /// Whether output row m has any kernel row in group g (rows 4g .. 4g + 3).
    static constexpr bool touches(int m, int g) { return 4 * g + 3 >= m && 4 * g <= m + K - 1; }
};

/// [m][g][j]: byte b holds the tap of kernel row 4g + b - m, column j, as a signed byte (0 outside
/// the kernel), for the shape of the run's kernel size.
constexpr int kMaxPackedTaps = std::max(Dp4aShape<3>::packedTaps, Dp4aShape<5>::packedTaps);
__constant__ uint32_t cPackedTaps[kMaxPackedTaps];

/// rowWord where the word reaches past the row's ends or lies in a constant-border row: byte by
/// byte through elementAt (a border value is a byte where dp4a applies). Out of line: a few
/// threads per row take it, and inlined into every word of every shape it would multiply the code,
/// and its compile time, for nothing.
template <int CN>
__device__ __noinline__ uint32_t rowWordAtBorder(const uint8_t* row, int cols, BorderMode border, bool borderRow,
                                                 int flat, float borderValue)
{
    uint32_t word = 0;
    for (int q = 0; q < 4; ++q)
        word |= uint32_t(elementAt<CN>(row, cols, border, borderRow, flat + q, borderValue)) << (8 * q);
    return word;
}

/// The 4 bytes slice row k holds at elements flat .. flat + 3 (flat a multiple of 4).
template <int CN, typename Out>
__device__ uint32_t rowWord(const StripArgs<uint8_t, Out>& a, int k, bool borderRow, int flat, int flatCols)
{
    if (!borderRow && flat >= 0 && flat + 4 <= flatCols) return __ldg(reinterpret_cast<const uint32_t*>(a.inRow(k) + flat));
    return rowWordAtBorder<CN>(a.inRow(k), a.cols, a.border, borderRow, flat, a.borderValue);
}

/// Rows r0 .. r3 (4 bytes each) to columns: column q holds byte q of r0, r1, r2, r3.
__device__ void transpose4x4(const uint32_t (&r)[4], uint32_t* column)
{
    const uint32_t lo01 = __byte_perm(r[0], r[1], 0x5140), hi01 = __byte_perm(r[0], r[1], 0x7362);
    const uint32_t lo23 = __byte_perm(r[2], r[3], 0x5140), hi23 = __byte_perm(r[2], r[3], 0x7362);
    column[0] = __byte_perm(lo01, lo23, 0x5410);
    column[1] = __byte_perm(lo01, lo23, 0x7632);
    column[2] = __byte_perm(hi01, hi23, 0x5410);
    column[3] = __byte_perm(hi01, hi23, 0x7632);
}

/// sum + the 4 products of unsigned bytes `u` and signed bytes `s`.
__device__ int dp4a(uint32_t u, uint32_t s, int sum)
{
    int d;
    asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(u), "r"(s), "r"(sum));
    return d;
}

/// An integer below 2^22 in magnitude as f32, exactly, in two full-rate instructions.
__device__ float exactFloat(int v) { return __int_as_float(v + 0x4B400000) - 12582912.0f; }

/// An exact integer sum as a u8 result: saturateRound of an integer is the clamp.
__device__ uint32_t saturateByte(int v) { return uint32_t(min(max(v, 0), 255)); }

__device__ void storeQuad(uint8_t* p, const int (&s)[kPixelsPerThread])
{
    uint32_t word = 0;
#pragma unroll
    for (int n = 0; n < kPixelsPerThread; ++n) word |= saturateByte(s[n]) << (8 * n);
    *reinterpret_cast<uint32_t*>(p) = word;
}
__device__ void storeQuad(float* p, const int (&s)[kPixelsPerThread])
{
    *reinterpret_cast<float4*>(p) = make_float4(exactFloat(s[0]), exactFloat(s[1]), exactFloat(s[2]), exactFloat(s[3]));
}
__device__ void storeOne(uint8_t* p, int s) { *p = uint8_t(saturateByte(s)); }
__device__ void storeOne(float* p, int s) { *p = exactFloat(s); }

/// Threads own 4 adjacent interleaved elements in M adjacent rows; blocks cover 128 elements by
/// kBlockY * M rows and stride down the strip.
template <typename Out, int CN, int K>
__global__ void __launch_bounds__(kBlockX* kBlockY) conv2dDp4a(StripArgs<uint8_t, Out> a)
{
    using S = Dp4aShape<K>;
    constexpr int M = S::rowsPerThread, G = S::groups, radius = K / 2;
    constexpr int pad = roundUp4(radius * CN), words = (kPixelsPerThread + 2 * pad) / 4;
    const int flatCols = a.cols * CN, sliceRows = a.rows + K - 1;
    const int e = blockIdx.x * kTileCols + threadIdx.x * kPixelsPerThread;
    if (e >= flatCols) return;
    for (int y = (blockIdx.y * kBlockY + threadIdx.y) * M; y < a.rows; y += gridDim.y * kBlockY * M) {
        // rows[g][w][b]: word w (elements e - pad + 4w ..) of row y + 4g + b.
        uint32_t rows[G][words][4];
        // Inside the row, the slice and the image: straight loads at fixed offsets. Else word by word.
        const bool interior = e >= pad && e + kPixelsPerThread + pad <= flatCols && y + 4 * G <= sliceRows &&
                              (a.border != BorderMode::Constant || (a.imageRow(y) && a.imageRow(y + 4 * G - 1)));
        if (interior) {
            const uint8_t* first = a.inRow(y) + (e - pad);
#pragma unroll
            for (int g = 0; g < G; ++g)
#pragma unroll
                for (int b = 0; b < 4; ++b) {
                    const uint32_t* row = reinterpret_cast<const uint32_t*>(first + size_t(4 * g + b) * a.inPitch);
#pragma unroll
                    for (int w = 0; w < words; ++w) rows[g][w][b] = __ldg(row + w);
                }
        } else {
#pragma unroll
            for (int g = 0; g < G; ++g)
#pragma unroll
                for (int b = 0; b < 4; ++b) {
                    const int k = y + 4 * g + b;
                    // Rows past the slice feed only outputs past the strip, which are not stored.
                    const bool inside = k < sliceRows, borderRow = inside && a.borderRow(k);
#pragma unroll
                    for (int w = 0; w < words; ++w)
                        rows[g][w][b] = inside ? rowWord<CN>(a, k, borderRow, e - pad + 4 * w, flatCols) : 0u;
                }
        }
        // column[g][c]: rows y + 4g .. y + 4g + 3 of element e - pad + c.
        uint32_t column[G][4 * words];
#pragma unroll
        for (int g = 0; g < G; ++g)
#pragma unroll
            for (int w = 0; w < words; ++w) transpose4x4(rows[g][w], &column[g][4 * w]);
#pragma unroll
        for (int m = 0; m < M; ++m) {
            if (y + m >= a.rows) break;
            int sum[kPixelsPerThread] = {};
#pragma unroll
            for (int n = 0; n < kPixelsPerThread; ++n)
#pragma unroll
                for (int g = 0; g < G; ++g)
                    if (S::touches(m, g))
#pragma unroll
                        for (int j = 0; j < K; ++j)
                            sum[n] = dp4a(column[g][pad - radius * CN + n + j * CN], cPackedTaps[(m * G + g) * K + j],
                                          sum[n]);
            Out* out = a.outRow(y + m) + e;
            if (e + kPixelsPerThread <= flatCols) {
                storeQuad(out, sum);
            } else {
#pragma unroll
                for (int n = 0; n < kPixelsPerThread; ++n)
                    if (e + n < flatCols) storeOne(out + n, sum[n]);
            }
        }
    }
}

/// Calls f(std::integral_constant<int, K>{}) for K in kDp4aSizes.
template <typename F> void withDp4aSize(int k, F&& f)
{
    if (k == 3) f(std::integral_constant<int, 3>{});
    else f(std::integral_constant<int, 5>{});
}

bool smallIntegerTaps(const cv::Mat& kernel)
{
    return std::all_of(kernel.begin<float>(), kernel.end<float>(),
                       [](float t) { return t == std::nearbyint(t) && t >= -128 && t <= 127; });
}

std::string whyNotDp4a(const Conv2dProblem& p)
{
    const bool size = p.kRows == p.kCols && std::find(std::begin(kDp4aSizes), std::end(kDp4aSizes), p.kRows) != std::end(kDp4aSizes);
    const bool taps = smallIntegerTaps(p.kernel);
    const double value = p.spec.borderValue;
    const bool border = p.spec.border != BorderMode::Constant || (value == std::nearbyint(value) && value >= 0 && value <= 255);
    if (p.input.depth() == CV_8U && size && taps && border) return {};
    return "needs an 8-bit image, a 3x3 or 5x5 kernel of integer taps from -128 to 127 and, for the constant border, "
           "a border value that is an integer from 0 to 255; this is " +
           describeImage(p.input) + ", a " + p.kernelSize() + " kernel" + (taps ? "" : " with other taps") +
           (border ? "" : ", border value " + std::to_string(value));
}

void prepareDp4a(const Conv2dProblem& problem, Conv2dRun&, BufferCache&, cudaStream_t stream)
{
    std::vector<uint32_t> packed;
    withDp4aSize(problem.kRows, [&](auto k) {
        constexpr int K = decltype(k)::value;
        using S = Dp4aShape<K>;
        for (int m = 0; m < S::rowsPerThread; ++m)
            for (int g = 0; g < S::groups; ++g)
                for (int j = 0; j < K; ++j) {
                    uint32_t word = 0;
                    for (int b = 0; b < 4; ++b) {
                        const int i = 4 * g + b - m;
                        if (i >= 0 && i < K) word |= uint32_t(uint8_t(int8_t(problem.kernel.at<float>(i, j)))) << (8 * b);
                    }
                    packed.push_back(word);
                }
    });
    copyToSymbol(cPackedTaps, packed, stream);
    KL_CUDA_TRY(cudaStreamSynchronize(stream));  // `packed` is pageable and about to go
}

void computeDp4a(const Conv2dRun& run, int chunk, cudaStream_t stream)
{
    const auto launch = [&](auto out) {
        using Out = decltype(out);
        const StripArgs<uint8_t, Out> a = stripArgs<uint8_t, Out>(run, chunk);
        withChannels(run.channels, [&](auto cn) {
            withDp4aSize(run.kRows, [&](auto k) {
                constexpr int K = decltype(k)::value;
                conv2dDp4a<Out, decltype(cn)::value, K>
                    <<<gridFor(a.cols * decltype(cn)::value, a.rows, kTileCols, kBlockY * Dp4aShape<K>::rowsPerThread),
                       dim3(kBlockX, kBlockY), 0, stream>>>(a);
            });
        });
    };
    if (run.outDepth == CV_32F) launch(float{});
    else launch(uint8_t{});
    KL_CHECK_LAUNCH();
}

} // namespace

Conv2dVariant dp4aConv2d()
{
    return {"dp4a",
            "u8 images, 3x3 and 5x5 kernels of small integer taps: 4 rows per dp4a instruction on byte columns "
            "transposed in registers, exact integer sums",
            whyNotDp4a,
            {prepareDp4a, computeDp4a, true}};
}

} // namespace kl::gpu
