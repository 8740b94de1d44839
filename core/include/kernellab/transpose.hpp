#pragma once
// Transpose: out(x, y) = in(y, x) for every pixel (all channels of a pixel move
// together), any size, depth and channel count. For signals: interleaved <->
// planar is the transpose of a frames x channels float matrix.
#include "kernellab/signal.hpp"

#include <opencv2/core/mat.hpp>

namespace kl {

/// Plain single-threaded loop over pixels.
cv::Mat transposeReference(const cv::Mat& input);
/// cv::transpose.
cv::Mat transposeOpenCV(const cv::Mat& input);

} // namespace kl
