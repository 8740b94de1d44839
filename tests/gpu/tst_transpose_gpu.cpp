// GPU transpose against core's reference, bit for bit: every variant, depth and channel
// count, sizes from 1x1 up, images tall enough that the grid has to stride over rows
// (gridDim.y is capped at 65535), any stream count and host memory, kernel-only mode,
// and the signal interleaving built on it.
#include "kernellab/error.hpp"
#include "kernellab/gpu/engine.hpp"
#include "kernellab/image.hpp"
#include "kernellab/signal.hpp"
#include "kernellab/transpose.hpp"
#include "gpu_skip.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>

#include <QtTest>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using kl::gpu::HostMemory;
using kl::gpu::RunOptions;

namespace {

const std::vector<std::string> kVariants = {"naive", "tiled", "tiled-padded", "optimized"};
const std::vector<int>& kDepths = kltest::kAllDepths;
const std::vector<int>& kChannels = kltest::kAllChannelCounts;
/// 1x1, a single row, a single column, sizes that are not multiples of any tile.
const std::vector<cv::Size> kSizes = {{1, 1}, {4097, 1}, {1, 4097}, {97, 61}, {1021, 769}};

RunOptions once(const std::string& variant)
{
    RunOptions options;
    options.variant = variant;
    options.repetitions = 1;
    options.warmup = 0;
    return options;
}

} // namespace

class TestTransposeGpu : public QObject {
    Q_OBJECT

    std::unique_ptr<kl::gpu::Engine> engine_;

    /// Every variant with `options` (variant overridden) must give exactly the reference.
    void expectEveryVariant(const cv::Mat& input, RunOptions options = once("auto"))
    {
        const cv::Mat want = kl::transposeReference(input);
        for (const std::string& variant : kVariants) {
            options.variant = variant;
            cv::Mat got;
            engine_->transpose(input, options, got);
            QVERIFY2(kltest::bitwiseEqual(got, want),
                     kltest::msg(kl::describeImage(input) + ", " + variant + ", " + std::to_string(options.streams) +
                                 " streams, " + kl::gpu::toString(options.memory) +
                                 (options.endToEnd ? "" : ", kernel only") + ": differs from the reference"));
        }
    }

private slots:
    void initTestCase()
    {
        KL_SKIP_WITHOUT_GPU();
        engine_ = std::make_unique<kl::gpu::Engine>();
    }

    void exactOnEveryShape_data() { kltest::addDepthChannelRows(); }

    void exactOnEveryShape()
    {
        QFETCH(int, depth);
        QFETCH(int, channels);
        uint64_t seed = 1;
        for (const cv::Size& size : kSizes) {
            expectEveryVariant(kltest::randomImage(size.height, size.width, depth, channels, seed++));
            if (QTest::currentTestFailed()) return;
        }
    }

    /// Small images of every format through every variant, one and several chunks: the
    /// sweep the sanitizer runs use.
    void smallEveryVariant()
    {
        for (int depth : kDepths)
            for (int channels : kChannels)
                for (int streams : {1, 4}) {
                    RunOptions options = once("auto");
                    options.streams = streams;
                    options.minChunkBytes = 0;  // 4 chunks per stream on small inputs too: chunk boundaries
                    expectEveryVariant(kltest::randomImage(97, 61, depth, channels, 12), options);
                    if (QTest::currentTestFailed()) return;
                }
    }

    void exactOnLarge()
    {
        expectEveryVariant(kltest::randomImage(3001, 4099, CV_8U, 1, 1));
        expectEveryVariant(kltest::randomImage(3001, 4099, CV_16U, 3, 2));
        expectEveryVariant(kltest::randomImage(3001, 4099, CV_32F, 4, 3));
        // u8 x3 with 4-byte aligned rows (whole chunks) and without (funnel-shifted words).
        expectEveryVariant(kltest::randomImage(3001, 4096, CV_8U, 3, 4));
        expectEveryVariant(kltest::randomImage(3001, 4099, CV_8U, 3, 5));
        // u16 x3 with every row 4-byte aligned (the 4099-wide image above alternates).
        expectEveryVariant(kltest::randomImage(3001, 4096, CV_16U, 3, 6));
    }

    /// Row blocks beyond gridDim.y's 65535: 8-row blocks (naive) past 524280 rows, 32-row
    /// tiles (tiled; optimized where rows are not 4-byte aligned) past 2097120, 64-row tiles
    /// (optimized, and its u16 x3 tiles) past 4194240.
    void tallAndWide()
    {
        expectEveryVariant(kltest::randomImage(4200007, 2, CV_8U, 1, 4));
        expectEveryVariant(kltest::randomImage(600001, 2, CV_32F, 3, 5));
        expectEveryVariant(kltest::randomImage(2, 600001, CV_16U, 1, 6));
        expectEveryVariant(kltest::randomImage(2100001, 4, CV_8U, 3, 7));
        expectEveryVariant(kltest::randomImage(4200007, 2, CV_16U, 3, 8));
    }

    /// Several strips over images whose input rows take every 4-byte misalignment (odd
    /// widths) and whose output rows are padded on the device (odd heights; 1283 rows are
    /// padded to whole 128-byte lines, 517 and 1021 rows of u8 to 16 bytes): optimized reads
    /// such rows as funnel-shifted words (u16 x3: copied from the word boundary before them), and
    /// full and edge tiles meet inside strips.
    void misalignedStrips()
    {
        for (const auto& [depth, channels] : {std::pair{CV_8U, 1}, std::pair{CV_16U, 1}, std::pair{CV_8U, 3},
                                            std::pair{CV_16U, 3}})
            for (const cv::Size& size : {cv::Size(769, 1021), cv::Size(1031, 517), cv::Size(517, 1283)})
                for (int streams : {3, 7}) {
                    RunOptions options = once("auto");
                    options.streams = streams;
                    options.minChunkBytes = 0;
                    expectEveryVariant(kltest::randomImage(size.height, size.width, depth, channels, 13), options);
                    if (QTest::currentTestFailed()) return;
                }
    }

    /// A view into a larger image (not continuous).
    void roi()
    {
        const cv::Mat big = kltest::randomImage(300, 200, CV_16U, 3, 7);
        expectEveryVariant(big(cv::Rect(3, 5, 61, 97)));
    }

    void sameForAnyStreamsAndMemory()
    {
        const cv::Mat inputs[] = {kltest::randomImage(1021, 769, CV_16U, 3, 8),
                                  kltest::randomImage(5000, 3, CV_32F, 4, 9),
                                  kltest::randomImage(5, 4097, CV_8U, 1, 10)};
        for (const cv::Mat& input : inputs)
            for (int streams : {1, 2, 4, 16})
                for (HostMemory memory : {HostMemory::Pageable, HostMemory::Pinned}) {
                    RunOptions options = once("auto");
                    options.streams = streams;
                    options.minChunkBytes = 0;
                    options.memory = memory;
                    options.repetitions = 2;
                    expectEveryVariant(input, options);
                    if (QTest::currentTestFailed()) return;
                }
    }

    void kernelOnly()
    {
        const cv::Mat input = kltest::randomImage(769, 1021, CV_32F, 3, 11);
        RunOptions options = once("auto");
        options.endToEnd = false;
        options.repetitions = 3;
        options.warmup = 1;
        expectEveryVariant(input, options);

        cv::Mat got;
        const kl::gpu::GpuReport report = engine_->transpose(input, options, got);
        QCOMPARE(report.variant, std::string("optimized"));
        QCOMPARE(report.kernel.repetitions, 3);
        QVERIFY(report.kernel.medianMs > 0);
        QCOMPARE(report.total.medianMs, 0.0);
        QCOMPARE(report.kernelBytes, 2 * uint64_t(input.total() * input.elemSize()));
    }

    void variantNames()
    {
        QCOMPARE(kl::gpu::variants("transpose"), kVariants);
        cv::Mat got;
        KL_VERIFY_THROWS(kl::InvalidArgument, "variant",
                         engine_->transpose(kltest::randomImage(4, 4, CV_8U, 1, 1), once("fastest"), got));
    }

    void signalInterleaving()
    {
        for (int channels : {1, 2, 5}) {
            const kl::Signal signal = kltest::randomSignal(10007, channels, 48000, uint64_t(channels));
            const std::vector<float> want = kl::toInterleaved(signal);
            for (const std::string& variant : kVariants)
                for (int streams : {1, 4}) {
                    RunOptions options = once(variant);
                    options.streams = streams;
                    options.minChunkBytes = 0;
                    options.memory = streams == 1 ? HostMemory::Pageable : HostMemory::Pinned;
                    std::vector<float> got;
                    engine_->transposeSignal(signal, options, got);
                    QVERIFY2(got.size() == want.size() &&
                                 std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0,
                             kltest::msg(kl::describeSignal(signal) + ", " + variant + ", " + std::to_string(streams) +
                                         " streams: differs from toInterleaved"));
                }
        }
    }

    /// Kernel-only rates at 8192x8192, at an odd size and (u8) at 16384x16384, and the fixed
    /// cost of a timed kernel stage (printed, not checked: the README and docs/performance.md
    /// quote them); every result is also checked against the reference.
    void kernelThroughput()
    {
        const double copyGBs = engine_->measureCopyBandwidthGBs();
        qInfo("device-to-device copy: %.0f GB/s", copyGBs);
        RunOptions options;
        options.endToEnd = false;
        options.repetitions = 10;
        {
            // The fixed cost of a timed kernel stage (launch and events) on the smallest input.
            options.variant = "optimized";
            cv::Mat got;
            const kl::gpu::GpuReport report = engine_->transpose(kltest::randomImage(1, 1, CV_8U, 1, 1), options, got);
            qInfo("transpose optimized u8 1x1: %.4f ms", report.kernel.medianMs);
        }
        for (int depth : {CV_8U, CV_16U, CV_32F})
            for (const cv::Size& size : {cv::Size(8192, 8192), cv::Size(8179, 8191), cv::Size(16384, 16384)}) {
                if (size.width == 16384 && depth != CV_8U) continue;
                const cv::Mat input = kltest::randomImage(size.height, size.width, depth, 1, 3);
                const cv::Mat want = kl::transposeReference(input);
                for (const std::string& variant : kVariants) {
                    options.variant = variant;
                    cv::Mat got;
                    const kl::gpu::GpuReport report = engine_->transpose(input, options, got);
                    QVERIFY2(kltest::bitwiseEqual(got, want), kltest::msg(kl::describeImage(input) + ", " + variant));
                    qInfo("transpose %-12s %-3s %dx%d: %.4f ms, %.0f GB/s (%.0f%% of copy)", variant.c_str(),
                          kl::depthName(depth).c_str(), input.rows, input.cols, report.kernel.medianMs,
                          report.kernelGBs(), 100 * report.kernelGBs() / copyGBs);
                }
            }
    }
};

QTEST_GUILESS_MAIN(TestTransposeGpu)
#include "tst_transpose_gpu.moc"
