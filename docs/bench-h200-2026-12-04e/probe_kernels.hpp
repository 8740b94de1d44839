#pragma once
// The probes' kernel factors, k x 1 or 1 x k, seeded:
// - positiveRandomKernel: the tests' positive random factors (tst_conv2d_gpu.cpp's randomKernel with
//   positive = true), uniform taps in [0.05, 1] normalised to sum 1;
// - signedRandomKernel: positiveRandomKernel's taps with random signs (sum |tap| = 1);
// - wideRandomKernel: positive taps 2^-u with u uniform in [0, 8.5), normalised to sum 1, so that they
//   spread over nearly all of the 2^9 below the largest tap that splitMmaTaps accepts.
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

inline cv::Mat signedRandomKernel(int rows, int cols, uint64_t seed)
{
    cv::Mat_<float> k = positiveRandomKernel(rows, cols, seed);
    cv::RNG rng(seed + 1000);
    for (float& tap : k)
        if (rng.uniform(0, 2) == 1) tap = -tap;
    return k;
}

inline cv::Mat wideRandomKernel(int rows, int cols, uint64_t seed)
{
    cv::Mat k(rows, cols, CV_32F);
    cv::RNG rng(seed);
    for (float& tap : cv::Mat_<float>(k)) tap = std::exp2(-rng.uniform(0.0f, 8.5f));
    k /= cv::sum(k)[0];
    return k;
}
