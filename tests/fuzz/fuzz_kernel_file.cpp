// Custom kernel files (kl::loadKernelFile): the first byte picks a text file or .npy.
#include "fuzz_support.hpp"
#include "kernellab/kernel_io.hpp"

#include <opencv2/core.hpp>

#include <cmath>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1) return 0;
    const std::string path = klfuzz::asFile(data + 1, size - 1, data[0] % 2 ? ".npy" : ".txt");
    klfuzz::expectReadOrRefusal([&] {
        const cv::Mat kernel = kl::loadKernelFile(path);
        klfuzz::require(kernel.type() == CV_32F && !kernel.empty(), "a non-empty CV_32F matrix");
        for (auto it = kernel.begin<float>(); it != kernel.end<float>(); ++it)
            klfuzz::require(std::isfinite(*it), "finite values");
    });
    return 0;
}
