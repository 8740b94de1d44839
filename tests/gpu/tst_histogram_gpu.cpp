// GPU histogram against core's reference, exactly (counts, out-of-range, NaN, binning,
// labels): every variant, depth and channel count on uniform, skewed, constant and
// NaN / out-of-range inputs, sizes from 1x1 up, 1 to 65536 bins; the same result for
// any stream count and host memory and in kernel-only mode. kernelThroughput prints
// the kernel-only rates the README quotes.
#include "kernellab/error.hpp"
#include "kernellab/gpu/engine.hpp"
#include "kernellab/histogram.hpp"
#include "kernellab/image.hpp"
#include "gpu_skip.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using kl::HistogramResult;
using kl::HistogramSpec;
using kl::gpu::HostMemory;
using kl::gpu::RunOptions;

namespace {

const std::vector<std::string> kVariants = {"global-atomics", "shared", "optimized", "tma"};
const std::vector<int>& kDepths = kltest::kAllDepths;
const std::vector<int>& kChannels = kltest::kAllChannelCounts;
/// 1x1, a single row, a single column, odd sizes that leave partial vector groups.
const std::vector<cv::Size> kSizes = {{1, 1}, {4097, 1}, {1, 4097}, {97, 61}, {1021, 769}};
/// u16 / f32 (u8 always has 256): 65536 bins do not fit in shared memory (the global fallback).
const std::vector<int> kBins = {1, 7, 256, 1000, 65536};

RunOptions once(const std::string& variant)
{
    RunOptions options;
    options.variant = variant;
    options.repetitions = 1;
    options.warmup = 0;
    return options;
}

/// Uniform random; squared uniform (skewed to the low end); constant (a different value per
/// channel); `special` (binned over a custom range, see specFor) and `outliers` (auto range):
/// uniform with NaN, +-inf and finite values outside [-1, 1) mixed in (f32);
/// `nan`: all NaN (f32).
cv::Mat makePattern(const std::string& pattern, int rows, int cols, int depth, int channels, uint64_t seed)
{
    if (pattern == "constant") {
        const double base = depth == CV_8U ? 200 : depth == CV_16U ? 40000 : 0.3;
        return cv::Mat(rows, cols, CV_MAKETYPE(depth, channels), cv::Scalar(base, base / 2, base / 3, base / 5));
    }
    if (pattern == "nan")
        return cv::Mat(rows, cols, CV_MAKETYPE(depth, channels), cv::Scalar::all(std::numeric_limits<double>::quiet_NaN()));
    cv::Mat img = kltest::randomImage(rows, cols, depth, channels, seed);
    if (pattern == "skewed") {
        const double top = depth == CV_8U ? 255 : depth == CV_16U ? 65535 : 1;
        cv::Mat unit;
        img.convertTo(unit, CV_MAKETYPE(CV_64F, channels), 1 / top);
        unit = unit.mul(unit);
        unit.convertTo(img, img.type(), top);
    }
    if ((pattern == "special" || pattern == "outliers") && depth == CV_32F) {
        const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity(), 5.0f, -7.5f};
        float* values = img.ptr<float>();
        for (size_t i = 0; i < img.total() * size_t(channels); i += 7) values[i] = specials[(i / 7) % 5];
    }
    return img;
}

/// The spec a pattern is tested with: a custom range for `special`, else the default.
HistogramSpec specFor(const std::string& pattern, int depth, int bins)
{
    HistogramSpec spec;
    spec.bins = bins;
    if (pattern == "special" && depth == CV_16U) {
        spec.lo = 1000;
        spec.hi = 50000;
    } else if (pattern == "special" && depth == CV_32F) {
        spec.lo = -0.3;  // not exact in float, so scale and offset have no short binary form
        spec.hi = 0.7;
    }
    return spec;
}

std::vector<std::string> patternsFor(int depth)
{
    if (depth == CV_8U) return {"uniform", "skewed", "constant"};
    if (depth == CV_16U) return {"uniform", "skewed", "constant", "special"};
    return {"uniform", "skewed", "constant", "special", "outliers", "nan"};
}

std::string describe(const cv::Mat& input, const HistogramSpec& spec, const std::string& what)
{
    return kl::describeImage(input) + ", " + std::to_string(spec.bins) + " bins" +
           (spec.lo ? ", range [" + std::to_string(*spec.lo) + ", " + std::to_string(*spec.hi) + ")" : "") +
           (spec.luminance ? "" : ", no luminance") + ", " + what;
}

} // namespace

class TestHistogramGpu : public QObject {
    Q_OBJECT

    std::unique_ptr<kl::gpu::Engine> engine_;

    /// Runs every variant on input with `options` (variant overridden) and checks each against `want`.
    void expectEveryVariant(const cv::Mat& input, const HistogramSpec& spec, const HistogramResult& want,
                            RunOptions options = once("auto"))
    {
        for (const std::string& variant : kVariants) {
            options.variant = variant;
            HistogramResult got;
            if (!kl::gpu::whyNotApplicable(variant, input, spec, engine_->device()).empty()) {
                KL_VERIFY_THROWS(kl::InvalidArgument, "variant '" + variant + "' needs",
                                 engine_->histogram(input, spec, options, got));
                continue;
            }
            engine_->histogram(input, spec, options, got);
            const std::string diff = kltest::histogramDifference(got, want);
            QVERIFY2(diff.empty(), kltest::msg(describe(input, spec, variant + ": " + diff)));
        }
    }

private slots:
    void initTestCase()
    {
        KL_SKIP_WITHOUT_GPU();
        engine_ = std::make_unique<kl::gpu::Engine>();
    }

    void exactOnEveryShape_data() { kltest::addDepthChannelRows(); }

    void exactOnEveryShape()
    {
        QFETCH(int, depth);
        QFETCH(int, channels);
        uint64_t seed = 1;
        for (const std::string& pattern : patternsFor(depth))
            for (const cv::Size& size : kSizes)
                for (int bins : depth == CV_8U ? std::vector<int>{256} : kBins) {
                    const cv::Mat input = makePattern(pattern, size.height, size.width, depth, channels, seed++);
                    const HistogramSpec spec = specFor(pattern, depth, bins);
                    expectEveryVariant(input, spec, kl::histogramReference(input, spec));
                    if (QTest::currentTestFailed()) return;
                }
    }

    /// Small images through every kernel path (shared and per-warp histograms, byte bins,
    /// the global fallback, partial vector groups, several chunks): the sweep the sanitizer
    /// runs use.
    void smallEveryPath()
    {
        for (int depth : kDepths)
            for (int channels : kChannels)
                for (int bins : depth == CV_8U ? std::vector<int>{256} : std::vector<int>{7, 256, 65536})
                    for (int streams : {1, 4}) {
                        // 256 bins over the default range: the byte-bin kernel for one channel.
                        const std::string pattern = depth == CV_8U || bins == 256 ? "skewed" : "special";
                        const cv::Mat input = makePattern(pattern, 61, 97, depth, channels, 3);
                        const HistogramSpec spec = specFor(pattern, depth, bins);
                        RunOptions options = once("auto");
                        options.streams = streams;
                        options.minChunkBytes = 0;  // 4 chunks per stream on small inputs too: chunk boundaries
                        expectEveryVariant(input, spec, kl::histogramReference(input, spec), options);
                        if (QTest::currentTestFailed()) return;
                    }
    }

    /// The largest size, u8 only (the reference loop is slow).
    void exactOnLargeU8()
    {
        for (int channels : kChannels)
            for (const std::string pattern : {"uniform", "constant"}) {
                const cv::Mat input = makePattern(pattern, 3001, 4099, CV_8U, channels, 7);
                const HistogramSpec spec;
                expectEveryVariant(input, spec, kl::histogramReference(input, spec));
            }
    }

    /// A view into a larger image (not continuous) and a colour image without luminance.
    void roiAndNoLuminance()
    {
        for (int depth : kDepths) {
            const cv::Mat big = makePattern("uniform", 300, 200, depth, 3, 11);
            const cv::Mat roi = big(cv::Rect(3, 5, 61, 97));
            HistogramSpec spec;
            expectEveryVariant(roi, spec, kl::histogramReference(roi, spec));
            spec.luminance = false;
            expectEveryVariant(big, spec, kl::histogramReference(big, spec));
        }
    }

    /// u16 and f32 bin through the rule's float form, which defers to the double rule near
    /// edges: values on and a few ulps (u16: units) around every bin edge, on given and auto
    /// ranges, and the 0.22f image whose fused and unfused bins differ (tst_histogram_cpu).
    void binEdges()
    {
        for (int depth : {CV_16U, CV_32F})
            for (int channels : kChannels)
                for (int bins : {7, 256, 1000})
                    for (bool autoRange : {false, true}) {
                        if (autoRange && depth == CV_16U) continue;  // u16's default range is the shift
                        HistogramSpec spec = specFor("special", depth, bins);
                        cv::Mat input(61, 97, CV_MAKETYPE(depth, channels));
                        if (autoRange) {
                            // The extremes first fix the auto range; the edges then follow its binning.
                            spec.lo.reset();
                            spec.hi.reset();
                            input.setTo(cv::Scalar::all(0.25));
                            input.ptr<float>()[0] = -0.3f;
                            input.ptr<float>()[1] = 0.7f;
                        }
                        const kl::HistogramBinning b = kl::resolveBinning(input, spec);
                        const size_t values = input.total() * size_t(channels);
                        for (size_t i = autoRange ? 2 : 0; i < values; ++i) {
                            const double edge = b.lo + double(i / 9 % size_t(bins + 1)) / b.scale;
                            const int nudge = int(i % 9) - 4;
                            if (depth == CV_16U) {
                                input.ptr<uint16_t>()[i] = cv::saturate_cast<uint16_t>(std::round(edge) + nudge);
                            } else {
                                float v = float(edge);
                                for (int n = 0; n < std::abs(nudge); ++n) v = std::nextafter(v, nudge < 0 ? -1e30f : 1e30f);
                                input.ptr<float>()[i] = autoRange ? std::clamp(v, -0.3f, 0.7f) : v;  // keeps the range
                            }
                        }
                        expectEveryVariant(input, spec, kl::histogramReference(input, spec));
                        if (QTest::currentTestFailed()) return;
                    }
        for (int channels : kChannels) {
            const cv::Mat input(37, 1031, CV_32FC(channels), cv::Scalar::all(0.22f));
            HistogramSpec spec;
            spec.bins = 1000;
            spec.lo = 0.1;
            spec.hi = 0.7;
            expectEveryVariant(input, spec, kl::histogramReference(input, spec));
        }
    }

    void sameForAnyStreamsAndMemory()
    {
        struct Case { int depth, channels; const char* pattern; int bins; cv::Size size; };
        const Case cases[] = {{CV_8U, 3, "uniform", 256, {1021, 769}},
                              {CV_16U, 1, "special", 1000, {1021, 769}},
                              {CV_32F, 4, "special", 7, {613, 97}},
                              {CV_32F, 1, "uniform", 65536, {1, 4097}},
                              {CV_8U, 4, "skewed", 256, {4097, 5}},
                              // byte bins, chunks starting inside a 16-byte vector
                              {CV_8U, 1, "skewed", 256, {1021, 769}},
                              {CV_16U, 1, "uniform", 256, {769, 1021}}};
        for (const Case& c : cases) {
            const cv::Mat input = makePattern(c.pattern, c.size.height, c.size.width, c.depth, c.channels, 5);
            const HistogramSpec spec = specFor(c.pattern, c.depth, c.bins);
            const HistogramResult want = kl::histogramReference(input, spec);
            for (int streams : {1, 2, 4, 16})
                for (HostMemory memory : {HostMemory::Pageable, HostMemory::Pinned}) {
                    RunOptions options = once("auto");
                    options.streams = streams;
                    options.minChunkBytes = 0;
                    options.memory = memory;
                    options.repetitions = 2;  // the histogram is zeroed before each repetition
                    expectEveryVariant(input, spec, want, options);
                    if (QTest::currentTestFailed()) return;
                }
        }
    }

    void kernelOnly()
    {
        const cv::Mat input = makePattern("special", 769, 1021, CV_32F, 3, 9);
        const HistogramSpec spec = specFor("special", CV_32F, 1000);
        const HistogramResult want = kl::histogramReference(input, spec);
        RunOptions options = once("auto");
        options.endToEnd = false;
        options.repetitions = 3;
        options.warmup = 1;
        expectEveryVariant(input, spec, want, options);

        HistogramResult got;
        const kl::gpu::GpuReport report = engine_->histogram(input, spec, options, got);
        QCOMPARE(report.variant, std::string("optimized"));
        QCOMPARE(report.kernel.repetitions, 3);
        QVERIFY(report.kernel.medianMs > 0);
        QCOMPARE(report.total.medianMs, 0.0);
        QCOMPARE(report.kernelBytes, uint64_t(input.total() * input.elemSize()));
        QVERIFY(report.kernelGBs() > 0);
    }

    /// tma takes one channel of u8, or u16 with the default bins, on compute capability 9.0+ with
    /// 193 KB of shared memory for a block; auto runs optimized everywhere (its byte bins load
    /// straight into registers and outrun tma's ring).
    void tmaWhereItApplies()
    {
        const kl::gpu::DeviceInfo& device = engine_->device();
        // tma asks for its ring (64 KB and 8 barriers), up to 64 KB - 1 to reach a 64 KB boundary,
        // and its columns (64 KB).
        const bool hopper = device.computeMajor >= 9 && device.deviceCodeArchitecture >= 900 &&
                            device.sharedMemoryPerBlockOptIn >= 65600 + 65535 + 65536;
        HistogramSpec sevenBins;
        sevenBins.bins = 7;
        const struct {
            cv::Mat input;
            HistogramSpec spec;
            bool applies;
        } cases[] = {{makePattern("uniform", 61, 97, CV_8U, 1, 1), {}, hopper},
                     {makePattern("uniform", 61, 97, CV_16U, 1, 2), {}, hopper},
                     {makePattern("uniform", 61, 97, CV_16U, 1, 3), sevenBins, false},
                     {makePattern("uniform", 61, 97, CV_32F, 1, 4), {}, false},
                     {makePattern("uniform", 61, 97, CV_8U, 3, 5), {}, false}};
        for (const auto& c : cases) {
            const std::string reason = kl::gpu::whyNotApplicable("tma", c.input, c.spec, engine_->device());
            QVERIFY2(reason.empty() == c.applies, kltest::msg(describe(c.input, c.spec, "tma: " + reason)));
            if (!c.applies) QVERIFY(reason.find("needs a single-channel u8 image") == 0);
            HistogramResult got;
            const kl::gpu::GpuReport report = engine_->histogram(c.input, c.spec, once("auto"), got);
            QCOMPARE(report.variant, std::string("optimized"));
        }
    }

    void variantNames()
    {
        QCOMPARE(kl::gpu::variants("histogram"), kVariants);
        HistogramResult got;
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant",
                         engine_->histogram(makePattern("uniform", 4, 4, CV_8U, 1, 1), {}, once("fastest"), got));
    }

    void rejectsBadSpec()
    {
        const cv::Mat input = makePattern("uniform", 4, 4, CV_16U, 1, 1);
        HistogramResult got;
        HistogramSpec spec;
        spec.bins = 0;
        KL_VERIFY_THROWS(kl::InvalidArgument, "bins", engine_->histogram(input, spec, once("auto"), got));
        spec.bins = 10;
        spec.lo = 5;
        KL_VERIFY_THROWS(kl::InvalidArgument, "range", engine_->histogram(input, spec, once("auto"), got));
    }

    /// Kernel-only rates at 8192x8192, at an odd size and (u8) at 16384x16384, and the fixed
    /// cost of a timed kernel stage (printed, not checked: the README and docs/performance.md
    /// quote them). Also the exactness check at sizes where every lane's counters take
    /// thousands of values.
    void kernelThroughput()
    {
        const double copyGBs = engine_->measureCopyBandwidthGBs();
        qInfo("device-to-device copy: %.0f GB/s", copyGBs);
        RunOptions options;
        options.endToEnd = false;
        options.repetitions = 10;
        {
            // The fixed cost of a timed kernel stage (launch and events) on the smallest input.
            HistogramResult got;
            const kl::gpu::GpuReport report = engine_->histogram(makePattern("uniform", 1, 1, CV_8U, 1, 1), {}, options, got);
            qInfo("histogram optimized u8 1x1: %.4f ms", report.kernel.medianMs);
        }
        for (int depth : kDepths)
            for (const cv::Size& size : {cv::Size(8192, 8192), cv::Size(8179, 8191), cv::Size(16384, 16384)})
                for (const std::string pattern : {"uniform", "constant"}) {
                    if (size.width == 16384 && depth != CV_8U) continue;
                    const cv::Mat input = makePattern(pattern, size.height, size.width, depth, 1, 3);
                    const HistogramSpec spec;
                    const HistogramResult want = kl::histogramReference(input, spec);
                    for (const std::string& variant : kVariants) {
                        if (!kl::gpu::whyNotApplicable(variant, input, spec, engine_->device()).empty()) continue;
                        options.variant = variant;
                        HistogramResult got;
                        const kl::gpu::GpuReport report = engine_->histogram(input, spec, options, got);
                        const std::string diff = kltest::histogramDifference(got, want);
                        QVERIFY2(diff.empty(), kltest::msg(describe(input, spec, variant + ": " + diff)));
                        qInfo("histogram %-14s %-3s %-8s %dx%d: %.4f ms, %.0f GB/s (%.0f%% of copy)", variant.c_str(),
                              kl::depthName(depth).c_str(), pattern.c_str(), input.rows, input.cols,
                              report.kernel.medianMs, report.kernelGBs(), 100 * report.kernelGBs() / copyGBs);
                    }
                }
    }
};

QTEST_GUILESS_MAIN(TestHistogramGpu)
#include "tst_histogram_gpu.moc"
