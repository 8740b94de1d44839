// Kernel presets: conv2d (taps, sums, symmetry, separability) and conv1d (FIR designs:
// DC and in-band gains, symmetry), names, and the validation messages.
#include "kernellab/conv1d.hpp"
#include "kernellab/conv2d.hpp"
#include "kernellab/error.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>

#include <QtTest>

#include <cmath>
#include <complex>
#include <numeric>
#include <string>
#include <vector>

using kl::Conv1DPreset;
using kl::Conv2DPreset;

namespace {

constexpr double kRate = 16000.0;

cv::Mat kernel2d(Conv2DPreset preset, int width = 5, int height = 5, double sigma = 0.0)
{
    kl::Conv2DPresetParams params;
    params.width = width;
    params.height = height;
    params.sigma = sigma;
    return kl::makeConv2DKernel(preset, params);
}

cv::Mat motionBlur(int length, double angleDegrees)
{
    kl::Conv2DPresetParams params;
    params.length = length;
    params.angleDegrees = angleDegrees;
    return kl::makeConv2DKernel(Conv2DPreset::MotionBlur, params);
}

cv::Mat taps3x3(std::initializer_list<float> values)
{
    return cv::Mat(std::vector<float>(values), true).reshape(1, 3);
}

bool equalExactly(const cv::Mat& a, const cv::Mat& b)
{
    return a.size() == b.size() && a.type() == b.type() && cv::norm(a, b, cv::NORM_INF) == 0;
}

kl::Conv1DPresetParams filterParams(size_t taps, double lowHz, double highHz = 0.0, kl::Window window = kl::Window::Hamming)
{
    kl::Conv1DPresetParams params;
    params.taps = taps;
    params.lowHz = lowHz;
    params.highHz = highHz;
    params.sampleRate = kRate;
    params.window = window;
    return params;
}

/// |H(f)| of an FIR at `hz` for the sample rate kRate.
double gainAt(const std::vector<float>& h, double hz)
{
    std::complex<double> sum = 0;
    for (size_t n = 0; n < h.size(); ++n) sum += double(h[n]) * std::polar(1.0, -2 * M_PI * hz / kRate * double(n));
    return std::abs(sum);
}

bool symmetric(const std::vector<float>& h, float sign = 1.f)
{
    for (size_t n = 0; n < h.size(); ++n)
        if (h[n] != sign * h[h.size() - 1 - n]) return false;
    return true;
}

double sum(const std::vector<float>& h)
{
    return std::accumulate(h.begin(), h.end(), 0.0);
}

} // namespace

class TestPresets : public QObject {
    Q_OBJECT

private slots:
    void box()
    {
        const cv::Mat k = kernel2d(Conv2DPreset::Box, 3, 5);
        QCOMPARE(k.rows, 5);
        QCOMPARE(k.cols, 3);
        QCOMPARE(k.type(), CV_32FC1);
        QVERIFY(equalExactly(k, cv::Mat(5, 3, CV_32F, cv::Scalar(1.0 / 15))));
        QVERIFY(std::fabs(cv::sum(k)[0] - 1) < 1e-6);
    }

    void gaussian()
    {
        const cv::Mat k = kernel2d(Conv2DPreset::Gaussian, 7, 5, 1.5);
        QCOMPARE(k.size(), cv::Size(7, 5));
        QVERIFY(std::fabs(cv::sum(k)[0] - 1) < 1e-6);
        for (int flip : {-1, 0, 1}) {
            cv::Mat mirrored;
            cv::flip(k, mirrored, flip);
            QVERIFY2(equalExactly(k, mirrored), qPrintable(QString("not symmetric under flip %1").arg(flip)));
        }
        double largest = 0;
        cv::Point peak;
        cv::minMaxLoc(k, nullptr, &largest, nullptr, &peak);
        QCOMPARE(peak, cv::Point(3, 2));
        // sigma <= 0: OpenCV's table for size 3, [1 2 1] / 4 in each direction.
        QVERIFY(equalExactly(kernel2d(Conv2DPreset::Gaussian, 3, 3), taps3x3({1, 2, 1, 2, 4, 2, 1, 2, 1}) / 16));
    }

    void fixedKernels()
    {
        QVERIFY(equalExactly(kernel2d(Conv2DPreset::Sharpen), taps3x3({0, -1, 0, -1, 5, -1, 0, -1, 0})));
        const cv::Mat sobelX = taps3x3({-1, 0, 1, -2, 0, 2, -1, 0, 1});
        QVERIFY(equalExactly(kernel2d(Conv2DPreset::SobelX), sobelX));
        QVERIFY(equalExactly(kernel2d(Conv2DPreset::SobelY), cv::Mat(sobelX.t())));
        const cv::Mat scharrX = taps3x3({-3, 0, 3, -10, 0, 10, -3, 0, 3});
        QVERIFY(equalExactly(kernel2d(Conv2DPreset::ScharrX), scharrX));
        QVERIFY(equalExactly(kernel2d(Conv2DPreset::ScharrY), cv::Mat(scharrX.t())));
        QVERIFY(equalExactly(kernel2d(Conv2DPreset::Laplacian), taps3x3({0, 1, 0, 1, -4, 1, 0, 1, 0})));
        QCOMPARE(cv::sum(kernel2d(Conv2DPreset::Emboss))[0], 1.0);
    }

    void motionBlurLines()
    {
        cv::Mat horizontal = cv::Mat::zeros(5, 5, CV_32F);
        horizontal.row(2).setTo(0.2);
        QVERIFY(equalExactly(motionBlur(5, 0), horizontal));
        QVERIFY(equalExactly(motionBlur(5, 90), cv::Mat(horizontal.t())));
        QVERIFY(equalExactly(motionBlur(5, 180), horizontal));
        QVERIFY(equalExactly(motionBlur(1, 30), cv::Mat::ones(1, 1, CV_32F)));
        // 45 degrees counter-clockwise (image y points down): the anti-diagonal.
        const cv::Mat diagonal = motionBlur(9, 45);
        QVERIFY(std::fabs(cv::sum(diagonal)[0] - 1) < 1e-6);
        for (int y = 0; y < 9; ++y)
            for (int x = 0; x < 9; ++x)
                if (diagonal.at<float>(y, x) != 0) QCOMPARE(x + y, 8);
        QVERIFY(diagonal.at<float>(2, 6) > 0);
    }

    void custom()
    {
        kl::Conv2DPresetParams params;
        params.custom = (cv::Mat_<double>(3, 3) << 1, 2, 1, 2, 4, 2, 1, 2, 1);
        const cv::Mat raw = kl::makeConv2DKernel(Conv2DPreset::Custom, params);
        QCOMPARE(raw.type(), CV_32FC1);
        QCOMPARE(raw.at<float>(1, 1), 4.f);
        params.normalize = true;
        QVERIFY(equalExactly(kl::makeConv2DKernel(Conv2DPreset::Custom, params),
                             taps3x3({1, 2, 1, 2, 4, 2, 1, 2, 1}) / 16));
        params.custom = (cv::Mat_<float>(1, 3) << -1, 0, 1);  // sums to 0: left alone
        QVERIFY(equalExactly(kl::makeConv2DKernel(Conv2DPreset::Custom, params), params.custom));
    }

    void conv2dPresetErrors()
    {
        KL_VERIFY_THROWS(kl::InvalidArgument, "box width: 4 must be odd, 1..63", kernel2d(Conv2DPreset::Box, 4, 3));
        KL_VERIFY_THROWS(kl::InvalidArgument, "gaussian height: 65 must be odd", kernel2d(Conv2DPreset::Gaussian, 3, 65));
        KL_VERIFY_THROWS(kl::InvalidArgument, "gaussian sigma: must be finite",
                         kernel2d(Conv2DPreset::Gaussian, 3, 3, std::nan("")));
        KL_VERIFY_THROWS(kl::InvalidArgument, "motion blur length: 0 must be odd", motionBlur(0, 0));
        kl::Conv2DPresetParams params;
        KL_VERIFY_THROWS(kl::InvalidArgument, "custom kernel: empty", kl::makeConv2DKernel(Conv2DPreset::Custom, params));
        params.custom = cv::Mat::ones(3, 4, CV_32F);
        KL_VERIFY_THROWS(kl::InvalidArgument, "custom kernel width: 4 must be odd",
                         kl::makeConv2DKernel(Conv2DPreset::Custom, params));
        params.custom = cv::Mat::ones(3, 3, CV_64F) * 1e300;
        KL_VERIFY_THROWS(kl::InvalidArgument, "custom kernel: every tap must be finite",
                         kl::makeConv2DKernel(Conv2DPreset::Custom, params));
    }

    void conv2dPresetNames()
    {
        const std::vector<Conv2DPreset> all = kl::allConv2DPresets();
        QCOMPARE(all.size(), size_t(11));
        for (Conv2DPreset preset : all) QVERIFY(kl::parseConv2DPreset(kl::toString(preset)) == preset);
        QCOMPARE(kl::toString(Conv2DPreset::MotionBlur), std::string("motion-blur"));
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv2d preset: 'blurry' is not one of box, gaussian",
                         kl::parseConv2DPreset("blurry"));
        QVERIFY(kl::presetWantsFloatOutput(Conv2DPreset::SobelX));
        QVERIFY(kl::presetWantsFloatOutput(Conv2DPreset::Laplacian));
        QVERIFY(!kl::presetWantsFloatOutput(Conv2DPreset::Box));
        QVERIFY(!kl::presetWantsFloatOutput(Conv2DPreset::Sharpen));
    }

    void separateKernel()
    {
        const cv::Mat gaussian = kernel2d(Conv2DPreset::Gaussian, 7, 5, 1.5);
        const auto factors = kl::separateKernel(gaussian);
        QVERIFY(factors.has_value());
        QCOMPARE(factors->column.size(), size_t(5));
        QCOMPARE(factors->row.size(), size_t(7));
        const cv::Mat product = cv::Mat(factors->column) * cv::Mat(factors->row).t();
        QVERIFY(cv::norm(product, gaussian, cv::NORM_INF) <= 1e-6 * 0.1);

        QVERIFY(!kl::separateKernel(kernel2d(Conv2DPreset::Sharpen)).has_value());
        QVERIFY(!kl::separateKernel(kernel2d(Conv2DPreset::Laplacian)).has_value());
        cv::Mat noise(5, 5, CV_32F);
        cv::randu(noise, -1, 1);
        QVERIFY(!kl::separateKernel(noise).has_value());

        // Exact splits: Sobel, OpenCV's Gaussian tables, a row, a column.
        for (const cv::Mat& k : {kernel2d(Conv2DPreset::SobelX), kernel2d(Conv2DPreset::ScharrY),
                                 kernel2d(Conv2DPreset::Gaussian, 5, 7), kernel2d(Conv2DPreset::Box, 9, 1),
                                 cv::Mat(kernel2d(Conv2DPreset::Box, 9, 1).t()), motionBlur(7, 90)}) {
            const auto exact = kl::separateKernel(k, 0.0);
            QVERIFY(exact.has_value());
            QVERIFY(equalExactly(cv::Mat(exact->column) * cv::Mat(exact->row).t(), k));
        }
        const auto zero = kl::separateKernel(cv::Mat::zeros(3, 5, CV_32F));
        QVERIFY(zero.has_value());
        QVERIFY(!kl::separateKernel(cv::Mat()).has_value());
    }

    // The integer form behind the GPU's integer variant: exact, non-negative, dyadic.
    void integerSeparableKernel()
    {
        const auto split = [](const cv::Mat& k, int bits) { return kl::integerSeparableKernel(k, bits); };
        const auto rebuilt = [](const kl::IntegerSeparableKernel& f) {
            cv::Mat_<double> k(int(f.column.size()), int(f.row.size()));
            for (int i = 0; i < k.rows; ++i)
                for (int j = 0; j < k.cols; ++j)
                    k(i, j) = double(f.column[size_t(i)]) * f.row[size_t(j)] / std::ldexp(1.0, f.fractionBits);
            return k;
        };
        const auto sumOf = [](const std::vector<uint32_t>& v) { return std::accumulate(v.begin(), v.end(), 0u); };

        // OpenCV's 5x5 table: [1 4 6 4 1] / 16 per side, so 8 bits, the column in its smallest integers.
        const cv::Mat gauss5 = kernel2d(Conv2DPreset::Gaussian, 5, 5);
        const auto five = split(gauss5, 8);
        QVERIFY(five.has_value());
        QCOMPARE(five->column, (std::vector<uint32_t>{1, 4, 6, 4, 1}));
        QCOMPARE(five->row, (std::vector<uint32_t>{1, 4, 6, 4, 1}));
        QCOMPARE(five->fractionBits, 8);
        QCOMPARE(cv::norm(rebuilt(*five), cv::Mat_<double>(gauss5), cv::NORM_INF), 0.0);
        QVERIFY(!split(gauss5, 7).has_value());
        // 3x3: 4 bits are enough; with 8 the row takes the spare scale.
        const auto three = split(kernel2d(Conv2DPreset::Gaussian, 3, 3), 8);
        QVERIFY(three.has_value());
        QCOMPARE(three->column, (std::vector<uint32_t>{1, 2, 1}));
        QCOMPARE(three->row, (std::vector<uint32_t>{16, 32, 16}));
        // Asymmetric, non-square, not normalised (neither separateKernel split is dyadic here), the
        // column's common factor 2 taken out.
        const cv::Mat column = (cv::Mat_<float>(3, 1) << 2, 4, 6), row = (cv::Mat_<float>(1, 5) << 1, 0, 3, 1, 1);
        const cv::Mat skewed = column * row / 64;
        const auto asymmetric = split(skewed, 8);
        QVERIFY(asymmetric.has_value());
        QCOMPARE(cv::norm(rebuilt(*asymmetric), cv::Mat_<double>(skewed), cv::NORM_INF), 0.0);
        QCOMPARE(asymmetric->column, (std::vector<uint32_t>{1, 2, 3}));
        QCOMPARE(sumOf(asymmetric->column) * sumOf(asymmetric->row), 12u * 6u * 4u);

        QVERIFY(!split(kernel2d(Conv2DPreset::Gaussian, 7, 7), 8).has_value());   // 12 bits
        QVERIFY(split(kernel2d(Conv2DPreset::Gaussian, 7, 7), 12).has_value());
        QVERIFY(!split(kernel2d(Conv2DPreset::Gaussian, 5, 5, 1.3), 8).has_value());  // not dyadic
        QVERIFY(!split(kernel2d(Conv2DPreset::SobelX), 8).has_value());              // negative taps
        QVERIFY(!split(kernel2d(Conv2DPreset::Sharpen), 8).has_value());             // not rank-1
        QVERIFY(!split(kernel2d(Conv2DPreset::Box, 3, 3), 8).has_value());            // 1/9
        QVERIFY(split(kernel2d(Conv2DPreset::Box, 1, 1), 8).has_value());
        QVERIFY(!split(cv::Mat_<double>(gauss5), 8).has_value());  // f32 kernels only, as conv2d takes
    }

    // ---- conv1d ----------------------------------------------------------------

    void movingAverageAndGaussian()
    {
        kl::Conv1DPresetParams params;
        params.taps = 5;
        QCOMPARE(kl::makeConv1DKernel(Conv1DPreset::MovingAverage, params), std::vector<float>(5, 0.2f));
        params.taps = 9;
        params.sigma = 2.0;
        const std::vector<float> g = kl::makeConv1DKernel(Conv1DPreset::Gaussian, params);
        QCOMPARE(g.size(), size_t(9));
        QVERIFY(symmetric(g));
        QVERIFY(std::fabs(sum(g) - 1) < 1e-6);
        QCOMPARE(std::max_element(g.begin(), g.end()) - g.begin(), 4L);
        QVERIFY(std::fabs(g[5] / g[4] - std::exp(-1.0 / 8)) < 1e-6);  // exp(-t^2 / 2 sigma^2) at t = 1
    }

    void lowPass_data()
    {
        QTest::addColumn<int>("window");
        QTest::addColumn<double>("ripple");  // allowed |gain - 1| in the pass band, gain in the stop band
        QTest::newRow("rectangular") << int(kl::Window::Rectangular) << 0.1;  // Gibbs: ~9%
        QTest::newRow("hann") << int(kl::Window::Hann) << 0.005;
        QTest::newRow("hamming") << int(kl::Window::Hamming) << 0.005;
        QTest::newRow("blackman") << int(kl::Window::Blackman) << 0.005;
    }

    void lowPass()
    {
        QFETCH(int, window);
        QFETCH(double, ripple);
        const std::vector<float> h =
            kl::makeConv1DKernel(Conv1DPreset::LowPass, filterParams(101, 1000, 0, kl::Window(window)));
        QVERIFY(symmetric(h));
        QVERIFY(std::fabs(sum(h) - 1) < 1e-6);  // DC gain 1
        for (double hz : {200.0, 500.0}) QVERIFY(std::fabs(gainAt(h, hz) - 1) < ripple);
        QVERIFY(std::fabs(gainAt(h, 1000) - 0.5) < 0.02);  // -6 dB at the cut-off
        for (double hz : {2500.0, 4000.0, 8000.0}) QVERIFY(gainAt(h, hz) < ripple);
    }

    void highPass()
    {
        const std::vector<float> h = kl::makeConv1DKernel(Conv1DPreset::HighPass, filterParams(101, 1000));
        QVERIFY(symmetric(h));
        QVERIFY(std::fabs(sum(h)) < 1e-6);              // DC gain 0
        QVERIFY(std::fabs(gainAt(h, 8000) - 1) < 0.01);  // Nyquist passes
        QVERIFY(std::fabs(gainAt(h, 4000) - 1) < 0.01);
        KL_VERIFY_THROWS(kl::InvalidArgument, "high-pass taps: 100 must be odd",
                         kl::makeConv1DKernel(Conv1DPreset::HighPass, filterParams(100, 1000)));
    }

    void bandPass()
    {
        const std::vector<float> h = kl::makeConv1DKernel(Conv1DPreset::BandPass, filterParams(201, 1000, 3000));
        QVERIFY(symmetric(h));
        QVERIFY(std::fabs(sum(h)) < 1e-6);
        QVERIFY(std::fabs(gainAt(h, 2000) - 1) < 0.01);  // centre of the band
        QVERIFY(gainAt(h, 6000) < 0.01);
        QVERIFY(gainAt(h, 200) < 0.01);
        KL_VERIFY_THROWS(kl::InvalidArgument, "band-pass lowHz: 3000 Hz must be below highHz 1000 Hz",
                         kl::makeConv1DKernel(Conv1DPreset::BandPass, filterParams(201, 3000, 1000)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "band-pass highHz: 9000 Hz must be in (0, 8000) Hz",
                         kl::makeConv1DKernel(Conv1DPreset::BandPass, filterParams(201, 1000, 9000)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "band-pass taps: 200 must be odd",
                         kl::makeConv1DKernel(Conv1DPreset::BandPass, filterParams(200, 1000, 3000)));
    }

    void derivativeOfRamp()
    {
        const std::vector<float> d = kl::makeConv1DKernel(Conv1DPreset::Derivative, {});
        QCOMPARE(d, (std::vector<float>{0.5f, 0.f, -0.5f}));
        kl::Signal ramp(1, 6, kRate);
        for (size_t n = 0; n < 6; ++n) ramp.data[n] = 3.f * float(n);
        kl::Conv1DSpec spec;
        spec.taps = d;
        spec.mode = kl::Conv1DMode::Same;
        const kl::Signal slope = kl::conv1dReference(ramp, spec);
        for (size_t n = 1; n + 1 < 6; ++n) QCOMPARE(slope.data[n], 3.f);
    }

    void customTaps()
    {
        kl::Conv1DPresetParams params;
        params.custom = {1, 2, 1};
        QCOMPARE(kl::makeConv1DKernel(Conv1DPreset::Custom, params), params.custom);
        params.normalize = true;
        QCOMPARE(kl::makeConv1DKernel(Conv1DPreset::Custom, params), (std::vector<float>{0.25f, 0.5f, 0.25f}));
        params.custom = {1, std::nanf("")};
        KL_VERIFY_THROWS(kl::InvalidArgument, "custom taps: tap 1 is nan", kl::makeConv1DKernel(Conv1DPreset::Custom, params));
        params.custom.clear();
        KL_VERIFY_THROWS(kl::InvalidArgument, "custom taps: 0 must be in 1..1048576",
                         kl::makeConv1DKernel(Conv1DPreset::Custom, params));
    }

    void conv1dPresetErrors()
    {
        KL_VERIFY_THROWS(kl::InvalidArgument, "low-pass lowHz: 8000 Hz must be in (0, 8000) Hz",
                         kl::makeConv1DKernel(Conv1DPreset::LowPass, filterParams(31, 8000)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "high-pass lowHz: 0 Hz must be in (0, 8000) Hz",
                         kl::makeConv1DKernel(Conv1DPreset::HighPass, filterParams(31, 0)));
        kl::Conv1DPresetParams noRate = filterParams(31, 1000);
        noRate.sampleRate = 0;
        KL_VERIFY_THROWS(kl::InvalidArgument, "low-pass sampleRate: 0 Hz must be positive",
                         kl::makeConv1DKernel(Conv1DPreset::LowPass, noRate));
        KL_VERIFY_THROWS(kl::InvalidArgument, "moving-average taps: 0 must be in 1..1048576",
                         kl::makeConv1DKernel(Conv1DPreset::MovingAverage, filterParams(0, 0)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "gaussian taps: 1048577",
                         kl::makeConv1DKernel(Conv1DPreset::Gaussian, filterParams(kl::kMaxConv1DTaps + 1, 0)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "low-pass taps: 2 taps under a hann window pass nothing",
                         kl::makeConv1DKernel(Conv1DPreset::LowPass, filterParams(2, 1000, 0, kl::Window::Hann)));
    }

    void conv1dPresetNames()
    {
        const std::vector<Conv1DPreset> all = kl::allConv1DPresets();
        QCOMPARE(all.size(), size_t(7));
        for (Conv1DPreset preset : all) QVERIFY(kl::parseConv1DPreset(kl::toString(preset)) == preset);
        for (kl::Window w : {kl::Window::Rectangular, kl::Window::Hann, kl::Window::Hamming, kl::Window::Blackman})
            QVERIFY(kl::parseWindow(kl::toString(w)) == w);
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv1d preset: 'notch'", kl::parseConv1DPreset("notch"));
        KL_VERIFY_THROWS(kl::InvalidArgument, "window: 'kaiser'", kl::parseWindow("kaiser"));
    }
};

QTEST_GUILESS_MAIN(TestPresets)
#include "tst_presets.moc"
