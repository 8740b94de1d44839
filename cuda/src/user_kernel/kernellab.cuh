#pragma once
// KernelLab's header for your own kernels (docs/custom-kernels.md). It gives the
// argument struct of each op and the project's own rules, the same code the
// built-in kernels and the CPU reference run:
//   kl::borderIndex(p, len, border)      where index p of a row or column reads from (-1: the border value)
//   kl::saturateRound<kl::Out>(sum)      f32 to the output depth: nearest, ties to even, saturated
//   kl::bin(args, v)                     the histogram bin of v, or -1 outside [lo, hi) and for NaN
//   kl::luminance(pixel)                 BT.601 luma of a B, G, R pixel, as the histogram's last entry
// kl::In and kl::Out are the run's element types (unsigned char, unsigned short or float);
// KL_BLOCK_X/Y and KL_TILE_X/Y are the launch's block and tile (KernelLab sizes the grid).
#include "kernellab/border_rule.hpp"
#include "kernellab/histogram_rule.hpp"
#include "kernellab/rounding.hpp"
#include "kernellab/user_kernel_args.hpp"

namespace kl {

using In = KL_INPUT_TYPE;
using Out = KL_OUTPUT_TYPE;
using Conv2dArgs = Conv2dArgsOf<In, Out>;
using HistogramArgs = HistogramArgsOf<In>;
using TransposeArgs = TransposeArgsOf<In>;

__device__ inline int bin(const HistogramArgs& a, double v)
{
    return histogramBin(v, a.lo, a.hi, a.scale, a.offset, a.bins);
}

/// Integer depths: OpenCV's fixed-point luma; f32: the float formula (histogram_rule.hpp).
__device__ inline double luminance(const In* pixel)
{
    if constexpr (detail::IsFloat<In>::value) return luminanceFloat(pixel[0], pixel[1], pixel[2]);
    else return luminanceFixed(pixel[0], pixel[1], pixel[2]);
}

} // namespace kl
