// conv2d's tensor-core variants (separable-mma, rows-mma, direct-mma) against core's reference under the
// acceptance rule, on every kind of taps they take, and what each refuses. The other variant families:
// tst_conv2d_variants_gpu.cpp and tst_conv2d_integer_gpu.cpp; the cases every variant shares:
// tst_conv2d_gpu.cpp.
#include "conv2d_gpu_fixture.hpp"
#include "gpu_skip.hpp"

#include "kernellab/conv2d.hpp"
#include "kernellab/error.hpp"
#include "kernellab/gpu/engine.hpp"
#include "kernellab/image.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>

#include <QtTest>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>

using namespace conv2dtest;

class TestConv2dMmaGpu : public QObject, protected Conv2dGpuFixture {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        KL_SKIP_WITHOUT_GPU();
        engine_ = std::make_unique<kl::gpu::Engine>();
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
            const kl::Verdict verdict = kl::acceptConv2D(gpu, kltest::conv2dReferenceOnAllThreads(input, spec), input, spec);
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
            const kl::Verdict verdict = kl::acceptConv2D(gpu, kltest::conv2dReferenceOnAllThreads(input, spec), input, spec);
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
            const kl::Verdict verdict = kl::acceptConv2D(gpu, kltest::conv2dReferenceOnAllThreads(input, spec), input, spec);
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
};

QTEST_GUILESS_MAIN(TestConv2dMmaGpu)
#include "tst_conv2d_mma_gpu.moc"
