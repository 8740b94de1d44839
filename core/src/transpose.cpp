#include "kernellab/transpose.hpp"

#include "kernellab/image.hpp"

#include "parallel.hpp"

#include <opencv2/core.hpp>

#include <cstring>

namespace kl {

namespace {

/// Side of the square tiles the OpenCV backend transposes one by one: a tile's rows and
/// columns stay in the L1/L2 cache while cv::transpose walks them.
constexpr int kTileSide = 64;

} // namespace

void transposeReference(const cv::Mat& input, cv::Mat& output)
{
    validateImage(input, "transpose input");
    const size_t pixelBytes = input.elemSize();
    createChecked(output, input.cols, input.rows, input.type(), "transpose output");
    for (int y = 0; y < input.rows; ++y) {
        const uchar* source = input.ptr(y);
        for (int x = 0; x < input.cols; ++x) std::memcpy(output.ptr(x, y), source + size_t(x) * pixelBytes, pixelBytes);
    }
}

cv::Mat transposeReference(const cv::Mat& input)
{
    cv::Mat output;
    transposeReference(input, output);
    return output;
}

void transposeOpenCV(const cv::Mat& input, cv::Mat& output)
{
    validateImage(input, "transpose input");
    createChecked(output, input.cols, input.rows, input.type(), "transpose output");
    const int tileRows = (input.rows + kTileSide - 1) / kTileSide, tileCols = (input.cols + kTileSide - 1) / kTileSide;
    detail::forEachPiece(tileRows * tileCols, [&](int, int tile) {
        const int x = tile % tileCols * kTileSide, y = tile / tileCols * kTileSide;
        const cv::Rect in(x, y, std::min(kTileSide, input.cols - x), std::min(kTileSide, input.rows - y));
        cv::Mat out = output(cv::Rect(in.y, in.x, in.height, in.width));
        cv::transpose(input(in), out);
    });
}

cv::Mat transposeOpenCV(const cv::Mat& input)
{
    cv::Mat output;
    transposeOpenCV(input, output);
    return output;
}

} // namespace kl
