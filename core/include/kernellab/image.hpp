#pragma once
// Images are cv::Mat: depth CV_8U, CV_16U or CV_32F with 1, 3 or 4 channels
// (OpenCV's BGR / BGRA channel order), any size from 1x1 up.
#include "kernellab/error.hpp"

#include <opencv2/core/mat.hpp>

#include <cstdint>
#include <string>

namespace kl {

/// Throws kl::InvalidArgument unless img is a non-empty u8/u16/f32 image with 1, 3 or 4 channels.
void validateImage(const cv::Mat& img, const std::string& what = "image");

/// "u8", "u16", "f32" for CV_8U, CV_16U, CV_32F; for messages also "s8", "s16",
/// "s32", "f64", "f16" (depths KernelLab refuses) and "depth N" otherwise.
std::string depthName(int depth);
/// Parses "u8", "u16", "f32"; throws kl::InvalidArgument.
int parseDepth(const std::string& name);

/// e.g. "512x512 u8 x3 (768.0 KiB)".
std::string describeImage(const cv::Mat& img);

/// Physical memory currently available to this process, in bytes (MemAvailable on Linux).
uint64_t availableMemoryBytes();
/// Throws kl::OutOfMemory, with the estimate in the message, when `bytes` exceed what is available.
void ensureMemoryAvailable(uint64_t bytes, const std::string& what);
/// m.create(rows, cols, type), first checking with ensureMemoryAvailable when that allocates
/// (a matrix of that size and type is reused as it is).
void createChecked(cv::Mat& m, int rows, int cols, int type, const std::string& what);
/// Human-readable size, "1.5 GiB".
std::string formatBytes(uint64_t bytes);
/// A size as people write it: whole bytes ("1048576"), or a number with a K, M, G or T suffix in
/// powers of 1024 ("512M", "1.5G", "64MiB"; case and a trailing "B" or "iB" are ignored).
/// Throws kl::InvalidArgument naming `field` for anything else, zero included.
uint64_t parseByteSize(const std::string& text, const std::string& field);

/// Calls f(T{}) with T the element type of `depth` (uint8_t, uint16_t or float), so
/// one generic lambda serves every supported depth; throws kl::InvalidArgument for
/// other depths, naming `what`.
template <typename F> void visitDepth(int depth, const std::string& what, F&& f)
{
    switch (depth) {
    case CV_8U: f(uint8_t{}); break;
    case CV_16U: f(uint16_t{}); break;
    case CV_32F: f(float{}); break;
    default: throw InvalidArgument(what + ": depth " + depthName(depth) + " is not supported (use u8, u16 or f32)");
    }
}

} // namespace kl
