#include "display_image.hpp"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kl::gui {
namespace {

/// Finite min and max over every channel (NaN and inf are skipped; an image without finite values gives 0, 0).
std::pair<double, double> finiteRange(const cv::Mat& image)
{
    double lo = std::numeric_limits<double>::infinity();
    double hi = -lo;
    const cv::Mat flat = image.reshape(1);
    for (int y = 0; y < flat.rows; ++y) {
        if (image.depth() == CV_16U) {
            const auto* row = flat.ptr<uint16_t>(y);
            const auto [mn, mx] = std::minmax_element(row, row + flat.cols);
            lo = std::min(lo, double(*mn));
            hi = std::max(hi, double(*mx));
        } else {
            const auto* row = flat.ptr<float>(y);
            for (int x = 0; x < flat.cols; ++x) {
                if (!std::isfinite(row[x])) continue;
                lo = std::min(lo, double(row[x]));
                hi = std::max(hi, double(row[x]));
            }
        }
    }
    if (lo > hi) return {0.0, 0.0};
    return {lo, hi};
}

/// BGR(A)/gray u8 -> a QImage that owns a BGRA copy (QImage::Format_RGB32 is B,G,R,255 in memory).
QImage toRgb32(const cv::Mat& u8)
{
    cv::Mat bgra;
    switch (u8.channels()) {
    case 1: cv::cvtColor(u8, bgra, cv::COLOR_GRAY2BGRA); break;
    case 3: cv::cvtColor(u8, bgra, cv::COLOR_BGR2BGRA); break;
    default: bgra = u8.clone(); bgra.reshape(1, bgra.rows * bgra.cols).col(3).setTo(255); break;
    }
    QImage wrapped(bgra.data, bgra.cols, bgra.rows, int(bgra.step), QImage::Format_RGB32);
    return wrapped.copy();
}

} // namespace

DisplayImage toDisplayImage(const cv::Mat& image)
{
    DisplayImage display;
    if (image.empty()) return display;
    if (image.depth() == CV_8U) {
        display.image = toRgb32(image);
        return display;
    }
    const auto [lo, hi] = finiteRange(image);
    display.autoWindow = true;
    display.windowLo = lo;
    display.windowHi = hi;
    const double scale = hi > lo ? 255.0 / (hi - lo) : 0.0;
    cv::Mat u8;
    image.convertTo(u8, CV_8U, scale, -lo * scale);
    display.image = toRgb32(u8);
    return display;
}

QImage differenceHeatMap(const cv::Mat& difference)
{
    if (difference.empty()) return {};
    const double largest = finiteRange(difference).second;
    const double scale = largest > 0 ? 255.0 / largest : 0.0;
    cv::Mat u8;
    difference.convertTo(u8, CV_8U, scale);
    // Any difference at all gets at least one step above black, so a single differing pixel is visible.
    u8.setTo(1, (difference > 0) & (u8 == 0));
    cv::Mat colored;
    cv::applyColorMap(u8, colored, cv::COLORMAP_INFERNO);
    return toRgb32(colored);
}

} // namespace kl::gui
