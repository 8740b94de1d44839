#pragma once
// Custom filter kernels from files, for conv2d (a matrix) and conv1d (a row or column of taps).
#include <opencv2/core/mat.hpp>

#include <string>

namespace kl {

/// Reads a kernel file as CV_32F:
///   text (any extension but .npy): rows of numbers separated by commas, semicolons or
///        whitespace, '#' starts a comment, every row as long as the first;
///   NumPy .npy: a float32 or float64 array, 1-D (one row) or 2-D (rows x cols).
/// Every value must be a finite float. Throws kl::IoError naming the file and the problem
/// (with the line for text files). What size a kernel may have is the op's rule, not the reader's.
cv::Mat loadKernelFile(const std::string& path);

} // namespace kl
