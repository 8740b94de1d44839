#pragma once
// CUDA error checking (modelled on RMM's RMM_CUDA_TRY / RMM_ASSERT_CUDA_SUCCESS).
//   KL_CUDA_TRY(call)          throws kl::gpu::CudaError (kl::OutOfMemory for allocation failures)
//                              naming the call, file:line and the CUDA error name and text.
//   KL_CUDA_TRY_NOTHROW(call)  for destructors: reports to stderr, never throws.
//   KL_CHECK_LAUNCH()          after a kernel launch: picks up launch-configuration errors.
//   KL_CUFFT_TRY(call)         the same for cuFFT results.
#include "kernellab/gpu/cuda_error.hpp"

#include <cuda_runtime.h>
#include <cufft.h>

namespace kl::gpu::detail {

[[noreturn]] void throwCudaError(cudaError_t err, const char* call, const char* file, int line);
[[noreturn]] void throwCufftError(cufftResult err, const char* call, const char* file, int line);
void reportCudaError(cudaError_t err, const char* call, const char* file, int line) noexcept;

inline void cudaCheck(cudaError_t err, const char* call, const char* file, int line)
{
    if (err != cudaSuccess) throwCudaError(err, call, file, line);
}
inline void cufftCheck(cufftResult err, const char* call, const char* file, int line)
{
    if (err != CUFFT_SUCCESS) throwCufftError(err, call, file, line);
}

} // namespace kl::gpu::detail

#define KL_CUDA_TRY(call) ::kl::gpu::detail::cudaCheck((call), #call, __FILE__, __LINE__)
#define KL_CUFFT_TRY(call) ::kl::gpu::detail::cufftCheck((call), #call, __FILE__, __LINE__)
#define KL_CHECK_LAUNCH() ::kl::gpu::detail::cudaCheck(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
#define KL_CUDA_TRY_NOTHROW(call)                                                          \
    do {                                                                                   \
        const cudaError_t kl_status_ = (call);                                             \
        if (kl_status_ != cudaSuccess) ::kl::gpu::detail::reportCudaError(kl_status_, #call, __FILE__, __LINE__); \
    } while (0)
