// histogram on the CPU: reference and OpenCV identical on random images of every
// depth, channel count and size, with default, custom and auto ranges and 1..65536 bins;
// NaN / inf / out-of-range accounting; hand-checked binning, luminance and ranges; a
// bin holding more than 2^24 pixels; a value that a fused multiply-add would bin
// elsewhere; the validation messages.
#include "kernellab/error.hpp"
#include "kernellab/histogram.hpp"
#include "kernellab/image.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>

#include <QtTest>

#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using kl::HistogramResult;
using kl::HistogramSpec;

namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

HistogramSpec specOf(int bins, std::optional<double> lo = {}, std::optional<double> hi = {}, bool luminance = true)
{
    HistogramSpec spec;
    spec.bins = bins;
    spec.lo = lo;
    spec.hi = hi;
    spec.luminance = luminance;
    return spec;
}

/// Both backends, checked identical and complete; returns the reference's result.
HistogramResult runBoth(const cv::Mat& input, const HistogramSpec& spec, bool* ok)
{
    *ok = false;
    const HistogramResult reference = kl::histogramReference(input, spec);
    const HistogramResult opencv = kl::histogramOpenCV(input, spec);
    const std::string difference = kltest::histogramDifference(opencv, reference);
    [&] {
        QVERIFY2(difference.empty(), kltest::msg("OpenCV vs reference: " + difference));
        const std::string totals = kltest::histogramTotalsProblem(reference, input.total());
        QVERIFY2(totals.empty(), kltest::msg(totals));
        *ok = true;
    }();
    return reference;
}

} // namespace

class TestHistogramCpu : public QObject {
    Q_OBJECT

private slots:
    void referenceMatchesOpenCV_data()
    {
        QTest::addColumn<int>("depth");
        QTest::addColumn<int>("channels");
        QTest::addColumn<cv::Size>("size");
        QTest::addColumn<int>("bins");
        QTest::addColumn<bool>("customRange");
        QTest::addColumn<bool>("specials");
        const cv::Size sizes[] = {{1, 1}, {4097, 1}, {1, 4097}, {61, 97}};
        for (int depth : {CV_8U, CV_16U, CV_32F})
            for (int channels : {1, 3, 4})
                for (const cv::Size& size : sizes)
                    for (int bins : {1, 7, 256, 1000, 65536})
                        for (bool customRange : {false, true}) {
                            if (depth == CV_8U && (bins != 256 || customRange)) continue;  // the spec does not apply
                            const bool specials = depth == CV_32F && size.area() > 1;
                            const std::string name = kl::depthName(depth) + " x" + std::to_string(channels) + " " +
                                                     std::to_string(size.width) + "x" + std::to_string(size.height) +
                                                     " bins " + std::to_string(bins) +
                                                     (customRange ? " custom range" : "") + (specials ? " nan/inf" : "");
                            QTest::newRow(name.c_str())
                                << depth << channels << size << bins << customRange << specials;
                        }
        QTest::newRow("u8 x3 1021x769") << CV_8U << 3 << cv::Size(1021, 769) << 256 << false << false;
        QTest::newRow("u16 x4 1021x769 bins 4096") << CV_16U << 4 << cv::Size(1021, 769) << 4096 << false << false;
        QTest::newRow("f32 x3 1021x769 bins 777 custom range")
            << CV_32F << 3 << cv::Size(1021, 769) << 777 << true << true;
    }

    void referenceMatchesOpenCV()
    {
        QFETCH(int, depth);
        QFETCH(int, channels);
        QFETCH(cv::Size, size);
        QFETCH(int, bins);
        QFETCH(bool, customRange);
        QFETCH(bool, specials);
        cv::Mat input = kltest::randomImage(size.height, size.width, depth, channels, uint64_t(size.area() + bins));
        if (specials) {  // NaN, +-inf and a finite outlier in every channel
            cv::Mat flat = input.reshape(1, 1);
            const float values[] = {kNan, kInf, -kInf, 7.5f};
            for (int i = 0; i < 4 * channels && i < flat.cols; ++i) flat.at<float>(0, i * 7 % flat.cols) = values[i % 4];
        }
        // Custom ranges with fractional, non-float-exact bounds (they are used as float32).
        const HistogramSpec spec = !customRange ? specOf(bins)
                                   : depth == CV_16U ? specOf(bins, 1000.3, 50000.7)
                                                     : specOf(bins, -0.55, 0.9);
        bool ok = false;
        const HistogramResult result = runBoth(input, spec, &ok);
        QVERIFY(ok);
        QCOMPARE(result.hasLuminance, channels >= 3);
        QCOMPARE(result.counts.size(), size_t(channels + (channels >= 3 ? 1 : 0)));
    }

    // u8: bin = value; luminance of pure blue / green / red / white, BT.601 in OpenCV's fixed point.
    void u8BinsAndLuminance()
    {
        cv::Mat input(1, 4, CV_8UC3);
        input.at<cv::Vec3b>(0, 0) = {255, 0, 0};
        input.at<cv::Vec3b>(0, 1) = {0, 255, 0};
        input.at<cv::Vec3b>(0, 2) = {0, 0, 255};
        input.at<cv::Vec3b>(0, 3) = {255, 255, 255};
        bool ok = false;
        const HistogramResult r = runBoth(input, specOf(3, 1.0, 2.0), &ok);  // bins/range ignored for u8
        QVERIFY(ok);
        QCOMPARE(r.binning.bins, 256);
        QCOMPARE(r.binning.lo, 0.0);
        QCOMPARE(r.binning.hi, 256.0);
        const std::vector<std::string> labels = {"B", "G", "R", "Y"};
        QCOMPARE(r.labels, labels);
        for (int c = 0; c < 3; ++c) {
            QCOMPARE(r.counts[size_t(c)][255], uint64_t(2));
            QCOMPARE(r.counts[size_t(c)][0], uint64_t(2));
        }
        for (int y : {29, 150, 76, 255}) QCOMPARE(r.counts[3][size_t(y)], uint64_t(1));  // 0.114, 0.587, 0.299 of 255
        QCOMPARE(kl::luminanceFixed(255, 0, 0), 29u);
        QCOMPARE(kl::luminanceFixed(65535, 65535, 65535), 65535u);
    }

    // [1024, 2048) in 8 bins of 128 (scale 2^-7: every edge is exact).
    void u16CustomRange()
    {
        const std::vector<uint16_t> values = {1023, 1024, 1151, 1152, 2047, 2048, 65535, 0};
        const cv::Mat input = cv::Mat(values, true).reshape(1, 1);
        bool ok = false;
        const HistogramResult r = runBoth(input, specOf(8, 1024.0, 2048.0), &ok);
        QVERIFY(ok);
        const std::vector<uint64_t> expected = {2, 1, 0, 0, 0, 0, 0, 1};
        QCOMPARE(r.counts[0], expected);
        QCOMPARE(r.outOfRange[0], uint64_t(4));
        QCOMPARE(r.nanCount[0], uint64_t(0));
        QCOMPARE(r.labels, std::vector<std::string>{"0"});
    }

    void u16DefaultRange()
    {
        const std::vector<uint16_t> values = {0, 255, 256, 65535};
        bool ok = false;
        const HistogramResult r = runBoth(cv::Mat(values, true).reshape(1, 1), specOf(256), &ok);
        QVERIFY(ok);
        QCOMPARE(r.binning.hi, 65536.0);
        QCOMPARE(r.counts[0][0], uint64_t(2));
        QCOMPARE(r.counts[0][1], uint64_t(1));
        QCOMPARE(r.counts[0][255], uint64_t(1));
    }

    // Auto range: [min, max] with max nudged up one float ulp, so max is binned, in the last bin.
    void f32AutoRangeIncludesMax()
    {
        const std::vector<float> values = {-1.f, 0.f, 0.5f, 3.f, kNan, kInf, -kInf};
        bool ok = false;
        const HistogramResult r = runBoth(cv::Mat(values, true).reshape(1, 1), specOf(4), &ok);
        QVERIFY(ok);
        QCOMPARE(r.binning.lo, -1.0);
        QCOMPARE(r.binning.hi, double(std::nextafter(3.f, kInf)));
        // Bins of width 1 + a hair (the nudge), so 0 falls just short of bin 1's edge.
        const std::vector<uint64_t> expected = {2, 1, 0, 1};
        QCOMPARE(r.counts[0], expected);
        QCOMPARE(r.nanCount[0], uint64_t(1));
        QCOMPARE(r.outOfRange[0], uint64_t(2));
    }

    void f32AutoRangeWithoutFiniteValues()
    {
        const cv::Mat input(2, 3, CV_32FC1, cv::Scalar(kNan));
        bool ok = false;
        const HistogramResult r = runBoth(input, specOf(8), &ok);
        QVERIFY(ok);
        QCOMPARE(r.binning.lo, 0.0);
        QCOMPARE(r.binning.hi, 1.0);
        QCOMPARE(r.nanCount[0], uint64_t(6));
    }

    void constantImages()
    {
        bool ok = false;
        HistogramResult r = runBoth(cv::Mat(5, 7, CV_8UC1, cv::Scalar(7)), specOf(256), &ok);
        QVERIFY(ok);
        QCOMPARE(r.counts[0][7], uint64_t(35));
        // f32 constant: auto range [v, v + ulp) puts everything in bin 0.
        r = runBoth(cv::Mat(5, 7, CV_32FC3, cv::Scalar::all(0.3)), specOf(100), &ok);
        QVERIFY(ok);
        for (size_t entry = 0; entry < 4; ++entry) QCOMPARE(r.counts[entry][0], uint64_t(35));
    }

    // calcHist counts in float (exact to 2^24): the OpenCV backend must still count exactly.
    void binBeyondFloatPrecision()
    {
        const cv::Mat input(4097, 4097, CV_8UC1, cv::Scalar(7));
        const HistogramResult r = kl::histogramOpenCV(input, specOf(256));
        QCOMPARE(r.counts[0][7], uint64_t(4097) * 4097);  // 16785409: odd, not a float
    }

    // 0.22f * a + b is 199.99999999999997 in double, 200 fused (a = 1000 / (0.7f - 0.1f)): the
    // rule's multiply and add stay apart in every backend and every SIMD clone the host runs.
    void f32BinsWithoutFusedMultiplyAdd()
    {
        for (int channels : {1, 3, 4}) {
            bool ok = false;
            const HistogramResult r = runBoth(cv::Mat(37, 1031, CV_32FC(channels), cv::Scalar::all(0.22f)), specOf(1000, 0.1, 0.7), &ok);
            QVERIFY(ok);
            for (int c = 0; c < channels; ++c) {
                QCOMPARE(r.counts[size_t(c)][199], uint64_t(37 * 1031));
                QCOMPARE(r.counts[size_t(c)][200], uint64_t(0));
            }
        }
    }

    void withoutLuminance()
    {
        bool ok = false;
        const HistogramResult r = runBoth(kltest::randomImage(9, 9, CV_8U, 4, 1), specOf(256, {}, {}, false), &ok);
        QVERIFY(ok);
        QVERIFY(!r.hasLuminance);
        QCOMPARE(r.labels, (std::vector<std::string>{"B", "G", "R", "A"}));
    }

    void binRule()
    {
        const kl::HistogramBinning b = kl::resolveBinning(cv::Mat(1, 1, CV_32FC1, cv::Scalar(0)), specOf(4, 0.0, 1.0));
        QCOMPARE(b.scale, 4.0);
        QCOMPARE(b.offset, -0.0);
        QCOMPARE(kl::histogramBin(0.0, b.lo, b.hi, b.scale, b.offset, b.bins), 0);
        QCOMPARE(kl::histogramBin(0.25, b.lo, b.hi, b.scale, b.offset, b.bins), 1);
        QCOMPARE(kl::histogramBin(0.9999999, b.lo, b.hi, b.scale, b.offset, b.bins), 3);
        QCOMPARE(kl::histogramBin(1.0, b.lo, b.hi, b.scale, b.offset, b.bins), -1);
        QCOMPARE(kl::histogramBin(-1e-300, b.lo, b.hi, b.scale, b.offset, b.bins), -1);
        QCOMPARE(kl::histogramBin(std::nan(""), b.lo, b.hi, b.scale, b.offset, b.bins), -1);
        // Given bounds are used as float32.
        const kl::HistogramBinning f = kl::resolveBinning(cv::Mat(1, 1, CV_16UC1), specOf(10, 0.1, 0.7));
        QCOMPARE(f.lo, double(0.1f));
        QCOMPARE(f.hi, double(0.7f));
    }

    // The GPU bins u16 and f32 through the rule's float form: it must give histogramBinInRange's
    // bin for every value, deferring to it near edges. Random values and the floats around every
    // edge, over ranges near and far from zero, narrow and wide, for 1 to 65536 bins.
    void floatFormOfTheBinRule()
    {
        struct Range { double lo, hi; int bins; };
        const Range ranges[] = {{0, 1, 256},          {-0.3, 0.7, 7},      {0.1, 0.7, 1000},    {1000, 1001, 256},
                                {1000, 50000, 1000},  {0, 65536, 1},      {-1e-30, 1e-30, 64}, {-3e30, 1e30, 65536},
                                {0.22, 0.2200001, 3}, {2e6, 2.5e6, 4096}, {0, 1e-38, 256}};
        std::mt19937 rng(17);
        for (const Range& range : ranges) {
            const kl::HistogramBinning b = kl::resolveBinning(cv::Mat(1, 1, CV_32FC1), specOf(range.bins, range.lo, range.hi));
            const kl::FloatBinning f = kl::floatBinning(b);
            std::vector<float> values;
            std::uniform_real_distribution<float> uniform(f.lo, f.hi);
            for (int i = 0; i < 20000; ++i) values.push_back(uniform(rng));
            const int step = std::max(1, b.bins / 2000);
            for (int k = 0; k <= b.bins; k += step) {
                float v = float(b.lo + k / b.scale);
                for (int i = 0; i < 8; ++i) v = std::nextafter(v, -kInf);
                for (int i = 0; i < 16; ++i, v = std::nextafter(v, kInf)) values.push_back(v);
            }
            values.push_back(0.22f);
            int checked = 0;
            for (float v : values) {
                if (!(v >= f.lo && v < f.hi)) continue;
                const int want = kl::histogramBinInRange(v, b.scale, b.offset, b.bins);
                const int got = kl::histogramBinInRangeFloat(v, f, b.scale, b.offset, b.bins);
                QVERIFY2(got == want, kltest::msg("[" + std::to_string(b.lo) + ", " + std::to_string(b.hi) + "), " +
                                                  std::to_string(b.bins) + " bins: v = " + std::to_string(v) +
                                                  " float form " + std::to_string(got) + ", rule " + std::to_string(want)));
                ++checked;
            }
            QVERIFY(checked > 10000);  // the random values that fell inside [lo, hi), and the edges
        }
        // The float form decides on common ranges and never where its error could reach a bin.
        const auto marginOf = [](double lo, double hi, int bins) {
            return kl::floatBinning(kl::resolveBinning(cv::Mat(1, 1, CV_32FC1), specOf(bins, lo, hi))).margin;
        };
        QVERIFY(marginOf(0, 1, 256) > 0.49f);
        QVERIFY(marginOf(1000, 50000, 1000) > 0.49f);
        QVERIFY(marginOf(2e6, 2.5e6, 4096) > 0);
        QVERIFY(marginOf(123456, 123457, 4096) < 0);
        QVERIFY(marginOf(0, 1e-38, 256) < 0);  // a = 2.56e40 has no float form
    }

    void rejectsBadInput()
    {
        const cv::Mat u16(4, 4, CV_16UC1, cv::Scalar(1));
        KL_VERIFY_THROWS(kl::InvalidArgument, "histogram bins: 0 must be in 1..65536",
                         kl::histogramReference(u16, specOf(0)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "histogram bins: 65537", kl::histogramOpenCV(u16, specOf(65537)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "histogram range: lo 5 must be below hi 5",
                         kl::histogramReference(u16, specOf(8, 5.0, 5.0)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "histogram range: lo 6 must be below hi 5",
                         kl::histogramOpenCV(u16, specOf(8, 6.0, 5.0)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "histogram range: give both lo and hi",
                         kl::histogramReference(u16, specOf(8, 1.0, {})));
        KL_VERIFY_THROWS(kl::InvalidArgument, "histogram range: hi 1e+300 must be a finite float32 value",
                         kl::histogramReference(u16, specOf(8, 1.0, 1e300)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "histogram range: lo nan",
                         kl::histogramReference(u16, specOf(8, std::nan(""), 1.0)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "histogram input: 2 channels",
                         kl::histogramReference(cv::Mat(2, 2, CV_8UC2), specOf(256)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "histogram input: depth f64",
                         kl::histogramOpenCV(cv::Mat(2, 2, CV_64FC1), specOf(256)));
        // u8 ignores bins and range, so nothing to reject there.
        QCOMPARE(kl::histogramReference(cv::Mat(2, 2, CV_8UC1, cv::Scalar(0)), specOf(0)).binning.bins, 256);
    }
};

QTEST_GUILESS_MAIN(TestHistogramCpu)
#include "tst_histogram_cpu.moc"
