// The class bench --matrix judges a cell's work in (app::workClass), without a GPU: memory-bound for
// conv2d kernels up to 5x5, rank-1 kernels up to 15 taps a side, conv1d up to 15 taps, histogram and
// transpose; compute-bound for every larger kernel, whichever variant would run it.
#include "bench_request.hpp"
#include "kernellab/conv2d.hpp"

#include <QtTest>
#include <opencv2/core.hpp>

using kl::app::Op;
using kl::app::WorkClass;

namespace {

WorkClass conv2dClass(const cv::Mat& kernel)
{
    kl::app::RunRequest request;
    request.op = Op::Conv2D;
    request.conv2d.kernel = kernel;
    return kl::app::workClass(request);
}

cv::Mat preset(kl::Conv2DPreset preset, int size, double sigma = 0)
{
    kl::Conv2DPresetParams params;
    params.width = params.height = size;
    params.sigma = sigma;
    return kl::makeConv2DKernel(preset, params);
}

/// Uniform random taps in [0.25, 1.25): of full rank for any size above 1x1.
cv::Mat randomTaps(int rows, int cols, uint64_t seed)
{
    cv::Mat taps(rows, cols, CV_32F);
    cv::RNG rng(seed);
    rng.fill(taps, cv::RNG::UNIFORM, 0.25, 1.25);
    return taps;
}

/// column * row^T of random factors: rank 1, not a preset.
cv::Mat randomRankOne(int rows, int cols, uint64_t seed)
{
    cv::Mat taps = randomTaps(rows, 1, seed) * randomTaps(1, cols, seed + 1);
    return taps;
}

} // namespace

class TestWorkClass : public QObject {
    Q_OBJECT
private slots:
    void theMatrixKernelsAreMemoryBound()
    {
        using P = kl::Conv2DPreset;
        for (const cv::Mat& kernel :
             {preset(P::Box, 3), preset(P::Box, 7), preset(P::Gaussian, 5, 1.3), preset(P::Sharpen, 3),
              preset(P::Laplacian, 3), preset(P::SobelX, 3), randomTaps(5, 5, 5), preset(P::Gaussian, 9),
              preset(P::Gaussian, 15)})
            QCOMPARE(conv2dClass(kernel), WorkClass::Memory);
    }

    void anyKernelUpToFiveByFiveIsMemoryBound()
    {
        for (int rows = 1; rows <= 5; rows += 2)
            for (int cols = 1; cols <= 5; cols += 2) QCOMPARE(conv2dClass(randomTaps(rows, cols, 10 * rows + cols)), WorkClass::Memory);
    }

    void rankOneKernelsUpToFifteenTapsASideAreMemoryBound()
    {
        QCOMPARE(conv2dClass(randomRankOne(15, 15, 1)), WorkClass::Memory);
        QCOMPARE(conv2dClass(randomRankOne(7, 15, 2)), WorkClass::Memory);
        QCOMPARE(conv2dClass(randomTaps(1, 15, 3)), WorkClass::Memory);
        QCOMPARE(conv2dClass(randomTaps(15, 1, 4)), WorkClass::Memory);
        QCOMPARE(conv2dClass(cv::Mat::zeros(9, 9, CV_32F)), WorkClass::Memory);
    }

    void largerKernelsAreComputeBound()
    {
        using P = kl::Conv2DPreset;
        QCOMPARE(conv2dClass(randomTaps(7, 7, 6)), WorkClass::Compute);
        QCOMPARE(conv2dClass(randomTaps(3, 7, 7)), WorkClass::Compute);
        QCOMPARE(conv2dClass(randomTaps(9, 9, 8)), WorkClass::Compute);
        kl::Conv2DPresetParams motion;
        motion.length = 9;
        motion.angleDegrees = 45;
        QCOMPARE(conv2dClass(kl::makeConv2DKernel(P::MotionBlur, motion)), WorkClass::Compute);
        // Rank 1, but past 15 taps a side.
        QCOMPARE(conv2dClass(preset(P::Gaussian, 17)), WorkClass::Compute);
        QCOMPARE(conv2dClass(preset(P::Box, 31)), WorkClass::Compute);
        QCOMPARE(conv2dClass(randomTaps(1, 17, 9)), WorkClass::Compute);
    }

    void conv1dUpToFifteenTapsIsMemoryBound()
    {
        kl::app::RunRequest request;
        request.op = Op::Conv1D;
        for (const size_t taps : {size_t(1), size_t(15), size_t(16), size_t(127), size_t(8191)}) {
            request.conv1d.taps.assign(taps, 1.0f / float(taps));
            QCOMPARE(kl::app::workClass(request), taps <= 15 ? WorkClass::Memory : WorkClass::Compute);
        }
    }

    void theRuleReadsAsItIsApplied()
    {
        const QString rule = kl::app::workClassRule();
        QVERIFY2(rule.contains(QLatin1String("conv2d kernels up to 5x5, rank-1 kernels up to 15 taps a side, conv1d up to 15 taps")),
                 qPrintable(rule));
    }

    void histogramAndTransposeAreMemoryBound()
    {
        kl::app::RunRequest request;
        for (const Op op : {Op::Histogram, Op::Transpose}) {
            request.op = op;
            QCOMPARE(kl::app::workClass(request), WorkClass::Memory);
        }
    }
};

QTEST_GUILESS_MAIN(TestWorkClass)
#include "tst_work_class.moc"
