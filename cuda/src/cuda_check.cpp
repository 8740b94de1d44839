#include "cuda_check.hpp"

#include "kernellab/error.hpp"

#include <cstdio>
#include <string>

namespace kl::gpu::detail {

namespace {
std::string describe(const char* call, const char* file, int line, const std::string& error)
{
    return std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " + error;
}

const char* cufftName(cufftResult err)
{
    switch (err) {
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    default: return "cuFFT error";
    }
}
} // namespace

void throwCudaError(cudaError_t err, const char* call, const char* file, int line)
{
    const std::string text = describe(call, file, line,
                                      std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")");
    if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();  // allocation failures are not sticky; clear so the next run starts clean
        throw kl::OutOfMemory("GPU out of memory: " + text);
    }
    throw CudaError(text, int(err));
}

void throwCufftError(cufftResult err, const char* call, const char* file, int line)
{
    const std::string text = describe(call, file, line, cufftName(err));
    if (err == CUFFT_ALLOC_FAILED) throw kl::OutOfMemory("GPU out of memory: " + text);
    throw CudaError(text, int(err));
}

void reportCudaError(cudaError_t err, const char* call, const char* file, int line) noexcept
{
    cudaGetLastError();  // a failed release must not surface later as a launch error
    // At process exit the runtime may tear itself down before the last owner releases its
    // resources, and a reset device has destroyed them already: nothing is left to free.
    if (err == cudaErrorCudartUnloading || err == cudaErrorContextIsDestroyed) return;
    std::fprintf(stderr, "kernellab: %s failed at %s:%d: %s\n", call, file, line, cudaGetErrorName(err));
}

void reportCufftError(cufftResult err, const char* call, const char* file, int line) noexcept
{
    std::fprintf(stderr, "kernellab: %s failed at %s:%d: %s\n", call, file, line, cufftName(err));
}

} // namespace kl::gpu::detail
