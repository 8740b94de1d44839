#pragma once
// The tie probe's cases and tallies, shared by tie_probe.cpp (the GPU's outputs) and
// ../bench-h200-2026-12-04f/mma_variants_model.cpp (a model's), so that the two print comparable lines.
#include "kernellab/acceptance.hpp"
#include "kernellab/conv2d.hpp"
#include "positive_kernel.hpp"
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

struct ProbeCase {
    cv::Mat input;
    kl::Conv2DSpec spec;
};

/// Image n of a case: (side + n) x (side - n) uniform values below `top`, reflect border, a random
/// positive rank-1 k x k kernel (or with `gaussian` OpenCV's default-sigma Gaussian), seeded by the case.
inline ProbeCase probeCase(int depth, int channels, int k, int n, int side, int top, bool gaussian = false)
{
    const uint64_t seed = 1000 * k + 100 * channels + n + (depth == CV_8U ? 50000 : 0);
    ProbeCase c{cv::Mat(side + n, side - n, CV_MAKETYPE(depth, channels)), {}};
    cv::RNG rng(seed);
    rng.fill(c.input, cv::RNG::UNIFORM, 0, top);
    const cv::Mat gaussianFactor = cv::getGaussianKernel(k, 0, CV_32F);
    c.spec.kernel = gaussian ? cv::Mat(gaussianFactor * gaussianFactor.t())
                             : cv::Mat(positiveRandomKernel(k, 1, seed) * positiveRandomKernel(1, k, seed + 7));
    c.spec.border = kl::BorderMode::Reflect;
    return c;
}

/// What the probe counts over a case's images: outputs, those that differ from the reference, and of
/// those how far the reference's unrounded sum lies from the tie, over sum|K * in|.
struct ProbeTally {
    long elements = 0, differ = 0, outside = 0;
    double worst = 0;
    /// An output (y, x, channel c) that differs from the reference.
    void addDiffering(const ProbeCase& c, int y, int x, int channel)
    {
        ++differ;
        double magnitude = 0;
        const double s = kl::conv2dReferenceSumAt(c.input, c.spec, y, x, channel, &magnitude);
        const double rel = std::fabs(s - (std::floor(s) + 0.5)) / magnitude;
        worst = std::max(worst, rel);
        if (rel > kl::kTieRelTolerance) ++outside;
    }
    void print(int top, const char* variant, int depth, int channels, int k) const
    {
        std::printf("range %d: %s %s x%d k=%d: %ld elements, %ld differ, %ld outside the band, worst %.3g of sum|K in|\n", top,
                    variant, depth == CV_8U ? "u8" : "u16", channels, k, elements, differ, outside, worst);
        std::fflush(stdout);
    }
};
