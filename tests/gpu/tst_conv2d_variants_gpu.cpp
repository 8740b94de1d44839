// Each conv2d variant family against core's reference on the cases its design has to get right:
// separable-tiles' strips; the tensor-core variants (separable-mma, rows-mma, direct-mma) on every kind of
// taps they take; the integer ring on dyadic kernels and dp4a / dp2a on integer ones, bitwise; the staged
// ring and staged rows; tma's tiles; and what each refuses. The cases every variant shares:
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

#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace conv2dtest;

class TestConv2dVariantsGpu : public QObject, protected Conv2dGpuFixture {
    Q_OBJECT

    /// `variant` on `input` against the reference with `spec`'s border value at `heldValue` and, on a
    /// constant border, also at borderValueFor's where that differs (a value u8/u16 does not hold: the
    /// edge strips); pinned, on `streams` streams.
    void checkAtBorderValues(const std::string& variant, const cv::Mat& input, Conv2DSpec spec, double heldValue,
                             int streams)
    {
        std::vector<double> borderValues = {heldValue};
        const double otherValue = borderValueFor(input.depth());
        if (spec.border == BorderMode::Constant && otherValue != heldValue) borderValues.push_back(otherValue);
        for (double borderValue : borderValues) {
            spec.borderValue = borderValue;
            const cv::Mat gpu = run(input, spec, variant, streams, HostMemory::Pinned);
            const std::string failure = compareWithReference(gpu, kl::conv2dReference(input, spec), input, spec);
            QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, variant) + " (border value " +
                                                  std::to_string(borderValue) + "): " + failure));
        }
    }

private slots:
    void initTestCase()
    {
        KL_SKIP_WITHOUT_GPU();
        engine_ = std::make_unique<kl::gpu::Engine>();
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
                            const Conv2DSpec spec = makeSpec(randomSeparableKernel(k, k, seed), border, depth, seed % 2 == 0);
                            checkAtBorderValues("separable", input, spec, depth == CV_8U ? 200 : 40000, rows == 131 ? 3 : 1);
                            if (QTest::currentTestFailed()) return;
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
                            checkAtBorderValues("staged-rows", input, spec,
                                                depth == CV_8U ? 200 : depth == CV_16U ? 40000 : borderValueFor(depth),
                                                rows == 131 ? 3 : 1);
                            if (QTest::currentTestFailed()) return;
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
};

QTEST_GUILESS_MAIN(TestConv2dVariantsGpu)
#include "tst_conv2d_variants_gpu.moc"
