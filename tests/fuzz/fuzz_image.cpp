// Image files through kl::loadImage: the first byte picks the extension (the loader recognises
// the format by content, so any bytes may reach any decoder), the rest is the file.
#include "fuzz_support.hpp"
#include "kernellab/image.hpp"
#include "kernellab/image_io.hpp"

#include <opencv2/core.hpp>

#include <cstdlib>

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    // Decodes stay within the fuzzer's memory limit: 16 Mpixel at most (the loader honours the
    // variable in its own header checks too).
    ::setenv("OPENCV_IO_MAX_IMAGE_PIXELS", "16777216", 1);
    cv::setNumThreads(1);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1) return 0;
    const auto& extensions = kl::imageExtensions();
    const std::string path = klfuzz::asFile(data + 1, size - 1, extensions[data[0] % extensions.size()]);
    klfuzz::expectReadOrRefusal([&] {
        const cv::Mat image = kl::loadImage(path);
        kl::validateImage(image, "loaded image");  // u8/u16/f32, 1/3/4 channels, not empty
    });
    return 0;
}
