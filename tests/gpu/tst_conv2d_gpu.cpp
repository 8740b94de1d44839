// GPU conv2d against core's reference, every variant alike: each variant, depth, channel count and
// border mode; kernel sizes 1..63 (non-square too) on sizes from 1x1 up; the compiled sizes
// (kConv2dCompiledSizes) on widths that are multiples of 4 and widths that are not; f32 output, rounding
// at ties and limits, a large image, the separable split; streams, host memory and kernel-only mode; the
// report. Each variant family's own cases: tst_conv2d_variants_gpu.cpp (staged and tiled),
// tst_conv2d_mma_gpu.cpp (tensor cores) and tst_conv2d_integer_gpu.cpp (integer, dp4a, dp2a).
// `throughput` (KL_BENCH=1 only) prints the benchmark that docs/performance.md
// (conv2d section) quotes.
#include "conv2d_gpu_fixture.hpp"
#include "gpu_skip.hpp"

#include "kernellab/conv2d.hpp"
#include "kernellab/error.hpp"
#include "kernellab/gpu/engine.hpp"
#include "kernellab/image.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>

#include <QtTest>

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using namespace conv2dtest;

class TestConv2dGpu : public QObject, protected Conv2dGpuFixture {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        KL_SKIP_WITHOUT_GPU();
        engine_ = std::make_unique<kl::gpu::Engine>();
    }

    // Every variant x depth x channels x border mode, with a rank-1 5x3 kernel (so the separable
    // variant runs too), on sizes from 1x1 to one not a multiple of any tile.
    void everyVariantDepthChannelBorder_data()
    {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("cols");
        QTest::newRow("1x1") << 1 << 1;
        QTest::newRow("1x200") << 1 << 200;
        QTest::newRow("200x1") << 200 << 1;
        QTest::newRow("97x61") << 97 << 61;
        QTest::newRow("1021x769") << 1021 << 769;
    }

    void everyVariantDepthChannelBorder()
    {
        QFETCH(int, rows);
        QFETCH(int, cols);
        uint64_t seed = 1;
        for (int depth : kDepths)
            for (int channels : kChannels)
                for (BorderMode border : kBorders) {
                    const cv::Mat input = kltest::randomImage(rows, cols, depth, channels, ++seed);
                    const Conv2DSpec spec =
                        makeSpec(randomSeparableKernel(5, 3, seed), border, depth, /*flip=*/seed % 2 == 0);
                    checkAllVariants(input, spec);
                }
    }

    // The compiled sizes: shared's unrolled tiles (all channel planes staged at once, 69 KB of
    // shared memory for 15x15 on 4 channels) and the separable ring, every depth x channels x
    // border, on rows that take vector loads and stores (136 columns) and odd ones (45 columns:
    // element by element, except on 4 channels); tiles and ring strips repeat down the image.
    void compiledSizes_data()
    {
        QTest::addColumn<int>("kernelSize");
        for (int k : kl::gpu::kConv2dCompiledSizes) QTest::newRow((std::to_string(k) + "x" + std::to_string(k)).c_str()) << k;
    }

    void compiledSizes()
    {
        QFETCH(int, kernelSize);
        uint64_t seed = 20000 + 100 * uint64_t(kernelSize);
        for (const auto& [rows, cols] : {std::pair<int, int>{70, 136}, {83, 45}})
            for (int depth : kDepths)
                for (int channels : kChannels)
                    for (BorderMode border : kBorders) {
                        const cv::Mat input = kltest::randomImage(rows, cols, depth, channels, ++seed);
                        const bool flip = seed % 2 == 0;
                        checkAllVariants(input, makeSpec(randomKernel(kernelSize, kernelSize, depth != CV_32F, seed),
                                                         border, depth, flip));
                        checkAllVariants(input, makeSpec(randomSeparableKernel(kernelSize, kernelSize, seed), border,
                                                         depth, !flip));
                        checkAllVariants(input, makeSpec(dyadicKernel(kernelSize, seed), border, depth, flip));
                    }
    }

    // u8/u16 in, f32 out (signed derivative filters).
    void floatOutput()
    {
        uint64_t seed = 100;
        for (int depth : {CV_8U, CV_16U})
            for (BorderMode border : kBorders) {
                const cv::Mat input = kltest::randomImage(97, 61, depth, 3, ++seed);
                Conv2DSpec spec = makeSpec(kl::makeConv2DKernel(kl::Conv2DPreset::SobelX), border, depth);
                spec.floatOutput = true;
                checkAllVariants(input, spec);
                spec.kernel = randomKernel(7, 5, false, seed);
                checkAllVariants(input, spec);
            }
    }

    // Kernel sizes 1..63, square and not, on images smaller and larger than the kernel.
    void kernelSizes_data()
    {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("cols");
        QTest::addColumn<int>("kernelRows");
        QTest::addColumn<int>("kernelCols");
        const std::vector<std::pair<int, int>> kernels = {{1, 1},  {3, 3},  {5, 3},   {5, 5},   {9, 9},  {11, 11},
                                                          {15, 15}, {1, 63}, {63, 1}, {7, 31}, {63, 63}};
        const std::vector<std::pair<int, int>> images = {{1, 1}, {2, 3}, {5, 4}, {97, 61}};
        for (const auto& [ir, ic] : images)
            for (const auto& [kr, kc] : kernels) {
                const std::string name = std::to_string(ic) + "x" + std::to_string(ir) + " image, " +
                                         std::to_string(kc) + "x" + std::to_string(kr) + " kernel";
                QTest::newRow(name.c_str()) << ir << ic << kr << kc;
            }
        QTest::newRow("200x150 image, 63x63 kernel") << 150 << 200 << 63 << 63;
    }

    void kernelSizes()
    {
        QFETCH(int, rows);
        QFETCH(int, cols);
        QFETCH(int, kernelRows);
        QFETCH(int, kernelCols);
        const std::vector<std::pair<int, int>> combos = {{CV_8U, 3}, {CV_16U, 1}, {CV_32F, 4}};
        const bool big = kernelRows * kernelCols > 1000 && rows * cols > 10000;
        uint64_t seed = 1000;
        for (const auto& [depth, channels] : combos)
            for (BorderMode border : kBorders) {
                ++seed;
                if (big && (depth != CV_8U || (border != BorderMode::Reflect101 && border != BorderMode::Constant)))
                    continue;  // the single-threaded reference is slow here: two modes, one depth
                const cv::Mat input = kltest::randomImage(rows, cols, depth, channels, seed);
                const Conv2DSpec spec =
                    makeSpec(randomKernel(kernelRows, kernelCols, depth != CV_32F, seed), border, depth, seed % 2 == 0);
                checkAllVariants(input, spec);
            }
    }

    // Rounding on the device (one cvt.rni.sat): 1x1 kernels whose products are exact, so the
    // reference's rule applies bitwise: ties to even (0.5 * odd), saturation below 0 and above
    // the depth's maximum, for u8 and u16 on 1 and 3 channels.
    void roundingAtTiesAndLimits()
    {
        uint64_t seed = 7000;
        for (int depth : {CV_8U, CV_16U})
            for (int channels : {1, 3}) {
                cv::Mat input = kltest::randomImage(67, 131, depth, channels, ++seed);
                // every value of the depth's range (u8) or its ends (u16) somewhere in the image
                for (int i = 0; i < 256; ++i) {
                    const int x = i % input.cols, y = i / input.cols;
                    if (depth == CV_8U) input.ptr<uint8_t>(y)[x * channels] = uint8_t(i);
                    else input.ptr<uint16_t>(y)[x * channels] = uint16_t(i < 128 ? i : 65535 - (i - 128));
                }
                for (float tap : {0.5f, -1.0f, 300.0f, 1.5f}) {
                    const Conv2DSpec spec = makeSpec((cv::Mat_<float>(1, 1) << tap), BorderMode::Reflect101, depth);
                    const cv::Mat expected = kltest::conv2dReferenceOnAllThreads(input, spec);
                    for (const std::string variant : {"naive", "constant", "shared", "auto"}) {
                        const cv::Mat gpu = run(input, spec, variant);
                        QVERIFY2(kltest::bitwiseEqual(gpu, expected),
                                 kltest::msg(describe(input, spec, variant) + ", tap " + std::to_string(tap) +
                                             ": differs from the reference"));
                    }
                }
            }
    }

    // A large image, not a multiple of any tile, with a cheap dyadic kernel ([1 2 1]^T [1 2 1] / 16):
    // every partial sum is exact in f32 and f64, so the GPU equals the reference bitwise, ties
    // included (cpu-opencv's cv::GaussianBlur rounds these exact ties up: acceptance.hpp).
    void largeImage()
    {
        const cv::Mat binomial = (cv::Mat_<float>(3, 1) << 0.25f, 0.5f, 0.25f);
        const cv::Mat kernel = binomial * binomial.t();
        struct Case {
            int cols, depth, channels;
            std::string variant;
            int streams;
            HostMemory memory;
        };
        // 4099 columns: element-by-element edges of the vector paths everywhere; 4096: vector rows.
        const std::vector<Case> cases = {{4099, CV_8U, 1, "naive", 1, HostMemory::Pageable},
                                         {4099, CV_8U, 1, "separable", 4, HostMemory::Pinned},
                                         {4099, CV_32F, 3, "shared", 2, HostMemory::Pageable},
                                         {4099, CV_32F, 3, "constant", 1, HostMemory::Pinned},
                                         {4096, CV_32F, 1, "shared", 4, HostMemory::Pinned},
                                         {4096, CV_8U, 3, "separable", 2, HostMemory::Pageable},
                                         {4096, CV_8U, 3, "shared", 1, HostMemory::Pinned},
                                         {4096, CV_16U, 4, "separable", 1, HostMemory::Pageable},
                                         {4099, CV_8U, 3, "integer", 4, HostMemory::Pinned},
                                         {4096, CV_8U, 1, "integer", 1, HostMemory::Pageable}};
        uint64_t seed = 5000;
        for (const Case& c : cases) {
            const cv::Mat input = kltest::randomImage(3001, c.cols, c.depth, c.channels, ++seed);
            const Conv2DSpec spec = makeSpec(kernel, BorderMode::Reflect101, c.depth);
            const cv::Mat expected = kltest::conv2dReferenceOnAllThreads(input, spec);
            const cv::Mat gpu = run(input, spec, c.variant, c.streams, c.memory);
            QVERIFY2(kltest::bitwiseEqual(gpu, expected),
                     kltest::msg(describe(input, spec, c.variant) + ": differs from the reference"));
        }
    }

    // The two 1D passes give the 2D result for a (non-dyadic) Gaussian in every border mode.
    void separableEqualsDirect()
    {
        uint64_t seed = 6000;
        for (BorderMode border : kBorders)
            for (int depth : {CV_8U, CV_32F}) {
                kl::Conv2DPresetParams params;
                params.width = params.height = 7;
                params.sigma = 1.7;
                const cv::Mat input = kltest::randomImage(97, 61, depth, 3, ++seed);
                const Conv2DSpec spec = makeSpec(kl::makeConv2DKernel(kl::Conv2DPreset::Gaussian, params), border, depth);
                QVERIFY(isSeparable(spec));
                const cv::Mat separable = run(input, spec, "separable");
                const cv::Mat direct = run(input, spec, "shared");
                const cv::Mat expected = kltest::conv2dReferenceOnAllThreads(input, spec);
                std::string failure = compareWithReference(separable, expected, input, spec);
                QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, "separable") + ": " + failure));
                failure = compareWithReference(direct, expected, input, spec);
                QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, "shared") + ": " + failure));
                if (depth == CV_32F) {
                    const double difference = cv::norm(separable, direct, cv::NORM_INF);
                    QVERIFY2(difference <= kl::kFloatRelTolerance * cv::norm(direct, cv::NORM_INF),
                             kltest::msg(describe(input, spec, "separable") + ": differs from shared"));
                }
            }
    }

    void invalidArguments()
    {
        const cv::Mat input = kltest::randomImage(16, 16, CV_8U, 1, 8);
        Conv2DSpec spec = makeSpec(cv::Mat::ones(4, 3, CV_32F), BorderMode::Reflect101, CV_8U);
        KL_VERIFY_THROWS(kl::InvalidArgument, "kernel", run(input, spec, "shared"));
        spec.kernel = cv::Mat::ones(3, 3, CV_32F);
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant", run(input, spec, "fft"));
        KL_VERIFY_THROWS(kl::InvalidArgument, "streams", run(input, spec, "shared", 17));
        const cv::Mat twoChannels(8, 8, CV_8UC2, cv::Scalar::all(1));
        KL_VERIFY_THROWS(kl::InvalidArgument, "channels", run(twoChannels, spec, "shared"));
    }

    // Any stream count and either host memory give the same bits; halos span several chunks
    // when the strips (16 streams: 64 chunks) are shorter than the kernel.
    void streamsAndHostMemory_data()
    {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("cols");
        QTest::addColumn<int>("kernelSize");
        QTest::addColumn<int>("border");
        QTest::newRow("1021x769 9x9 reflect101") << 769 << 1021 << 9 << int(BorderMode::Reflect101);
        QTest::newRow("150x203 15x15 reflect101") << 203 << 150 << 15 << int(BorderMode::Reflect101);
        QTest::newRow("152x203 15x15 constant") << 203 << 152 << 15 << int(BorderMode::Constant);
        QTest::newRow("150x203 31x31 wrap") << 203 << 150 << 31 << int(BorderMode::Wrap);
        QTest::newRow("150x203 31x31 reflect") << 203 << 150 << 31 << int(BorderMode::Reflect);
        QTest::newRow("150x203 31x31 constant") << 203 << 150 << 31 << int(BorderMode::Constant);
        QTest::newRow("40x70 63x63 replicate") << 70 << 40 << 63 << int(BorderMode::Replicate);
    }

    void streamsAndHostMemory()
    {
        QFETCH(int, rows);
        QFETCH(int, cols);
        QFETCH(int, kernelSize);
        QFETCH(int, border);
        const cv::Mat input = kltest::randomImage(rows, cols, CV_8U, 3, 9000 + kernelSize);
        const Conv2DSpec nonSeparable =
            makeSpec(randomKernel(kernelSize, kernelSize, true, 77), BorderMode(border), CV_8U);
        const Conv2DSpec separable =
            makeSpec(randomSeparableKernel(kernelSize, kernelSize, 78), BorderMode(border), CV_8U);
        for (const std::string& variant : kl::gpu::variants("conv2d")) {
            // u8 3 channels, random taps from 9x9 on; tmaTiles, integerIsExact, integerLanesAreExact and
            // stagedRowsMatchesReference run the others on several streams
            if (variant == "tma" || variant == "integer" || variant == "dp4a" || variant == "dp2a" || variant == "staged-rows")
                continue;
            if (variant == "separable-tiles" && !compiledSize(kernelSize)) continue;
            // separableMmaMatchesReference runs separable-mma's constant border on values u8 holds, and
            // rowsMmaMatchesReference rows-mma on several streams; direct-mma takes kernels up to 9x9
            if (variant == "rows-mma" || (variant == "separable-mma" && !mmaApplies(input, separable))) continue;
            if (variant == "direct-mma" && !directMmaApplies(input, nonSeparable)) continue;
            const bool rankOne = variant == "separable" || variant == "separable-tiles" || variant == "separable-mma";
            const Conv2DSpec& spec = rankOne ? separable : nonSeparable;
            const cv::Mat one = run(input, spec, variant, 1, HostMemory::Pageable);
            if (rows * cols <= 40000) {
                const std::string failure = compareWithReference(one, kltest::conv2dReferenceOnAllThreads(input, spec), input, spec);
                QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, variant) + ": " + failure));
            }
            for (int streams : {1, 2, 4, 16})
                for (HostMemory memory : {HostMemory::Pageable, HostMemory::Pinned}) {
                    const cv::Mat other = run(input, spec, variant, streams, memory);
                    QVERIFY2(kltest::bitwiseEqual(one, other),
                             kltest::msg(describe(input, spec, variant) + ": " + std::to_string(streams) +
                                         " streams, " + kl::gpu::toString(memory) + " memory differ from 1 stream"));
                }
        }
    }

    // endToEnd = false times the kernel alone and still returns the same output.
    void kernelOnlyMode()
    {
        const cv::Mat u16 = kltest::randomImage(301, 257, CV_16U, 4, 31);
        const cv::Mat f32 = kltest::randomImage(301, 257, CV_32F, 1, 33);
        const Conv2DSpec u16Spec = makeSpec(randomKernel(9, 7, true, 32), BorderMode::Wrap, CV_16U);
        const Conv2DSpec f32Spec = makeSpec(randomKernel(5, 5, false, 34), BorderMode::Constant, CV_32F);
        for (const std::string variant : {"naive", "constant", "shared", "tma", "auto"}) {
            const bool tma = variant == "tma";
            if (tma && !tmaApplies(f32, f32Spec)) continue;
            const cv::Mat& input = tma ? f32 : u16;
            const Conv2DSpec& spec = tma ? f32Spec : u16Spec;
            const cv::Mat endToEnd = run(input, spec, variant);
            kl::gpu::RunOptions options;
            options.variant = variant;
            options.endToEnd = false;
            options.repetitions = 3;
            options.warmup = 1;
            GpuReport report;
            const cv::Mat kernelOnly = run(input, spec, options, &report);
            QVERIFY2(kltest::bitwiseEqual(endToEnd, kernelOnly), kltest::msg(describe(input, spec, variant)));
            QVERIFY(report.kernel.medianMs > 0);
            QCOMPARE(report.total.medianMs, 0.0);
            QVERIFY(report.timeline.empty());
        }
    }

    void reportContents()
    {
        const cv::Mat input = kltest::randomImage(509, 383, CV_8U, 3, 41);
        kl::Conv2DPresetParams params;
        const Conv2DSpec gaussian =
            makeSpec(kl::makeConv2DKernel(kl::Conv2DPreset::Gaussian, params), BorderMode::Reflect101, CV_8U);
        const Conv2DSpec sharpen =
            makeSpec(kl::makeConv2DKernel(kl::Conv2DPreset::Sharpen), BorderMode::Reflect101, CV_8U);
        kl::Conv2DPresetParams box7x7;
        box7x7.width = box7x7.height = 7;
        const Conv2DSpec box7 =
            makeSpec(kl::makeConv2DKernel(kl::Conv2DPreset::Box, box7x7), BorderMode::Reflect101, CV_8U);
        for (const auto& [spec, resolved] : {std::pair<Conv2DSpec, std::string>{gaussian, "integer"},
                                             {sharpen, "dp4a"},  // integer taps
                                             {box7, "integer"}}) {  // ones times 1/49
            for (int streams : {1, 2, 4}) {
                kl::gpu::RunOptions options;
                options.streams = streams;
                options.minChunkBytes = 0;
                options.repetitions = 3;
                options.warmup = 1;
                GpuReport report;
                const cv::Mat out = run(input, spec, options, &report);
                QCOMPARE(report.op, std::string("conv2d"));
                QCOMPARE(report.variant, resolved);
                QCOMPARE(report.streams, streams);
                QVERIFY(report.kernel.medianMs > 0);
                QVERIFY(report.total.medianMs > 0);
                const uint64_t bytes = uint64_t(input.total() * input.elemSize());
                QCOMPARE(report.kernelBytes, 2 * bytes);
                QCOMPARE(report.kernelFlops, 2.0 * double(spec.kernel.total()) * double(input.total()) * 3);
                QVERIFY(report.bytesH2D >= bytes);
                QCOMPARE(report.bytesD2H, bytes);

                const int chunks = streams == 1 ? 1 : 4 * streams;
                QCOMPARE(int(report.timeline.size()), 3 * chunks);
                std::vector<std::vector<kl::gpu::TimelineEntry>> byChunk(size_t(chunks), std::vector<kl::gpu::TimelineEntry>(3));
                for (const kl::gpu::TimelineEntry& e : report.timeline) {
                    QVERIFY(e.chunk >= 0 && e.chunk < chunks);
                    QCOMPARE(e.stream, e.chunk % streams);
                    QVERIFY(e.startMs >= 0 && e.startMs <= e.endMs);
                    byChunk[size_t(e.chunk)][size_t(e.stage)] = e;
                }
                for (const auto& stages : byChunk) {
                    QVERIFY(stages[0].stage == kl::gpu::Stage::H2D);
                    QVERIFY(stages[1].stage == kl::gpu::Stage::Kernel);
                    QVERIFY(stages[2].stage == kl::gpu::Stage::D2H);
                    QVERIFY(stages[0].endMs <= stages[1].startMs);
                    QVERIFY(stages[1].endMs <= stages[2].startMs);
                }
                const std::string failure = compareWithReference(out, kltest::conv2dReferenceOnAllThreads(input, spec), input, spec);
                QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, report.variant) + ": " + failure));
            }
        }
    }

    // Every variant once on small images, each code path covered: the target for
    // compute-sanitizer (memcheck, racecheck, initcheck), e.g. `tst_conv2d_gpu sanitizerSmoke`.
    void sanitizerSmoke()
    {
        struct Case {
            int rows, cols, depth, channels, kernelSize;
            BorderMode border;
            int streams;
        };
        // Compiled sizes on element-wise rows (29 and 35 columns) and vector rows (64, 36 and 48
        // columns; 4 channels always), 15x15 on 4 channels (69 KB of shared memory per block) and
        // 63x63 (88 KB: both past 48 KB, the opt-in path); 31 and 63 run the any-size tiles and the
        // two separable passes; one u16 channel runs rows-mma, on bands inside the row and at its ends.
        const std::vector<Case> cases = {{37, 29, CV_8U, 3, 5, BorderMode::Constant, 2},
                                         {37, 29, CV_32F, 1, 5, BorderMode::Reflect101, 1},
                                         {34, 64, CV_8U, 3, 5, BorderMode::Reflect101, 1},
                                         {40, 36, CV_32F, 1, 3, BorderMode::Wrap, 2},
                                         {19, 35, CV_32F, 3, 7, BorderMode::Constant, 1},
                                         {50, 48, CV_8U, 1, 9, BorderMode::Replicate, 2},
                                         {5, 3, CV_16U, 4, 9, BorderMode::Wrap, 2},
                                         {21, 19, CV_16U, 4, 15, BorderMode::Reflect, 1},
                                         {40, 35, CV_8U, 4, 31, BorderMode::Replicate, 2},
                                         {11, 9, CV_16U, 4, 63, BorderMode::Reflect, 1},
                                         {150, 531, CV_16U, 1, 15, BorderMode::Wrap, 2},
                                         {23, 300, CV_16U, 1, 9, BorderMode::Reflect101, 1}};
        uint64_t seed = 12000;
        for (const Case& c : cases) {
            const cv::Mat input = kltest::randomImage(c.rows, c.cols, c.depth, c.channels, ++seed);
            const Conv2DSpec spec =
                makeSpec(randomSeparableKernel(c.kernelSize, c.kernelSize, seed), c.border, c.depth);
            const cv::Mat expected = kltest::conv2dReferenceOnAllThreads(input, spec);
            std::vector<std::string> names = kl::gpu::variants("conv2d");
            names.push_back("auto");
            for (const std::string& variant : names) {
                if (!applies(variant, input, spec)) continue;
                const cv::Mat gpu = run(input, spec, variant, c.streams, HostMemory::Pinned);
                const std::string failure = compareWithReference(gpu, expected, input, spec);
                QVERIFY2(failure.empty(), kltest::msg(describe(input, spec, variant) + ": " + failure));
            }
            const Conv2DSpec dyadic = makeSpec(dyadicKernel(c.kernelSize, seed), c.border, c.depth);
            if (integerApplies(input, dyadic))
                QVERIFY2(kltest::bitwiseEqual(run(input, dyadic, "integer", c.streams, HostMemory::Pinned),
                                      kltest::conv2dReferenceOnAllThreads(input, dyadic)),
                         kltest::msg(describe(input, dyadic, "integer")));
        }
    }

    // The benchmark (KL_BENCH=1 only; asserts nothing): kernel-only medians of every variant on
    // 8192 x 8192 f32 1 channel (3x3, 5x5, 9x9, 15x15, random taps and Gaussians) and u8 3 channels
    // 5x5, against the copy bandwidth measured now and the fp32 FMA peak (SMs x 128 lanes x 2 x
    // clock); the 4096 x 4096 u8 Gaussians of docs/performance.md's before-and-after table;
    // end-to-end pinned f32 5x5 on 1 and 4 streams. E.g. `KL_BENCH=1 tst_conv2d_gpu throughput`;
    // KL_BENCH_FILTER=TEXT keeps the kernel-only cases whose label contains TEXT.
    void throughput()
    {
        if (qEnvironmentVariableIntValue("KL_BENCH") != 1) QSKIP("set KL_BENCH=1 to run the benchmark");
        const kl::gpu::DeviceInfo& device = engine_->device();
        const double copyGBs = engine_->measureCopyBandwidthGBs();
        const double peakGFlops = device.multiprocessors * 128.0 * 2.0 * device.smClockKHz * 1e-6;
        const kl::gpu::Engine::TransferRates pinned = engine_->measureTransferGBs(HostMemory::Pinned);
        std::printf("%s: copy %.0f GB/s (read + write), fp32 FMA peak %.1f TFLOP/s, pinned H2D %.1f GB/s, "
                    "D2H %.1f GB/s\n",
                    device.name.c_str(), copyGBs, peakGFlops / 1000, pinned.h2dGBs, pinned.d2hGBs);
        const auto gaussian = [](int size) {
            kl::Conv2DPresetParams params;
            params.width = params.height = size;
            return kl::makeConv2DKernel(kl::Conv2DPreset::Gaussian, params);
        };
        const std::string filter = qEnvironmentVariable("KL_BENCH_FILTER").toStdString();
        const auto kernelOnly = [&](const cv::Mat& input, const cv::Mat& kernel, const std::string& label,
                                    const std::vector<std::string>& variants) {
            if (label.find(filter) == std::string::npos) return;
            const Conv2DSpec spec = makeSpec(kernel, BorderMode::Reflect101, input.depth());
            for (const std::string& variant : variants) {
                if (!kl::gpu::whyNotApplicable(variant, input, spec, engine_->device()).empty()) continue;
                kl::gpu::RunOptions options;
                options.variant = variant;
                options.endToEnd = false;
                options.warmup = 1;
                options.repetitions = variant == "naive" || variant == "constant" ? 3 : 10;
                GpuReport report;
                run(input, spec, options, &report);
                const double gbs = report.kernelGBs(), gflops = report.kernelGFlops();
                std::printf("  %-34s %-9s -> %-9s %9.3f ms %6.0f GB/s %5.1f%% copy %8.0f GFLOP/s %5.1f%% peak\n",
                            label.c_str(), variant.c_str(), report.variant.c_str(), report.kernel.medianMs, gbs,
                            100 * gbs / copyGBs, gflops, 100 * gflops / peakGFlops);
            }
        };
        const std::vector<std::string> all = {"naive", "constant", "shared", "separable", "integer", "auto"};
        const std::vector<std::string> direct = {"naive", "constant", "shared", "tma", "auto"};

        std::printf("kernel only, 8192 x 8192, reflect101:\n");
        const cv::Mat f32 = kltest::randomImage(8192, 8192, CV_32F, 1, 1);
        for (int k : {3, 5, 9, 15}) {
            const std::string size = std::to_string(k) + "x" + std::to_string(k);
            kernelOnly(f32, randomKernel(k, k, false, uint64_t(k)), "f32 1ch " + size + " random", direct);
            kernelOnly(f32, gaussian(k), "f32 1ch " + size + " gaussian", {"shared", "tma", "separable", "auto"});
        }
        const cv::Mat u8 = kltest::randomImage(8192, 8192, CV_8U, 3, 2);
        kernelOnly(u8, gaussian(5), "u8 3ch 5x5 gaussian", all);
        kernelOnly(u8, gaussian(3), "u8 3ch 3x3 gaussian", {"shared", "separable", "integer", "auto"});
        kernelOnly(u8, randomKernel(5, 5, true, 5), "u8 3ch 5x5 random", {"shared", "auto"});
        kl::Conv2DPresetParams sigma13;
        sigma13.sigma = 1.3;
        kernelOnly(u8, kl::makeConv2DKernel(kl::Conv2DPreset::Gaussian, sigma13), "u8 3ch 5x5 gaussian sigma 1.3",
                   {"shared", "separable", "auto"});
        const cv::Mat u8Gray = kltest::randomImage(8192, 8192, CV_8U, 1, 4), u8Rgba = kltest::randomImage(8192, 8192, CV_8U, 4, 5);
        for (int k : {3, 5}) {
            const std::string size = std::to_string(k) + "x" + std::to_string(k);
            kernelOnly(u8Gray, gaussian(k), "u8 1ch " + size + " gaussian", {"shared", "separable", "integer", "auto"});
            kernelOnly(u8Rgba, gaussian(k), "u8 4ch " + size + " gaussian", {"shared", "separable", "integer", "auto"});
        }

        std::printf("kernel only, 4096 x 4096 u8, Gaussians (docs/performance.md's before-and-after cases):\n");
        for (int channels : {1, 4}) {
            const cv::Mat input = kltest::randomImage(4096, 4096, CV_8U, channels, 3);
            for (int k : channels == 1 ? std::vector<int>{3, 5, 15, 63} : std::vector<int>{15, 63})
                kernelOnly(input, gaussian(k),
                           "u8 " + std::to_string(channels) + "ch " + std::to_string(k) + "x" + std::to_string(k), all);
        }

        std::printf("end to end, pinned, 8192 x 8192 f32 5x5 (kernel/h2d/d2h: sums over chunks):\n");
        for (const auto& [kernel, label] : {std::pair<cv::Mat, std::string>{gaussian(5), "gaussian"},
                                            {randomKernel(5, 5, false, 6), "random"}}) {
            double oneStream = 0;
            for (int streams : {1, 4}) {
                kl::gpu::RunOptions options;
                options.streams = streams;
                options.minChunkBytes = 0;
                options.memory = HostMemory::Pinned;
                options.warmup = 1;
                options.repetitions = 5;
                GpuReport report;
                run(f32, makeSpec(kernel, BorderMode::Reflect101, CV_32F), options, &report);
                if (streams == 1) oneStream = report.total.medianMs;
                std::printf("  %-9s %-9s %d stream(s): total %7.2f ms (%.2fx), h2d %6.2f, kernel %6.2f, d2h %6.2f ms\n",
                            label.c_str(), report.variant.c_str(), streams, report.total.medianMs,
                            oneStream / report.total.medianMs, report.h2d.medianMs, report.kernel.medianMs,
                            report.d2h.medianMs);
            }
        }
        std::fflush(stdout);
    }
};

QTEST_GUILESS_MAIN(TestConv2dGpu)
#include "tst_conv2d_gpu.moc"
