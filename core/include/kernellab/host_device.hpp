#pragma once
// KL_HD marks the few inline functions (border rule, histogram binning,
// luminance, rounding) that the CPU reference and the CUDA kernels share, so
// both compute the same function from one definition. No CUDA header is needed.
#ifdef __CUDACC__
#define KL_HD __host__ __device__
#else
#define KL_HD
#endif
