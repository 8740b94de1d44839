#pragma once
// Comparison of two results (CPU vs OpenCV vs GPU): used by tests, the CLI
// report and the GUI difference view.
// Elements are compared as doubles; NaN against NaN counts as equal, NaN against
// a number as an infinite difference.
#include "kernellab/signal.hpp"

#include <opencv2/core/mat.hpp>

#include <cstdint>

namespace kl {

struct Comparison {
    double maxAbsError = 0;   ///< max |a - b| over all elements
    double meanAbsError = 0;  ///< mean |a - b|
    double maxRelError = 0;   ///< max |a - b| / max(|b|, 1e-30) where b is the reference
    double normRelError = 0;  ///< max |a - b| / max |b|  (the tests' f32 criterion)
    double psnr = 0;          ///< dB against the depth's peak (255, 65535, or max |b| for f32); +inf when equal
    uint64_t differing = 0;   ///< elements with a != b
    /// Where the first differing element is (an index in storage order: images row by row with
    /// channels interleaved, signals channel by channel) and its two values; 0 when none differ.
    uint64_t firstDiffering = 0;
    double firstActual = 0, firstReference = 0;
    uint64_t elements = 0;
    bool shapeMatches = true; ///< false: sizes/types differ, other fields are meaningless
};

/// Compares `actual` with `reference` (same size, depth and channel count).
Comparison compare(const cv::Mat& actual, const cv::Mat& reference);
Comparison compare(const Signal& actual, const Signal& reference);

/// |a - b| per pixel, max over channels, as CV_32F (the GUI heat map).
cv::Mat absDifference(const cv::Mat& a, const cv::Mat& b);

} // namespace kl
