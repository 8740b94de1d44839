#pragma once
// The histogram's binning and luminance rules (histogram.hpp describes the op), for the
// CPU reference, the GPU kernels and kernels compiled at run time alike.
#include "kernellab/host_device.hpp"

#ifndef __CUDACC_RTC__
#include <cmath>
#endif

namespace kl {

/// The bin of a value v known to lie in [lo, hi): floor(v * scale + offset) clamped to [0, bins).
/// Rounding can put v * scale + offset just outside [0, bins); truncation toward zero then gives
/// the same bin as floor (the two differ only below 0, which the clamp maps to 0), and is one
/// conversion that vectorises. The multiply and add stay separate (no fused multiply-add): on the
/// device by the intrinsics, on the host by building the CPU histogram with -ffp-contract=off.
KL_HD inline int histogramBinInRange(double v, double scale, double offset, int bins)
{
#ifdef __CUDA_ARCH__
    const int bin = int(__dadd_rn(__dmul_rn(v, scale), offset));
#else
    const int bin = int(v * scale + offset);
#endif
    const int notBelow = bin < 0 ? 0 : bin;  // two selects: a max and a min in SIMD
    return notBelow > bins - 1 ? bins - 1 : notBelow;
}

/// histogramBinInRange in float arithmetic, where that provably gives the same bin: for the u16
/// and f32 binnings, whose lo and hi are float values (histogram.hpp). Built by
/// kl::floatBinning (histogram.hpp), which bounds the float form's error.
struct FloatBinning {
    float lo, hi;         ///< the binning's range, exact in float
    float scale, offset;  ///< the binning's a and b rounded to float
    float top;            ///< bins - 1/2
    /// The float form decides where its v * scale + offset lies within `margin` of a bin's
    /// middle, i.e. farther than the form's error from an edge; negative: never.
    float margin;
};

/// histogramBinInRange(v, scale, offset, bins) for v in [f.lo, f.hi): one fused multiply-add in
/// float, clamped to [1/2, bins - 1/2] (values below or above map to the first or last bin
/// either way), whose floor is the bin unless it lies within the float form's error of an edge;
/// those few values take histogramBinInRange itself.
KL_HD inline int histogramBinInRangeFloat(float v, const FloatBinning& f, double scale, double offset, int bins)
{
    const float x = fminf(fmaxf(fmaf(v, f.scale, f.offset), 0.5f), f.top);
#ifdef __CUDA_ARCH__
    // 2^23 + floor(x) exactly (x < 2^22), and its bits give floor(x) without a conversion.
    const float shifted = __fadd_rd(x, 8388608.0f);
    const float middle = __fsub_rn(shifted, 8388607.5f);  // floor(x) + 1/2, exact
    const int whole = __float_as_int(shifted) - 0x4B000000;
#else
    const float below = std::floor(x), middle = below + 0.5f;
    const int whole = int(below);
#endif
    // x - middle is exact (Sterbenz: x >= 1/2 and both lie within 1/2 of each other).
    return fabsf(x - middle) <= f.margin ? whole : histogramBinInRange(v, scale, offset, bins);
}

/// The bin of value v, or -1 when v is outside [lo, hi) or NaN.
KL_HD inline int histogramBin(double v, double lo, double hi, double scale, double offset, int bins)
{
    return v >= lo && v < hi ? histogramBinInRange(v, scale, offset, bins) : -1;
}

/// BT.601 luma in OpenCV's fixed point for integer depths:
/// (3735*B + 19235*G + 9798*R + 16384) >> 15, exactly cv::cvtColor BGR2GRAY for u8 and
/// u16 in OpenCV 4.6 (its 15-bit coefficients; the 14-bit 1868/9617/4899 form that
/// older releases used differs on ~0.25% of u8 pixels). No overflow: the
/// coefficients sum to 2^15, so a u16 pixel stays below 2^31.
KL_HD inline unsigned luminanceFixed(unsigned b, unsigned g, unsigned r)
{
    return (3735u * b + 19235u * g + 9798u * r + 16384u) >> 15;
}
/// For f32: 0.114*B + 0.587*G + 0.299*R, evaluated in float in this order, without
/// fused multiply-add (as above).
KL_HD inline float luminanceFloat(float b, float g, float r)
{
#ifdef __CUDA_ARCH__
    return __fadd_rn(__fadd_rn(__fmul_rn(0.114f, b), __fmul_rn(0.587f, g)), __fmul_rn(0.299f, r));
#else
    return 0.114f * b + 0.587f * g + 0.299f * r;
#endif
}

} // namespace kl
