#pragma once
// KL_HD marks the few inline functions (border rule, histogram binning,
// luminance, rounding) that the CPU reference and the CUDA kernels share, so
// both compute the same function from one definition. No CUDA header is needed.
// The headers that hold them (border_rule.hpp, rounding.hpp, histogram_rule.hpp)
// include no standard header under NVRTC (__CUDACC_RTC__), which has none: users'
// kernels compiled at run time include them too (docs/custom-kernels.md).
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KL_HD __host__ __device__
#else
#define KL_HD
#endif
