// conv2d's integer variants against core's reference: the integer ring on dyadic kernels and integers
// times a factor, dp4a / dp2a on integer taps, bitwise where the sums are exact, and what each refuses.
// The other variant families: tst_conv2d_variants_gpu.cpp and tst_conv2d_mma_gpu.cpp; the cases every
// variant shares: tst_conv2d_gpu.cpp.
#include "conv2d_gpu_fixture.hpp"
#include "gpu_skip.hpp"

#include "kernellab/conv2d.hpp"
#include "kernellab/error.hpp"
#include "kernellab/gpu/engine.hpp"
#include "kernellab/image.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>

#include <QtTest>

#include <memory>
#include <string>
#include <utility>
#include <vector>

using namespace conv2dtest;

class TestConv2dIntegerGpu : public QObject, protected Conv2dGpuFixture {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        KL_SKIP_WITHOUT_GPU();
        engine_ = std::make_unique<kl::gpu::Engine>();
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
                            const cv::Mat expected = kltest::conv2dReferenceOnAllThreads(input, spec);
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
                                const cv::Mat expected = kltest::conv2dReferenceOnAllThreads(input, spec);
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
                                    const cv::Mat expected = kltest::conv2dReferenceOnAllThreads(input, spec);
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
};

QTEST_GUILESS_MAIN(TestConv2dIntegerGpu)
#include "tst_conv2d_integer_gpu.moc"
