// conv2d's staged and tiled variant families against core's reference on the cases their design has to
// get right: separable-tiles' strips; the staged ring and staged rows at every border, in strips and on
// the tile schedule; tma's tiles; and what each refuses. The tensor-core variants:
// tst_conv2d_mma_gpu.cpp; the integer ones: tst_conv2d_integer_gpu.cpp; the cases every variant shares:
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
#include <memory>
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
            const std::string failure = compareWithReference(gpu, kltest::conv2dReferenceOnAllThreads(input, spec), input, spec);
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
                        const std::string failure = compareWithReference(tiles, kltest::conv2dReferenceOnAllThreads(input, spec), input, spec);
                        QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, "separable-tiles") + ": " + failure));
                        QVERIFY2(kltest::bitwiseEqual(tiles, run(input, spec, "separable")),
                                 kltest::msg(describe(input, spec, "separable-tiles") + ": differs from separable"));
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
                const cv::Mat expected = kltest::conv2dReferenceOnAllThreads(input, spec);
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
                const cv::Mat expected = kltest::conv2dReferenceOnAllThreads(input, spec);
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
                    const std::string failure = compareWithReference(tma, kltest::conv2dReferenceOnAllThreads(input, spec), input, spec);
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
            compareWithReference(run(f32, past, "separable"), kltest::conv2dReferenceOnAllThreads(f32, past), f32, past);
        QVERIFY2(f32Failure.empty(), kltest::msg(describe(f32, past, "separable") + ": " + f32Failure));
        QCOMPARE(whyNot(u8, makeSpec(ones(5, 3, 0x1p100), BorderMode::Reflect101, CV_8U)), std::string());
        for (int depth : {CV_8U, CV_16U}) {
            const cv::Mat input = kltest::randomImage(37, 53, depth, 3, 13);
            Conv2DSpec under = makeSpec(ones(5, 5, 0x1p99), BorderMode::Constant, depth);
            under.floatOutput = true;
            QCOMPARE(whyNot(input, under), std::string());
            const std::string failure =
                compareWithReference(run(input, under, "separable"), kltest::conv2dReferenceOnAllThreads(input, under), input, under);
            QVERIFY2(failure.empty(), kltest::msg(describe(input, under, "separable") + ": " + failure));
        }
    }
};

QTEST_GUILESS_MAIN(TestConv2dVariantsGpu)
#include "tst_conv2d_variants_gpu.moc"
