// Which of the library's device code a GPU runs. A .cu file: only nvcc defines __CUDA_ARCH_LIST__,
// the architectures this library is built for, in host code.
#include "engine_internal.hpp"

#include <string>

namespace kl::gpu {

int deviceCodeArchitecture(int computeMajor, int computeMinor)
{
    constexpr int built[] = {__CUDA_ARCH_LIST__};
    const int device = 100 * computeMajor + 10 * computeMinor;
    int newest = 0;
    for (int architecture : built)
        if (architecture <= device && architecture > newest) newest = architecture;
    return newest;
}

std::string describeCompute(const DeviceInfo& device)
{
    const int code = device.deviceCodeArchitecture;
    return "compute capability " + std::to_string(device.computeMajor) + "." + std::to_string(device.computeMinor) +
           ", device code " + (code ? std::to_string(code / 100) + "." + std::to_string(code / 10 % 10) : "none");
}

} // namespace kl::gpu
