// The GPU engine itself: device discovery, bandwidth probes, the run report, out-of-memory
// (real, and under KERNELLAB_DEVICE_MEMORY_LIMIT) reported as kl::OutOfMemory naming the
// buffer with the engine still usable after it, and invalid run options rejected with
// kl::InvalidArgument naming the field.
#include "kernellab/error.hpp"
#include "kernellab/histogram.hpp"
#include "kernellab/gpu/engine.hpp"
#include "kernellab/transpose.hpp"
#include "gpu_skip.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>

#include <QtTest>

#include <memory>
#include <string>
#include <tuple>
#include <utility>

using kl::gpu::Engine;
using kl::gpu::HostMemory;
using kl::gpu::RunOptions;

class TestEngineGpu : public QObject {
    Q_OBJECT

    std::unique_ptr<Engine> engine_;

    /// A small transpose through the engine must still match the reference.
    void expectEngineWorks()
    {
        const cv::Mat input = kltest::randomImage(61, 97, CV_8U, 3, 1);
        cv::Mat got;
        RunOptions options;
        options.repetitions = 1;
        engine_->transpose(input, options, got);
        QVERIFY(kltest::bitwiseEqual(got, kl::transposeReference(input)));
    }

private slots:
    void initTestCase()
    {
        KL_SKIP_WITHOUT_GPU();
        engine_ = std::make_unique<Engine>();
    }

    void devices()
    {
        QVERIFY(kl::gpu::gpuStatus().available);
        const auto devices = kl::gpu::listDevices();
        QVERIFY(!devices.empty());
        for (const kl::gpu::DeviceInfo& d : devices) {
            QVERIFY(!d.name.empty());
            QVERIFY(d.computeMajor >= 7);
            QVERIFY(d.multiprocessors > 0);
            QVERIFY(d.globalMemoryBytes > 0);
            QVERIFY(d.l2CacheBytes > 0);
            QVERIFY(d.memoryBusWidthBits > 0);
            QVERIFY(d.theoreticalBandwidthGBs > 0);
            QVERIFY(d.driverVersion > 0 && d.runtimeVersion > 0 && d.cufftVersion > 0);
            qInfo("%s: sm_%d%d, %d SMs, %.1f GiB, L2 %.0f MiB, %.0f GB/s theoretical", d.name.c_str(), d.computeMajor,
                  d.computeMinor, d.multiprocessors, d.globalMemoryBytes / 1073741824.0, d.l2CacheBytes / 1048576.0,
                  d.theoreticalBandwidthGBs);
        }
        QCOMPARE(engine_->device().name, devices[0].name);
        QVERIFY_THROWS_EXCEPTION(kl::InvalidArgument, Engine{int(devices.size())});
    }

    void bandwidth()
    {
        const double copy = engine_->measureCopyBandwidthGBs();
        qInfo("device-to-device copy: %.0f GB/s", copy);
        QVERIFY2(copy > 100, kltest::msg(std::to_string(copy) + " GB/s"));
        for (HostMemory memory : kl::gpu::kHostMemories) {
            const Engine::TransferRates rates = engine_->measureTransferGBs(memory);
            qInfo("%s: h2d %.1f GB/s, d2h %.1f GB/s", kl::gpu::toString(memory).c_str(), rates.h2dGBs, rates.d2hGBs);
            QVERIFY(rates.h2dGBs > 1);
            QVERIFY(rates.d2hGBs > 1);
        }
    }

    void report()
    {
        const cv::Mat input = kltest::randomImage(1021, 769, CV_32F, 3, 2);
        const uint64_t bytes = uint64_t(input.total() * input.elemSize());
        RunOptions options;
        options.streams = 4;
        options.minChunkBytes = 0;  // 4 chunks per stream although the input is small
        options.memory = HostMemory::Pinned;
        options.repetitions = 3;
        cv::Mat got;
        const kl::gpu::GpuReport r = engine_->transpose(input, options, got);
        QCOMPARE(r.op, std::string("transpose"));
        QCOMPARE(r.variant, std::string("optimized"));
        QCOMPARE(r.device, engine_->device().name);
        QCOMPARE(r.streams, 4);
        QVERIFY(r.memory == HostMemory::Pinned);
        QCOMPARE(r.bytesH2D, bytes);
        QCOMPARE(r.bytesD2H, bytes);
        QCOMPARE(r.kernelBytes, 2 * bytes);
        QCOMPARE(r.total.repetitions, 3);
        QVERIFY(r.h2d.medianMs > 0 && r.kernel.medianMs > 0 && r.d2h.medianMs > 0);
        QVERIFY(r.total.minMs <= r.total.medianMs && r.total.medianMs <= r.total.maxMs);
        QCOMPARE(r.chunks, 16);
        QCOMPARE(r.chunking, std::string("4 per stream"));
        QVERIFY(r.graph);  // pinned, end to end: one graph launch per repetition
        QVERIFY2(r.launch.rfind("graph, ", 0) == 0, kltest::msg(r.launch));
        QCOMPARE(r.timeline.size(), size_t(16 * 3));  // 3 stages each
        for (const kl::gpu::TimelineEntry& t : r.timeline) {
            QVERIFY(t.stream >= 0 && t.stream < 4);
            QVERIFY(t.startMs >= 0 && t.startMs <= t.endMs);
        }
        QVERIFY(r.kernelGBs() > 0 && r.endToEndGBs() > 0);
        QCOMPARE(r.kernelGFlops(), 0.0);
    }

    void outOfMemoryIsReportedAndRecoverable()
    {
        KL_VERIFY_THROWS(kl::OutOfMemory, "out of memory", engine_->measureCopyBandwidthGBs(1ull << 50));
        expectEngineWorks();
        engine_->releaseCache();
        expectEngineWorks();
    }

    void deviceMemoryLimitNamesTheBuffer()
    {
        qputenv(kl::gpu::kDeviceMemoryLimitVariable, "4M");
        Engine limited;
        qunsetenv(kl::gpu::kDeviceMemoryLimitVariable);
        QCOMPARE(limited.deviceMemory().limitBytes, uint64_t(4) << 20);
        RunOptions options;
        options.repetitions = 1;
        // 1031 x 1031 u8 x3 in and out: about 3 MiB each (the output's rows padded to 1152 pixels), so
        // the input fits and the output does not.
        const cv::Mat large = kltest::randomImage(1031, 1031, CV_8U, 3, 2);
        cv::Mat got;
        KL_VERIFY_THROWS(kl::OutOfMemory, "GPU out of memory: the device buffer 'transpose.out' needs 3.4 MiB, other "
                                          "buffers hold 3.0 MiB and KERNELLAB_DEVICE_MEMORY_LIMIT allows 4.0 MiB",
                         limited.transpose(large, options, got));
        QVERIFY(limited.deviceMemory().heldBytes <= uint64_t(4) << 20);
        // What fits still runs, on the same engine.
        const cv::Mat small = kltest::randomImage(257, 263, CV_8U, 3, 3);
        limited.transpose(small, options, got);
        QVERIFY(kltest::bitwiseEqual(got, kl::transposeReference(small)));
        const Engine::DeviceMemory memory = limited.deviceMemory();
        QVERIFY(memory.heldBytes > 0 && memory.heldBytes <= memory.limitBytes);
        QVERIFY(memory.freeBytes > 0 && memory.freeBytes <= memory.totalBytes);

        qputenv(kl::gpu::kDeviceMemoryLimitVariable, "lots");
        KL_VERIFY_THROWS(kl::InvalidArgument, "KERNELLAB_DEVICE_MEMORY_LIMIT: 'lots' is not a size", Engine());
        qunsetenv(kl::gpu::kDeviceMemoryLimitVariable);
        QCOMPARE(engine_->deviceMemory().limitBytes, uint64_t(0));
    }

    void invalidOptions_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<int>("streams");
        QTest::addColumn<int>("repetitions");
        QTest::addColumn<int>("warmup");
        QTest::addColumn<QString>("variant");
        QTest::newRow("streams 0") << "streams" << 0 << 1 << 0 << "auto";
        QTest::newRow("streams 17") << "streams" << 17 << 1 << 0 << "auto";
        QTest::newRow("repetitions 0") << "repetitions" << 1 << 0 << 0 << "auto";
        QTest::newRow("warmup -1") << "warmup" << 1 << 1 << -1 << "auto";
        QTest::newRow("unknown variant") << "variant" << 1 << 1 << 0 << "fastest";
    }

    void invalidOptions()
    {
        QFETCH(QString, field);
        QFETCH(int, streams);
        QFETCH(int, repetitions);
        QFETCH(int, warmup);
        QFETCH(QString, variant);
        RunOptions options;
        options.streams = streams;
        options.repetitions = repetitions;
        options.warmup = warmup;
        options.variant = variant.toStdString();
        const cv::Mat input = kltest::randomImage(8, 8, CV_8U, 3, 3);
        cv::Mat transposed;
        kl::HistogramResult histogram;
        KL_VERIFY_THROWS(kl::InvalidArgument, field.toStdString(), engine_->transpose(input, options, transposed));
        KL_VERIFY_THROWS(kl::InvalidArgument, field.toStdString(), engine_->histogram(input, {}, options, histogram));
        expectEngineWorks();
    }

    // End to end on several streams, the chunk count follows the data: no chunk under
    // minChunkBytes of input plus output, at most 4 per stream; the output does not change.
    void chunksFollowTheData()
    {
        const cv::Mat small = kltest::randomImage(511, 509, CV_8U, 1, 3);    // 0.5 MB in and out
        const cv::Mat medium = kltest::randomImage(1021, 1031, CV_32F, 1, 4);  // 8.4 MB
        const cv::Mat large = kltest::randomImage(2100, 2099, CV_32F, 1, 5);   // 35.3 MB
        kl::Conv2DSpec box;
        box.kernel = cv::Mat(3, 3, CV_32F, cv::Scalar(1.0 / 9));
        RunOptions options;
        options.streams = 4;
        options.repetitions = 1;
        // The report, and whether the output is the one-stream run's.
        const auto chunks = [&](const cv::Mat& input) {
            cv::Mat got, oneStream;
            const kl::gpu::GpuReport r = engine_->conv2d(input, box, options, got);
            RunOptions single = options;
            single.streams = 1;
            engine_->conv2d(input, box, single, oneStream);
            return std::make_pair(r, kltest::bitwiseEqual(got, oneStream));
        };
        auto [r, correct] = chunks(small);
        QVERIFY(correct);
        QCOMPARE(r.chunks, 1);
        QVERIFY2(r.chunking.find("chunks of at least 4.0 MiB") != std::string::npos, r.chunking.c_str());
        QCOMPARE(r.timeline.size(), size_t(3));
        for (const auto& [input, expected] : {std::make_pair(medium, 2), std::make_pair(large, 8),
                                              std::make_pair(kltest::randomImage(4099, 4093, CV_32F, 1, 6), 16)}) {
            std::tie(r, correct) = chunks(input);
            QVERIFY(correct);
            QCOMPARE(r.chunks, expected);
        }
        // Transpose's own ceiling: strips of at least 8 KiB of each output row (4099 rows of f32: 2).
        const cv::Mat tall = kltest::randomImage(4099, 4093, CV_32F, 1, 8);
        cv::Mat transposed;
        r = engine_->transpose(tall, options, transposed);
        QVERIFY(kltest::bitwiseEqual(transposed, kl::transposeReference(tall)));
        QCOMPARE(r.chunks, 2);
        QVERIFY2(r.chunking.find("at most 2: strips of at least 8 KiB") != std::string::npos, r.chunking.c_str());
        // The histogram's own floor (16 MiB: each launch zeroes and merges a grid's histograms);
        // minChunkBytes 0 still asks for 4 per stream (tests of chunk boundaries).
        const cv::Mat u8 = kltest::randomImage(4099, 4097, CV_8U, 1, 7);  // 16.0 MiB
        kl::HistogramResult histogram;
        r = engine_->histogram(u8, {}, options, histogram);
        QCOMPARE(r.chunks, 1);
        QVERIFY2(r.chunking.find("histogram's fixed cost per launch") != std::string::npos, r.chunking.c_str());
        options.minChunkBytes = 0;
        QCOMPARE(engine_->histogram(u8, {}, options, histogram).chunks, 16);
        options.minChunkBytes = RunOptions{}.minChunkBytes;
        options.streams = 1;
        QCOMPARE(chunks(large).first.chunking, std::string("one stream: one chunk"));
        options.streams = 4;
        options.endToEnd = false;
        QCOMPARE(chunks(large).first.chunks, 1);
        QCOMPARE(chunks(large).first.launch, std::string("streams: kernel-only timing queues each kernel behind a gate"));
    }

    void variantLists()
    {
        QCOMPARE(kl::gpu::variants("transpose"), (std::vector<std::string>{"naive", "tiled", "tiled-padded", "optimized"}));
        QCOMPARE(kl::gpu::variants("histogram"), (std::vector<std::string>{"global-atomics", "shared", "optimized", "tma"}));
        QVERIFY_THROWS_EXCEPTION(kl::InvalidArgument, kl::gpu::variants("blur"));
    }
};

QTEST_GUILESS_MAIN(TestEngineGpu)
#include "tst_engine_gpu.moc"
