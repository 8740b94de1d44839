#pragma once
// What every conv2d kernel shares: the taps in constant memory, launch shapes, the chunk's
// arguments and element access with borders. Included by conv2d.cu's kernel headers only
// (conv2d.cu is the one translation unit; its header comment describes the variants).
#include "kernellab/border.hpp"
#include "kernellab/conv2d.hpp"
#include "kernellab/rounding.hpp"

#include <cstddef>
#include <cstdint>

namespace kl::gpu {
namespace {

constexpr int kMaxTaps = kMaxConv2DKernelSize * kMaxConv2DKernelSize;
__constant__ float cTaps[kMaxTaps];                        // constant, shared: row-major kRows x kCols
__constant__ float cRowTaps[kMaxConv2DKernelSize];         // separable: kCols taps
__constant__ float cColumnTaps[kMaxConv2DKernelSize];      // separable: kRows taps
__constant__ uint32_t cRowTapsInteger[kMaxConv2DKernelSize];     // integer: kCols taps * 2^8 / column scale
__constant__ uint32_t cColumnTapsInteger[kMaxConv2DKernelSize];  // integer: kRows taps, smallest integers
/// integer: the taps are K = column * row^T / 2^kIntegerFractionBits, so results have 8 bits below the
/// point, and the rounded result is byte 1 of each 16-bit lane.
constexpr int kIntegerFractionBits = 8;

// Blocks are kBlockX x kBlockY threads; grids stride over rows (gridDim.y <= 65535).
constexpr int kBlockX = 32, kBlockY = 8;
constexpr unsigned kMaxGridY = 65535;
/// shared: every thread computes kPixelsPerThread adjacent pixels, a block 128 columns.
constexpr int kPixelsPerThread = 4, kTileCols = kBlockX * kPixelsPerThread;
/// separable (compiled sizes): threads per block.
constexpr int kRingThreads = 128;

constexpr int roundUp4(int n) { return (n + 3) / 4 * 4; }

/// Device rows of conv2d's input and output buffers start on this boundary: the widest vector
/// access (16 bytes) and the TMA engine's row stride (a multiple of 16 bytes) hold at any width.
constexpr size_t kRowAlignment = 128;
size_t rowPitch(size_t rowBytes) { return (rowBytes + kRowAlignment - 1) / kRowAlignment * kRowAlignment; }

/// One chunk: `rows` output rows from image row `row0`, read from a slice of
/// rows + kRows - 1 input rows (slice row k = image row borderIndex(row0 - kRows / 2 + k)).
template <typename In, typename Out> struct StripArgs {
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

    __device__ const In* inRow(int k) const { return in + size_t(k) * inPitch; }
    __device__ Out* outRow(int y) const { return out + size_t(y) * outPitch; }

    /// Whether slice row k lies in the constant border (outside the image in Constant mode).
    __device__ bool borderRow(int k) const { return borderIndex(row0 - kRows / 2 + k, imageRows, border) < 0; }
    /// Whether slice row k is an image row itself rather than one the border supplies.
    __device__ bool imageRow(int k) const { return unsigned(row0 - kRows / 2 + k) < unsigned(imageRows); }
};

template <typename Out, int CN> __device__ void storePixel(Out* out, const float (&sum)[CN])
{
#pragma unroll
    for (int c = 0; c < CN; ++c) out[c] = saturateRound<Out>(sum[c]);
}

template <bool ConstantTaps> __device__ float tapAt(const float* taps, int t)
{
    if constexpr (ConstantTaps) return cTaps[t];
    else return taps[t];
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

/// A loaded quad as f32. Integers are placed under the exponent of 2^23 and 2^23 subtracted:
/// exact below 2^23, and two full-rate instructions instead of the quarter-rate conversion unit.
__device__ float4 widen(float4 q) { return q; }
__device__ float integerBits(uint32_t bits) { return __uint_as_float(bits) - 8388608.0f; }
__device__ float4 widen(uint32_t w)
{
    return {integerBits(__byte_perm(w, 0x4B000000u, 0x7440)), integerBits(__byte_perm(w, 0x4B000000u, 0x7441)),
            integerBits(__byte_perm(w, 0x4B000000u, 0x7442)), integerBits(__byte_perm(w, 0x4B000000u, 0x7443))};
}
__device__ float4 widen(uint2 w)
{
    return {integerBits(__byte_perm(w.x, 0x4B000000u, 0x7410)), integerBits(__byte_perm(w.x, 0x4B000000u, 0x7432)),
            integerBits(__byte_perm(w.y, 0x4B000000u, 0x7410)), integerBits(__byte_perm(w.y, 0x4B000000u, 0x7432))};
}

/// Four results to a 4-element-aligned address in one store (saturateRound for integers).
__device__ void store4(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }
__device__ void store4(uint8_t* p, float4 v)
{
    *reinterpret_cast<uint32_t*>(p) = uint32_t(saturateRound<uint8_t>(v.x)) | uint32_t(saturateRound<uint8_t>(v.y)) << 8 |
                                      uint32_t(saturateRound<uint8_t>(v.z)) << 16 |
                                      uint32_t(saturateRound<uint8_t>(v.w)) << 24;
}
__device__ void store4(uint16_t* p, float4 v)
{
    *reinterpret_cast<uint2*>(p) = {uint32_t(saturateRound<uint16_t>(v.x)) | uint32_t(saturateRound<uint16_t>(v.y)) << 16,
                                    uint32_t(saturateRound<uint16_t>(v.z)) | uint32_t(saturateRound<uint16_t>(v.w)) << 16};
}

/// floor(n / CN), n of either sign.
template <int CN> __device__ int floorDiv(int n) { return n >= 0 ? n / CN : (n + 1) / CN - 1; }

/// Element `flat` = pixel * CN + channel of slice row k, as f32; any pixel index (the border).
template <int CN, typename In, typename Out>
__device__ float fetch(const StripArgs<In, Out>& a, int k, bool borderRow, int flat)
{
    const int p = floorDiv<CN>(flat);
    const int sx = borderIndex(p, a.cols, a.border);
    return borderRow || sx < 0 ? a.borderValue : float(a.inRow(k)[sx * CN + (flat - p * CN)]);
}

} // namespace
} // namespace kl::gpu
