#pragma once
// CUDA error checking (modelled on RMM's RMM_CUDA_TRY / RMM_ASSERT_CUDA_SUCCESS_SAFE_SHUTDOWN).
//   KL_CUDA_TRY(call)           throws kl::gpu::CudaError (kl::OutOfMemory for allocation failures)
//                               naming the call, file:line and the CUDA error name and text.
//   KL_CUDA_TRY_NOTHROW(call)   for destructors: never throws; quiet when the runtime is unloading or
//                               the context is already gone (the resource went with it), otherwise
//                               reports to stderr.
//   KL_CHECK_LAUNCH()           after a kernel launch: picks up launch-configuration errors.
//   KL_CUFFT_TRY(call)          the same for cuFFT results.
//   KL_CUFFT_TRY_NOTHROW(call)  for destructors: reports a failed cuFFT call to stderr, never throws.
#include "kernellab/gpu/cuda_error.hpp"

#include <cuda_runtime.h>
#include <cufft.h>

namespace kl::gpu::detail {

[[noreturn]] void throwCudaError(cudaError_t err, const char* call, const char* file, int line);
[[noreturn]] void throwCufftError(cufftResult err, const char* call, const char* file, int line);
void reportCudaError(cudaError_t err, const char* call, const char* file, int line) noexcept;
void reportCufftError(cufftResult err, const char* call, const char* file, int line) noexcept;

inline void cudaCheck(cudaError_t err, const char* call, const char* file, int line)
{
    if (err != cudaSuccess) throwCudaError(err, call, file, line);
}
inline void cufftCheck(cufftResult err, const char* call, const char* file, int line)
{
    if (err != CUFFT_SUCCESS) throwCufftError(err, call, file, line);
}
inline void cudaCheckNoThrow(cudaError_t err, const char* call, const char* file, int line) noexcept
{
    if (err != cudaSuccess) reportCudaError(err, call, file, line);
}
inline void cufftCheckNoThrow(cufftResult err, const char* call, const char* file, int line) noexcept
{
    if (err != CUFFT_SUCCESS) reportCufftError(err, call, file, line);
}

} // namespace kl::gpu::detail

#define KL_CUDA_TRY(call) ::kl::gpu::detail::cudaCheck((call), #call, __FILE__, __LINE__)
#define KL_CUFFT_TRY(call) ::kl::gpu::detail::cufftCheck((call), #call, __FILE__, __LINE__)
#define KL_CHECK_LAUNCH() ::kl::gpu::detail::cudaCheck(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
#define KL_CUDA_TRY_NOTHROW(call) ::kl::gpu::detail::cudaCheckNoThrow((call), #call, __FILE__, __LINE__)
#define KL_CUFFT_TRY_NOTHROW(call) ::kl::gpu::detail::cufftCheckNoThrow((call), #call, __FILE__, __LINE__)
