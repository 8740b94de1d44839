#pragma once
// Image files through OpenCV imgcodecs (IMREAD_UNCHANGED): PNG 8/16-bit, JPEG,
// TIFF 8/16/32f, BMP, PGM/PPM/PNM, OpenEXR. Errors are kl::IoError naming the file
// and the reason; a save never leaves a half-written file (temporary + rename).
#include <opencv2/core/mat.hpp>

#include <string>
#include <vector>

namespace kl {

/// Loads an image as u8/u16/f32 with 1, 3 or 4 channels (other depths are converted:
/// 16S/32S -> f32, 64F -> f32; 2-channel images are refused). The format is recognised
/// by content, not by extension, and must be one of those above: other files never reach
/// OpenCV's decoders. Throws kl::IoError for a missing, empty, unreadable,
/// truncated or unrecognised file and for a header declaring more pixels than OpenCV
/// decodes (OPENCV_IO_MAX_IMAGE_PIXELS, 2^30 by default); kl::OutOfMemory when a PNG or
/// JPEG header declares more than the available memory.
cv::Mat loadImage(const std::string& path);
/// Saves by extension; f32 needs .tif/.tiff/.exr, u16 needs .png/.tif/.tiff/.pgm/.ppm/.pnm.
/// JPEG and BMP store 1 or 3 channels (no alpha), .pgm 1 channel, .ppm 3. An image the
/// format cannot store exactly is refused (kl::IoError naming the extensions that can)
/// rather than converted; JPEG (quality 95) is the only lossy format.
void saveImage(const std::string& path, const cv::Mat& image);
/// Throws the kl::IoError saveImage would for an image of `depth` and `channels` at `path`
/// (unknown extension, or a format that cannot store it), before any image exists.
void requireWritableImage(const std::string& path, int depth, int channels);
/// Saves `image` as a NumPy .npy array (format 1.0, C order, channels last): shape (rows, cols)
/// for one channel, (rows, cols, channels) otherwise; dtype |u1, <u2 or <f4. For tools that read
/// arrays (bench/peers.py); it is not one of imageExtensions(), since loadImage does not read it.
void saveImageNpy(const std::string& path, const cv::Mat& image);
/// Extensions loadImage understands and saveImage writes, lower-case with the dot (".png", ...).
const std::vector<std::string>& imageExtensions();

} // namespace kl
