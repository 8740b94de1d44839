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
/// What an expert OpenCV user writes, into `output`: cv::transpose on 64x64 tiles under
/// cv::parallel_for_, each tile in cache while it is read and written.
void transposeOpenCV(const cv::Mat& input, cv::Mat& output);
cv::Mat transposeOpenCV(const cv::Mat& input);

} // namespace kl
