#pragma once
// The tie probe's cases and tallies, shared by tie_probe.cpp (the GPU's outputs) and
// ../bench-h200-2026-12-04f/mma_variants_model.cpp (a model's), so that the two print comparable lines.
#include "kernellab/acceptance.hpp"
#include "kernellab/conv2d.hpp"
#include "probe_kernels.hpp"
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

/// Which kernels a probe's cases take (probe_kernels.hpp; the Gaussian is OpenCV's default sigma). The
/// first four are rank 1; the dense ones are the random, signed and wide taps over the whole k x k (full
/// rank, for direct-mma).
enum class ProbeKernels { Random, Gaussian, Signed, Wide, Dense, DenseSigned, DenseWide };

inline ProbeKernels parseProbeKernels(const std::string& name)
{
    if (name == "random") return ProbeKernels::Random;
    if (name == "gaussian") return ProbeKernels::Gaussian;
    if (name == "signed") return ProbeKernels::Signed;
    if (name == "wide") return ProbeKernels::Wide;
    if (name == "dense") return ProbeKernels::Dense;
    if (name == "dense-signed") return ProbeKernels::DenseSigned;
    if (name == "dense-wide") return ProbeKernels::DenseWide;
    throw std::invalid_argument("kernels are random, gaussian, signed, wide, dense, dense-signed or dense-wide, not '" +
                                name + "'");
}

struct ProbeCase {
    cv::Mat input;
    kl::Conv2DSpec spec;
};

/// Image n of a case: (side + n) x (side - n) uniform values below `top`, reflect border, a k x k kernel
/// of the class `kernels`, seeded by the case.
inline ProbeCase probeCase(int depth, int channels, int k, int n, int side, int top, ProbeKernels kernels)
{
    const uint64_t seed = 1000 * k + 100 * channels + n + (depth == CV_8U ? 50000 : 0);
    ProbeCase c{cv::Mat(side + n, side - n, CV_MAKETYPE(depth, channels)), {}};
    cv::RNG rng(seed);
    rng.fill(c.input, cv::RNG::UNIFORM, 0, top);
    const auto factor = [&](int rows, int cols, uint64_t factorSeed) -> cv::Mat {
        switch (kernels) {
        case ProbeKernels::Random: return positiveRandomKernel(rows, cols, factorSeed);
        case ProbeKernels::Gaussian: {
            const cv::Mat gaussian = cv::getGaussianKernel(k, 0, CV_32F);
            return rows == 1 ? cv::Mat(gaussian.t()) : gaussian;
        }
        case ProbeKernels::Signed: return signedRandomKernel(rows, cols, factorSeed);
        case ProbeKernels::Wide: return wideRandomKernel(rows, cols, factorSeed);
        case ProbeKernels::Dense: return positiveRandomKernel(k, k, seed);
        case ProbeKernels::DenseSigned: return signedRandomKernel(k, k, seed);
        case ProbeKernels::DenseWide: return wideRandomKernel(k, k, seed);
        }
        return {};
    };
    const bool dense = kernels == ProbeKernels::Dense || kernels == ProbeKernels::DenseSigned || kernels == ProbeKernels::DenseWide;
    c.spec.kernel = dense ? factor(k, k, seed) : cv::Mat(factor(k, 1, seed) * factor(1, k, seed + 7));
    c.spec.border = kl::BorderMode::Reflect;
    return c;
}

/// What the probe counts over a case's images: outputs, those that differ from the reference, and of
/// those how far the reference's unrounded sum lies from the tie, over sum|K * in|; the images whose
/// kernel the variant refused; with f32 output, the float rule's max|a - r| / max|r|.
struct ProbeTally {
    long elements = 0, differ = 0, outside = 0, refused = 0;
    double worst = 0, floatWorst = -1;
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
    /// An f32 output of the case against the f32 reference.
    void addFloat(const cv::Mat& actual, const cv::Mat& reference)
    {
        double largest = 0;
        cv::minMaxLoc(cv::abs(reference), nullptr, &largest);
        const double error = cv::norm(actual, reference, cv::NORM_INF);
        floatWorst = std::max(floatWorst, largest == 0 ? error : error / largest);
    }
    void print(int top, const char* variant, int depth, int channels, int k) const
    {
        std::printf("range %d: %s %s x%d k=%d: %ld elements, %ld differ, %ld outside the band, worst %.3g of sum|K in|", top,
                    variant, depth == CV_8U ? "u8" : "u16", channels, k, elements, differ, outside, worst);
        if (refused > 0) std::printf(", %ld images refused", refused);
        if (floatWorst >= 0) std::printf(", f32 output within %.3g of max|r|", floatWorst);
        std::printf("\n");
        std::fflush(stdout);
    }
};
