// The CPU backends on several threads: every result bit-identical for 1, 2 and many threads
// (strips and segments are fixed by the data, never by the thread count); the OpenCV
// backend's strips equal one whole-image OpenCV call at every border, depth, channel count and
// odd size; outputs and scratch reused across calls; the thread count validated; the host
// memory bandwidth measured.
#include "kernellab/conv1d.hpp"
#include "kernellab/conv2d.hpp"
#include "kernellab/cpu.hpp"
#include "kernellab/error.hpp"
#include "kernellab/histogram.hpp"
#include "kernellab/image.hpp"
#include "kernellab/transpose.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>

#include <QtTest>

#include <cstring>
#include <string>
#include <vector>

using kl::BorderMode;

namespace {

/// 1, 2, the hardware threads and 7 (more than this 2-core CI machine has: other task splits).
std::vector<int> threadCounts()
{
    return {1, 2, kl::hardwareThreads(), 7};
}

/// `run()`'s result on each thread count, every one compared with the first.
template <typename Result, typename Same, typename Run> void expectSameOnAllThreadCounts(Run&& run, Same&& same)
{
    std::vector<Result> results;
    for (int threads : threadCounts()) {
        const kl::ScopedCpuThreads scope(threads);
        results.push_back(run());
    }
    for (size_t i = 1; i < results.size(); ++i)
        QVERIFY2(same(results[i], results.front()),
                 qPrintable(QStringLiteral("%1 threads differ from 1 thread").arg(threadCounts()[i])));
}

kl::Conv2DSpec specOf(const cv::Mat& kernel, BorderMode border, double value = 0)
{
    kl::Conv2DSpec spec;
    spec.kernel = kernel;
    spec.border = border;
    spec.borderValue = value;
    return spec;
}

cv::Mat randomKernel(int rows, int cols, uint64_t seed)
{
    cv::Mat kernel(rows, cols, CV_32F);
    cv::RNG(seed).fill(kernel, cv::RNG::UNIFORM, -1.0, 1.0);
    return kernel / cv::norm(kernel, cv::NORM_L1);
}

cv::Mat gaussian(int size, double sigma)
{
    kl::Conv2DPresetParams params;
    params.width = params.height = size;
    params.sigma = sigma;
    return kl::makeConv2DKernel(kl::Conv2DPreset::Gaussian, params);
}

const BorderMode kBorders[] = {BorderMode::Constant, BorderMode::Replicate, BorderMode::Reflect,
                               BorderMode::Reflect101, BorderMode::Wrap};

} // namespace

class TestCpuThreads : public QObject {
    Q_OBJECT

private slots:
    // Sizes spanning several strips (32+ rows each) with odd, prime dimensions.
    void conv2dSameOnAllThreadCounts_data()
    {
        QTest::addColumn<int>("depth");
        QTest::addColumn<int>("channels");
        QTest::addColumn<int>("border");
        QTest::addColumn<cv::Mat>("kernel");
        const std::pair<const char*, cv::Mat> kernels[] = {
            {"gaussian 5x5", gaussian(5, 0)},         {"gaussian 7x7 sigma 1.3", gaussian(7, 1.3)},
            {"random 3x3", randomKernel(3, 3, 1)},    {"random 9x5", randomKernel(9, 5, 2)},
            {"random 11x13 (DFT size)", randomKernel(11, 13, 3)}};
        for (int depth : kltest::kAllDepths)
            for (int channels : kltest::kAllChannelCounts)
                for (BorderMode border : kBorders)
                    for (const auto& [name, kernel] : kernels) {
                        const std::string row = kl::depthName(depth) + " x" + std::to_string(channels) + " " +
                                                kl::toString(border) + " " + name;
                        QTest::newRow(row.c_str()) << depth << channels << int(border) << kernel;
                    }
    }

    void conv2dSameOnAllThreadCounts()
    {
        QFETCH(int, depth);
        QFETCH(int, channels);
        QFETCH(int, border);
        QFETCH(cv::Mat, kernel);
        const cv::Mat input = kltest::randomImage(131, 97, depth, channels, uint64_t(depth * 10 + channels));
        const kl::Conv2DSpec spec = specOf(kernel, BorderMode(border), depth == CV_8U ? 37.0 : 37.25);
        expectSameOnAllThreadCounts<cv::Mat>([&] { return kl::conv2dOpenCV(input, spec); }, kltest::bitwiseEqual);
    }

    // The strips of a direct path compute what one whole-image call does, bit for bit: the
    // pixels around each strip are the image's own, and OpenCV's borders apply at its edges only.
    void conv2dStripsEqualOneWholeImageCall_data()
    {
        QTest::addColumn<int>("depth");
        QTest::addColumn<int>("channels");
        QTest::addColumn<int>("border");
        QTest::addColumn<bool>("separable");
        for (int depth : {CV_8U, CV_32F})
            for (int channels : kltest::kAllChannelCounts)
                for (BorderMode border : {BorderMode::Constant, BorderMode::Replicate, BorderMode::Reflect,
                                          BorderMode::Reflect101})
                    for (bool separable : {false, true}) {
                        const std::string row = kl::depthName(depth) + " x" + std::to_string(channels) + " " +
                                                kl::toString(border) + (separable ? " separable" : " 5x3");
                        QTest::newRow(row.c_str()) << depth << channels << int(border) << separable;
                    }
    }

    void conv2dStripsEqualOneWholeImageCall()
    {
        QFETCH(int, depth);
        QFETCH(int, channels);
        QFETCH(int, border);
        QFETCH(bool, separable);
        const cv::Mat input = kltest::randomImage(257, 211, depth, channels, 5);
        // Dyadic taps, so that u8 stays on OpenCV's own (exact) path: row [1 2 1]/4, column [1 4 6 4 1]/16.
        const cv::Mat row = (cv::Mat_<float>(1, 3) << 0.25f, 0.5f, 0.25f);
        const cv::Mat column = (cv::Mat_<float>(5, 1) << 0.0625f, 0.25f, 0.375f, -0.25f, 0.0625f);
        const cv::Mat kernel = separable ? cv::Mat(column * row) : (cv::Mat_<float>(3, 5) << 1, -2, 3, 0, 1, 0.5f, 0,
                                                                   -1, 2, 0.25f, 0, 1, 0, -1, 0.5f) /
                                                                      16.0;
        const kl::Conv2DSpec spec = specOf(kernel, BorderMode(border));
        cv::Mat whole;
        const int cvBorder = kl::toOpenCvBorder(BorderMode(border));
        if (separable)
            cv::sepFilter2D(input, whole, depth, row, column, cv::Point(-1, -1), 0, cvBorder);
        else
            cv::filter2D(input, whole, depth, kernel, cv::Point(-1, -1), 0, cvBorder);
        const kl::ScopedCpuThreads scope(7);
        QVERIFY(kltest::bitwiseEqual(kl::conv2dOpenCV(input, spec), whole));
    }

    void histogramSameOnAllThreadCounts_data()
    {
        kltest::addDepthChannelRows();
    }

    void histogramSameOnAllThreadCounts()
    {
        QFETCH(int, depth);
        QFETCH(int, channels);
        // 1031 x 613: tiles of 2^18 pixels end inside rows; a NaN and values outside a set range.
        cv::Mat input = kltest::randomImage(613, 1031, depth, channels, 11);
        kl::HistogramSpec spec;
        spec.bins = 97;
        if (depth == CV_32F) input.at<float>(300, 17 * channels) = NAN;
        if (depth != CV_8U) {
            spec.lo = depth == CV_32F ? -0.5 : 1000.0;
            spec.hi = depth == CV_32F ? 0.75 : 60000.0;
        }
        const kl::HistogramResult reference = kl::histogramReference(input, spec);
        expectSameOnAllThreadCounts<kl::HistogramResult>(
            [&] { return kl::histogramOpenCV(input, spec); },
            [&](const kl::HistogramResult& a, const kl::HistogramResult& b) {
                return kltest::histogramDifference(a, b).empty() && kltest::histogramDifference(a, reference).empty();
            });
    }

    void transposeSameOnAllThreadCounts_data()
    {
        kltest::addDepthChannelRows();
    }

    void transposeSameOnAllThreadCounts()
    {
        QFETCH(int, depth);
        QFETCH(int, channels);
        const cv::Mat input = kltest::randomImage(131, 257, depth, channels, 3);  // tiles of 64 end inside both
        const cv::Mat reference = kl::transposeReference(input);
        expectSameOnAllThreadCounts<cv::Mat>([&] { return kl::transposeOpenCV(input); },
                                             [&](const cv::Mat& a, const cv::Mat& b) {
                                                 return kltest::bitwiseEqual(a, b) && kltest::bitwiseEqual(a, reference);
                                             });
    }

    // Segments of 2^16 outputs (or 8 x the kernel): 200003 frames make four, with halos.
    void conv1dSameOnAllThreadCounts_data()
    {
        QTest::addColumn<int>("taps");
        QTest::addColumn<int>("mode");
        for (int taps : {15, 1023, 8191})
            for (kl::Conv1DMode mode : kl::allConv1DModes())
                QTest::newRow((std::to_string(taps) + " " + kl::toString(mode)).c_str()) << taps << int(mode);
    }

    void conv1dSameOnAllThreadCounts()
    {
        QFETCH(int, taps);
        QFETCH(int, mode);
        const kl::Signal input = kltest::randomSignal(200003, 2, 48000, 9);
        kl::Conv1DSpec spec;
        spec.taps = kltest::randomSignal(size_t(taps), 1, 1, 10).data;
        spec.mode = kl::Conv1DMode(mode);
        expectSameOnAllThreadCounts<kl::Signal>([&] { return kl::conv1dOpenCV(input, spec); },
                                                [](const kl::Signal& a, const kl::Signal& b) { return a.data == b.data; });
        const kl::Verdict verdict = kltest::checkConv1D(kl::conv1dOpenCV(input, spec), input, spec);
        QVERIFY2(verdict.passed(), kltest::msg(verdict.failure));
    }

    // Repeated runs write into the same memory: nothing is allocated once the buffers are warm.
    void outputsAndScratchAreReused()
    {
        const cv::Mat input = kltest::randomImage(301, 203, CV_8U, 3, 4);
        const kl::Conv2DSpec spec = specOf(gaussian(7, 1.3), BorderMode::Wrap);  // padded, f32 blocks
        cv::Mat output;
        kl::CpuScratch scratch;
        kl::conv2dOpenCV(input, spec, output, scratch);
        const uchar* outputData = output.data;
        std::vector<const uchar*> scratchData;
        for (size_t i = 0; i < 4; ++i) scratchData.push_back(scratch.buffer(i).data);
        const cv::Mat first = output.clone();
        kl::conv2dOpenCV(input, spec, output, scratch);
        QCOMPARE(output.data, outputData);
        for (size_t i = 0; i < scratchData.size(); ++i) QCOMPARE(scratch.buffer(i).data, scratchData[i]);
        QVERIFY(kltest::bitwiseEqual(output, first));

        kl::Signal signal = kltest::randomSignal(100000, 1, 8000, 1), filtered;
        kl::Conv1DSpec taps;
        taps.taps = {0.25f, 0.5f, 0.25f};
        kl::conv1dOpenCV(signal, taps, filtered, scratch);
        const float* samples = filtered.data.data();
        kl::conv1dOpenCV(signal, taps, filtered, scratch);
        QCOMPARE(filtered.data.data(), samples);
    }

    void threadCountIsValidated()
    {
        QVERIFY(kl::hardwareThreads() >= 1);
        kl::validateCpuThreads(1);
        kl::validateCpuThreads(kl::kMaxCpuThreads);
        for (int bad : {0, -3, kl::kMaxCpuThreads + 1})
            KL_VERIFY_THROWS(kl::InvalidArgument, "cpu-threads: " + std::to_string(bad) + " is not in 1..1024",
                             kl::validateCpuThreads(bad));
        const int before = cv::getNumThreads();
        {
            const kl::ScopedCpuThreads scope(1);
            QCOMPARE(cv::getNumThreads(), 1);
        }
        QCOMPARE(cv::getNumThreads(), before);
    }

    void hostBandwidthIsMeasured()
    {
        const double gbs = kl::measureHostCopyBandwidthGBs(kl::hardwareThreads(), size_t(32) << 20, 2);
        QVERIFY2(gbs > 0.1 && gbs < 1e5, qPrintable(QString::number(gbs)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "cpu-threads: 0", kl::measureHostCopyBandwidthGBs(0));
    }
};

QTEST_APPLESS_MAIN(TestCpuThreads)
#include "tst_cpu_threads.moc"
