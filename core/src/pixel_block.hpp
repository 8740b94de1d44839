#pragma once
// PixelBlock (internal to core): pixels of an image addressed by their first byte and row step.
#include <opencv2/core/hal/interface.h>

#include <cstddef>

namespace kl::detail {

/// A block of pixels by its first byte and row step, without a cv::Mat header: creating one per
/// tile would update the image's shared reference count from every thread.
struct PixelBlock {
    const uchar* data;
    size_t step;
    /// The first byte of row y.
    const uchar* row(int y) const { return data + size_t(y) * step; }
};

} // namespace kl::detail
