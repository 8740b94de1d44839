#pragma once
// The probes' kernels: the tests' positive random factors (tst_conv2d_gpu.cpp's randomKernel with
// positive = true), uniform taps in [0.05, 1] normalised to sum 1.
#include <opencv2/core.hpp>
#include <cstdint>

inline cv::Mat positiveRandomKernel(int rows, int cols, uint64_t seed)
{
    cv::Mat k(rows, cols, CV_32F);
    cv::RNG rng(seed);
    rng.fill(k, cv::RNG::UNIFORM, 0.05, 1.0);
    k /= cv::sum(k)[0];
    return k;
}
