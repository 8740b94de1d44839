// Result comparison (compare, absDifference) and timing statistics.
#include "kernellab/error.hpp"
#include "kernellab/cpu.hpp"
#include "kernellab/metrics.hpp"
#include "kernellab/timing.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>

#include <QtTest>

#include <cmath>
#include <limits>

namespace {
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
} // namespace

class TestMetrics : public QObject {
    Q_OBJECT

private slots:
    void identicalImages()
    {
        const cv::Mat a = kltest::randomImage(7, 5, CV_16U, 3, 1);
        const kl::Comparison c = kl::compare(a, a.clone());
        QVERIFY(c.shapeMatches);
        QCOMPARE(c.elements, uint64_t(7 * 5 * 3));
        QCOMPARE(c.differing, uint64_t(0));
        QCOMPARE(c.maxAbsError, 0.0);
        QCOMPARE(c.normRelError, 0.0);
        QCOMPARE(c.psnr, kInf);
    }

    void oneDifferingPixel()
    {
        const cv::Mat reference(3, 3, CV_8UC1, cv::Scalar(50));
        cv::Mat actual = reference.clone();
        actual.at<uint8_t>(1, 2) = 60;
        const kl::Comparison c = kl::compare(actual, reference);
        QCOMPARE(c.differing, uint64_t(1));
        QCOMPARE(c.maxAbsError, 10.0);
        QCOMPARE(c.meanAbsError, 10.0 / 9);
        QCOMPARE(c.maxRelError, 0.2);
        QCOMPARE(c.normRelError, 0.2);
        QCOMPARE(c.psnr, 10 * std::log10(255.0 * 255.0 / (100.0 / 9)));  // peak 255 for u8
    }

    void floatPeakIsLargestReference()
    {
        const cv::Mat reference = (cv::Mat_<float>(1, 4) << 0.f, -4.f, 2.f, 1.f);
        const cv::Mat actual = (cv::Mat_<float>(1, 4) << 1.f, -4.f, 2.f, 1.f);
        const kl::Comparison c = kl::compare(actual, reference);
        QCOMPARE(c.normRelError, 0.25);
        QCOMPARE(c.maxRelError, 1.0 / 1e-30);  // against a zero reference
        QCOMPARE(c.psnr, 10 * std::log10(16.0 / 0.25));
    }

    void nanRule()
    {
        const cv::Mat reference = (cv::Mat_<float>(1, 3) << kNan, kNan, 1.f);
        const cv::Mat same = (cv::Mat_<float>(1, 3) << kNan, kNan, 1.f);
        QCOMPARE(kl::compare(same, reference).differing, uint64_t(0));
        const cv::Mat other = (cv::Mat_<float>(1, 3) << kNan, 2.f, 1.f);
        const kl::Comparison c = kl::compare(other, reference);
        QCOMPARE(c.differing, uint64_t(1));
        QCOMPARE(c.maxAbsError, kInf);
    }

    void shapeMismatch()
    {
        QVERIFY(!kl::compare(cv::Mat(2, 3, CV_8UC1), cv::Mat(3, 2, CV_8UC1)).shapeMatches);
        QVERIFY(!kl::compare(cv::Mat(2, 3, CV_8UC1), cv::Mat(2, 3, CV_8UC3)).shapeMatches);
        QVERIFY(!kl::compare(cv::Mat(2, 3, CV_8UC1), cv::Mat(2, 3, CV_16UC1)).shapeMatches);
        KL_VERIFY_THROWS(kl::InvalidArgument, "difference: 3x2 u8 x1",
                         kl::absDifference(cv::Mat(2, 3, CV_8UC1), cv::Mat(2, 3, CV_32FC1)));
    }

    void signalComparison()
    {
        kl::Signal reference(2, 3, 100.0), actual(2, 3, 100.0);
        reference.data = {1, 2, 3, 4, 5, 6};
        actual.data = {1, 2, 3, 4, 5, 7};
        const kl::Comparison c = kl::compare(actual, reference);
        QCOMPARE(c.elements, uint64_t(6));
        QCOMPARE(c.differing, uint64_t(1));
        QCOMPARE(c.maxAbsError, 1.0);
        QCOMPARE(c.normRelError, 1.0 / 6);
        QVERIFY(!kl::compare(kl::Signal(1, 6, 100.0), reference).shapeMatches);
    }

    void absDifferenceTakesMaxOverChannels()
    {
        cv::Mat a(1, 2, CV_8UC3, cv::Scalar(10, 20, 30)), b(1, 2, CV_8UC3, cv::Scalar(10, 20, 30));
        b.at<cv::Vec3b>(0, 1) = {13, 15, 30};  // |3|, |5|, 0
        const cv::Mat d = kl::absDifference(a, b);
        QCOMPARE(d.type(), CV_32FC1);
        QCOMPARE(d.at<float>(0, 0), 0.f);
        QCOMPARE(d.at<float>(0, 1), 5.f);
        const cv::Mat nanA = (cv::Mat_<float>(1, 2) << kNan, kNan), nanB = (cv::Mat_<float>(1, 2) << kNan, 0.f);
        const cv::Mat nanDiff = kl::absDifference(nanA, nanB);
        QCOMPARE(nanDiff.at<float>(0, 0), 0.f);
        QVERIFY(std::isinf(nanDiff.at<float>(0, 1)));
    }

    void summarize()
    {
        kl::TimingStats s = kl::summarize({5, 1, 3});
        QCOMPARE(s.medianMs, 3.0);
        QCOMPARE(s.minMs, 1.0);
        QCOMPARE(s.maxMs, 5.0);
        QCOMPARE(s.repetitions, 3);
        QCOMPARE(kl::summarize({4, 1, 3, 2}).medianMs, 2.5);
        s = kl::summarize({});
        QCOMPARE(s.repetitions, 0);
        QCOMPARE(s.medianMs, 0.0);
    }

    void timeCpu()
    {
        int calls = 0;
        const kl::TimingStats s = kl::timeCpu([&] { ++calls; }, 3, 2);
        QCOMPARE(calls, 5);
        QCOMPARE(s.repetitions, 3);
        QVERIFY(s.minMs >= 0 && s.minMs <= s.medianMs && s.medianMs <= s.maxMs);
        KL_VERIFY_THROWS(kl::InvalidArgument, "repetitions: 0 must be at least 1", kl::timeCpu([] {}, 0));
        QVERIFY(kl::hardwareThreads() >= 1);
    }
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "tst_metrics.moc"
