#pragma once
// What every conv2d kernel family shares: launch shapes, a chunk's arguments, element access
// with borders, and the host-side dispatch from a run's depths, channels and kernel size to
// compiled kernels. Each family's .cu includes it (and owns its own __constant__ taps).
#include "conv2d_variants.hpp"
#include "../launch_limits.hpp"

#include "kernellab/border.hpp"
#include "kernellab/conv2d.hpp"
#include "kernellab/rounding.hpp"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace kl::gpu {
namespace {

constexpr int kMaxTaps = kMaxConv2DKernelSize * kMaxConv2DKernelSize;

// Blocks are kBlockX x kBlockY threads; grids stride over rows (gridDim.y <= 65535).
constexpr int kBlockX = 32, kBlockY = 8;
constexpr unsigned kMaxGridY = 65535;
/// shared: every thread computes kPixelsPerThread adjacent pixels, a block 128 columns.
constexpr int kPixelsPerThread = 4, kTileCols = kBlockX * kPixelsPerThread;
/// separable (compiled sizes): threads per block.
constexpr int kRingThreads = 128, kRingWarps = kRingThreads / 32;

constexpr int roundUp4(int n) { return (n + 3) / 4 * 4; }

/// One chunk: `rows` output rows from image row `row0`, read from a slice of
/// rows + kRows - 1 input rows (slice row k = image row borderIndex(row0 - kRows / 2 + k)).
template <typename In, typename Out> struct StripArgs {
    using InType = In;
    using OutType = Out;
    const In* in;
    Out* out;
    float* mid;          ///< separable (two passes): the row pass's result, one f32 per slice element
    const float* taps;   ///< naive: kRows x kCols taps in global memory
    int rows, cols, row0, imageRows;
    int kRows, kCols;
    BorderMode border;
    float borderValue;
    /// Elements from one row to the next of `in` and `out`. Device rows start on kRowAlignment-byte
    /// boundaries (rowPitch), so every group of 4 elements that starts at a multiple of 4 is aligned
    /// for one vector access at any image width.
    int inPitch, outPitch;

    // Rows are never negative: as unsigned, a row's address is one wide multiply-add.
    __device__ const In* inRow(int k) const { return in + size_t(unsigned(k)) * unsigned(inPitch); }
    __device__ Out* outRow(int y) const { return out + size_t(unsigned(y)) * unsigned(outPitch); }

    /// Whether slice row k lies in the constant border (outside the image in Constant mode; the
    /// other modes' rows outside it were uploaded from the rows borderIndex names).
    __device__ bool borderRow(int k) const { return border == BorderMode::Constant && !imageRow(k); }
    /// Whether slice row k is an image row itself rather than one the border supplies.
    __device__ bool imageRow(int k) const { return unsigned(row0 - kRows / 2 + k) < unsigned(imageRows); }
};

template <typename Out, int CN> __device__ void storePixel(Out* out, const float (&sum)[CN])
{
#pragma unroll
    for (int c = 0; c < CN; ++c) out[c] = saturateRound<Out>(sum[c]);
}

// ---- element access shared by the tiled and the separable kernels -------------------------------

/// Four consecutive elements of the input as one access.
template <typename In> struct Quad;
template <> struct Quad<float> { using type = float4; };
template <> struct Quad<uint8_t> { using type = uint32_t; };
template <> struct Quad<uint16_t> { using type = uint2; };

/// Four consecutive elements from a 4-element-aligned address, in one read-only load.
template <typename In> __device__ typename Quad<In>::type loadQuad(const In* p)
{
    return __ldg(reinterpret_cast<const typename Quad<In>::type*>(p));
}

/// A loaded quad as f32, exactly. The kernels that widen every element they read are bound by
/// issue, so half the elements go through the conversion unit (one instruction, at a quarter of the
/// rate) and the other half are placed under the exponent of 2^23 and 2^23 subtracted (two
/// full-rate instructions): either way alone is the slower (docs/performance.md, twenty-first step).
__device__ float4 widen(float4 q) { return q; }
__device__ float integerBits(uint32_t bits) { return __uint_as_float(bits) - 8388608.0f; }
/// Bytes 0 and 2 of w through the conversion unit.
__device__ void convertEvenBytes(uint32_t w, float& byte0, float& byte2)
{
    asm("{.reg .b16 low, high; mov.b32 {low, high}, %2; cvt.rn.f32.u8 %0, low; cvt.rn.f32.u8 %1, high;}"
        : "=f"(byte0), "=f"(byte2)
        : "r"(w));
}
/// The two 16-bit halves of w through the conversion unit.
__device__ void convertHalves(uint32_t w, float& low, float& high)
{
    asm("{.reg .b16 low, high; mov.b32 {low, high}, %2; cvt.rn.f32.u16 %0, low; cvt.rn.f32.u16 %1, high;}"
        : "=f"(low), "=f"(high)
        : "r"(w));
}
__device__ float4 widen(uint32_t w)
{
    float4 f;
    convertEvenBytes(w, f.x, f.z);
    f.y = integerBits(__byte_perm(w, 0x4B000000u, 0x7441));
    f.w = integerBits(__byte_perm(w, 0x4B000000u, 0x7443));
    return f;
}
__device__ float4 widen(uint2 w)
{
    float4 f;
    convertHalves(w.x, f.x, f.y);
    f.z = integerBits(__byte_perm(w.y, 0x4B000000u, 0x7410));
    f.w = integerBits(__byte_perm(w.y, 0x4B000000u, 0x7432));
    return f;
}

/// A loaded quad's integers x as the subnormal f32 x * 2^-149, in one instruction an element (a
/// mask, a byte permute or a shift: the value as the float's bits). Exact, and for taps scaled by a
/// power of two every product and sum is the exact widening's times 2^-149 (the separable rings'
/// row pass: subnormalRingTaps, docs/performance.md, twenty-second step). f32 is as loaded.
__device__ float4 widenSubnormal(float4 q) { return q; }
__device__ float4 widenSubnormal(uint32_t w)
{
    return make_float4(__uint_as_float(w & 0xFFu), __uint_as_float(__byte_perm(w, 0, 0x4441)),
                       __uint_as_float(__byte_perm(w, 0, 0x4442)), __uint_as_float(w >> 24));
}
__device__ float4 widenSubnormal(uint2 w)
{
    return make_float4(__uint_as_float(w.x & 0xFFFFu), __uint_as_float(w.x >> 16), __uint_as_float(w.y & 0xFFFFu),
                       __uint_as_float(w.y >> 16));
}

/// Results rounded and saturated as saturateRound does, packed in memory order into one word: four
/// u8 (roundedBytes) or two u16 (roundedHalves).
__device__ uint32_t roundedBytes(float a, float b, float c, float d) { return kl::detail::roundSaturateBytes(a, b, c, d); }
__device__ uint32_t roundedHalves(float a, float b)
{
    return __byte_perm(kl::detail::roundSaturateLow(a, uint16_t{}), kl::detail::roundSaturateLow(b, uint16_t{}), 0x5410);
}

/// Four results to a 4-element-aligned address in one store (saturateRound for integers).
__device__ void store4(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }
__device__ void store4(uint8_t* p, float4 v) { *reinterpret_cast<uint32_t*>(p) = roundedBytes(v.x, v.y, v.z, v.w); }
__device__ void store4(uint16_t* p, float4 v)
{
    *reinterpret_cast<uint2*>(p) = {roundedHalves(v.x, v.y), roundedHalves(v.z, v.w)};
}

/// floor(n / CN), n of either sign.
template <int CN> __device__ int floorDiv(int n) { return n >= 0 ? n / CN : (n + 1) / CN - 1; }

/// Element `flat` = pixel * CN + channel of `row` (`cols` pixels), as f32; any pixel index (the
/// border). In scalars, for code out of line (a reference to the kernel's StripArgs would put them
/// in local memory).
template <int CN, typename In>
__device__ float elementAt(const In* row, int cols, BorderMode border, bool borderRow, int flat, float borderValue)
{
    const int p = floorDiv<CN>(flat);
    const int sx = borderIndex(p, cols, border);
    return borderRow || sx < 0 ? borderValue : float(row[sx * CN + (flat - p * CN)]);
}

/// Element `flat` of slice row k, as elementAt.
template <int CN, typename In, typename Out>
__device__ float fetch(const StripArgs<In, Out>& a, int k, bool borderRow, int flat)
{
    return elementAt<CN>(a.inRow(k), a.cols, a.border, borderRow, flat, a.borderValue);
}

// ---- host side: from a run to compiled kernels ------------------------------------------------------

/// Chunk `chunk`'s arguments (its slice of the input, its rows of the output).
template <typename In, typename Out> StripArgs<In, Out> stripArgs(const Conv2dRun& run, int chunk)
{
    const auto [r0, r1] = run.strip(chunk);
    const size_t slice = run.sliceStart(chunk);
    return {reinterpret_cast<const In*>(run.in + slice * run.inPitch),
            reinterpret_cast<Out*>(run.out + size_t(r0) * run.outPitch),
            run.mid ? run.mid + slice * size_t(run.cols) * run.channels : nullptr,
            run.taps,
            r1 - r0,
            run.cols,
            r0,
            run.rows,
            run.kRows,
            run.kCols,
            run.border,
            run.borderValue,
            int(run.inPitch / sizeof(In)),
            int(run.outPitch / sizeof(Out))};
}

/// Calls f(In{}, Out{}) for the input depth and output depth pairs conv2d produces.
template <typename F> void withElementTypes(int inDepth, int outDepth, F&& f)
{
    const bool floatOut = outDepth == CV_32F;
    switch (inDepth) {
    case CV_8U: floatOut ? f(uint8_t{}, float{}) : f(uint8_t{}, uint8_t{}); break;
    case CV_16U: floatOut ? f(uint16_t{}, float{}) : f(uint16_t{}, uint16_t{}); break;
    default: f(float{}, float{}); break;
    }
}

/// Calls f(std::integral_constant<int, channels>{}) for 1, 3 or 4 channels.
template <typename F> void withChannels(int channels, F&& f)
{
    switch (channels) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    default: f(std::integral_constant<int, 4>{}); break;
    }
}

/// Calls f(std::integral_constant<int, k>{}) when k is one of kConv2dCompiledSizes; returns whether it was.
template <typename F> bool withFixedSize(int k, F&& f)
{
    static_assert(kConv2dCompiledSizes.size() == 5, "one case per compiled size");
    constexpr auto s = kConv2dCompiledSizes;
    if (k == s[0]) return f(std::integral_constant<int, s[0]>{}), true;
    if (k == s[1]) return f(std::integral_constant<int, s[1]>{}), true;
    if (k == s[2]) return f(std::integral_constant<int, s[2]>{}), true;
    if (k == s[3]) return f(std::integral_constant<int, s[3]>{}), true;
    if (k == s[4]) return f(std::integral_constant<int, s[4]>{}), true;
    return false;
}

/// Calls f(In{}, Out{}, CN, K) for `run`'s depths, channel count and square compiled kernel size (CN
/// and K std::integral_constant); returns whether the kernel is one (kConv2dCompiledSizes).
template <typename F> bool withCompiledShape(const Conv2dRun& run, F&& f)
{
    if (run.kRows != run.kCols) return false;
    bool compiled = false;
    withElementTypes(run.inDepth, run.outDepth, [&](auto in, auto out) {
        withChannels(run.channels,
                     [&](auto cn) { compiled = withFixedSize(run.kRows, [&](auto k) { f(in, out, cn, k); }); });
    });
    return compiled;
}

inline dim3 gridFor(int cols, int rows, int colsPerBlock, int rowsPerBlock)
{
    return dim3(unsigned(cols + colsPerBlock - 1) / unsigned(colsPerBlock),
                std::min(unsigned(rows + rowsPerBlock - 1) / unsigned(rowsPerBlock), kMaxGridY));
}

/// allowSharedMemory, and the SM's memory split so that shared memory holds as many blocks of
/// `threads` as the SM can run at once (at most perSmCap) and the rest stays L1. Left to itself the
/// driver may keep most of it as L1 and fit fewer blocks; split all to shared, it leaves 28 KB of L1
/// for the global loads of a kernel that registers hold to fewer blocks (separable-tiles on f32 ran
/// 1.14-1.19x slower so, docs/performance.md, "Thirtieth step").
template <typename Kernel> void optInSharedMemory(Kernel* kernel, size_t bytes, int threads, int perSmCap = INT_MAX)
{
    allowSharedMemory(kernel, bytes);
    KL_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                     int(cudaSharedmemCarveoutMaxShared)));
    int blocks = 0, device = 0, sharedPerSm = 0, reservedPerBlock = 0;
    KL_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, bytes));
    KL_CUDA_TRY(cudaGetDevice(&device));
    KL_CUDA_TRY(cudaDeviceGetAttribute(&sharedPerSm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
    KL_CUDA_TRY(cudaDeviceGetAttribute(&reservedPerBlock, cudaDevAttrReservedSharedMemoryPerBlock, device));
    const size_t needed = size_t(std::clamp(blocks, 1, perSmCap)) * (bytes + size_t(reservedPerBlock));
    // A percentage of the largest split; the driver takes the next supported split at or above it.
    const size_t percent = std::min<size_t>(100, (100 * needed + size_t(sharedPerSm) - 1) / size_t(sharedPerSm));
    KL_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, int(percent)));
}

template <typename T, typename V> void copyToSymbol(const T& symbol, const std::vector<V>& values, cudaStream_t s)
{
    KL_CUDA_TRY(cudaMemcpyToSymbolAsync(symbol, values.data(), values.size() * sizeof(V), 0, cudaMemcpyHostToDevice, s));
}

/// Runs f(StripArgs<In, Out>, std::integral_constant<int, CN>) for chunk `chunk` of `run`.
template <typename F> void withStrip(const Conv2dRun& run, int chunk, F&& f)
{
    withElementTypes(run.inDepth, run.outDepth, [&](auto in, auto out) {
        const auto a = stripArgs<decltype(in), decltype(out)>(run, chunk);
        withChannels(run.channels, [&](auto cn) { f(a, cn); });
    });
}

} // namespace
} // namespace kl::gpu
