#pragma once
// Image files through OpenCV imgcodecs (IMREAD_UNCHANGED): PNG 8/16-bit, JPEG,
// TIFF 8/16/32f, BMP, PGM/PPM, OpenEXR. Errors are kl::IoError naming the file
// and the reason; a save never leaves a half-written file (temporary + rename).
#include <opencv2/core/mat.hpp>

#include <string>
#include <vector>

namespace kl {

/// Loads an image as u8/u16/f32 with 1, 3 or 4 channels (other depths are converted:
/// 16S/32S -> f32, 64F -> f32; 2-channel images are refused).
cv::Mat loadImage(const std::string& path);
/// Saves by extension; f32 needs .tif/.tiff/.exr, u16 needs .png/.tif/.tiff/.pgm/.ppm.
void saveImage(const std::string& path, const cv::Mat& image);
/// Extensions loadImage understands, lower-case with the dot (".png", ...).
const std::vector<std::string>& imageExtensions();

} // namespace kl
