#pragma once
// Transpose: out(x, y) = in(y, x) for every pixel (all channels of a pixel move
// together), any size, depth and channel count. For signals: interleaved <->
// planar is the transpose of a frames x channels float matrix.
#include "kernellab/signal.hpp"

#include <opencv2/core/mat.hpp>

namespace kl {

/// Plain single-threaded loop over pixels, into `output` (reused when it has the result's size and type).
void transposeReference(const cv::Mat& input, cv::Mat& output);
cv::Mat transposeReference(const cv::Mat& input);
/// What an expert OpenCV user writes, into `output`: square tiles under cv::parallel_for_, each
/// in cache while it is read and written; pixels of 1, 2, 4 or 8 bytes (u8 x1/x4, u16 x1/x4,
/// f32 x1) moved in 128-bit register blocks with OpenCV's universal intrinsics on tiles 128
/// bytes wide (cv::transpose without IPP copies one pixel at a time), others by cv::transpose on
/// 64x64 tiles.
void transposeOpenCV(const cv::Mat& input, cv::Mat& output);
cv::Mat transposeOpenCV(const cv::Mat& input);

} // namespace kl
