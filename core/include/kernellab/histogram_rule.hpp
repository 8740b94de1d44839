#pragma once
// The histogram's binning and luminance rules (histogram.hpp describes the op), for the
// CPU reference, the GPU kernels and kernels compiled at run time alike.
#include "kernellab/host_device.hpp"

#ifndef __CUDACC_RTC__
#include <cmath>
#endif

namespace kl {

/// The bin of value v, or -1 when v is outside [lo, hi) or NaN.
KL_HD inline int histogramBin(double v, double lo, double hi, double scale, double offset, int bins)
{
    if (!(v >= lo && v < hi)) return -1;
#ifdef __CUDA_ARCH__
    int bin = int(floor(__dadd_rn(__dmul_rn(v, scale), offset)));  // no FMA contraction
#else
    int bin = int(floor(v * scale + offset));
#endif
    return bin < 0 ? 0 : (bin >= bins ? bins - 1 : bin);
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
/// fused multiply-add.
KL_HD inline float luminanceFloat(float b, float g, float r)
{
#ifdef __CUDA_ARCH__
    return __fadd_rn(__fadd_rn(__fmul_rn(0.114f, b), __fmul_rn(0.587f, g)), __fmul_rn(0.299f, r));
#else
    return 0.114f * b + 0.587f * g + 0.299f * r;
#endif
}

} // namespace kl
