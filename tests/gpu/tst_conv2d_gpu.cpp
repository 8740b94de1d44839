// GPU conv2d against core's reference: every variant, depth, channel count and
// border mode; kernel sizes 1..63 (non-square too) on sizes from 1x1 up, the
// compiled sizes (kConv2dCompiledSizes: unrolled shared tiles, the TMA-fed tiles, the
// separable ring) on widths that are multiples of 4 and widths that are not; the
// separable split; the integer ring on dyadic kernels and dp4a / dp2a on integer ones, bitwise; streams, host memory and
// kernel-only mode; the report.
// `throughput` (KL_BENCH=1 only) prints the benchmark that docs/performance.md
// (conv2d section) quotes.
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
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using kl::BorderMode;
using kl::Conv2DSpec;
using kl::gpu::GpuReport;
using kl::gpu::HostMemory;

namespace {

const std::vector<BorderMode> kBorders = {BorderMode::Constant, BorderMode::Replicate, BorderMode::Reflect,
                                          BorderMode::Reflect101, BorderMode::Wrap};
const std::vector<int> kDepths = {CV_8U, CV_16U, CV_32F};
const std::vector<int> kChannels = {1, 3, 4};

std::string describe(const cv::Mat& input, const Conv2DSpec& spec, const std::string& variant)
{
    return kl::describeImage(input) + ", kernel " + std::to_string(spec.kernel.cols) + "x" +
           std::to_string(spec.kernel.rows) + ", border " + kl::toString(spec.border) +
           (spec.flipKernel ? ", flipped" : "") + (spec.floatOutput ? ", float output" : "") + ", variant " + variant;
}

/// Random taps: positive and summing to 1 (outputs stay in the integer range), or in [-1, 1).
cv::Mat randomKernel(int rows, int cols, bool positive, uint64_t seed)
{
    cv::Mat k(rows, cols, CV_32F);
    cv::RNG rng(seed);
    rng.fill(k, cv::RNG::UNIFORM, positive ? 0.05 : -1.0, 1.0);
    if (positive) k /= cv::sum(k)[0];
    return k;
}

/// A rank-1 kernel with different, asymmetric factors (so a wrong flip or transpose shows).
cv::Mat randomSeparableKernel(int rows, int cols, uint64_t seed)
{
    return randomKernel(rows, 1, true, seed) * randomKernel(1, cols, true, seed + 1);
}

/// A kernel factor (rows x 1 or 1 x cols): randomKernel's positive taps with random signs, sum |tap| = 1.
cv::Mat signedFactor(int rows, int cols, uint64_t seed)
{
    cv::Mat_<float> taps = randomKernel(rows, cols, true, seed);
    cv::RNG rng(seed + 1000);
    for (float& tap : taps)
        if (rng.uniform(0, 2) == 1) tap = -tap;
    return std::move(taps);
}

/// A kernel factor of positive taps 2^-u, u uniform in [0, 8.5), summing to 1: they spread over nearly
/// all of the 2^9 below the largest that the tensor-core variants take.
cv::Mat wideFactor(int rows, int cols, uint64_t seed)
{
    cv::Mat_<float> taps(rows, cols);
    cv::RNG rng(seed);
    for (float& tap : taps) tap = std::exp2(-rng.uniform(0.0f, 8.5f));
    return taps / cv::sum(taps)[0];
}

/// The border value in input units, inside the range of the depth.
double borderValueFor(int depth)
{
    return depth == CV_8U ? 37.25 : depth == CV_16U ? 40000.5 : 0.3;
}

Conv2DSpec makeSpec(const cv::Mat& kernel, BorderMode border, int depth, bool flip = false)
{
    Conv2DSpec spec;
    spec.kernel = kernel;
    spec.border = border;
    spec.borderValue = borderValueFor(depth);
    spec.flipKernel = flip;
    return spec;
}

bool isSeparable(const Conv2DSpec& spec)
{
    return kl::separateKernel(kl::effectiveKernel(spec)).has_value();
}

bool compiledSize(int k)
{
    return std::find(kl::gpu::kConv2dCompiledSizes.begin(), kl::gpu::kConv2dCompiledSizes.end(), k) !=
           kl::gpu::kConv2dCompiledSizes.end();
}

/// The smallest magnitude of the taps that are not 0 (0 when all are).
float smallestTapMagnitude(const cv::Mat_<float>& taps)
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
cv::Mat darkImage(int k, int depth, int channels, uint64_t seed)
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
bool tapsSplitInF16(const std::vector<float>& taps)
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
bool integerApplies(const cv::Mat& input, const Conv2DSpec& spec)
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
bool dotApplies(const std::string& variant, const cv::Mat& input, const Conv2DSpec& spec)
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
cv::Mat randomIntegerKernel(int k, int low, int high, uint64_t seed)
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
cv::Mat dyadicKernel(int k, uint64_t seed)
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
cv::Mat scaledIntegerKernel(int k, float factor, uint64_t seed)
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
std::string compareWithReference(const cv::Mat& gpu, const cv::Mat& expected, const cv::Mat& input,
                                 const Conv2DSpec& spec)
{
    return kltest::checkConv2D(gpu, expected, input, spec).failure;
}

} // namespace

class TestConv2dGpu : public QObject {
    Q_OBJECT

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
        const cv::Mat expected = kl::conv2dReference(input, spec);
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

private slots:
    void initTestCase()
    {
        const kl::gpu::GpuStatus status = kl::gpu::gpuStatus();
        if (!status.available) QSKIP(qPrintable(QString::fromStdString("no CUDA device: " + status.reason)));
        engine_ = std::make_unique<kl::gpu::Engine>();
    }

    // Every variant x depth x channels x border mode, with a rank-1 5x3 kernel (so the separable
    // variant runs too), on sizes from 1x1 to one not a multiple of any tile.
    void everyVariantDepthChannelBorder_data()
    {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("cols");
        QTest::newRow("1x1") << 1 << 1;
        QTest::newRow("1x200") << 1 << 200;
        QTest::newRow("200x1") << 200 << 1;
        QTest::newRow("97x61") << 97 << 61;
        QTest::newRow("1021x769") << 1021 << 769;
    }
    void everyVariantDepthChannelBorder()
    {
        QFETCH(int, rows);
        QFETCH(int, cols);
        uint64_t seed = 1;
        for (int depth : kDepths)
            for (int channels : kChannels)
                for (BorderMode border : kBorders) {
                    const cv::Mat input = kltest::randomImage(rows, cols, depth, channels, ++seed);
                    const Conv2DSpec spec =
                        makeSpec(randomSeparableKernel(5, 3, seed), border, depth, /*flip=*/seed % 2 == 0);
                    checkAllVariants(input, spec);
                }
    }

    // The compiled sizes: shared's unrolled tiles (all channel planes staged at once, 69 KB of
    // shared memory for 15x15 on 4 channels) and the separable ring, every depth x channels x
    // border, on rows that take vector loads and stores (136 columns) and odd ones (45 columns:
    // element by element, except on 4 channels); tiles and ring strips repeat down the image.
    void compiledSizes_data()
    {
        QTest::addColumn<int>("kernelSize");
        for (int k : kl::gpu::kConv2dCompiledSizes) QTest::newRow((std::to_string(k) + "x" + std::to_string(k)).c_str()) << k;
    }
    void compiledSizes()
    {
        QFETCH(int, kernelSize);
        uint64_t seed = 20000 + 100 * uint64_t(kernelSize);
        for (const auto& [rows, cols] : {std::pair<int, int>{70, 136}, {83, 45}})
            for (int depth : kDepths)
                for (int channels : kChannels)
                    for (BorderMode border : kBorders) {
                        const cv::Mat input = kltest::randomImage(rows, cols, depth, channels, ++seed);
                        const bool flip = seed % 2 == 0;
                        checkAllVariants(input, makeSpec(randomKernel(kernelSize, kernelSize, depth != CV_32F, seed),
                                                         border, depth, flip));
                        checkAllVariants(input, makeSpec(randomSeparableKernel(kernelSize, kernelSize, seed), border,
                                                         depth, !flip));
                        checkAllVariants(input, makeSpec(dyadicKernel(kernelSize, seed), border, depth, flip));
                    }
    }

    // separable-tiles' blocks walk strips of rows in steps through a ring of row-pass results:
    // an image of several strips, a partial last strip and step, and bands that end inside the
    // row, every depth x channels, two borders, the smallest and largest compiled size and 9x9 (where
    // the u16 4-channel ring's threads own one channel of 4 pixels and exchange results to store
    // whole pixels). Its sums are the separable ring's, in the same order: the two agree bit for bit.
    void separableTilesStrips()
    {
        uint64_t seed = 30000;
        for (int k : {3, 9, 15})
            for (int depth : kDepths)
                for (int channels : kChannels)
                    for (BorderMode border : {BorderMode::Constant, BorderMode::Reflect101}) {
                        const cv::Mat input = kltest::randomImage(1021, 263, depth, channels, ++seed);
                        const Conv2DSpec spec = makeSpec(randomSeparableKernel(k, k, seed), border, depth, seed % 2 == 0);
                        const cv::Mat tiles = run(input, spec, "separable-tiles");
                        const std::string failure = compareWithReference(tiles, kl::conv2dReference(input, spec), input, spec);
                        QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, "separable-tiles") + ": " + failure));
                        QVERIFY2(kltest::bitwiseEqual(tiles, run(input, spec, "separable")),
                                 kltest::msg(describe(input, spec, "separable-tiles") + ": differs from separable"));
                    }
    }

    // separable-mma against the reference under the acceptance rule (its column pass sums on tensor
    // cores, in another order): random rank-1 taps of every compiled size, u8/u16 with integer and
    // f32 output, 1, 3 and 4 channels, every border (the constant one at a value the depth holds),
    // sizes from 1x1 to several bands, all-maximum images; then images of several strips with a
    // partial last strip and step, on 3 streams; then dark images (darkImage); then taps of mixed signs
    // and taps spread over the 2^9 it takes (checkSignedAndWideTaps), with integer and f32 output. The
    // random-input bound on differences near ties holds for each depth's cases together: on images of a
    // few elements, one case's "1 + 1%" is stricter than the rate it bounds. It refuses what it cannot
    // hold exactly.
    void separableMmaMatchesReference()
    {
        if (engine_->device().computeMajor < 8 || engine_->device().deviceCodeArchitecture < 800)
            QSKIP("separable-mma needs compute capability 8.0 or newer and device code built for it");
        uint64_t seed = 50000;
        kl::Verdict total;
        // f32 output where `floatOutput` says, else in one case of 5 (by seed)
        const auto check = [&](const cv::Mat& input, Conv2DSpec spec, int streams, std::optional<bool> floatOutput = {}) {
            spec.floatOutput = floatOutput.value_or(seed % 5 == 0);
            const cv::Mat gpu = run(input, spec, "separable-mma", streams, HostMemory::Pinned);
            const kl::Verdict verdict = kl::acceptConv2D(gpu, kl::conv2dReference(input, spec), input, spec);
            QVERIFY2(verdict.passed(), kltest::msg(describe(input, spec, "separable-mma") + ": " + verdict.failure));
            if (!spec.floatOutput) total.elements += verdict.elements, total.nearTies += verdict.nearTies;
        };
        for (int depth : {CV_8U, CV_16U}) {
            const double heldValue = depth == CV_8U ? 200 : 40000;
            total = {};
            for (int k : kl::gpu::kConv2dCompiledSizes)
                for (const auto& [rows, cols] : {std::pair<int, int>{1, 1}, {4, 5}, {61, 97}})
                    for (int channels : kChannels)
                        for (BorderMode border : kBorders) {
                            cv::Mat input = kltest::randomImage(rows, cols, depth, channels, ++seed);
                            if (seed % 7 == 0) input.setTo(cv::Scalar::all(depth == CV_8U ? 255 : 65535));
                            Conv2DSpec spec = makeSpec(randomSeparableKernel(k, k, seed), border, depth, seed % 2 == 0);
                            spec.borderValue = heldValue;
                            check(input, spec, 1);
                        }
            for (int k : {3, 15})
                for (int channels : kChannels)
                    for (BorderMode border : {BorderMode::Constant, BorderMode::Reflect101}) {
                        const cv::Mat input = kltest::randomImage(1021, 263, depth, channels, ++seed);
                        Conv2DSpec spec = makeSpec(randomSeparableKernel(k, k, seed), border, depth, seed % 2 == 0);
                        spec.borderValue = heldValue;
                        check(input, spec, 3);
                    }
            for (int k : {3, 15})
                for (int channels : kChannels) {
                    const cv::Mat input = darkImage(k, depth, channels, ++seed);
                    check(input, makeSpec(randomSeparableKernel(k, k, seed), BorderMode::Reflect, depth, seed % 2 == 0), 1);
                }
            checkSignedAndWideTaps(depth, seed, check);
            kl::applyRandomInputNearTieBound(total, depth);
            QVERIFY2(total.passed(), kltest::msg(kl::depthName(depth) + " results, all cases: " + total.failure));
        }
        const cv::Mat u8 = kltest::randomImage(16, 16, CV_8U, 1, 51);
        const Conv2DSpec rankOne = makeSpec(randomSeparableKernel(5, 5, 52), BorderMode::Constant, CV_8U);  // border 37.25
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant 'separable-mma' needs", run(u8, rankOne, "separable-mma"));
        cv::Mat column = (cv::Mat_<float>(5, 1) << 1, 1e-4f, 1, 1e-4f, 1), row = (cv::Mat_<float>(1, 5) << 1, 2, 3, 2, 1);
        const Conv2DSpec tinyColumnTaps = makeSpec(cv::Mat(column * row), BorderMode::Reflect101, CV_8U);
        QCOMPARE(mmaApplies(u8, tinyColumnTaps), false);
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant 'separable-mma' needs", run(u8, tinyColumnTaps, "separable-mma"));
        const cv::Mat f32 = kltest::randomImage(16, 16, CV_32F, 1, 53);
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant 'separable-mma' needs",
                         run(f32, makeSpec(randomSeparableKernel(5, 5, 54), BorderMode::Reflect101, CV_32F), "separable-mma"));
    }

    // rows-mma against the reference under the acceptance rule (its row pass sums on tensor cores):
    // random rank-1 taps of every compiled size on u8 and u16 images of 1, 3 and 4 channels, integer and
    // f32 output, every border (the constant one at an image value), sizes from 1x1 (narrower than a
    // band, both edges in one) to several bands with a partial last one, all-maximum images; then images
    // of several strips with a partial last batch on 1 and 3 streams, which agree bit for bit; then dark
    // images (darkImage); then taps of mixed signs and taps spread over the 2^9 it takes
    // (checkSignedAndWideTaps), with integer and f32 output. It refuses what it cannot hold exactly.
    void rowsMmaMatchesReference()
    {
        if (engine_->device().computeMajor < 8 || engine_->device().deviceCodeArchitecture < 800)
            QSKIP("rows-mma needs compute capability 8.0 or newer and device code built for it");
        uint64_t seed = 52000;
        kl::Verdict total[2];  // u8, u16
        cv::Mat gpu;
        // f32 output where `floatOutput` says, else in one case of 5 (by seed)
        const auto check = [&](const cv::Mat& input, Conv2DSpec spec, int streams, std::optional<bool> floatOutput = {}) {
            spec.floatOutput = floatOutput.value_or(seed % 5 == 0);
            gpu = run(input, spec, "rows-mma", streams, HostMemory::Pinned);
            const kl::Verdict verdict = kl::acceptConv2D(gpu, kl::conv2dReference(input, spec), input, spec);
            QVERIFY2(verdict.passed(), kltest::msg(describe(input, spec, "rows-mma") + ": " + verdict.failure));
            kl::Verdict& sum = total[input.depth() == CV_16U];
            if (!spec.floatOutput) sum.elements += verdict.elements, sum.nearTies += verdict.nearTies;
        };
        for (int depth : {CV_16U, CV_8U})
            for (int channels : {1, 3, 4}) {
                const double largest = depth == CV_8U ? 255 : 65535;
                for (int k : kl::gpu::kConv2dCompiledSizes)
                    // 9001 x 19 at 15x15: 265 strips of the fewest rows, more than the kernel's table of 255 holds
                    for (const auto& [rows, cols] : {std::pair<int, int>{1, 1}, {4, 5}, {61, 97}, {37, 531}, {9001, 19}})
                        for (BorderMode border : kBorders) {
                            cv::Mat input = kltest::randomImage(rows, cols, depth, channels, ++seed);
                            if (seed % 7 == 0) input.setTo(cv::Scalar::all(largest));
                            Conv2DSpec spec = makeSpec(randomSeparableKernel(k, k, seed), border, depth, seed % 2 == 0);
                            spec.borderValue = std::floor(largest * 0.6);
                            check(input, spec, 1);
                        }
                for (int k : {9, 15})
                    for (BorderMode border : {BorderMode::Constant, BorderMode::Wrap, BorderMode::Reflect}) {
                        const cv::Mat input = kltest::randomImage(1021, 263, depth, channels, ++seed);
                        Conv2DSpec spec = makeSpec(randomSeparableKernel(k, k, seed), border, depth, seed % 2 == 0);
                        spec.borderValue = std::floor(largest * 0.02);
                        check(input, spec, 1);
                        const cv::Mat one = gpu;
                        check(input, spec, 3);
                        QVERIFY2(kltest::bitwiseEqual(one, gpu),
                                 kltest::msg(describe(input, spec, "rows-mma") + ": 3 streams differ from 1"));
                    }
                for (int k : {3, 9, 15}) {
                    const cv::Mat input = darkImage(k, depth, channels, ++seed);
                    check(input, makeSpec(randomSeparableKernel(k, k, seed), BorderMode::Reflect, depth, seed % 2 == 0), 1);
                }
            }
        for (int depth : {CV_16U, CV_8U}) checkSignedAndWideTaps(depth, seed, check);
        kl::applyRandomInputNearTieBound(total[0], CV_8U);
        QVERIFY2(total[0].passed(), kltest::msg("u8 results, all cases: " + total[0].failure));
        kl::applyRandomInputNearTieBound(total[1], CV_16U);
        QVERIFY2(total[1].passed(), kltest::msg("u16 results, all cases: " + total[1].failure));
        const cv::Mat u16 = kltest::randomImage(16, 16, CV_16U, 1, 53);
        const Conv2DSpec rankOne = makeSpec(randomSeparableKernel(5, 5, 54), BorderMode::Replicate, CV_16U);
        const cv::Mat f32 = kltest::randomImage(16, 16, CV_32F, 1, 56);
        QCOMPARE(rowsMmaApplies(f32, rankOne), false);
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant 'rows-mma' needs", run(f32, rankOne, "rows-mma"));
        cv::Mat column = (cv::Mat_<float>(5, 1) << 1, 2, 3, 2, 1), row = (cv::Mat_<float>(1, 5) << 1, 1e-4f, 1, 1e-4f, 1);
        const Conv2DSpec tinyRowTaps = makeSpec(cv::Mat(column * row), BorderMode::Reflect101, CV_16U);
        QCOMPARE(rowsMmaApplies(u16, tinyRowTaps), false);
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant 'rows-mma' needs", run(u16, tinyRowTaps, "rows-mma"));
        Conv2DSpec heldNot = makeSpec(randomSeparableKernel(5, 5, 57), BorderMode::Constant, CV_16U);
        heldNot.borderValue = 0.5;
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant 'rows-mma' needs", run(u16, heldNot, "rows-mma"));
    }

    // direct-mma against the reference under the acceptance rule (every kernel row sums on tensor cores):
    // random taps of each size it takes, positive and of both signs, on u8 images of 1, 3 and 4 channels,
    // integer and f32 output, every border (the constant one at an image value), sizes from 1x1 (narrower
    // than a band, both edges in one) to several bands and strips with a partial last batch, all-maximum
    // images; 1 and 3 streams agree bit for bit; then dark images (darkImage) and taps spread over the
    // 2^9 it takes (wideFactor). It refuses what it cannot hold exactly.
    void directMmaMatchesReference()
    {
        if (engine_->device().computeMajor < 8 || engine_->device().deviceCodeArchitecture < 800)
            QSKIP("direct-mma needs compute capability 8.0 or newer and device code built for it");
        uint64_t seed = 54000;
        kl::Verdict total;
        cv::Mat gpu;
        const auto check = [&](const cv::Mat& input, Conv2DSpec spec, int streams, bool floatOutput) {
            spec.floatOutput = floatOutput;
            gpu = run(input, spec, "direct-mma", streams, HostMemory::Pinned);
            const kl::Verdict verdict = kl::acceptConv2D(gpu, kl::conv2dReference(input, spec), input, spec);
            QVERIFY2(verdict.passed(), kltest::msg(describe(input, spec, "direct-mma") + ": " + verdict.failure));
            if (!floatOutput) total.elements += verdict.elements, total.nearTies += verdict.nearTies;
        };
        for (int channels : kChannels)
            for (int k : {3, 5, 7, 9}) {
                // 9001 x 19: one band, strips of the fewest rows
                for (const auto& [rows, cols] : {std::pair<int, int>{1, 1}, {4, 5}, {61, 97}, {37, 531}, {9001, 19}})
                    for (BorderMode border : kBorders) {
                        cv::Mat input = kltest::randomImage(rows, cols, CV_8U, channels, ++seed);
                        if (seed % 7 == 0) input.setTo(cv::Scalar::all(255));
                        Conv2DSpec spec = makeSpec(seed % 3 == 0 ? signedFactor(k, k, seed) : randomKernel(k, k, true, seed),
                                                   border, CV_8U, seed % 2 == 0);
                        spec.borderValue = 153;
                        check(input, spec, 1, seed % 5 == 0);
                    }
                const cv::Mat input = kltest::randomImage(1021, 263, CV_8U, channels, ++seed);
                const Conv2DSpec spec = makeSpec(randomKernel(k, k, true, seed), BorderMode::Wrap, CV_8U, seed % 2 == 0);
                check(input, spec, 1, false);
                const cv::Mat one = gpu;
                check(input, spec, 3, false);
                QVERIFY2(kltest::bitwiseEqual(one, gpu), kltest::msg(describe(input, spec, "direct-mma") + ": 3 streams differ from 1"));
                ++seed;
                check(darkImage(k, CV_8U, channels, seed), makeSpec(randomKernel(k, k, true, seed), BorderMode::Reflect, CV_8U), 1,
                      false);
                for (bool floatOutput : {false, true}) {
                    ++seed;
                    check(kltest::randomImage(1021, 263, CV_8U, channels, seed),
                          makeSpec(wideFactor(k, k, seed), BorderMode::Reflect101, CV_8U), 1, floatOutput);
                }
            }
        kl::applyRandomInputNearTieBound(total, CV_8U);
        QVERIFY2(total.passed(), kltest::msg("u8 results, all cases: " + total.failure));
        const cv::Mat u8 = kltest::randomImage(16, 16, CV_8U, 1, 55);
        const cv::Mat u16 = kltest::randomImage(16, 16, CV_16U, 1, 56);
        const Conv2DSpec fiveByFive = makeSpec(randomKernel(5, 5, true, 57), BorderMode::Replicate, CV_8U);
        QCOMPARE(directMmaApplies(u16, fiveByFive), false);
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant 'direct-mma' needs", run(u16, fiveByFive, "direct-mma"));
        const Conv2DSpec fifteen = makeSpec(randomKernel(15, 15, true, 58), BorderMode::Replicate, CV_8U);
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant 'direct-mma' needs", run(u8, fifteen, "direct-mma"));
        cv::Mat_<float> tiny = cv::Mat_<float>::ones(3, 3);
        tiny(1, 2) = 1e-4f;
        const Conv2DSpec tinyTap = makeSpec(tiny, BorderMode::Reflect101, CV_8U);
        QCOMPARE(directMmaApplies(u8, tinyTap), false);
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant 'direct-mma' needs", run(u8, tinyTap, "direct-mma"));
        Conv2DSpec heldNot = makeSpec(randomKernel(5, 5, true, 59), BorderMode::Constant, CV_8U);
        heldNot.borderValue = 0.5;
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant 'direct-mma' needs", run(u8, heldNot, "direct-mma"));
    }

    // u8/u16 in, f32 out (signed derivative filters).
    void floatOutput()
    {
        uint64_t seed = 100;
        for (int depth : {CV_8U, CV_16U})
            for (BorderMode border : kBorders) {
                const cv::Mat input = kltest::randomImage(97, 61, depth, 3, ++seed);
                Conv2DSpec spec = makeSpec(kl::makeConv2DKernel(kl::Conv2DPreset::SobelX), border, depth);
                spec.floatOutput = true;
                checkAllVariants(input, spec);
                spec.kernel = randomKernel(7, 5, false, seed);
                checkAllVariants(input, spec);
            }
    }

    // Kernel sizes 1..63, square and not, on images smaller and larger than the kernel.
    void kernelSizes_data()
    {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("cols");
        QTest::addColumn<int>("kernelRows");
        QTest::addColumn<int>("kernelCols");
        const std::vector<std::pair<int, int>> kernels = {{1, 1},  {3, 3},  {5, 3},   {5, 5},   {9, 9},  {11, 11},
                                                          {15, 15}, {1, 63}, {63, 1}, {7, 31}, {63, 63}};
        const std::vector<std::pair<int, int>> images = {{1, 1}, {2, 3}, {5, 4}, {97, 61}};
        for (const auto& [ir, ic] : images)
            for (const auto& [kr, kc] : kernels) {
                const std::string name = std::to_string(ic) + "x" + std::to_string(ir) + " image, " +
                                         std::to_string(kc) + "x" + std::to_string(kr) + " kernel";
                QTest::newRow(name.c_str()) << ir << ic << kr << kc;
            }
        QTest::newRow("200x150 image, 63x63 kernel") << 150 << 200 << 63 << 63;
    }
    void kernelSizes()
    {
        QFETCH(int, rows);
        QFETCH(int, cols);
        QFETCH(int, kernelRows);
        QFETCH(int, kernelCols);
        const std::vector<std::pair<int, int>> combos = {{CV_8U, 3}, {CV_16U, 1}, {CV_32F, 4}};
        const bool big = kernelRows * kernelCols > 1000 && rows * cols > 10000;
        uint64_t seed = 1000;
        for (const auto& [depth, channels] : combos)
            for (BorderMode border : kBorders) {
                ++seed;
                if (big && (depth != CV_8U || (border != BorderMode::Reflect101 && border != BorderMode::Constant)))
                    continue;  // the single-threaded reference is slow here: two modes, one depth
                const cv::Mat input = kltest::randomImage(rows, cols, depth, channels, seed);
                const Conv2DSpec spec =
                    makeSpec(randomKernel(kernelRows, kernelCols, depth != CV_32F, seed), border, depth, seed % 2 == 0);
                checkAllVariants(input, spec);
            }
    }

    // Rounding on the device (one cvt.rni.sat): 1x1 kernels whose products are exact, so the
    // reference's rule applies bitwise: ties to even (0.5 * odd), saturation below 0 and above
    // the depth's maximum, for u8 and u16 on 1 and 3 channels.
    void roundingAtTiesAndLimits()
    {
        uint64_t seed = 7000;
        for (int depth : {CV_8U, CV_16U})
            for (int channels : {1, 3}) {
                cv::Mat input = kltest::randomImage(67, 131, depth, channels, ++seed);
                // every value of the depth's range (u8) or its ends (u16) somewhere in the image
                for (int i = 0; i < 256; ++i) {
                    const int x = i % input.cols, y = i / input.cols;
                    if (depth == CV_8U) input.ptr<uint8_t>(y)[x * channels] = uint8_t(i);
                    else input.ptr<uint16_t>(y)[x * channels] = uint16_t(i < 128 ? i : 65535 - (i - 128));
                }
                for (float tap : {0.5f, -1.0f, 300.0f, 1.5f}) {
                    const Conv2DSpec spec = makeSpec((cv::Mat_<float>(1, 1) << tap), BorderMode::Reflect101, depth);
                    const cv::Mat expected = kl::conv2dReference(input, spec);
                    for (const std::string variant : {"naive", "constant", "shared", "auto"}) {
                        const cv::Mat gpu = run(input, spec, variant);
                        QVERIFY2(kltest::bitwiseEqual(gpu, expected),
                                 kltest::msg(describe(input, spec, variant) + ", tap " + std::to_string(tap) +
                                             ": differs from the reference"));
                    }
                }
            }
    }

    // A large image, not a multiple of any tile, with a cheap dyadic kernel ([1 2 1]^T [1 2 1] / 16):
    // every partial sum is exact in f32 and f64, so the GPU equals the reference bitwise, ties
    // included (cpu-opencv's cv::GaussianBlur rounds these exact ties up: acceptance.hpp).
    void largeImage()
    {
        const cv::Mat binomial = (cv::Mat_<float>(3, 1) << 0.25f, 0.5f, 0.25f);
        const cv::Mat kernel = binomial * binomial.t();
        struct Case {
            int cols, depth, channels;
            std::string variant;
            int streams;
            HostMemory memory;
        };
        // 4099 columns: element-by-element edges of the vector paths everywhere; 4096: vector rows.
        const std::vector<Case> cases = {{4099, CV_8U, 1, "naive", 1, HostMemory::Pageable},
                                         {4099, CV_8U, 1, "separable", 4, HostMemory::Pinned},
                                         {4099, CV_32F, 3, "shared", 2, HostMemory::Pageable},
                                         {4099, CV_32F, 3, "constant", 1, HostMemory::Pinned},
                                         {4096, CV_32F, 1, "shared", 4, HostMemory::Pinned},
                                         {4096, CV_8U, 3, "separable", 2, HostMemory::Pageable},
                                         {4096, CV_8U, 3, "shared", 1, HostMemory::Pinned},
                                         {4096, CV_16U, 4, "separable", 1, HostMemory::Pageable},
                                         {4099, CV_8U, 3, "integer", 4, HostMemory::Pinned},
                                         {4096, CV_8U, 1, "integer", 1, HostMemory::Pageable}};
        uint64_t seed = 5000;
        for (const Case& c : cases) {
            const cv::Mat input = kltest::randomImage(3001, c.cols, c.depth, c.channels, ++seed);
            const Conv2DSpec spec = makeSpec(kernel, BorderMode::Reflect101, c.depth);
            const cv::Mat expected = kl::conv2dReference(input, spec);
            const cv::Mat gpu = run(input, spec, c.variant, c.streams, c.memory);
            QVERIFY2(kltest::bitwiseEqual(gpu, expected),
                     kltest::msg(describe(input, spec, c.variant) + ": differs from the reference"));
        }
    }

    // The two 1D passes give the 2D result for a (non-dyadic) Gaussian in every border mode.
    void separableEqualsDirect()
    {
        uint64_t seed = 6000;
        for (BorderMode border : kBorders)
            for (int depth : {CV_8U, CV_32F}) {
                kl::Conv2DPresetParams params;
                params.width = params.height = 7;
                params.sigma = 1.7;
                const cv::Mat input = kltest::randomImage(97, 61, depth, 3, ++seed);
                const Conv2DSpec spec = makeSpec(kl::makeConv2DKernel(kl::Conv2DPreset::Gaussian, params), border, depth);
                QVERIFY(isSeparable(spec));
                const cv::Mat separable = run(input, spec, "separable");
                const cv::Mat direct = run(input, spec, "shared");
                const cv::Mat expected = kl::conv2dReference(input, spec);
                std::string failure = compareWithReference(separable, expected, input, spec);
                QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, "separable") + ": " + failure));
                failure = compareWithReference(direct, expected, input, spec);
                QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, "shared") + ": " + failure));
                if (depth == CV_32F) {
                    const double difference = cv::norm(separable, direct, cv::NORM_INF);
                    QVERIFY2(difference <= kl::kFloatRelTolerance * cv::norm(direct, cv::NORM_INF),
                             kltest::msg(describe(input, spec, "separable") + ": differs from shared"));
                }
            }
    }

    // integer: for kernels whose taps are multiples of 1/256 every sum is exact in f32 and f64, so
    // the 16-bit lanes, the f32 edge strips and the reference give the same bits, ties included:
    // OpenCV's 3x3 and 5x5 Gaussians and random asymmetric dyadic kernels of every compiled size (a
    // flip or a transposed split shows), 1, 3 and 4 channels, every border (constant: 200, staged
    // as bytes, and 37.25, which is not a byte), sizes from 1x1 to prime ones of thousands of
    // tiles, 1 and 4 streams; all-255 images (the largest lane sums, 255 * 256) saturate nothing.
    // Separable gives the same bits. Integers times another factor (boxes of 3, 7 and 15; random
    // integers times 5/1024, whose largest results pass 255 and saturate) give the reference's bits
    // too, the exact integer sum scaled and rounded once as the reference's; where a border value
    // that is not a byte sends them to the f32 strips, the acceptance rule holds.
    void integerIsExact()
    {
        uint64_t seed = 15000;
        std::vector<std::pair<cv::Mat, std::string>> kernels;
        for (int k : {3, 5}) {
            kl::Conv2DPresetParams params;
            params.width = params.height = k;
            kernels.emplace_back(kl::makeConv2DKernel(kl::Conv2DPreset::Gaussian, params), "gaussian");
        }
        for (int k : kl::gpu::kConv2dCompiledSizes) kernels.emplace_back(dyadicKernel(k, ++seed), "dyadic");
        for (int k : {3, 7, 15}) {
            kl::Conv2DPresetParams params;
            params.width = params.height = k;
            kernels.emplace_back(kl::makeConv2DKernel(kl::Conv2DPreset::Box, params), "box");
        }
        for (int k : {5, 9}) kernels.emplace_back(scaledIntegerKernel(k, 5.0f / 1024, ++seed), "integers * 5/1024");
        for (const auto& [kernel, name] : kernels)
            for (const auto& [rows, cols] : {std::pair<int, int>{1, 1}, {4, 5}, {61, 97}, {769, 1021}})
                for (int channels : kChannels)
                    for (BorderMode border : kBorders) {
                        if (rows == 769 && border != BorderMode::Reflect101 && border != BorderMode::Constant)
                            continue;  // the single-threaded reference is slow here: two modes
                        cv::Mat input = kltest::randomImage(rows, cols, CV_8U, channels, ++seed);
                        if (seed % 7 == 0) input.setTo(cv::Scalar::all(255));
                        Conv2DSpec spec = makeSpec(kernel, border, CV_8U, /*flip=*/seed % 2 == 0);
                        QVERIFY2(integerApplies(input, spec), kltest::msg(describe(input, spec, name)));
                        const bool dyadic = name == "gaussian" || name == "dyadic";
                        // a constant border of a byte value is staged as bytes; 37.25 takes the f32 strips
                        for (double borderValue : {37.25, 200.0}) {
                            if (border != BorderMode::Constant && borderValue != 37.25) continue;
                            spec.borderValue = borderValue;
                            const std::string what = describe(input, spec, "integer") + " (" + name +
                                                     ", border value " + std::to_string(borderValue) + ")";
                            const cv::Mat expected = kl::conv2dReference(input, spec);
                            const int streams = rows == 769 ? 4 : 1;
                            const cv::Mat integer = run(input, spec, "integer", streams, HostMemory::Pinned);
                            if (dyadic || border != BorderMode::Constant || borderValue == 200.0) {
                                QVERIFY2(kltest::bitwiseEqual(integer, expected),
                                         kltest::msg(what + ": differs from the reference"));
                            } else {
                                const std::string failure = compareWithReference(integer, expected, input, spec);
                                QVERIFY2(failure.empty(), kltest::msg(what + ": " + failure));
                            }
                            if (dyadic)
                                QVERIFY2(kltest::bitwiseEqual(integer, run(input, spec, "separable", streams)),
                                         kltest::msg(what + ": differs from separable"));
                        }
                    }
    }

    // separable's ring on u8/u16, and on f32 up to 5x5, reads tiles staged in shared memory (24 rows
    // tall for u16 15x15 on 3 and 4 channels, 16 on f32, 32 elsewhere; f32 from 7x7 reads global
    // memory), at every compiled size: every border, the constant one at a value the depth holds
    // (staged with the tile) and at one it does not (the edge strips), 1, 3 and 4 channels, sizes from
    // 1x1 to several tiles wide with rows that end inside a tile, all-maximum images, 1 and 3 streams,
    // against the reference.
    void stagedRingAtEveryBorder()
    {
        uint64_t seed = 16000;
        for (int depth : kDepths)
            for (int k : kl::gpu::kConv2dCompiledSizes)
                for (const auto& [rows, cols] : {std::pair<int, int>{1, 1}, {4, 5}, {61, 97}, {131, 1031}})
                    for (int channels : kChannels)
                        for (BorderMode border : kBorders) {
                            cv::Mat input = kltest::randomImage(rows, cols, depth, channels, ++seed);
                            if (seed % 7 == 0) input.setTo(cv::Scalar::all(depth == CV_8U ? 255 : 65535));
                            Conv2DSpec spec = makeSpec(randomSeparableKernel(k, k, seed), border, depth, seed % 2 == 0);
                            const double heldValue = depth == CV_8U ? 200 : 40000;
                            for (double borderValue : {heldValue, borderValueFor(depth)}) {
                                if (border != BorderMode::Constant && borderValue != heldValue) continue;
                                spec.borderValue = borderValue;
                                const int streams = rows == 131 ? 3 : 1;
                                const cv::Mat gpu = run(input, spec, "separable", streams, HostMemory::Pinned);
                                const std::string failure =
                                    compareWithReference(gpu, kl::conv2dReference(input, spec), input, spec);
                                QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, "separable") + " (border value " +
                                                                      std::to_string(borderValue) + "): " + failure));
                            }
                        }
    }

    // The staged kernels' tile schedule (stagedSchedule) on images tall enough for all of it on an
    // H100 or H200 (132 SMs): the head's cycles of heights (8 .. 32 rows, or 8 .. 24 for u16 15x15 on
    // 3 channels, 8 .. 16 for f32), the tall tiles and the tail of 8-row tiles, through integer,
    // separable and staged-rows, against the reference; 1 and 3 streams (strips that start inside the
    // schedule).
    void stagedScheduleCoversEveryRow()
    {
        kl::Conv2DPresetParams gaussian;
        gaussian.width = gaussian.height = 5;
        struct Case {
            const char* variant;
            int depth, channels, cols;
            cv::Mat kernel;
        };
        uint64_t seed = 18000;
        // u8: two tile columns, so that integer's tall tiles (1056 blocks resident) are taller than the tail's
        const Case cases[] = {{"integer", CV_8U, 1, 1031, kl::makeConv2DKernel(kl::Conv2DPreset::Gaussian, gaussian)},
                              {"separable", CV_8U, 1, 1031, randomSeparableKernel(5, 5, ++seed)},
                              {"staged-rows", CV_8U, 1, 1031, randomKernel(5, 5, false, ++seed)},
                              {"separable", CV_16U, 3, 23, randomSeparableKernel(15, 15, ++seed)},
                              {"separable", CV_32F, 1, 1031, randomSeparableKernel(5, 5, ++seed)}};
        for (const Case& c : cases)
            for (BorderMode border : {BorderMode::Reflect101, BorderMode::Constant}) {
                const cv::Mat input = kltest::randomImage(45013, c.cols, c.depth, c.channels, ++seed);
                Conv2DSpec spec = makeSpec(c.kernel, border, c.depth);
                spec.borderValue = c.depth == CV_8U ? 200 : 40000;
                const cv::Mat expected = kl::conv2dReference(input, spec);
                for (int streams : {1, 3}) {
                    const std::string failure =
                        compareWithReference(run(input, spec, c.variant, streams, HostMemory::Pinned), expected, input, spec);
                    QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, c.variant) + ", " + std::to_string(streams) +
                                                          " streams: " + failure));
                }
            }
    }

    // The staged ring in strips (stagedRingStrips: u8 from 9x9, u16 at 15x15) on images tall enough
    // that each block's strip runs in three or more chunks on an H100 or H200 (132 SMs): every channel
    // count, every border (constant at a value the depth holds, staged with the chunks, and at one it
    // does not, the edge strips), against the reference and bit for bit against separable-tiles,
    // which sums the same products in the same order. On 3 streams each stream's rows are too few for
    // strips: the same kernels run the tile schedule. Then images of three tile columns or more, whose
    // two edge columns walk shorter strips than the others where that keeps the others' strips nearly
    // as short (stripSchedule).
    void stagedRingStrips()
    {
        uint64_t seed = 19000;
        int turn = 0;
        const auto check = [&](const cv::Mat& input, int k) {
            const int depth = input.depth();
            for (int n = 0; n < 2; ++n, ++turn) {
                const BorderMode border = kBorders[turn % kBorders.size()];
                ++seed;
                Conv2DSpec spec = makeSpec(randomSeparableKernel(k, k, seed), border, depth, seed % 2 == 0);
                if (turn % 4 != 0) spec.borderValue = depth == CV_8U ? 200 : 40000;
                const cv::Mat expected = kl::conv2dReference(input, spec);
                for (int streams : {1, 3}) {
                    const cv::Mat gpu = run(input, spec, "separable", streams, HostMemory::Pinned);
                    const std::string failure = compareWithReference(gpu, expected, input, spec);
                    QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, "separable") + ", " +
                                                          std::to_string(streams) + " streams: " + failure));
                    QVERIFY2(kltest::bitwiseEqual(gpu, run(input, spec, "separable-tiles")),
                             kltest::msg(describe(input, spec, "separable") + ": differs from separable-tiles"));
                }
            }
        };
        for (const auto& [depth, k] : {std::pair<int, int>{CV_8U, 9}, {CV_8U, 15}, {CV_16U, 15}})
            for (int channels : kChannels) {
                check(kltest::randomImage(40009, 23, depth, channels, ++seed), k);
                if (QTest::currentTestFailed()) return;
            }
        // With the H200's 528 slots: 3 tile columns of u8 9x9 x1 (1024 elements each) in equal strips
        // (shorter edge strips would make the middle column's 6% taller), and shorter edge strips on 4
        // tile columns of u8 9x9 x3 and 5 of u16 15x15 (512 elements each)
        for (const auto& [depth, k, channels, rows, cols] :
             {std::array<int, 5>{CV_8U, 9, 1, 6007, 2053}, {CV_8U, 9, 3, 6007, 1031}, {CV_16U, 15, 1, 4099, 2053}}) {
            check(kltest::randomImage(rows, cols, depth, channels, ++seed), k);
            if (QTest::currentTestFailed()) return;
        }
    }

    // staged-rows against the reference under the acceptance rule: random taps of every size it runs,
    // u8/u16/f32, integer and f32 output, every border (on u8/u16 the constant one at a value the depth
    // holds, staged with the tile, and at one it does not, the edge strips), 1, 3 and 4 channels, sizes
    // from 1x1 to several tiles wide and tall, all-maximum images, 1 and 3 streams. Other sizes refuse.
    void stagedRowsMatchesReference()
    {
        uint64_t seed = 17000;
        for (int depth : kDepths)
            for (int k : {3, 5, 7})
                for (const auto& [rows, cols] : {std::pair<int, int>{1, 1}, {4, 5}, {61, 97}, {131, 1031}})
                    for (int channels : kChannels)
                        for (BorderMode border : kBorders) {
                            cv::Mat input = kltest::randomImage(rows, cols, depth, channels, ++seed);
                            if (seed % 7 == 0) input.setTo(cv::Scalar::all(depth == CV_8U ? 255 : 65535));
                            Conv2DSpec spec = makeSpec(randomKernel(k, k, false, seed), border, depth, seed % 2 == 0);
                            spec.floatOutput = seed % 5 == 0;
                            const double heldValue = depth == CV_8U ? 200 : depth == CV_16U ? 40000 : borderValueFor(depth);
                            for (double borderValue : {heldValue, borderValueFor(depth)}) {
                                if ((border != BorderMode::Constant || depth == CV_32F) && borderValue != heldValue) continue;
                                spec.borderValue = borderValue;
                                const int streams = rows == 131 ? 3 : 1;
                                const cv::Mat staged = run(input, spec, "staged-rows", streams, HostMemory::Pinned);
                                const std::string failure =
                                    compareWithReference(staged, kl::conv2dReference(input, spec), input, spec);
                                QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, "staged-rows") + " (border value " +
                                                                      std::to_string(borderValue) + "): " + failure));
                            }
                        }
        const cv::Mat f32 = kltest::randomImage(16, 16, CV_32F, 1, 18);
        const Conv2DSpec fiveByThree = makeSpec(randomKernel(5, 3, false, 19), BorderMode::Reflect101, CV_32F);
        QCOMPARE(kl::gpu::whyNotApplicable("staged-rows", f32, fiveByThree, engine_->device()),
                 std::string("needs a square 3x3, 5x5 or 7x7 kernel; this is a 3x5 kernel"));
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant 'staged-rows' needs", run(f32, fiveByThree, "staged-rows"));
        const cv::Mat u8 = kltest::randomImage(16, 16, CV_8U, 1, 20);
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant 'staged-rows' needs",
                         run(u8, makeSpec(randomKernel(9, 9, false, 21), BorderMode::Reflect101, CV_8U), "staged-rows"));
    }

    // The staged kernels (staged-rows, separable's staged ring, integer) take lower tiles on grids
    // of few waves (stagedTileRows), so the small images above run 8-row tiles; these of 86M elements
    // (50M on u16) take their tallest tiles on the 132 SMs of an H100 or H200. Each variant against
    // shared under the acceptance rule (the reference's sums only where the two differ), one stream,
    // one chunk.
    void stagedTilesOnLargeImages()
    {
        uint64_t seed = 40000;
        kl::Conv2DPresetParams box;
        box.width = box.height = 5;
        for (const auto& [rows, cols, channels] : {std::tuple{8447, 10240, 1}, std::tuple{7043, 4093, 3}}) {
            const cv::Mat input = kltest::randomImage(rows, cols, CV_8U, channels, ++seed);
            const std::pair<std::string, cv::Mat> kernels[] = {{"staged-rows", randomKernel(5, 5, false, ++seed)},
                                                               {"separable", randomSeparableKernel(5, 5, ++seed)},
                                                               {"separable", randomSeparableKernel(9, 9, ++seed)},
                                                               {"integer", kl::makeConv2DKernel(kl::Conv2DPreset::Box, box)}};
            for (const auto& [variant, kernel] : kernels) {
                const Conv2DSpec spec = makeSpec(kernel, BorderMode::Reflect101, CV_8U);
                kl::gpu::RunOptions options;
                options.variant = variant;
                const cv::Mat staged = run(input, spec, options);
                options.variant = "shared";
                const kl::Verdict verdict = kltest::checkConv2D(staged, run(input, spec, options), input, spec);
                QVERIFY2(verdict.passed(), kltest::msg(describe(input, spec, variant) + ": " + verdict.failure));
            }
        }
        // u16 5x5 on 4 channels: staged-rows' 8-element threads in 16-row tiles, tall ones here.
        const cv::Mat u16 = kltest::randomImage(3079, 4093, CV_16U, 4, ++seed);
        const Conv2DSpec spec = makeSpec(randomKernel(5, 5, false, ++seed), BorderMode::Reflect101, CV_16U);
        kl::gpu::RunOptions options;
        options.variant = "staged-rows";
        const cv::Mat staged = run(u16, spec, options);
        options.variant = "shared";
        const kl::Verdict verdict = kltest::checkConv2D(staged, run(u16, spec, options), u16, spec);
        QVERIFY2(verdict.passed(), kltest::msg(describe(u16, spec, "staged-rows") + ": " + verdict.failure));
    }

    void integerRejectsOtherImagesAndKernels()
    {
        const cv::Mat u8 = kltest::randomImage(16, 16, CV_8U, 3, 12);
        const auto gaussian = [](int size, double sigma) {
            kl::Conv2DPresetParams params;
            params.width = params.height = size;
            params.sigma = sigma;
            return kl::makeConv2DKernel(kl::Conv2DPreset::Gaussian, params);
        };
        const Conv2DSpec five = makeSpec(gaussian(5, 0), BorderMode::Reflect101, CV_8U);
        QVERIFY(integerApplies(u8, five));
        const auto refused = [&](const cv::Mat& input, const Conv2DSpec& spec) {
            QVERIFY(!integerApplies(input, spec));
            QVERIFY(kl::gpu::whyNotApplicable("integer", input, spec, engine_->device()).find("needs an 8-bit") == 0);
            KL_VERIFY_THROWS(kl::InvalidArgument, "variant 'integer' needs", run(input, spec, "integer"));
        };
        refused(kltest::randomImage(16, 16, CV_16U, 3, 13), five);
        refused(kltest::randomImage(16, 16, CV_32F, 1, 14), five);
        Conv2DSpec floatOut = five;
        floatOut.floatOutput = true;
        refused(u8, floatOut);
        refused(u8, makeSpec(gaussian(5, 1.3), BorderMode::Reflect101, CV_8U));  // not multiples of 1/256
        refused(u8, makeSpec(gaussian(7, 0), BorderMode::Reflect101, CV_8U));    // multiples of 1/4096
        // integers times a factor: 255 times their sum must fit 16 bits (16 * 16 does, 17 * 16 not)
        const cv::Mat_<float> sixteen = (cv::Mat_<float>(3, 1) << 1, 14, 1);
        const cv::Mat_<float> seventeen = (cv::Mat_<float>(3, 1) << 1, 15, 1);
        const Conv2DSpec fits = makeSpec(cv::Mat(sixteen * sixteen.t() * (5.0f / 1024)), BorderMode::Reflect101, CV_8U);
        QVERIFY(integerApplies(u8, fits));
        QCOMPARE(kl::gpu::whyNotApplicable("integer", u8, fits, engine_->device()), std::string());
        refused(u8, makeSpec(cv::Mat(seventeen * sixteen.t() * (5.0f / 1024)), BorderMode::Reflect101, CV_8U));
        refused(u8, makeSpec(kl::makeConv2DKernel(kl::Conv2DPreset::SobelX), BorderMode::Reflect101, CV_8U));
        refused(u8, makeSpec(cv::Mat(cv::Mat::ones(5, 3, CV_32F) / 16), BorderMode::Reflect101, CV_8U));
        refused(u8, makeSpec(cv::Mat(cv::Mat::ones(11, 11, CV_32F) / 256), BorderMode::Reflect101, CV_8U));
        // row taps are bytes: 1 and 256 times a factor in one row sum within 16 bits (255 * 257) but
        // pass 255; a single tap of 1 passes as 256/256 but fits as the integer 1 (factor 1)
        cv::Mat_<float> single = cv::Mat_<float>::zeros(3, 3), wide = cv::Mat_<float>::zeros(3, 3);
        single(1, 1) = 1, wide(1, 0) = 1.0f / 1024, wide(1, 1) = 256.0f / 1024;
        QVERIFY(integerApplies(u8, makeSpec(single, BorderMode::Reflect101, CV_8U)));
        refused(u8, makeSpec(wide, BorderMode::Reflect101, CV_8U));
        wide(1, 1) = 255.0f / 1024;
        QVERIFY(integerApplies(u8, makeSpec(wide, BorderMode::Reflect101, CV_8U)));
        QCOMPARE(kl::gpu::whyNotApplicable("integer", u8, makeSpec(wide, BorderMode::Reflect101, CV_8U), engine_->device()),
                 std::string());
        QCOMPARE(kl::gpu::whyNotApplicable("integer", u8, five, engine_->device()), std::string());
    }

    // dp4a (u8) and dp2a (u16) give the reference's bits: the integer presets and random integer
    // kernels at both ends of the taps they take (so sums go far past 0 and the depth's maximum both
    // ways and saturate), 3x3 and 5x5, integer and f32 output, 1, 3 and 4 channels, every border
    // (constant at 0, a middle value and the maximum), sizes from 1x1 to prime ones whose rows end
    // inside a 4-byte word, 1 and 4 streams.
    void integerLanesAreExact()
    {
        uint64_t seed = 31000;
        for (const auto& [variant, depth] : {std::pair<std::string, int>{"dp4a", CV_8U}, {"dp2a", CV_16U}}) {
            const double maxValue = depth == CV_8U ? 255 : 65535;
            std::vector<cv::Mat> kernels;
            for (kl::Conv2DPreset preset : {kl::Conv2DPreset::Sharpen, kl::Conv2DPreset::Laplacian,
                                            kl::Conv2DPreset::ScharrX, kl::Conv2DPreset::Emboss})
                kernels.push_back(kl::makeConv2DKernel(preset));
            // dp2a: magnitudes summing to at most 64 (9 * 7 and 25 * 2).
            kernels.push_back(depth == CV_8U ? randomIntegerKernel(3, -128, 127, ++seed) : randomIntegerKernel(3, -7, 7, ++seed));
            kernels.push_back(depth == CV_8U ? randomIntegerKernel(5, -128, 127, ++seed) : randomIntegerKernel(5, -2, 2, ++seed));
            for (const cv::Mat& kernel : kernels)
                for (const auto& [rows, cols] : {std::pair<int, int>{1, 1}, {3, 2}, {61, 97}, {257, 131}})
                    for (int channels : kChannels)
                        for (BorderMode border : kBorders)
                            for (bool floatOutput : {false, true}) {
                                const cv::Mat input = kltest::randomImage(rows, cols, depth, channels, ++seed);
                                Conv2DSpec spec = makeSpec(kernel, border, depth, /*flip=*/seed % 2 == 0);
                                spec.borderValue = std::vector<double>{0, 200, maxValue}[seed % 3];
                                spec.floatOutput = floatOutput;
                                QVERIFY2(dotApplies(variant, input, spec), kltest::msg(describe(input, spec, variant)));
                                const cv::Mat expected = kl::conv2dReference(input, spec);
                                const int streams = rows == 257 ? 4 : 1;
                                const cv::Mat output = run(input, spec, variant, streams, HostMemory::Pinned);
                                QVERIFY2(kltest::bitwiseEqual(output, expected),
                                         kltest::msg(describe(input, spec, variant) + ": differs from the reference"));
                            }
        }
    }

    // With a common factor (a box, integer taps / 32) the exact integer sum is scaled and rounded
    // once: for a box, whose results are multiples of 1/k^2 and never near a tie, the reference's
    // bits with integer output; otherwise within the acceptance rule. (A factor whose multiples are
    // not exact in f32, such as 0.0123, refuses: see integerLanesRejectOtherImagesAndKernels.) u8 and u16, integer
    // and f32 output, every channel count and border, 1 and 4 streams.
    void integerLanesWithAFactor()
    {
        uint64_t seed = 32000;
        for (const auto& [variant, depth] : {std::pair<std::string, int>{"dp4a", CV_8U}, {"dp2a", CV_16U}})
            for (int k : {3, 5}) {
                const double maxValue = depth == CV_8U ? 255 : 65535;
                cv::Mat integers = depth == CV_8U ? randomIntegerKernel(k, -128, 127, ++seed)
                                                  : randomIntegerKernel(k, -2, 2, ++seed);
                integers.at<float>(k / 2, k / 2) = 1;  // the factor is the smallest tap magnitude
                const cv::Mat box = cv::Mat::ones(k, k, CV_32F) / float(k * k);
                for (const cv::Mat& kernel : {box, cv::Mat(integers / 32)})
                    for (const auto& [rows, cols] : {std::pair<int, int>{3, 2}, {61, 97}, {257, 131}})
                        for (int channels : kChannels)
                            for (BorderMode border : kBorders)
                                for (bool floatOutput : {false, true}) {
                                    const cv::Mat input = kltest::randomImage(rows, cols, depth, channels, ++seed);
                                    Conv2DSpec spec = makeSpec(kernel, border, depth);
                                    spec.borderValue = std::vector<double>{0, 200, maxValue}[seed % 3];
                                    spec.floatOutput = floatOutput;
                                    const std::string label = describe(input, spec, variant);
                                    QVERIFY2(dotApplies(variant, input, spec), kltest::msg(label));
                                    const cv::Mat expected = kl::conv2dReference(input, spec);
                                    const cv::Mat output = run(input, spec, variant, rows == 257 ? 4 : 1, HostMemory::Pinned);
                                    const std::string failure = compareWithReference(output, expected, input, spec);
                                    QVERIFY2(failure.empty(), kltest::msg(label + ": " + failure));
                                    if (kernel.data == box.data && !floatOutput)
                                        QVERIFY2(kltest::bitwiseEqual(output, expected), kltest::msg(label + ": not bitwise"));
                                }
            }
    }

    void integerLanesRejectOtherImagesAndKernels()
    {
        const cv::Mat u8 = kltest::randomImage(16, 16, CV_8U, 3, 15);
        const cv::Mat u16 = kltest::randomImage(16, 16, CV_16U, 1, 16);
        const Conv2DSpec sharpen = makeSpec(kl::makeConv2DKernel(kl::Conv2DPreset::Sharpen), BorderMode::Reflect101, CV_8U);
        QCOMPARE(kl::gpu::whyNotApplicable("dp4a", u8, sharpen, engine_->device()), std::string());
        QCOMPARE(kl::gpu::whyNotApplicable("dp2a", u16, sharpen, engine_->device()), std::string());
        const auto refused = [&](const std::string& variant, const cv::Mat& input, const Conv2DSpec& spec) {
            QVERIFY(!dotApplies(variant, input, spec));
            const std::string needs = variant == "dp4a" ? "needs an 8-bit" : "needs a 16-bit";
            QVERIFY(kl::gpu::whyNotApplicable(variant, input, spec, engine_->device()).find(needs) == 0);
            KL_VERIFY_THROWS(kl::InvalidArgument, "variant '" + variant + "' needs", run(input, spec, variant));
        };
        refused("dp4a", u16, sharpen);
        refused("dp2a", u8, sharpen);
        kl::Conv2DPresetParams sigma13;
        sigma13.width = sigma13.height = 5;
        sigma13.sigma = 1.3;
        const cv::Mat gaussianSigma13 = kl::makeConv2DKernel(kl::Conv2DPreset::Gaussian, sigma13);
        for (const std::string variant : {"dp4a", "dp2a"}) {
            const cv::Mat& input = variant == "dp4a" ? u8 : u16;
            refused(variant, kltest::randomImage(16, 16, CV_32F, 4, 17), sharpen);
            refused(variant, input, makeSpec(gaussianSigma13, BorderMode::Reflect101, CV_8U));  // no common factor
            cv::Mat tap128 = cv::Mat::ones(3, 3, CV_32F) * 128;  // 128 times ones, but for a 1: 128 is past a byte
            tap128.at<float>(0, 0) = 1;
            refused(variant, input, makeSpec(tap128, BorderMode::Reflect101, CV_8U));
            refused(variant, input, makeSpec(cv::Mat(cv::Mat::ones(7, 7, CV_32F)), BorderMode::Reflect101, CV_8U));
            refused(variant, input, makeSpec(cv::Mat(cv::Mat::ones(3, 5, CV_32F)), BorderMode::Reflect101, CV_8U));
            Conv2DSpec constant = sharpen;
            constant.border = BorderMode::Constant;
            for (double value : {37.25, -1.0, variant == "dp4a" ? 256.0 : 65536.0}) {
                constant.borderValue = value;
                refused(variant, input, constant);
            }
        }
        cv::Mat inexact = cv::Mat::ones(3, 3, CV_32F);
        inexact.at<float>(0, 0) = 27;
        refused("dp4a", u8, makeSpec(cv::Mat(inexact * 0.0123f), BorderMode::Reflect101, CV_8U));  // 27 * 0.0123f / 0.0123f != 27
        // u16 sums stay exact in f32 up to 64 * 65535: 8s around a 9 sum to 73, and have no common factor.
        cv::Mat heavy = cv::Mat::ones(3, 3, CV_32F) * 8;
        heavy.at<float>(1, 1) = 9;
        refused("dp2a", u16, makeSpec(heavy, BorderMode::Reflect101, CV_8U));
    }

    // tma on images of thousands of tiles, so that every block reuses each of its tile buffers
    // several times (one tile per block, as on the small images, never waits for a buffer to come
    // free): bitwise equal to shared (the same tiles, summed the same way) for every compiled size,
    // and to the reference up to 5x5; 1 and 4 streams, constant borders across chunk boundaries.
    void tmaTiles()
    {
        const cv::Mat probe(8, 8, CV_32FC1, cv::Scalar(0));
        if (!tmaApplies(probe, makeSpec(cv::Mat::ones(3, 3, CV_32F), BorderMode::Reflect101, CV_32F)))
            QSKIP("tma needs compute capability 9.0 or newer");
        uint64_t seed = 14000;
        for (int k : kl::gpu::kConv2dCompiledSizes)
            for (const auto& [rows, cols, border, streams] :
                 {std::tuple<int, int, BorderMode, int>{3001, 4099, BorderMode::Reflect101, 1},
                  {2053, 4096, BorderMode::Constant, 4}}) {
                const cv::Mat input = kltest::randomImage(rows, cols, CV_32F, 1, ++seed);
                const Conv2DSpec spec = makeSpec(randomKernel(k, k, false, seed), border, CV_32F);
                const cv::Mat tma = run(input, spec, "tma", streams, HostMemory::Pinned);
                QVERIFY2(kltest::bitwiseEqual(tma, run(input, spec, "shared", streams)),
                         kltest::msg(describe(input, spec, "tma") + ": differs from shared"));
                if (k <= 5) {
                    const std::string failure = compareWithReference(tma, kl::conv2dReference(input, spec), input, spec);
                    QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, "tma") + ": " + failure));
                }
            }
    }

    void tmaRejectsOtherImagesAndKernels()
    {
        const cv::Mat f32 = kltest::randomImage(16, 16, CV_32F, 1, 9);
        const cv::Mat u8 = kltest::randomImage(16, 16, CV_8U, 1, 10);
        const cv::Mat rgb = kltest::randomImage(16, 16, CV_32F, 3, 11);
        const Conv2DSpec five = makeSpec(cv::Mat::ones(5, 5, CV_32F) / 25, BorderMode::Reflect101, CV_32F);
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant 'tma' needs", run(u8, five, "tma"));
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant 'tma' needs", run(rgb, five, "tma"));
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant 'tma' needs",
                         run(f32, makeSpec(cv::Mat::ones(5, 3, CV_32F), BorderMode::Reflect101, CV_32F), "tma"));
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant 'tma' needs",
                         run(f32, makeSpec(cv::Mat::ones(11, 11, CV_32F), BorderMode::Reflect101, CV_32F), "tma"));
    }

    void separableRejectsNonRankOneKernel()
    {
        const cv::Mat input = kltest::randomImage(16, 16, CV_8U, 1, 7);
        const Conv2DSpec spec = makeSpec(kl::makeConv2DKernel(kl::Conv2DPreset::Sharpen), BorderMode::Reflect101, CV_8U);
        KL_VERIFY_THROWS(kl::InvalidArgument, "not separable", run(input, spec, "separable"));
    }

    // On u8/u16 images at compiled sizes the staged ring scales the taps by powers of two up to 2^149
    // (its row pass reads elements as subnormals): taps of 2^100 and more are refused there, and taken
    // on f32 images and at other sizes (auto's choice for them: tst_variant_registry). Just under the
    // limit the f32 results still equal the reference.
    void separableRingTapLimit()
    {
        const cv::Mat u8 = kltest::randomImage(37, 53, CV_8U, 3, 11), f32 = kltest::randomImage(37, 53, CV_32F, 3, 12);
        const auto ones = [](int rows, int cols, double value) { return cv::Mat(rows, cols, CV_32F, cv::Scalar(value)); };
        const auto whyNot = [&](const cv::Mat& input, const Conv2DSpec& spec) {
            return kl::gpu::whyNotApplicable("separable", input, spec, engine_->device());
        };
        const Conv2DSpec past = makeSpec(ones(5, 5, 0x1p100), BorderMode::Reflect101, CV_8U);
        QVERIFY(whyNot(u8, past).find("needs taps below 2^100 in magnitude on u8/u16 images") == 0);
        KL_VERIFY_THROWS(kl::InvalidArgument, "needs taps below 2^100", run(u8, past, "separable"));
        QCOMPARE(whyNot(f32, past), std::string());  // f32's taps are not scaled
        const std::string f32Failure =
            compareWithReference(run(f32, past, "separable"), kl::conv2dReference(f32, past), f32, past);
        QVERIFY2(f32Failure.empty(), kltest::msg(describe(f32, past, "separable") + ": " + f32Failure));
        QCOMPARE(whyNot(u8, makeSpec(ones(5, 3, 0x1p100), BorderMode::Reflect101, CV_8U)), std::string());
        for (int depth : {CV_8U, CV_16U}) {
            const cv::Mat input = kltest::randomImage(37, 53, depth, 3, 13);
            Conv2DSpec under = makeSpec(ones(5, 5, 0x1p99), BorderMode::Constant, depth);
            under.floatOutput = true;
            QCOMPARE(whyNot(input, under), std::string());
            const std::string failure =
                compareWithReference(run(input, under, "separable"), kl::conv2dReference(input, under), input, under);
            QVERIFY2(failure.empty(), kltest::msg(describe(input, under, "separable") + ": " + failure));
        }
    }

    void invalidArguments()
    {
        const cv::Mat input = kltest::randomImage(16, 16, CV_8U, 1, 8);
        Conv2DSpec spec = makeSpec(cv::Mat::ones(4, 3, CV_32F), BorderMode::Reflect101, CV_8U);
        KL_VERIFY_THROWS(kl::InvalidArgument, "kernel", run(input, spec, "shared"));
        spec.kernel = cv::Mat::ones(3, 3, CV_32F);
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant", run(input, spec, "fft"));
        KL_VERIFY_THROWS(kl::InvalidArgument, "streams", run(input, spec, "shared", 17));
        const cv::Mat twoChannels(8, 8, CV_8UC2, cv::Scalar::all(1));
        KL_VERIFY_THROWS(kl::InvalidArgument, "channels", run(twoChannels, spec, "shared"));
    }

    // Any stream count and either host memory give the same bits; halos span several chunks
    // when the strips (16 streams: 64 chunks) are shorter than the kernel.
    void streamsAndHostMemory_data()
    {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("cols");
        QTest::addColumn<int>("kernelSize");
        QTest::addColumn<int>("border");
        QTest::newRow("1021x769 9x9 reflect101") << 769 << 1021 << 9 << int(BorderMode::Reflect101);
        QTest::newRow("150x203 15x15 reflect101") << 203 << 150 << 15 << int(BorderMode::Reflect101);
        QTest::newRow("152x203 15x15 constant") << 203 << 152 << 15 << int(BorderMode::Constant);
        QTest::newRow("150x203 31x31 wrap") << 203 << 150 << 31 << int(BorderMode::Wrap);
        QTest::newRow("150x203 31x31 reflect") << 203 << 150 << 31 << int(BorderMode::Reflect);
        QTest::newRow("150x203 31x31 constant") << 203 << 150 << 31 << int(BorderMode::Constant);
        QTest::newRow("40x70 63x63 replicate") << 70 << 40 << 63 << int(BorderMode::Replicate);
    }
    void streamsAndHostMemory()
    {
        QFETCH(int, rows);
        QFETCH(int, cols);
        QFETCH(int, kernelSize);
        QFETCH(int, border);
        const cv::Mat input = kltest::randomImage(rows, cols, CV_8U, 3, 9000 + kernelSize);
        const Conv2DSpec nonSeparable =
            makeSpec(randomKernel(kernelSize, kernelSize, true, 77), BorderMode(border), CV_8U);
        const Conv2DSpec separable =
            makeSpec(randomSeparableKernel(kernelSize, kernelSize, 78), BorderMode(border), CV_8U);
        for (const std::string& variant : kl::gpu::variants("conv2d")) {
            // u8 3 channels, random taps from 9x9 on; tmaTiles, integerIsExact, integerLanesAreExact and
            // stagedRowsMatchesReference run the others on several streams
            if (variant == "tma" || variant == "integer" || variant == "dp4a" || variant == "dp2a" || variant == "staged-rows")
                continue;
            if (variant == "separable-tiles" && !compiledSize(kernelSize)) continue;
            // separableMmaMatchesReference runs separable-mma's constant border on values u8 holds, and
            // rowsMmaMatchesReference rows-mma on several streams; direct-mma takes kernels up to 9x9
            if (variant == "rows-mma" || (variant == "separable-mma" && !mmaApplies(input, separable))) continue;
            if (variant == "direct-mma" && !directMmaApplies(input, nonSeparable)) continue;
            const bool rankOne = variant == "separable" || variant == "separable-tiles" || variant == "separable-mma";
            const Conv2DSpec& spec = rankOne ? separable : nonSeparable;
            const cv::Mat one = run(input, spec, variant, 1, HostMemory::Pageable);
            if (rows * cols <= 40000) {
                const std::string failure = compareWithReference(one, kl::conv2dReference(input, spec), input, spec);
                QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, variant) + ": " + failure));
            }
            for (int streams : {1, 2, 4, 16})
                for (HostMemory memory : {HostMemory::Pageable, HostMemory::Pinned}) {
                    const cv::Mat other = run(input, spec, variant, streams, memory);
                    QVERIFY2(kltest::bitwiseEqual(one, other),
                             kltest::msg(describe(input, spec, variant) + ": " + std::to_string(streams) +
                                         " streams, " + kl::gpu::toString(memory) + " memory differ from 1 stream"));
                }
        }
    }

    // endToEnd = false times the kernel alone and still returns the same output.
    void kernelOnlyMode()
    {
        const cv::Mat u16 = kltest::randomImage(301, 257, CV_16U, 4, 31);
        const cv::Mat f32 = kltest::randomImage(301, 257, CV_32F, 1, 33);
        const Conv2DSpec u16Spec = makeSpec(randomKernel(9, 7, true, 32), BorderMode::Wrap, CV_16U);
        const Conv2DSpec f32Spec = makeSpec(randomKernel(5, 5, false, 34), BorderMode::Constant, CV_32F);
        for (const std::string variant : {"naive", "constant", "shared", "tma", "auto"}) {
            const bool tma = variant == "tma";
            if (tma && !tmaApplies(f32, f32Spec)) continue;
            const cv::Mat& input = tma ? f32 : u16;
            const Conv2DSpec& spec = tma ? f32Spec : u16Spec;
            const cv::Mat endToEnd = run(input, spec, variant);
            kl::gpu::RunOptions options;
            options.variant = variant;
            options.endToEnd = false;
            options.repetitions = 3;
            options.warmup = 1;
            GpuReport report;
            const cv::Mat kernelOnly = run(input, spec, options, &report);
            QVERIFY2(kltest::bitwiseEqual(endToEnd, kernelOnly), kltest::msg(describe(input, spec, variant)));
            QVERIFY(report.kernel.medianMs > 0);
            QCOMPARE(report.total.medianMs, 0.0);
            QVERIFY(report.timeline.empty());
        }
    }

    void reportContents()
    {
        const cv::Mat input = kltest::randomImage(509, 383, CV_8U, 3, 41);
        kl::Conv2DPresetParams params;
        const Conv2DSpec gaussian =
            makeSpec(kl::makeConv2DKernel(kl::Conv2DPreset::Gaussian, params), BorderMode::Reflect101, CV_8U);
        const Conv2DSpec sharpen =
            makeSpec(kl::makeConv2DKernel(kl::Conv2DPreset::Sharpen), BorderMode::Reflect101, CV_8U);
        kl::Conv2DPresetParams box7x7;
        box7x7.width = box7x7.height = 7;
        const Conv2DSpec box7 =
            makeSpec(kl::makeConv2DKernel(kl::Conv2DPreset::Box, box7x7), BorderMode::Reflect101, CV_8U);
        for (const auto& [spec, resolved] : {std::pair<Conv2DSpec, std::string>{gaussian, "integer"},
                                             {sharpen, "dp4a"},  // integer taps
                                             {box7, "integer"}}) {  // ones times 1/49
            for (int streams : {1, 2, 4}) {
                kl::gpu::RunOptions options;
                options.streams = streams;
                options.minChunkBytes = 0;
                options.repetitions = 3;
                options.warmup = 1;
                GpuReport report;
                const cv::Mat out = run(input, spec, options, &report);
                QCOMPARE(report.op, std::string("conv2d"));
                QCOMPARE(report.variant, resolved);
                QCOMPARE(report.streams, streams);
                QVERIFY(report.kernel.medianMs > 0);
                QVERIFY(report.total.medianMs > 0);
                const uint64_t bytes = uint64_t(input.total() * input.elemSize());
                QCOMPARE(report.kernelBytes, 2 * bytes);
                QCOMPARE(report.kernelFlops, 2.0 * double(spec.kernel.total()) * double(input.total()) * 3);
                QVERIFY(report.bytesH2D >= bytes);
                QCOMPARE(report.bytesD2H, bytes);

                const int chunks = streams == 1 ? 1 : 4 * streams;
                QCOMPARE(int(report.timeline.size()), 3 * chunks);
                std::vector<std::vector<kl::gpu::TimelineEntry>> byChunk(size_t(chunks), std::vector<kl::gpu::TimelineEntry>(3));
                for (const kl::gpu::TimelineEntry& e : report.timeline) {
                    QVERIFY(e.chunk >= 0 && e.chunk < chunks);
                    QCOMPARE(e.stream, e.chunk % streams);
                    QVERIFY(e.startMs >= 0 && e.startMs <= e.endMs);
                    byChunk[size_t(e.chunk)][size_t(e.stage)] = e;
                }
                for (const auto& stages : byChunk) {
                    QVERIFY(stages[0].stage == kl::gpu::Stage::H2D);
                    QVERIFY(stages[1].stage == kl::gpu::Stage::Kernel);
                    QVERIFY(stages[2].stage == kl::gpu::Stage::D2H);
                    QVERIFY(stages[0].endMs <= stages[1].startMs);
                    QVERIFY(stages[1].endMs <= stages[2].startMs);
                }
                const std::string failure = compareWithReference(out, kl::conv2dReference(input, spec), input, spec);
                QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, report.variant) + ": " + failure));
            }
        }
    }

    // Every variant once on small images, each code path covered: the target for
    // compute-sanitizer (memcheck, racecheck, initcheck), e.g. `tst_conv2d_gpu sanitizerSmoke`.
    void sanitizerSmoke()
    {
        struct Case {
            int rows, cols, depth, channels, kernelSize;
            BorderMode border;
            int streams;
        };
        // Compiled sizes on element-wise rows (29 and 35 columns) and vector rows (64, 36 and 48
        // columns; 4 channels always), 15x15 on 4 channels (69 KB of shared memory per block) and
        // 63x63 (88 KB: both past 48 KB, the opt-in path); 31 and 63 run the any-size tiles and the
        // two separable passes; one u16 channel runs rows-mma, on bands inside the row and at its ends.
        const std::vector<Case> cases = {{37, 29, CV_8U, 3, 5, BorderMode::Constant, 2},
                                         {37, 29, CV_32F, 1, 5, BorderMode::Reflect101, 1},
                                         {34, 64, CV_8U, 3, 5, BorderMode::Reflect101, 1},
                                         {40, 36, CV_32F, 1, 3, BorderMode::Wrap, 2},
                                         {19, 35, CV_32F, 3, 7, BorderMode::Constant, 1},
                                         {50, 48, CV_8U, 1, 9, BorderMode::Replicate, 2},
                                         {5, 3, CV_16U, 4, 9, BorderMode::Wrap, 2},
                                         {21, 19, CV_16U, 4, 15, BorderMode::Reflect, 1},
                                         {40, 35, CV_8U, 4, 31, BorderMode::Replicate, 2},
                                         {11, 9, CV_16U, 4, 63, BorderMode::Reflect, 1},
                                         {150, 531, CV_16U, 1, 15, BorderMode::Wrap, 2},
                                         {23, 300, CV_16U, 1, 9, BorderMode::Reflect101, 1}};
        uint64_t seed = 12000;
        for (const Case& c : cases) {
            const cv::Mat input = kltest::randomImage(c.rows, c.cols, c.depth, c.channels, ++seed);
            const Conv2DSpec spec =
                makeSpec(randomSeparableKernel(c.kernelSize, c.kernelSize, seed), c.border, c.depth);
            const cv::Mat expected = kl::conv2dReference(input, spec);
            std::vector<std::string> names = kl::gpu::variants("conv2d");
            names.push_back("auto");
            for (const std::string& variant : names) {
                if (!applies(variant, input, spec)) continue;
                const cv::Mat gpu = run(input, spec, variant, c.streams, HostMemory::Pinned);
                const std::string failure = compareWithReference(gpu, expected, input, spec);
                QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, variant) + ": " + failure));
            }
            const Conv2DSpec dyadic = makeSpec(dyadicKernel(c.kernelSize, seed), c.border, c.depth);
            if (integerApplies(input, dyadic))
                QVERIFY2(kltest::bitwiseEqual(run(input, dyadic, "integer", c.streams, HostMemory::Pinned),
                                      kl::conv2dReference(input, dyadic)),
                         kltest::msg(describe(input, dyadic, "integer")));
        }
    }

    // The benchmark (KL_BENCH=1 only; asserts nothing): kernel-only medians of every variant on
    // 8192 x 8192 f32 1 channel (3x3, 5x5, 9x9, 15x15, random taps and Gaussians) and u8 3 channels
    // 5x5, against the copy bandwidth measured now and the fp32 FMA peak (SMs x 128 lanes x 2 x
    // clock); the 4096 x 4096 u8 Gaussians of docs/performance.md's before-and-after table;
    // end-to-end pinned f32 5x5 on 1 and 4 streams. E.g. `KL_BENCH=1 tst_conv2d_gpu throughput`;
    // KL_BENCH_FILTER=TEXT keeps the kernel-only cases whose label contains TEXT.
    void throughput()
    {
        if (qEnvironmentVariableIntValue("KL_BENCH") != 1) QSKIP("set KL_BENCH=1 to run the benchmark");
        const kl::gpu::DeviceInfo& device = engine_->device();
        const double copyGBs = engine_->measureCopyBandwidthGBs();
        const double peakGFlops = device.multiprocessors * 128.0 * 2.0 * device.smClockKHz * 1e-6;
        const kl::gpu::Engine::TransferRates pinned = engine_->measureTransferGBs(HostMemory::Pinned);
        std::printf("%s: copy %.0f GB/s (read + write), fp32 FMA peak %.1f TFLOP/s, pinned H2D %.1f GB/s, "
                    "D2H %.1f GB/s\n",
                    device.name.c_str(), copyGBs, peakGFlops / 1000, pinned.h2dGBs, pinned.d2hGBs);
        const auto gaussian = [](int size) {
            kl::Conv2DPresetParams params;
            params.width = params.height = size;
            return kl::makeConv2DKernel(kl::Conv2DPreset::Gaussian, params);
        };
        const std::string filter = qEnvironmentVariable("KL_BENCH_FILTER").toStdString();
        const auto kernelOnly = [&](const cv::Mat& input, const cv::Mat& kernel, const std::string& label,
                                    const std::vector<std::string>& variants) {
            if (label.find(filter) == std::string::npos) return;
            const Conv2DSpec spec = makeSpec(kernel, BorderMode::Reflect101, input.depth());
            for (const std::string& variant : variants) {
                if (!kl::gpu::whyNotApplicable(variant, input, spec, engine_->device()).empty()) continue;
                kl::gpu::RunOptions options;
                options.variant = variant;
                options.endToEnd = false;
                options.warmup = 1;
                options.repetitions = variant == "naive" || variant == "constant" ? 3 : 10;
                GpuReport report;
                run(input, spec, options, &report);
                const double gbs = report.kernelGBs(), gflops = report.kernelGFlops();
                std::printf("  %-34s %-9s -> %-9s %9.3f ms %6.0f GB/s %5.1f%% copy %8.0f GFLOP/s %5.1f%% peak\n",
                            label.c_str(), variant.c_str(), report.variant.c_str(), report.kernel.medianMs, gbs,
                            100 * gbs / copyGBs, gflops, 100 * gflops / peakGFlops);
            }
        };
        const std::vector<std::string> all = {"naive", "constant", "shared", "separable", "integer", "auto"};
        const std::vector<std::string> direct = {"naive", "constant", "shared", "tma", "auto"};

        std::printf("kernel only, 8192 x 8192, reflect101:\n");
        const cv::Mat f32 = kltest::randomImage(8192, 8192, CV_32F, 1, 1);
        for (int k : {3, 5, 9, 15}) {
            const std::string size = std::to_string(k) + "x" + std::to_string(k);
            kernelOnly(f32, randomKernel(k, k, false, uint64_t(k)), "f32 1ch " + size + " random", direct);
            kernelOnly(f32, gaussian(k), "f32 1ch " + size + " gaussian", {"shared", "tma", "separable", "auto"});
        }
        const cv::Mat u8 = kltest::randomImage(8192, 8192, CV_8U, 3, 2);
        kernelOnly(u8, gaussian(5), "u8 3ch 5x5 gaussian", all);
        kernelOnly(u8, gaussian(3), "u8 3ch 3x3 gaussian", {"shared", "separable", "integer", "auto"});
        kernelOnly(u8, randomKernel(5, 5, true, 5), "u8 3ch 5x5 random", {"shared", "auto"});
        kl::Conv2DPresetParams sigma13;
        sigma13.sigma = 1.3;
        kernelOnly(u8, kl::makeConv2DKernel(kl::Conv2DPreset::Gaussian, sigma13), "u8 3ch 5x5 gaussian sigma 1.3",
                   {"shared", "separable", "auto"});
        const cv::Mat u8Gray = kltest::randomImage(8192, 8192, CV_8U, 1, 4), u8Rgba = kltest::randomImage(8192, 8192, CV_8U, 4, 5);
        for (int k : {3, 5}) {
            const std::string size = std::to_string(k) + "x" + std::to_string(k);
            kernelOnly(u8Gray, gaussian(k), "u8 1ch " + size + " gaussian", {"shared", "separable", "integer", "auto"});
            kernelOnly(u8Rgba, gaussian(k), "u8 4ch " + size + " gaussian", {"shared", "separable", "integer", "auto"});
        }

        std::printf("kernel only, 4096 x 4096 u8, Gaussians (docs/performance.md's before-and-after cases):\n");
        for (int channels : {1, 4}) {
            const cv::Mat input = kltest::randomImage(4096, 4096, CV_8U, channels, 3);
            for (int k : channels == 1 ? std::vector<int>{3, 5, 15, 63} : std::vector<int>{15, 63})
                kernelOnly(input, gaussian(k),
                           "u8 " + std::to_string(channels) + "ch " + std::to_string(k) + "x" + std::to_string(k), all);
        }

        std::printf("end to end, pinned, 8192 x 8192 f32 5x5 (kernel/h2d/d2h: sums over chunks):\n");
        for (const auto& [kernel, label] : {std::pair<cv::Mat, std::string>{gaussian(5), "gaussian"},
                                            {randomKernel(5, 5, false, 6), "random"}}) {
            double oneStream = 0;
            for (int streams : {1, 4}) {
                kl::gpu::RunOptions options;
                options.streams = streams;
                options.minChunkBytes = 0;
                options.memory = HostMemory::Pinned;
                options.warmup = 1;
                options.repetitions = 5;
                GpuReport report;
                run(f32, makeSpec(kernel, BorderMode::Reflect101, CV_32F), options, &report);
                if (streams == 1) oneStream = report.total.medianMs;
                std::printf("  %-9s %-9s %d stream(s): total %7.2f ms (%.2fx), h2d %6.2f, kernel %6.2f, d2h %6.2f ms\n",
                            label.c_str(), report.variant.c_str(), streams, report.total.medianMs,
                            oneStream / report.total.medianMs, report.h2d.medianMs, report.kernel.medianMs,
                            report.d2h.medianMs);
            }
        }
        std::fflush(stdout);
    }
};

QTEST_GUILESS_MAIN(TestConv2dGpu)
#include "tst_conv2d_gpu.moc"
