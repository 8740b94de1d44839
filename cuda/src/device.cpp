// Device discovery and the status line the app and CLI show when there is no GPU.
#include "engine_internal.hpp"

#include <cuda_runtime.h>
#include <cufft.h>

namespace kl::gpu {

namespace {

/// 13000 -> "13.0".
std::string cudaVersionText(int version)
{
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

} // namespace

GpuStatus gpuStatus()
{
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        cudaGetLastError();
        const std::string runtimeText = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
        // The runtime says "insufficient driver" both for an old driver and for none at all;
        // cudaDriverGetVersion tells them apart (0 when no driver library can be loaded).
        int driver = 0, runtime = 0;
        cudaDriverGetVersion(&driver);
        cudaRuntimeGetVersion(&runtime);
        cudaGetLastError();
        if (driver == 0) return {false, "no NVIDIA driver found (" + runtimeText + ")"};
        if (err == cudaErrorInsufficientDriver)
            return {false, "the NVIDIA driver is too old: it supports CUDA " + cudaVersionText(driver) +
                               ", this build needs CUDA " + cudaVersionText(runtime) + " (" + runtimeText + ")"};
        return {false, runtimeText};
    }
    if (count == 0) return {false, "the CUDA runtime found no device"};
    return {true, {}};
}

std::vector<DeviceInfo> listDevices()
{
    std::vector<DeviceInfo> devices;
    if (!gpuStatus().available) return devices;
    int count = 0, driver = 0, runtime = 0, cufft = 0;
    KL_CUDA_TRY(cudaGetDeviceCount(&count));
    KL_CUDA_TRY(cudaDriverGetVersion(&driver));
    KL_CUDA_TRY(cudaRuntimeGetVersion(&runtime));
    KL_CUFFT_TRY(cufftGetVersion(&cufft));
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp p{};
        KL_CUDA_TRY(cudaGetDeviceProperties(&p, i));
        DeviceInfo d;
        d.index = i;
        d.name = p.name;
        d.computeMajor = p.major;
        d.computeMinor = p.minor;
        d.deviceCodeArchitecture = deviceCodeArchitecture(p.major, p.minor);
        d.multiprocessors = p.multiProcessorCount;
        d.globalMemoryBytes = p.totalGlobalMem;
        d.l2CacheBytes = uint64_t(p.l2CacheSize);
        d.sharedMemoryPerBlockOptIn = uint64_t(p.sharedMemPerBlockOptin);
        // CUDA 13 removed clock fields from cudaDeviceProp; they are attributes now.
        KL_CUDA_TRY(cudaDeviceGetAttribute(&d.smClockKHz, cudaDevAttrClockRate, i));
        KL_CUDA_TRY(cudaDeviceGetAttribute(&d.memoryClockKHz, cudaDevAttrMemoryClockRate, i));
        KL_CUDA_TRY(cudaDeviceGetAttribute(&d.memoryBusWidthBits, cudaDevAttrGlobalMemoryBusWidth, i));
        // Double data rate: two transfers per memory clock.
        d.theoreticalBandwidthGBs = 2.0 * d.memoryClockKHz * 1e3 * (d.memoryBusWidthBits / 8.0) / 1e9;
        d.driverVersion = driver;
        d.runtimeVersion = runtime;
        d.cufftVersion = cufft;
        devices.push_back(d);
    }
    return devices;
}

} // namespace kl::gpu
