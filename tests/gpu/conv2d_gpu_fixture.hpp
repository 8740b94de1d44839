#pragma once
// What conv2d's GPU tests (tst_conv2d_gpu and the variant families' tst_conv2d_variants_gpu,
// tst_conv2d_mma_gpu, tst_conv2d_integer_gpu) share: kernels and images of the kinds the variants take,
// each variant's reach as the tests state it on their own (checked against the registry's
// whyNotApplicable), and a fixture that runs one variant or checks all of them against the reference.
//
// Comparison rule: kernellab/acceptance.hpp (kltest::checkConv2D): f32 within kFloatRelTolerance
// of the reference's largest value; u8/u16 equal but at rounding ties.
#include "kernellab/conv2d.hpp"
#include "kernellab/error.hpp"
#include "kernellab/gpu/engine.hpp"
#include "kernellab/image.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace conv2dtest {

using kl::BorderMode;
using kl::Conv2DSpec;
using kl::gpu::GpuReport;
using kl::gpu::HostMemory;

inline const std::vector<BorderMode> kBorders = {BorderMode::Constant, BorderMode::Replicate, BorderMode::Reflect,
                                                 BorderMode::Reflect101, BorderMode::Wrap};
inline const std::vector<int> kDepths = {CV_8U, CV_16U, CV_32F};
inline const std::vector<int> kChannels = {1, 3, 4};

inline std::string describe(const cv::Mat& input, const Conv2DSpec& spec, const std::string& variant)
{
    return kl::describeImage(input) + ", kernel " + std::to_string(spec.kernel.cols) + "x" +
           std::to_string(spec.kernel.rows) + ", border " + kl::toString(spec.border) +
           (spec.flipKernel ? ", flipped" : "") + (spec.floatOutput ? ", float output" : "") + ", variant " + variant;
}

/// Random taps: positive and summing to 1 (outputs stay in the integer range), or in [-1, 1).
inline cv::Mat randomKernel(int rows, int cols, bool positive, uint64_t seed)
{
    cv::Mat k(rows, cols, CV_32F);
    cv::RNG rng(seed);
    rng.fill(k, cv::RNG::UNIFORM, positive ? 0.05 : -1.0, 1.0);
    if (positive) k /= cv::sum(k)[0];
    return k;
}

/// A rank-1 kernel with different, asymmetric factors (so a wrong flip or transpose shows).
inline cv::Mat randomSeparableKernel(int rows, int cols, uint64_t seed)
{
    return randomKernel(rows, 1, true, seed) * randomKernel(1, cols, true, seed + 1);
}

/// A kernel factor (rows x 1 or 1 x cols): randomKernel's positive taps with random signs, sum |tap| = 1.
inline cv::Mat signedFactor(int rows, int cols, uint64_t seed)
{
    cv::Mat_<float> taps = randomKernel(rows, cols, true, seed);
    cv::RNG rng(seed + 1000);
    for (float& tap : taps)
        if (rng.uniform(0, 2) == 1) tap = -tap;
    return std::move(taps);
}

/// A kernel factor of positive taps 2^-u, u uniform in [0, 8.5), summing to 1: they spread over nearly
/// all of the 2^9 below the largest that the tensor-core variants take.
inline cv::Mat wideFactor(int rows, int cols, uint64_t seed)
{
    cv::Mat_<float> taps(rows, cols);
    cv::RNG rng(seed);
    for (float& tap : taps) tap = std::exp2(-rng.uniform(0.0f, 8.5f));
    return taps / cv::sum(taps)[0];
}

/// The border value in input units, inside the range of the depth.
inline double borderValueFor(int depth)
{
    return depth == CV_8U ? 37.25 : depth == CV_16U ? 40000.5 : 0.3;
}

inline Conv2DSpec makeSpec(const cv::Mat& kernel, BorderMode border, int depth, bool flip = false)
{
    Conv2DSpec spec;
    spec.kernel = kernel;
    spec.border = border;
    spec.borderValue = borderValueFor(depth);
    spec.flipKernel = flip;
    return spec;
}

inline bool isSeparable(const Conv2DSpec& spec)
{
    return kl::separateKernel(kl::effectiveKernel(spec)).has_value();
}

inline bool compiledSize(int k)
{
    return std::find(kl::gpu::kConv2dCompiledSizes.begin(), kl::gpu::kConv2dCompiledSizes.end(), k) !=
           kl::gpu::kConv2dCompiledSizes.end();
}

/// The smallest magnitude of the taps that are not 0 (0 when all are).
inline float smallestTapMagnitude(const cv::Mat_<float>& taps)
{
    float smallest = 0;
    for (float t : taps)
        if (t != 0 && (smallest == 0 || std::fabs(t) < smallest)) smallest = std::fabs(t);
    return smallest;
}

/// A random image for a k x k kernel of values below 1/16 of the depth's range: u16 as 12-bit data (0 ..
/// 4096), u8 0 .. 16; 2003x521 at 3x3 (the only size where u8 went past the acceptance rule, at 7 of
/// 4.2M outputs), 1021x263 otherwise. The tensor cores lost the low bits of such images' sums while
/// their bytes were f16 subnormals (docs/performance.md, "Fifty-ninth step").
inline cv::Mat darkImage(int k, int depth, int channels, uint64_t seed)
{
    return kltest::randomImage(k == 3 ? 2003 : 1021, k == 3 ? 521 : 263, depth, channels, seed) / 16;
}

/// The tensor-core variants' cases for taps unlike the tests' positive random ones: at 3x3 and 15x15,
/// on 1, 3 and 4 channels of 1021x263 full-range images, rank-1 kernels of signed factors and of wide
/// factors (signedFactor, wideFactor), each with integer and f32 output, through
/// `check(input, spec, streams, floatOutput)`.
template <typename Check>
void checkSignedAndWideTaps(int depth, uint64_t& seed, const Check& check)
{
    for (int k : {3, 15})
        for (int channels : kChannels)
            for (auto factor : {signedFactor, wideFactor})
                for (bool floatOutput : {false, true}) {
                    const cv::Mat input = kltest::randomImage(1021, 263, depth, channels, ++seed);
                    const cv::Mat kernel = factor(k, 1, seed) * factor(1, k, seed + 1);
                    check(input, makeSpec(kernel, BorderMode::Reflect101, depth, seed % 2 == 0), 1, floatOutput);
                }
}

/// Whether a tensor-core pass (separable-mma's column pass, rows-mma's row pass) holds every tap of
/// `taps` as two f16 halves to 22 bits, the largest scaled into [2^6, 2^7) (the split
/// conv2d_separable.cu's splitMmaTaps makes).
inline bool tapsSplitInF16(const std::vector<float>& taps)
{
    double largest = 0;
    for (float t : taps) largest = std::max(largest, std::fabs(double(t)));
    if (largest == 0) return true;
    const int exponent = 6 - std::ilogb(largest);
    for (float t : taps) {
        const float scaled = std::ldexp(t, exponent);
        const float high = float(cv::float16_t(scaled)), low = float(cv::float16_t(scaled - high));
        if (std::fabs(double(scaled) - high - low) > std::ldexp(std::fabs(double(scaled)), -22)) return false;
    }
    return true;
}

/// Whether the integer variant runs `spec` on `input` (u8 in and out, a square compiled size, a rank-1
/// kernel of non-negative multiples of 1/256 summing to at most 1, or else of non-negative integers
/// times 1 or the smallest tap magnitude whose sum times 255 fits 16 bits; either way row taps, as
/// integerSeparableKernel splits them, of at most 255); elsewhere it is an InvalidArgument.
inline bool integerApplies(const cv::Mat& input, const Conv2DSpec& spec)
{
    const cv::Mat kernel = kl::effectiveKernel(spec);
    if (input.depth() != CV_8U || spec.floatOutput || kernel.rows != kernel.cols || !compiledSize(kernel.rows))
        return false;
    const auto byteRow = [](const std::optional<kl::IntegerSeparableKernel>& k) {
        return k && std::all_of(k->row.begin(), k->row.end(), [](uint32_t t) { return t <= 255; });
    };
    if (byteRow(kl::integerSeparableKernel(kernel, 8)) && cv::sum(kernel)[0] <= 1.0) return true;
    const cv::Mat_<float> taps = kernel;
    const float smallest = smallestTapMagnitude(taps);
    const auto integersTimes = [&](float factor) {
        for (float t : taps)
            if (t / factor != std::nearbyint(t / factor) || t / factor * factor != t) return false;
        const cv::Mat integers = kernel / factor;
        return byteRow(kl::integerSeparableKernel(integers, 0)) && 255 * cv::sum(integers)[0] <= 65535;
    };
    return integersTimes(1) || (smallest > 0 && integersTimes(smallest));
}

/// Whether dp4a (u8 in) or dp2a (u16 in) runs `spec` on `input`: a 3x3 or 5x5 kernel of integer taps
/// in [-128, 127] (for dp2a with magnitudes summing to at most 64), or of such taps times the
/// kernel's smallest tap magnitude, and, for the constant border, an integer border value the
/// image's depth holds.
inline bool dotApplies(const std::string& variant, const cv::Mat& input, const Conv2DSpec& spec)
{
    const int depth = variant == "dp4a" ? CV_8U : CV_16U;
    const double maxValue = depth == CV_8U ? 255 : 65535;
    const cv::Mat kernel = kl::effectiveKernel(spec);
    const cv::Mat_<float> taps = kernel;
    const auto byteTapsTimes = [&](float scale) {
        double absSum = 0;
        for (float t : taps) {
            const float q = t / scale;
            if (q != std::nearbyint(q) || q < -128 || q > 127 || q * scale != t) return false;
            absSum += std::fabs(q);
        }
        return depth == CV_8U || absSum <= 64;
    };
    const float smallest = smallestTapMagnitude(taps);
    const double v = spec.borderValue;
    const bool border = spec.border != BorderMode::Constant || (v == std::nearbyint(v) && v >= 0 && v <= maxValue);
    return input.depth() == depth && kernel.rows == kernel.cols && (kernel.rows == 3 || kernel.rows == 5) &&
           (byteTapsTimes(1) || (smallest > 0 && byteTapsTimes(smallest))) && border;
}

/// A K x K kernel of random integers in [low, high], both ends included.
inline cv::Mat randomIntegerKernel(int k, int low, int high, uint64_t seed)
{
    cv::Mat_<float> taps(k, k);
    cv::RNG rng(seed);
    for (float& t : taps) t = float(rng.uniform(low, high + 1));
    taps(0, 0) = float(low);
    taps(k - 1, k - 2) = float(high);
    return std::move(taps);
}

/// A K x K kernel column * row^T / 256 of random non-negative integers whose sums multiply to at most
/// 256 (so the taps sum to at most 1), different and asymmetric on each side.
inline cv::Mat dyadicKernel(int k, uint64_t seed)
{
    cv::RNG rng(seed);
    const auto side = [&](int budget) {
        cv::Mat_<float> v(k, 1, 0.f);
        for (int n = 0; n < budget; ++n) v(rng.uniform(0, k)) += 1;
        return v;
    };
    const cv::Mat column = side(16), row = side(rng.uniform(1, 17));
    return cv::Mat(column * row.t() / 256);
}

/// A K x K kernel column * row^T * factor of random non-negative integers, each side holding a 1 (so
/// the smallest tap is the factor) and summing to at most 16 (255 times the integers' sum fits 16
/// bits), different and asymmetric on each side.
inline cv::Mat scaledIntegerKernel(int k, float factor, uint64_t seed)
{
    cv::RNG rng(seed);
    const auto side = [&](int budget) {
        cv::Mat_<float> v(k, 1, 0.f);
        const int one = rng.uniform(0, k);
        v(one) = 1;
        for (int n = 1; n < budget; ++n) {
            const int i = rng.uniform(0, k);
            if (i != one) v(i) += 1;
        }
        return v;
    };
    const cv::Mat column = side(16), row = side(rng.uniform(1, 17));
    return cv::Mat(column * row.t() * factor);
}

/// The comparison rule (kltest::checkConv2D); empty when `gpu` passes, else why not.
inline std::string compareWithReference(const cv::Mat& gpu, const cv::Mat& expected, const cv::Mat& input,
                                        const Conv2DSpec& spec)
{
    return kltest::checkConv2D(gpu, expected, input, spec).failure;
}

/// The GPU engine of a test class (made by its initTestCase, after the skip without a device), one
/// run of a variant, and every variant checked at once.
class Conv2dGpuFixture {
protected:
    std::unique_ptr<kl::gpu::Engine> engine_;

    /// One GPU run with `options` (repetitions 1, no warm-up unless set): the output, and the report.
    cv::Mat run(const cv::Mat& input, const Conv2DSpec& spec, kl::gpu::RunOptions options, GpuReport* report = nullptr)
    {
        cv::Mat output;
        const GpuReport r = engine_->conv2d(input, spec, options, output);
        if (report) *report = r;
        return output;
    }
    cv::Mat run(const cv::Mat& input, const Conv2DSpec& spec, const std::string& variant, int streams = 1,
                HostMemory memory = HostMemory::Pageable)
    {
        kl::gpu::RunOptions options;
        options.variant = variant;
        options.streams = streams;
        options.minChunkBytes = 0;  // 4 chunks per stream on small inputs too: chunk boundaries
        options.memory = memory;
        options.repetitions = 1;
        options.warmup = 0;
        return run(input, spec, options);
    }

    /// Whether the tma variant runs `spec` on `input` (f32 in and out, one channel, a square compiled
    /// size, compute capability 9.0 or newer and device code built for it); elsewhere it is an InvalidArgument.
    bool tmaApplies(const cv::Mat& input, const Conv2DSpec& spec) const
    {
        const int k = spec.kernel.rows;
        return input.depth() == CV_32F && input.channels() == 1 && spec.kernel.cols == k &&
               compiledSize(k) && engine_->device().computeMajor >= 9 &&
               engine_->device().deviceCodeArchitecture >= 900;
    }
    /// Whether the tensor-core variants take `spec`'s border on a u8/u16 `input`: any border but a
    /// constant one whose value is not a value of the image's depth.
    static bool tensorCoreBorderFits(const cv::Mat& input, const Conv2DSpec& spec)
    {
        const double v = spec.borderValue, largestValue = input.depth() == CV_8U ? 255 : 65535;
        return spec.border != BorderMode::Constant || (v == std::floor(v) && v >= 0 && v <= largestValue);
    }
    /// Whether a tensor-core variant runs `spec` on `input` (a u8/u16 image, a rank-1 kernel of a square
    /// compiled size whose tensor-core pass's taps, the row taps for `rowPass`, two f16 halves hold, a
    /// constant border value the depth holds, compute capability 8.0 or newer and device code built
    /// for it).
    bool tensorCoreApplies(const cv::Mat& input, const Conv2DSpec& spec, bool rowPass) const
    {
        const cv::Mat kernel = kl::effectiveKernel(spec);
        const std::optional<kl::SeparableKernel> factors = kl::separateKernel(kernel);
        if (input.depth() == CV_32F || !factors || kernel.rows != kernel.cols || !compiledSize(kernel.rows) ||
            engine_->device().computeMajor < 8 || engine_->device().deviceCodeArchitecture < 800)
            return false;
        return tensorCoreBorderFits(input, spec) && tapsSplitInF16(rowPass ? factors->row : factors->column);
    }
    /// Whether separable-mma runs `spec` on `input` (tensorCoreApplies, on the column taps); elsewhere
    /// it is an InvalidArgument.
    bool mmaApplies(const cv::Mat& input, const Conv2DSpec& spec) const { return tensorCoreApplies(input, spec, false); }
    /// Whether rows-mma runs `spec` on `input` (tensorCoreApplies on the row taps); elsewhere it is an
    /// InvalidArgument.
    bool rowsMmaApplies(const cv::Mat& input, const Conv2DSpec& spec) const { return tensorCoreApplies(input, spec, true); }
    /// Whether direct-mma runs `spec` on `input` (a u8 image, a square kernel of size 3, 5, 7 or 9 whose taps
    /// two f16 halves hold, a constant border value u8 holds, compute capability 8.0 or newer and device
    /// code built for it); elsewhere it is an InvalidArgument.
    bool directMmaApplies(const cv::Mat& input, const Conv2DSpec& spec) const
    {
        const cv::Mat_<float> kernel = kl::effectiveKernel(spec);
        return input.depth() == CV_8U && kernel.rows == kernel.cols && kernel.rows <= 9 && compiledSize(kernel.rows) &&
               tensorCoreBorderFits(input, spec) && engine_->device().computeMajor >= 8 &&
               engine_->device().deviceCodeArchitecture >= 800 &&
               tapsSplitInF16(std::vector<float>(kernel.begin(), kernel.end()));
    }
    bool applies(const std::string& variant, const cv::Mat& input, const Conv2DSpec& spec) const
    {
        if (variant == "separable-mma") return mmaApplies(input, spec);
        if (variant == "rows-mma") return rowsMmaApplies(input, spec);
        if (variant == "direct-mma") return directMmaApplies(input, spec);
        if (variant == "separable") return isSeparable(spec);
        if (variant == "separable-tiles")
            return isSeparable(spec) && spec.kernel.rows == spec.kernel.cols && compiledSize(spec.kernel.rows);
        if (variant == "tma") return tmaApplies(input, spec);
        if (variant == "integer") return integerApplies(input, spec);
        if (variant == "dp4a" || variant == "dp2a") return dotApplies(variant, input, spec);
        if (variant == "staged-rows")
            return spec.kernel.rows == spec.kernel.cols && spec.kernel.rows <= 7 && compiledSize(spec.kernel.rows);
        return true;
    }

    /// Every applicable variant (and auto) on `input` against the reference; the others refuse,
    /// and the registry's whyNotApplicable agrees with this test's own rules (applies()).
    void checkAllVariants(const cv::Mat& input, const Conv2DSpec& spec)
    {
        const cv::Mat expected = kltest::conv2dReferenceOnAllThreads(input, spec);
        std::vector<std::string> names = kl::gpu::variants("conv2d");
        names.push_back("auto");
        for (const std::string& variant : names) {
            const std::string reason = kl::gpu::whyNotApplicable(variant, input, spec, engine_->device());
            QVERIFY2(reason.empty() == applies(variant, input, spec), kltest::msg(describe(input, spec, variant) + ": " + reason));
            if (!reason.empty()) {
                KL_VERIFY_THROWS(kl::InvalidArgument, "variant '" + variant + "' needs", run(input, spec, variant));
                continue;
            }
            const cv::Mat gpu = run(input, spec, variant);
            const std::string failure = compareWithReference(gpu, expected, input, spec);
            QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, variant) + ": " + failure));
        }
    }
};

} // namespace conv2dtest
