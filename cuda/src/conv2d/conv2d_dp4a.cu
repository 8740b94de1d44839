// conv2d's dp4a and dp2a variants: u8 (dp4a) and u16 (dp2a) images and kernels whose taps are
// small integers (sharpen, Laplacian, Sobel, Scharr, emboss, users' integer kernels) or such
// integers times one factor (box filters), 3x3 and 5x5, integer or f32 output.
//
// The tiled f32 kernels spend several instructions per input element before the first multiply
// (widening, shared stores and loads, rounding on the way out): integer filters are bound by
// instruction issue there, not by memory. Here a thread reads the 32-bit words of its rows
// straight from global memory (L1 serves the neighbours' overlap) and transposes each block of
// L rows x L elements (L = 4 bytes or 2 halves a word) into column words: rows r .. r + L - 1 of
// one element. One dp4a (4 byte products and their sum) or dp2a (2 half-by-byte products) then
// applies one kernel column to L rows. Output row m of a thread takes kernel column j from the
// column word of element e + (j - K/2) * channels with the taps of rows 0 .. K-1 placed at bytes
// m .. m + K - 1 (cPackedTaps), so every channel count is the same stencil.
//
// Exact: the products and sums are integers well inside 32 bits, and equal the reference's f32
// sums, which are exact for these integers too (below 2^22: see IntegerLanes::maxAbsTapSum). With
// a common factor the exact sum is scaled and rounded once, which the reference's f32 sum of
// scaled products differs from only within its tie band (conv2d.hpp); for a box, whose results are
// multiples of 1/K^2, never near a tie.
#include "conv2d_device.cuh"

#include "kernellab/image.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace kl::gpu {
namespace {

constexpr int kDotSizes[] = {3, 5};

/// What the two variants differ in: the element type and how many of them share a 32-bit word,
/// which is also how many rows one column word (and one instruction) holds.
template <typename T> struct IntegerLanes;
template <> struct IntegerLanes<uint8_t> {
    static constexpr int lanes = 4;
    /// sum + the 4 products of unsigned bytes `u` and signed bytes `s`.
    __device__ static int dot(uint32_t u, uint32_t s, int sum)
    {
        int d;
        asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(u), "r"(s), "r"(sum));
        return d;
    }
    /// Rows r0 .. r3 (4 bytes each) to columns: column q holds byte q of r0, r1, r2, r3.
    __device__ static void transpose(const uint32_t (&r)[4], uint32_t* column)
    {
        const uint32_t lo01 = __byte_perm(r[0], r[1], 0x5140), hi01 = __byte_perm(r[0], r[1], 0x7362);
        const uint32_t lo23 = __byte_perm(r[2], r[3], 0x5140), hi23 = __byte_perm(r[2], r[3], 0x7362);
        column[0] = __byte_perm(lo01, lo23, 0x5410);
        column[1] = __byte_perm(lo01, lo23, 0x7632);
        column[2] = __byte_perm(hi01, hi23, 0x5410);
        column[3] = __byte_perm(hi01, hi23, 0x7632);
    }
    /// 255 * 25 taps of at most 128 stays below 2^22 whatever the taps.
    static constexpr int maxAbsTapSum = 25 * 128;
};
template <> struct IntegerLanes<uint16_t> {
    static constexpr int lanes = 2;
    /// sum + the 2 products of the unsigned halves of `u` and the signed bytes 0 and 1 of `s`.
    __device__ static int dot(uint32_t u, uint32_t s, int sum)
    {
        int d;
        asm("dp2a.lo.u32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(u), "r"(s), "r"(sum));
        return d;
    }
    /// Rows r0, r1 (2 halves each) to columns: column q holds half q of r0 and of r1.
    __device__ static void transpose(const uint32_t (&r)[2], uint32_t* column)
    {
        column[0] = __byte_perm(r[0], r[1], 0x5410);
        column[1] = __byte_perm(r[0], r[1], 0x7632);
    }
    /// 65535 * 64 < 2^22: every partial sum, here and in the reference's f32, is an exact integer.
    static constexpr int maxAbsTapSum = 64;
};

/// Output rows per thread for a K x K kernel: M + K - 1 input rows, a whole number of L-row groups.
/// More rows than the fewest give each thread independent dot chains to issue while its loads
/// wait, and read fewer input rows per output row (docs/performance.md, "dp4a rows"); u16 5x5
/// takes 4, as its column words per row are twice u8's.
template <typename T, int K> struct DotShape {
    static constexpr int lanes = IntegerLanes<T>::lanes;
    static constexpr int rowsPerThread = K == 3 ? 6 : lanes == 4 ? 8 : 4;
    static constexpr int groups = (rowsPerThread + K - 1) / lanes;
    static_assert((rowsPerThread + K - 1) % lanes == 0, "whole groups of L rows");
    static constexpr int packedTaps = rowsPerThread * groups * K;  ///< cPackedTaps words
    /// Whether output row m has any kernel row in group g (rows Lg .. Lg + L - 1).
    static constexpr bool touches(int m, int g) { return lanes * g + lanes - 1 >= m && lanes * g <= m + K - 1; }
};

/// Elements a thread owns in each of its rows (E). 8 halves the share of halo words a thread reads
/// beside its own and measured 10-20% faster for integer outputs on several channels and for u8
/// 3x3; 4 stays where 8 measured slower or no faster: f32 outputs of u8 (1.5x slower), one channel
/// of u16, 5x5 on u8 x1 and on u16 x4 (docs/performance.md, "Eight elements a thread").
template <typename T, typename Out, int CN, int K> constexpr int dotElements()
{
    constexpr bool u16 = sizeof(T) == 2;
    if (K == 5 && (u16 ? CN == 4 : CN == 1)) return 4;
    if (std::is_same_v<Out, float>) return u16 && CN > 1 ? 8 : 4;
    return u16 && CN == 1 ? 4 : 8;
}

/// Whether a thread reads the E elements it owns in each row as one vector (E * sizeof(T) bytes,
/// aligned to that), the halo beside them word by word, instead of every word alone. Integer
/// outputs gain from it; f32 outputs measured no faster on u8 and slower on u16 with several
/// channels, so they keep word loads (docs/performance.md, "dp4a: packed results and vector loads").
template <typename Out> constexpr bool kDotVectorLoads = !std::is_same_v<Out, float>;

/// [m][g][j]: byte b < L holds the tap of kernel row Lg + b - m, column j, as a signed byte (0
/// outside the kernel), for the shape of the run's element type and kernel size.
constexpr int kMaxPackedTaps =
    std::max({DotShape<uint8_t, 3>::packedTaps, DotShape<uint8_t, 5>::packedTaps, DotShape<uint16_t, 3>::packedTaps,
              DotShape<uint16_t, 5>::packedTaps});
__constant__ uint32_t cPackedTaps[kMaxPackedTaps];

/// rowWord where the word reaches past the row's ends or lies in a constant-border row: element
/// by element through elementAt (a border value is an element where the variants apply). A word
/// `reach` (radius * CN) elements or more past the row's end feeds only outputs past it, which are
/// not stored: 0 (in a thread past the last whole block, most of its words). Out of line: a few
/// threads per row take it, and inlined into every word of every shape it would multiply the code,
/// and its compile time, for nothing.
template <int CN, int reach, typename T>
__device__ __noinline__ uint32_t rowWordAtBorder(const T* row, int cols, BorderMode border, bool borderRow, int flat,
                                                 float borderValue)
{
    if (flat >= cols * CN + reach) return 0;
    uint32_t word = 0;
    for (int q = 0; q < IntegerLanes<T>::lanes; ++q)
        word |= uint32_t(elementAt<CN>(row, cols, border, borderRow, flat + q, borderValue)) << (8 * sizeof(T) * q);
    return word;
}

/// The word slice row k holds at elements flat .. flat + L - 1 (flat a multiple of L), for a
/// kernel `reach` elements wide on either side (rowWordAtBorder).
template <int CN, int reach, typename T, typename Out>
__device__ uint32_t rowWord(const StripArgs<T, Out>& a, int k, bool borderRow, int flat, int flatCols)
{
    if (!borderRow && flat >= 0 && flat + IntegerLanes<T>::lanes <= flatCols)
        return __ldg(reinterpret_cast<const uint32_t*>(a.inRow(k) + flat));
    return rowWordAtBorder<CN, reach>(a.inRow(k), a.cols, a.border, borderRow, flat, a.borderValue);
}

/// An integer below 2^22 in magnitude as f32, exactly, in two full-rate instructions.
__device__ float exactFloat(int v) { return __int_as_float(v + 0x4B400000) - 12582912.0f; }

/// A thread's E integer sums as its E outputs, packed into the output's 32-bit words in memory
/// order. Integer taps (Scaled false): exact, clamped for integer outputs (saturateRound of an
/// integer) or the integer itself as f32. Integer taps times a common factor: the exact sum times
/// the factor, rounded once.
template <bool Scaled, typename Out, int E>
__device__ void outputWords(const int (&sum)[E], float scale, uint32_t (&word)[E * sizeof(Out) / 4])
{
    if constexpr (std::is_same_v<Out, float>) {
#pragma unroll
        for (int n = 0; n < E; ++n) word[n] = __float_as_uint(Scaled ? exactFloat(sum[n]) * scale : exactFloat(sum[n]));
    } else if constexpr (Scaled) {
        const auto scaled = [&](int n) { return exactFloat(sum[n]) * scale; };
#pragma unroll
        for (int w = 0; w < E * int(sizeof(Out)) / 4; ++w) {
            if constexpr (sizeof(Out) == 1)
                word[w] = roundedBytes(scaled(4 * w), scaled(4 * w + 1), scaled(4 * w + 2), scaled(4 * w + 3));
            else
                word[w] = roundedHalves(scaled(2 * w), scaled(2 * w + 1));
        }
    } else if constexpr (sizeof(Out) == 1) {
        // two instructions for four outputs, where a clamp took two each and the packing about
        // three more
#pragma unroll
        for (int w = 0; w < E / 4; ++w)
            word[w] = kl::detail::packSaturatedWord(sum[4 * w], sum[4 * w + 1], sum[4 * w + 2], sum[4 * w + 3]);
    } else {
#pragma unroll
        for (int w = 0; w < E / 2; ++w)
            asm("cvt.pack.sat.u16.s32 %0, %1, %2;" : "=r"(word[w]) : "r"(sum[2 * w + 1]), "r"(sum[2 * w]));
    }
}

/// Output element n of packed words.
template <typename Out, int W> __device__ Out unpacked(const uint32_t (&word)[W], int n)
{
    if constexpr (std::is_same_v<Out, float>) {
        return __uint_as_float(word[n]);
    } else {
        constexpr int perWord = 4 / sizeof(Out);
        return Out(word[n / perWord] >> (8 * sizeof(Out) * (n % perWord)));
    }
}

/// A thread's output words to an address aligned to their size (or to 16 bytes), in the widest
/// stores.
template <typename Out, int W> __device__ void storeWords(Out* p, const uint32_t (&word)[W])
{
    if constexpr (W % 4 == 0) {
#pragma unroll
        for (int q = 0; q < W / 4; ++q)
            reinterpret_cast<uint4*>(p)[q] = {word[4 * q], word[4 * q + 1], word[4 * q + 2], word[4 * q + 3]};
    } else if constexpr (W == 2) {
        *reinterpret_cast<uint2*>(p) = {word[0], word[1]};
    } else {
        static_assert(W == 1, "4, 8 or a multiple of 16 bytes");
        *reinterpret_cast<uint32_t*>(p) = word[0];
    }
}

/// N consecutive words from a 4N-byte-aligned address, in one load.
template <int N> __device__ void loadWords(const uint32_t* p, uint32_t (&word)[N])
{
    if constexpr (N == 4) {
        const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
        word[0] = v.x, word[1] = v.y, word[2] = v.z, word[3] = v.w;
    } else if constexpr (N == 2) {
        const uint2 v = __ldg(reinterpret_cast<const uint2*>(p));
        word[0] = v.x, word[1] = v.y;
    } else {
        static_assert(N == 1, "1, 2 or 4 words");
        word[0] = __ldg(p);
    }
}

/// Threads own E adjacent interleaved elements in M adjacent rows; blocks cover 32 E elements by
/// kBlockY * M rows and stride down the strip.
template <typename T, typename Out, int CN, int K, bool Scaled, int E>
__global__ void __launch_bounds__(kBlockX* kBlockY) conv2dDot(StripArgs<T, Out> a, float scale)
{
    using S = DotShape<T, K>;
    using Lanes = IntegerLanes<T>;
    constexpr int L = S::lanes, M = S::rowsPerThread, G = S::groups, radius = K / 2;
    constexpr int pad = (radius * CN + L - 1) / L * L, words = (E + 2 * pad) / L;
    const int flatCols = a.cols * CN, sliceRows = a.rows + K - 1;
    const int e = (blockIdx.x * kBlockX + threadIdx.x) * E;
    if (e >= flatCols) return;
    for (int y = (blockIdx.y * kBlockY + threadIdx.y) * M; y < a.rows; y += gridDim.y * kBlockY * M) {
        // rows[g][w][b]: word w (elements e - pad + Lw ..) of row y + Lg + b.
        uint32_t rows[G][words][L];
        // Inside the row, the slice and the image: straight loads at fixed offsets. Else word by word.
        const bool interior = e >= pad && e + E + pad <= flatCols && y + L * G <= sliceRows &&
                              (a.border != BorderMode::Constant || (a.imageRow(y) && a.imageRow(y + L * G - 1)));
        if (interior) {
            const T* first = a.inRow(y) + (e - pad);
#pragma unroll
            for (int g = 0; g < G; ++g)
#pragma unroll
                for (int b = 0; b < L; ++b) {
                    const uint32_t* row = reinterpret_cast<const uint32_t*>(first + size_t(L * g + b) * a.inPitch);
                    if constexpr (kDotVectorLoads<Out>) {
                        uint32_t own[E / L];
                        loadWords(row + pad / L, own);
#pragma unroll
                        for (int w = 0; w < words; ++w)
                            rows[g][w][b] = w >= pad / L && w < (pad + E) / L ? own[w - pad / L] : __ldg(row + w);
                    } else {
#pragma unroll
                        for (int w = 0; w < words; ++w) rows[g][w][b] = __ldg(row + w);
                    }
                }
        } else {
#pragma unroll
            for (int g = 0; g < G; ++g)
#pragma unroll
                for (int b = 0; b < L; ++b) {
                    const int k = y + L * g + b;
                    // Rows past the slice feed only outputs past the strip, which are not stored.
                    const bool inside = k < sliceRows, borderRow = inside && a.borderRow(k);
#pragma unroll
                    for (int w = 0; w < words; ++w)
                        rows[g][w][b] = inside ? rowWord<CN, radius * CN>(a, k, borderRow, e - pad + L * w, flatCols) : 0u;
                }
        }
        // column[g][c]: rows y + Lg .. y + Lg + L - 1 of element e - pad + c.
        uint32_t column[G][L * words];
#pragma unroll
        for (int g = 0; g < G; ++g)
#pragma unroll
            for (int w = 0; w < words; ++w) Lanes::transpose(rows[g][w], &column[g][L * w]);
#pragma unroll
        for (int m = 0; m < M; ++m) {
            if (y + m >= a.rows) break;
            int sum[E] = {};
#pragma unroll
            for (int n = 0; n < E; ++n)
#pragma unroll
                for (int g = 0; g < G; ++g)
                    if (S::touches(m, g))
#pragma unroll
                        for (int j = 0; j < K; ++j)
                            sum[n] = Lanes::dot(column[g][pad - radius * CN + n + j * CN],
                                                cPackedTaps[(m * G + g) * K + j], sum[n]);
            uint32_t word[E * sizeof(Out) / 4];
            outputWords<Scaled, Out>(sum, scale, word);
            Out* out = a.outRow(y + m) + e;
            if (e + E <= flatCols) {
                storeWords(out, word);
            } else {
#pragma unroll
                for (int n = 0; n < E; ++n)
                    if (e + n < flatCols) out[n] = unpacked<Out>(word, n);
            }
        }
    }
}

/// Calls f(std::integral_constant<int, K>{}) for K in kDotSizes.
template <typename F> void withDotSize(int k, F&& f)
{
    if (k == 3) f(std::integral_constant<int, 3>{});
    else f(std::integral_constant<int, 5>{});
}

/// The kernel as scale * taps, the taps integers from -128 to 127 whose magnitudes sum to at most
/// maxAbsTapSum, scale the first of integerTapFactors that gives such taps. Empty where none does.
std::optional<float> byteTapScale(const cv::Mat& kernel, int maxAbsTapSum)
{
    for (float scale : integerTapFactors(kernel)) {
        double absTapSum = 0;
        const bool bytes = std::all_of(kernel.begin<float>(), kernel.end<float>(), [&](float t) {
            const float q = t / scale;
            absTapSum += std::fabs(q);
            return q >= -128 && q <= 127;
        });
        if (bytes && absTapSum <= maxAbsTapSum) return scale;
    }
    return std::nullopt;
}

template <typename T> std::string whyNotDot(const Conv2dProblem& p)
{
    constexpr double maxValue = std::numeric_limits<T>::max();
    constexpr int maxAbsTapSum = IntegerLanes<T>::maxAbsTapSum;
    const bool size = p.kRows == p.kCols && std::find(std::begin(kDotSizes), std::end(kDotSizes), p.kRows) != std::end(kDotSizes);
    const bool taps = byteTapScale(p.kernel, maxAbsTapSum).has_value();
    const double value = p.spec.borderValue;
    const bool border = p.spec.border != BorderMode::Constant || (value == std::nearbyint(value) && value >= 0 && value <= maxValue);
    if (p.input.depth() == cv::traits::Depth<T>::value && size && taps && border) return {};
    const std::string sumLimit = sizeof(T) == 1 ? "" : " whose magnitudes sum to at most " + std::to_string(maxAbsTapSum);
    return std::string("needs ") + (sizeof(T) == 1 ? "an 8-bit" : "a 16-bit") +
           " image, a 3x3 or 5x5 kernel of integer taps from -128 to 127" + sumLimit +
           " (or such taps times one common factor, as a box) and, for the constant border, a border value that is an "
           "integer from 0 to " + std::to_string(int(maxValue)) + "; this is " + describeImage(p.input) + ", a " +
           p.kernelSize() + " kernel" + (taps ? "" : " with other taps") + (border ? "" : ", border value " + std::to_string(value));
}

template <typename T> void prepareDot(const Conv2dProblem& problem, Conv2dRun& run, BufferCache&, cudaStream_t stream)
{
    run.tapScale = *byteTapScale(problem.kernel, IntegerLanes<T>::maxAbsTapSum);
    std::vector<uint32_t> packed;
    withDotSize(problem.kRows, [&](auto k) {
        constexpr int K = decltype(k)::value;
        using S = DotShape<T, K>;
        for (int m = 0; m < S::rowsPerThread; ++m)
            for (int g = 0; g < S::groups; ++g)
                for (int j = 0; j < K; ++j) {
                    uint32_t word = 0;
                    for (int b = 0; b < S::lanes; ++b) {
                        const int i = S::lanes * g + b - m;
                        if (i >= 0 && i < K) {
                            const int tap = int(std::nearbyint(problem.kernel.at<float>(i, j) / run.tapScale));
                            word |= uint32_t(uint8_t(int8_t(tap))) << (8 * b);
                        }
                    }
                    packed.push_back(word);
                }
    });
    copyToSymbol(cPackedTaps, packed, stream);
    KL_CUDA_TRY(cudaStreamSynchronize(stream));  // `packed` is pageable and about to go
}

template <typename T> void computeDot(const Conv2dRun& run, int chunk, cudaStream_t stream)
{
    const auto launch = [&](auto out) {
        using Out = decltype(out);
        const StripArgs<T, Out> a = stripArgs<T, Out>(run, chunk);
        withChannels(run.channels, [&](auto cn) {
            withDotSize(run.kRows, [&](auto k) {
                constexpr int K = decltype(k)::value;
                constexpr int CN = decltype(cn)::value, E = dotElements<T, Out, CN, K>();
                const dim3 grid = gridFor(a.cols * CN, a.rows, kBlockX * E, kBlockY * DotShape<T, K>::rowsPerThread);
                if (run.tapScale == 1)
                    conv2dDot<T, Out, CN, K, false, E><<<grid, dim3(kBlockX, kBlockY), 0, stream>>>(a, 1);
                else
                    conv2dDot<T, Out, CN, K, true, E><<<grid, dim3(kBlockX, kBlockY), 0, stream>>>(a, run.tapScale);
            });
        });
    };
    if (run.outDepth == CV_32F) launch(float{});
    else launch(T{});
    KL_CHECK_LAUNCH();
}

} // namespace

Conv2dVariant dp4aConv2d()
{
    return {"dp4a",
            "u8 images, 3x3 and 5x5 kernels of small integer taps (or such taps times one factor, as a box): 4 rows "
            "per dp4a instruction on byte columns transposed in registers, exact integer sums",
            whyNotDot<uint8_t>,
            {prepareDot<uint8_t>, computeDot<uint8_t>, true}};
}

Conv2dVariant dp2aConv2d()
{
    return {"dp2a",
            "u16 images, 3x3 and 5x5 kernels of small integer taps (or such taps times one factor, as a box): 2 rows "
            "per dp2a instruction on 16-bit columns transposed in registers, exact integer sums",
            whyNotDot<uint16_t>,
            {prepareDot<uint16_t>, computeDot<uint16_t>, true}};
}

} // namespace kl::gpu
