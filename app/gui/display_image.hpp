#pragma once
// Turning engine images (u8/u16/f32, 1/3/4 channels, BGR) into something to draw.
// Runs in the worker: converting a large image is too slow for the GUI thread.
#include <opencv2/core/mat.hpp>

#include <QImage>

namespace kl::gui {

/// A drawable copy of an image and the value window that mapped it to 0..255.
struct DisplayImage {
    QImage image;            ///< Format_RGB32, owns its pixels
    double windowLo = 0;     ///< value shown as black
    double windowHi = 255;   ///< value shown as white
    bool autoWindow = false; ///< u16/f32: the window is the image's finite min/max
};

/// u8 is shown as is; u16 and f32 through an auto window over their finite min/max.
DisplayImage toDisplayImage(const cv::Mat& image);

/// A heat map of a CV_32F difference image (kl::absDifference): 0 is black, the largest
/// finite difference bright yellow; any non-zero difference is visibly above black.
QImage differenceHeatMap(const cv::Mat& difference);

} // namespace kl::gui
