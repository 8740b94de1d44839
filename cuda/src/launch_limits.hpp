#pragma once
// What a kernel's launch may ask of the device, asked in prepare (never inside a timed region):
// how much dynamic shared memory it may take, and how many of its blocks stay resident at once.
#include "cuda_check.hpp"

#include <algorithm>
#include <climits>
#include <cstddef>

namespace kl::gpu {

/// Lets `kernel` take `bytes` of dynamic shared memory (above 48 KB it must opt in). Setting an
/// attribute also loads the kernel's module, so that no timed run pays for it.
template <typename Kernel> void allowSharedMemory(Kernel* kernel, size_t bytes)
{
    KL_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

/// Blocks of `kernel` (`threads` each, with `sharedBytes` of dynamic shared memory) resident on
/// the whole device at once: the occupancy API's count per SM, at least 1 and at most
/// `perSmCap`, times the device's `multiprocessors`.
template <typename Kernel>
int residentBlocks(Kernel* kernel, int threads, size_t sharedBytes, int multiprocessors, int perSmCap = INT_MAX)
{
    int perSm = 0;
    KL_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, threads, sharedBytes));
    return std::clamp(perSm, 1, perSmCap) * multiprocessors;
}

} // namespace kl::gpu
