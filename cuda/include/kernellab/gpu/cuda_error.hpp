#pragma once
// The exception the GPU engine throws for a failed CUDA call. Out-of-memory is
// reported as kl::OutOfMemory instead, so callers can tell it apart.
#include <stdexcept>
#include <string>

namespace kl::gpu {

class CudaError : public std::runtime_error {
public:
    /// `code` is the cudaError_t / cufftResult value; what() names the call, file:line and the error.
    CudaError(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
    [[nodiscard]] int code() const noexcept { return code_; }

private:
    int code_;
};

} // namespace kl::gpu
