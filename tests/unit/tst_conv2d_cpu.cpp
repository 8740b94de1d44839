// conv2d on the CPU: reference against OpenCV over every depth, channel count and
// border mode, kernel sizes 1..63 (non-square too) on sizes from 1x1 up; hand-checked
// border, flip, rounding, saturation and sign cases; the validation messages.
#include "kernellab/conv2d.hpp"
#include "kernellab/error.hpp"
#include "kernellab/image.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>

#include <QtTest>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using kl::BorderMode;
using kl::Conv2DSpec;

namespace {

const BorderMode kBorders[] = {BorderMode::Constant, BorderMode::Replicate, BorderMode::Reflect,
                               BorderMode::Reflect101, BorderMode::Wrap};

enum class KernelKind { Normalized, Signed, Separable };

/// Random taps: `Normalized` mixes signs but sums to 1 (integer outputs stay mostly in
/// range), `Signed` is in [-1, 1), `Separable` is an outer product of two positive factors.
cv::Mat randomKernel(int rows, int cols, KernelKind kind, uint64_t seed)
{
    cv::RNG rng(seed);
    if (kind == KernelKind::Separable) {
        cv::Mat column(rows, 1, CV_32F), row(1, cols, CV_32F);
        rng.fill(column, cv::RNG::UNIFORM, 0.1, 1.0);
        rng.fill(row, cv::RNG::UNIFORM, 0.1, 1.0);
        cv::Mat k = column * row;
        return k / cv::sum(k)[0];
    }
    cv::Mat k(rows, cols, CV_32F);
    rng.fill(k, cv::RNG::UNIFORM, kind == KernelKind::Signed ? -1.0 : -0.5, 1.0);
    if (kind == KernelKind::Normalized) k /= cv::sum(k)[0];
    return k;
}

double borderValueFor(int depth)
{
    return depth == CV_8U ? 37.25 : depth == CV_16U ? 40000.5 : 0.375;
}

Conv2DSpec makeSpec(const cv::Mat& kernel, BorderMode border, double borderValue = 0.0)
{
    Conv2DSpec spec;
    spec.kernel = kernel;
    spec.border = border;
    spec.borderValue = borderValue;
    return spec;
}

cv::Mat gaussian(int width, int height, double sigma)
{
    kl::Conv2DPresetParams params;
    params.width = width;
    params.height = height;
    params.sigma = sigma;
    return kl::makeConv2DKernel(kl::Conv2DPreset::Gaussian, params);
}

cv::Mat rowOf(std::initializer_list<float> values)
{
    return cv::Mat(std::vector<float>(values), true).reshape(1, 1);
}

/// Runs both backends and checks each against `expected` exactly.
void expectBoth(const cv::Mat& input, const Conv2DSpec& spec, const cv::Mat& expected, const char* what)
{
    for (const auto& [backend, output] : {std::pair{"reference", kl::conv2dReference(input, spec)},
                                          std::pair{"opencv", kl::conv2dOpenCV(input, spec)}}) {
        QVERIFY2(output.type() == expected.type() && output.size() == expected.size(),
                 kltest::msg(std::string(what) + " " + backend + ": wrong shape"));
        const double difference = cv::norm(output, expected, cv::NORM_INF);
        QVERIFY2(difference == 0, kltest::msg(std::string(what) + " " + backend + ": differs from the expected values by " +
                                              std::to_string(difference)));
    }
}

} // namespace

class TestConv2dCpu : public QObject {
    Q_OBJECT

    /// Reference vs OpenCV under the README's rule.
    static void checkBackendsAgree(const cv::Mat& input, const Conv2DSpec& spec)
    {
        const cv::Mat reference = kl::conv2dReference(input, spec);
        QCOMPARE(reference.depth(), kl::conv2dOutputDepth(input, spec));
        QCOMPARE(reference.channels(), input.channels());
        const kl::Verdict verdict = kltest::checkConv2D(kl::conv2dOpenCV(input, spec), reference, input, spec);
        QVERIFY2(verdict.passed(), kltest::msg(verdict.failure));
    }

private slots:
    void referenceMatchesOpenCV_data()
    {
        QTest::addColumn<int>("depth");
        QTest::addColumn<int>("channels");
        QTest::addColumn<int>("border");
        QTest::addColumn<cv::Size>("size");
        QTest::addColumn<cv::Size>("kernelSize");
        QTest::addColumn<int>("kind");
        QTest::addColumn<bool>("flip");
        QTest::addColumn<bool>("floatOutput");
        QTest::addColumn<bool>("zeroBorderValue");

        struct Case {
            cv::Size size, kernel;  // width x height
            KernelKind kind;
            bool flip, floatOutput;
        };
        // 63x63 kernels only on small images: the reference is a plain loop.
        const Case cases[] = {
            {{1, 1}, {1, 1}, KernelKind::Normalized, false, false},
            {{1, 1}, {63, 63}, KernelKind::Normalized, false, false},
            {{37, 1}, {5, 3}, KernelKind::Normalized, true, false},
            {{37, 1}, {63, 1}, KernelKind::Normalized, false, false},
            {{1, 41}, {1, 63}, KernelKind::Normalized, false, false},
            {{1, 41}, {3, 5}, KernelKind::Signed, false, true},
            {{61, 97}, {3, 3}, KernelKind::Normalized, false, false},
            {{61, 97}, {9, 7}, KernelKind::Normalized, true, false},
            {{61, 97}, {63, 1}, KernelKind::Normalized, false, false},
            {{61, 97}, {1, 63}, KernelKind::Separable, false, false},
            {{61, 97}, {15, 15}, KernelKind::Separable, true, false},
            {{61, 97}, {5, 5}, KernelKind::Signed, false, true},
            {{23, 19}, {63, 63}, KernelKind::Normalized, false, false},
        };
        for (int depth : {CV_8U, CV_16U, CV_32F})
            for (int channels : {1, 3, 4})
                for (BorderMode border : kBorders)
                    for (size_t i = 0; i < std::size(cases); ++i) {
                        const Case& c = cases[i];
                        const bool zeroBorderValue = i % 2 == 0;
                        const std::string name =
                            kl::depthName(depth) + " x" + std::to_string(channels) + " " + kl::toString(border) +
                            (border == BorderMode::Constant && !zeroBorderValue ? "(value)" : "") + " " +
                            std::to_string(c.size.width) + "x" + std::to_string(c.size.height) + " k" +
                            std::to_string(c.kernel.width) + "x" + std::to_string(c.kernel.height) +
                            (c.kind == KernelKind::Separable ? " separable" : "") + (c.flip ? " flip" : "") +
                            (c.floatOutput ? " float-out" : "");
                        QTest::newRow(name.c_str()) << depth << channels << int(border) << c.size << c.kernel
                                                    << int(c.kind) << c.flip << c.floatOutput << zeroBorderValue;
                    }
    }

    void referenceMatchesOpenCV()
    {
        QFETCH(int, depth);
        QFETCH(int, channels);
        QFETCH(int, border);
        QFETCH(cv::Size, size);
        QFETCH(cv::Size, kernelSize);
        QFETCH(int, kind);
        QFETCH(bool, flip);
        QFETCH(bool, floatOutput);
        QFETCH(bool, zeroBorderValue);
        const uint64_t seed = uint64_t(depth * 1000 + channels * 100 + border * 10) + uint64_t(size.area() + kernelSize.area());
        const cv::Mat input = kltest::randomImage(size.height, size.width, depth, channels, seed);
        Conv2DSpec spec = makeSpec(randomKernel(kernelSize.height, kernelSize.width, KernelKind(kind), seed + 1),
                                   BorderMode(border), zeroBorderValue ? 0.0 : borderValueFor(depth));
        spec.flipKernel = flip;
        spec.floatOutput = floatOutput;
        checkBackendsAgree(input, spec);
    }

    // 1021x769 with a few kernels (the reference is a plain loop).
    void largeImage_data()
    {
        QTest::addColumn<int>("depth");
        QTest::addColumn<int>("channels");
        QTest::addColumn<int>("border");
        QTest::addColumn<cv::Mat>("kernel");
        QTest::addColumn<bool>("floatOutput");
        QTest::newRow("u8 x3 3x3 reflect101")
            << CV_8U << 3 << int(BorderMode::Reflect101) << randomKernel(3, 3, KernelKind::Normalized, 1) << false;
        QTest::newRow("u8 x1 gaussian 15x15 replicate")
            << CV_8U << 1 << int(BorderMode::Replicate)
            << gaussian(15, 15, 3.0) << false;
        QTest::newRow("u16 x4 5x5 wrap") << CV_16U << 4 << int(BorderMode::Wrap)
                                         << randomKernel(5, 5, KernelKind::Normalized, 2) << false;
        QTest::newRow("f32 x3 7x7 constant") << CV_32F << 3 << int(BorderMode::Constant)
                                             << randomKernel(7, 7, KernelKind::Signed, 3) << false;
        QTest::newRow("u8 x1 sobel-x float reflect")
            << CV_8U << 1 << int(BorderMode::Reflect) << kl::makeConv2DKernel(kl::Conv2DPreset::SobelX) << true;
    }

    void largeImage()
    {
        QFETCH(int, depth);
        QFETCH(int, channels);
        QFETCH(int, border);
        QFETCH(cv::Mat, kernel);
        QFETCH(bool, floatOutput);
        const cv::Mat input = kltest::randomImage(769, 1021, depth, channels, 42);
        Conv2DSpec spec = makeSpec(kernel, BorderMode(border), borderValueFor(depth));
        spec.floatOutput = floatOutput;
        checkBackendsAgree(input, spec);
    }

    // Dyadic taps (at most 2^-10 granularity) on u8 are summed exactly in float and double
    // alike, so many sums are exact ties: the float paths round them to even like the
    // reference (no difference at all), cv::GaussianBlur's fixed point rounds them up (only
    // exact-tie differences, never a near tie). On uniform noise a 3x3 Gaussian differs at
    // about 1 pixel in 32, a 5x7 at about 1 in 2048 (acceptance.hpp).
    void dyadicKernelsAgreeExactly_data()
    {
        QTest::addColumn<cv::Mat>("kernel");
        QTest::addColumn<bool>("roundsTiesUp");
        QTest::newRow("gaussian 3x3") << gaussian(3, 3, 0.0) << true;
        QTest::newRow("gaussian 5x7") << gaussian(5, 7, 0.0) << true;
        QTest::newRow("sharpen") << kl::makeConv2DKernel(kl::Conv2DPreset::Sharpen) << false;
        QTest::newRow("halves 1x3") << rowOf({0.5f, 0.5f, 0.f}) << false;
    }

    void dyadicKernelsAgreeExactly()
    {
        QFETCH(cv::Mat, kernel);
        QFETCH(bool, roundsTiesUp);
        const cv::Mat input = kltest::randomImage(61, 97, CV_8U, 3, 7);
        const Conv2DSpec spec = makeSpec(kernel, BorderMode::Reflect101);
        const kl::Verdict verdict = kl::acceptConv2D(kl::conv2dOpenCV(input, spec), kl::conv2dReference(input, spec), input, spec);
        QVERIFY2(verdict.passed(), kltest::msg(verdict.failure));
        QCOMPARE(verdict.nearTies, uint64_t(0));
        QCOMPARE(verdict.exactTies > 0, roundsTiesUp);
        qInfo("%llu of %llu elements differ at exact ties", (unsigned long long)verdict.exactTies,
              (unsigned long long)verdict.elements);
    }

    // A 1x5 row [1 2 3 4 5] under the taps 1, 10, 100, 1000, 10000: out(x) spells, from the
    // most significant digit, in(x+2) in(x+1) in(x) in(x-1) in(x-2), so every sampled
    // border pixel shows. Also as a column, for the vertical direction.
    void bordersHandChecked_data()
    {
        QTest::addColumn<int>("border");
        QTest::addColumn<double>("borderValue");
        QTest::addColumn<cv::Mat>("expected");
        QTest::newRow("constant 0") << int(BorderMode::Constant) << 0.0 << rowOf({32100, 43210, 54321, 5432, 543});
        QTest::newRow("constant 9") << int(BorderMode::Constant) << 9.0 << rowOf({32199, 43219, 54321, 95432, 99543});
        QTest::newRow("replicate") << int(BorderMode::Replicate) << 0.0 << rowOf({32111, 43211, 54321, 55432, 55543});
        QTest::newRow("reflect") << int(BorderMode::Reflect) << 0.0 << rowOf({32112, 43211, 54321, 55432, 45543});
        QTest::newRow("reflect101") << int(BorderMode::Reflect101) << 0.0 << rowOf({32123, 43212, 54321, 45432, 34543});
        QTest::newRow("wrap") << int(BorderMode::Wrap) << 0.0 << rowOf({32154, 43215, 54321, 15432, 21543});
    }

    void bordersHandChecked()
    {
        QFETCH(int, border);
        QFETCH(double, borderValue);
        QFETCH(cv::Mat, expected);
        const cv::Mat input = rowOf({1, 2, 3, 4, 5});
        const cv::Mat taps = rowOf({1, 10, 100, 1000, 10000});
        expectBoth(input, makeSpec(taps, BorderMode(border), borderValue), expected, "row");
        expectBoth(input.t(), makeSpec(taps.t(), BorderMode(border), borderValue), expected.t(), "column");
    }

    // Borders far wider than the image: reflection and wrap repeat.
    void bordersRepeatOnTinyImages()
    {
        const cv::Mat taps = rowOf({1, 10, 100, 1000, 10000, 100000, 1000000});  // out(0) spells in(3) .. in(-3)
        const cv::Mat input = rowOf({1, 2, 3});
        expectBoth(input, makeSpec(taps, BorderMode::Reflect), rowOf({3321123, 2332112, 1233211}), "reflect");
        expectBoth(input, makeSpec(taps, BorderMode::Reflect101), rowOf({2321232, 1232123, 2123212}), "reflect101");
        expectBoth(input, makeSpec(taps, BorderMode::Wrap), rowOf({1321321, 2132132, 3213213}), "wrap");
        expectBoth(rowOf({7}), makeSpec(taps, BorderMode::Reflect101), rowOf({7777777}), "1 pixel");
        expectBoth(rowOf({7}), makeSpec(taps, BorderMode::Constant, 1), rowOf({1117111}), "1 pixel constant");
    }

    void flipKernelConvolves()
    {
        Conv2DSpec spec = makeSpec(rowOf({1, 10, 100, 1000, 10000}), BorderMode::Reflect101);
        spec.flipKernel = true;  // out(x) now spells in(x-2) in(x-1) in(x) in(x+1) in(x+2)
        expectBoth(rowOf({1, 2, 3, 4, 5}), spec, rowOf({32123, 21234, 12345, 23454, 34543}), "flipped");
        QCOMPARE(kl::effectiveKernel(spec).at<float>(0, 0), 10000.f);
    }

    void roundsTiesToEvenAndSaturates()
    {
        const Conv2DSpec halves = makeSpec(rowOf({0.5f, 0.5f, 0.f}), BorderMode::Replicate);  // (in(x-1) + in(x)) / 2
        for (int depth : {CV_8U, CV_16U}) {
            cv::Mat input, expected;
            rowOf({1, 2, 3, 4, 5}).convertTo(input, depth);
            rowOf({1, 2, 2, 4, 4}).convertTo(expected, depth);  // 1.5 -> 2, 2.5 -> 2, 3.5 -> 4, 4.5 -> 4
            expectBoth(input, halves, expected, "ties");
        }
        cv::Mat input;
        rowOf({100, 200}).convertTo(input, CV_8U);
        cv::Mat expected;
        rowOf({200, 255}).convertTo(expected, CV_8U);
        expectBoth(input, makeSpec(rowOf({2}), BorderMode::Replicate), expected, "saturate high");
        expectBoth(input, makeSpec(rowOf({-1}), BorderMode::Replicate), cv::Mat::zeros(1, 2, CV_8U), "saturate low");
        Conv2DSpec negative = makeSpec(rowOf({-1}), BorderMode::Replicate);
        negative.floatOutput = true;
        expectBoth(input, negative, rowOf({-100, -200}), "float output keeps the sign");
    }

    // Sobel-x on a horizontal ramp in(y, x) = 10x: +80 inside (the -1 0 1 taps times the
    // 1 2 1 smoothing); on the reversed ramp -80, which only floatOutput keeps.
    void floatOutputKeepsSobelSign()
    {
        cv::Mat rising(5, 7, CV_8U), falling(5, 7, CV_8U);
        for (int x = 0; x < 7; ++x) {
            rising.col(x).setTo(10 * x);
            falling.col(x).setTo(60 - 10 * x);
        }
        Conv2DSpec sobel = makeSpec(kl::makeConv2DKernel(kl::Conv2DPreset::SobelX), BorderMode::Replicate);
        sobel.floatOutput = true;
        const cv::Rect inside(1, 0, 5, 5);
        for (const auto& [image, value] : {std::pair{rising, 80.0}, std::pair{falling, -80.0}}) {
            for (const cv::Mat& out : {kl::conv2dReference(image, sobel), kl::conv2dOpenCV(image, sobel)}) {
                QCOMPARE(out.depth(), CV_32F);
                QCOMPARE(cv::norm(out(inside), cv::Mat(5, 5, CV_32F, cv::Scalar(value)), cv::NORM_INF), 0.0);
            }
        }
        sobel.floatOutput = false;
        QCOMPARE(cv::countNonZero(kl::conv2dReference(falling, sobel)), 0);  // negative saturates to 0 in u8
        const Conv2DSpec sobelY = makeSpec(kl::makeConv2DKernel(kl::Conv2DPreset::SobelY), BorderMode::Replicate);
        QCOMPARE(cv::countNonZero(kl::conv2dReference(rising, sobelY)), 0);
    }

    void channelsAreIndependent()
    {
        const cv::Mat input = kltest::randomImage(13, 11, CV_8U, 3, 5);
        const Conv2DSpec spec = makeSpec(randomKernel(5, 3, KernelKind::Normalized, 6), BorderMode::Wrap);
        std::vector<cv::Mat> planes, outPlanes;
        cv::split(input, planes);
        cv::split(kl::conv2dReference(input, spec), outPlanes);
        for (int c = 0; c < 3; ++c)
            QCOMPARE(cv::norm(outPlanes[size_t(c)], kl::conv2dReference(planes[size_t(c)], spec), cv::NORM_INF), 0.0);
    }

    // The reference in bands of rows is the whole reference, byte for byte, whichever rows a band
    // holds (the tests' gold runs bands on all threads: kltest::conv2dReferenceOnAllThreads); an
    // output of another size or type, or rows outside the image, are refused.
    void referenceInBandsOfRows()
    {
        uint64_t seed = 900;
        for (int depth : kltest::kAllDepths)
            for (int channels : kltest::kAllChannelCounts)
                for (BorderMode border : kBorders) {
                    const cv::Mat input = kltest::randomImage(37, 23, depth, channels, ++seed);
                    const Conv2DSpec spec = makeSpec(randomKernel(7, 5, KernelKind::Normalized, ++seed), border,
                                                      borderValueFor(depth));
                    const cv::Mat whole = kl::conv2dReference(input, spec);
                    cv::Mat bands(whole.size(), whole.type(), cv::Scalar::all(0));
                    for (const auto& [start, end] : {std::pair{0, 1}, {1, 2}, {2, 19}, {19, 19}, {19, 37}})
                        kl::conv2dReferenceRows(input, spec, bands, cv::Range(start, end));
                    QVERIFY2(kltest::bitwiseEqual(bands, whole), kltest::msg(kl::describeImage(input)));
                    QVERIFY(kltest::bitwiseEqual(kltest::conv2dReferenceOnAllThreads(input, spec), whole));
                }
        const cv::Mat input(8, 6, CV_8UC3, cv::Scalar::all(1));
        const Conv2DSpec spec = makeSpec(cv::Mat::ones(3, 3, CV_32F), BorderMode::Reflect101);
        cv::Mat wrongType(8, 6, CV_32FC3), wrongSize(7, 6, CV_8UC3), output(8, 6, CV_8UC3);
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv2d output: 6x8 f32 x3",
                         kl::conv2dReferenceRows(input, spec, wrongType, cv::Range(0, 8)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "is not the result's 6x8 u8 x3",
                         kl::conv2dReferenceRows(input, spec, wrongSize, cv::Range(0, 7)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv2d rows: [4, 9) is not inside the image's 8 rows",
                         kl::conv2dReferenceRows(input, spec, output, cv::Range(4, 9)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv2d rows: [5, 4)",
                         kl::conv2dReferenceRows(input, spec, output, cv::Range(5, 4)));
    }

    void referenceSumsAndMagnitudes()
    {
        const cv::Mat input = rowOf({1, -2, 3});
        const Conv2DSpec spec = makeSpec(rowOf({1, 1, 1}), BorderMode::Constant);
        double magnitude = 0;
        QCOMPARE(kl::conv2dReferenceSumAt(input, spec, 0, 0, 0), -1.0);  // 0 + 1 - 2
        QCOMPARE(kl::conv2dReferenceSumAt(input, spec, 0, 1, 0, &magnitude), 2.0);
        QCOMPARE(magnitude, 6.0);
        QCOMPARE(kl::conv2dReferenceSumAt(input, spec, 0, 2, 0, &magnitude), 1.0);
        QCOMPARE(magnitude, 5.0);
    }

    // At most 1 + 0.1% (u8) or 1 + 1% (u16) of the elements may differ near ties on random inputs.
    void randomInputNearTieBound_data()
    {
        QTest::addColumn<int>("depth");
        QTest::addColumn<qulonglong>("nearTies");
        QTest::addColumn<bool>("passes");
        QTest::newRow("u8 at the bound") << int(CV_8U) << qulonglong(4) << true;
        QTest::newRow("u8 past it") << int(CV_8U) << qulonglong(5) << false;
        QTest::newRow("u16 at the bound") << int(CV_16U) << qulonglong(31) << true;
        QTest::newRow("u16 past it") << int(CV_16U) << qulonglong(32) << false;
    }

    void randomInputNearTieBound()
    {
        QFETCH(int, depth);
        QFETCH(qulonglong, nearTies);
        QFETCH(bool, passes);
        kl::Verdict verdict;
        verdict.elements = 3000;
        verdict.nearTies = nearTies;
        kl::applyRandomInputNearTieBound(verdict, depth);
        QCOMPARE(verdict.passed(), passes);
        if (!passes)
            QVERIFY2(verdict.failure.find("elements differ near ties") != std::string::npos, verdict.failure.c_str());
    }

    void outputDepth()
    {
        Conv2DSpec spec = makeSpec(rowOf({1}), BorderMode::Reflect101);
        const cv::Mat u16(2, 2, CV_16UC3, cv::Scalar::all(7));
        QCOMPARE(kl::conv2dOutputDepth(u16, spec), CV_16U);
        QCOMPARE(kl::conv2dOpenCV(u16, spec).type(), CV_16UC3);
        spec.floatOutput = true;
        QCOMPARE(kl::conv2dOutputDepth(u16, spec), CV_32F);
        QCOMPARE(kl::conv2dReference(u16, spec).type(), CV_32FC3);
    }

    void rejectsBadInput()
    {
        const cv::Mat image(8, 8, CV_8UC3, cv::Scalar::all(1));
        const auto specWith = [](const cv::Mat& kernel) { return makeSpec(kernel, BorderMode::Reflect101); };
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv2d kernel: size 4x5 (width x height) must be odd",
                         kl::conv2dReference(image, specWith(cv::Mat::ones(5, 4, CV_32F))));
        KL_VERIFY_THROWS(kl::InvalidArgument, "size 65x65", kl::conv2dOpenCV(image, specWith(cv::Mat::ones(65, 65, CV_32F))));
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv2d kernel: empty", kl::conv2dReference(image, specWith(cv::Mat())));
        cv::Mat withNan = cv::Mat::ones(3, 3, CV_32F);
        withNan.at<float>(1, 2) = std::numeric_limits<float>::quiet_NaN();
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv2d kernel: tap (row 1, col 2) is nan",
                         kl::conv2dReference(image, specWith(withNan)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv2d kernel: type must be f32",
                         kl::conv2dReference(image, specWith(cv::Mat::ones(3, 3, CV_64F))));
        const Conv2DSpec good = specWith(cv::Mat::ones(3, 3, CV_32F));
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv2d input: 2 channels",
                         kl::conv2dReference(cv::Mat(4, 4, CV_8UC2), good));
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv2d input: depth f64",
                         kl::conv2dOpenCV(cv::Mat(4, 4, CV_64FC1), good));
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv2d input: the image is empty", kl::conv2dReference(cv::Mat(), good));
        Conv2DSpec badValue = makeSpec(cv::Mat::ones(3, 3, CV_32F), BorderMode::Constant,
                                       std::numeric_limits<double>::infinity());
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv2d borderValue: inf", kl::conv2dReference(image, badValue));
    }
};

QTEST_GUILESS_MAIN(TestConv2dCpu)
#include "tst_conv2d_cpu.moc"
