#include "kernellab/transpose.hpp"

#include "kernellab/image.hpp"

#include <opencv2/core.hpp>

#include <cstring>

namespace kl {

cv::Mat transposeReference(const cv::Mat& input)
{
    validateImage(input, "transpose input");
    const size_t pixelBytes = input.elemSize();
    ensureMemoryAvailable(uint64_t(input.total()) * pixelBytes, "transpose output");
    cv::Mat output(input.cols, input.rows, input.type());
    for (int y = 0; y < input.rows; ++y) {
        const uchar* source = input.ptr(y);
        for (int x = 0; x < input.cols; ++x) std::memcpy(output.ptr(x, y), source + size_t(x) * pixelBytes, pixelBytes);
    }
    return output;
}

cv::Mat transposeOpenCV(const cv::Mat& input)
{
    validateImage(input, "transpose input");
    ensureMemoryAvailable(uint64_t(input.total()) * input.elemSize(), "transpose output");
    cv::Mat output;
    cv::transpose(input, output);
    return output;
}

} // namespace kl
