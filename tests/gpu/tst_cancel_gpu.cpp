// Cancelling GPU runs (RunOptions::cancel): a run whose flag is already set throws kl::Cancelled
// before any work, for every op and both timing modes; a flag set from another thread during a
// long 8192x8192 f32 conv2d 15x15 stops it within a bound, and the next run on the same engine
// gives the same output as before the cancel. cancelDuringLongRun prints "cancel latency: X ms"
// per timing mode (from the flag being set to kl::Cancelled reaching the caller), the number
// issue #15 asks to keep under 0.2 s on the H200; pinned runs are cancelled between graph replays.
#include "kernellab/error.hpp"
#include "kernellab/gpu/engine.hpp"
#include "kernellab/transpose.hpp"
#include "gpu_skip.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>

#include <QtTest>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using kl::gpu::Engine;
using kl::gpu::RunOptions;
using Clock = std::chrono::steady_clock;

namespace {

/// Generous against a scheduler hiccup on a shared host, far below an uncancelled run (seconds).
constexpr double kLatencyBoundMs = 1000;

double msSince(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

/// Sets a cancel flag from another thread after `delay`, and remembers when it did.
class DelayedCancel {
public:
    explicit DelayedCancel(std::chrono::milliseconds delay)
        : thread_([this, delay] {
              std::this_thread::sleep_for(delay);
              setAt_ = Clock::now();
              flag_.store(true);
          })
    {
    }
    ~DelayedCancel() { join(); }
    DelayedCancel(const DelayedCancel&) = delete;
    DelayedCancel& operator=(const DelayedCancel&) = delete;

    [[nodiscard]] const std::atomic<bool>* flag() const { return &flag_; }
    /// When the flag was set (waits for the thread, so the time is complete).
    [[nodiscard]] Clock::time_point setAt()
    {
        join();
        return setAt_;
    }

private:
    void join()
    {
        if (thread_.joinable()) thread_.join();
    }

    std::atomic<bool> flag_{false};
    Clock::time_point setAt_;
    std::thread thread_;  // last: it starts once the members it uses exist
};

kl::Conv2DSpec box15()
{
    kl::Conv2DSpec spec;
    spec.kernel = cv::Mat(15, 15, CV_32F, cv::Scalar(1.0 / 225));
    return spec;
}

} // namespace

class TestCancelGpu : public QObject {
    Q_OBJECT

    std::unique_ptr<Engine> engine_;
    cv::Mat large_;  ///< 8192x8192 f32: one end-to-end repetition of the 15x15 conv2d takes tens of ms

private slots:
    void initTestCase()
    {
        KL_SKIP_WITHOUT_GPU();
        engine_ = std::make_unique<Engine>();
        large_ = kltest::randomImage(8192, 8192, CV_32F, 1, 15);
    }

    void alreadyCancelledThrowsAtOnce_data()
    {
        QTest::addColumn<bool>("endToEnd");
        QTest::newRow("end to end") << true;
        QTest::newRow("kernel only") << false;
    }

    void alreadyCancelledThrowsAtOnce()
    {
        QFETCH(bool, endToEnd);
        const std::atomic<bool> cancelled{true};
        RunOptions options;
        options.endToEnd = endToEnd;
        options.cancel = &cancelled;
        const cv::Mat image = kltest::randomImage(1021, 769, CV_8U, 3, 1);
        const kl::Signal signal = kltest::randomSignal(100000, 2, 48000, 2);
        kl::Conv1DSpec conv1d;
        conv1d.taps.assign(101, 1.0f / 101);
        cv::Mat imageOut;
        kl::Signal signalOut;
        kl::HistogramResult histogram;
        std::vector<float> interleaved;
        const Clock::time_point start = Clock::now();
        QVERIFY_THROWS_EXCEPTION(kl::Cancelled, engine_->conv2d(image, box15(), options, imageOut));
        QVERIFY_THROWS_EXCEPTION(kl::Cancelled, engine_->conv1d(signal, conv1d, options, signalOut));
        QVERIFY_THROWS_EXCEPTION(kl::Cancelled, engine_->histogram(image, {}, options, histogram));
        QVERIFY_THROWS_EXCEPTION(kl::Cancelled, engine_->transpose(image, options, imageOut));
        QVERIFY_THROWS_EXCEPTION(kl::Cancelled, engine_->transposeSignal(signal, options, interleaved));
        QVERIFY2(msSince(start) < kLatencyBoundMs, kltest::msg(std::to_string(msSince(start)) + " ms"));

        // Nothing was left behind: the same run without the flag completes.
        options.cancel = nullptr;
        options.repetitions = 1;
        engine_->transpose(image, options, imageOut);
        QVERIFY(kltest::bitwiseEqual(imageOut, kl::transposeReference(image)));
    }

    void cancelDuringLongRun_data()
    {
        QTest::addColumn<bool>("endToEnd");
        QTest::addColumn<QString>("memory");
        QTest::addColumn<int>("streams");
        QTest::addColumn<bool>("graph");
        QTest::addColumn<QString>("variant");
        QTest::addColumn<int>("repetitions");
        // Each would run for seconds uncancelled (kernel-only repetitions are the shortest).
        QTest::newRow("end to end, pageable, 1 stream, naive") << true << "pageable" << 1 << true << "naive" << 500;
        QTest::newRow("end to end, staged, 1 stream, naive") << true << "staged" << 1 << true << "naive" << 500;
        QTest::newRow("end to end, pinned, 4 streams, shared, between graph replays")
            << true << "pinned" << 4 << true << "shared" << 500;
        QTest::newRow("end to end, pinned, 4 streams, shared, stream launches")
            << true << "pinned" << 4 << false << "shared" << 500;
        QTest::newRow("kernel only, naive") << false << "pageable" << 1 << true << "naive" << 2000;
    }

    void cancelDuringLongRun()
    {
        QFETCH(bool, endToEnd);
        QFETCH(QString, memory);
        QFETCH(int, streams);
        QFETCH(bool, graph);
        QFETCH(QString, variant);
        QFETCH(int, repetitions);
        RunOptions options;
        options.endToEnd = endToEnd;
        options.memory = kl::gpu::parseHostMemory(memory.toStdString());
        options.streams = streams;
        options.graph = graph;
        options.variant = variant.toStdString();
        options.repetitions = 1;
        options.warmup = 0;
        const kl::Conv2DSpec spec = box15();

        // One short run first: loads the modules and sizes the buffers, so that the cancel below
        // lands in steady state, and gives the output the run after the cancel must reproduce.
        cv::Mat before;
        engine_->conv2d(large_, spec, options, before);

        options.repetitions = repetitions;
        options.warmup = 2;
        cv::Mat cancelledOutput;
        DelayedCancel cancel(std::chrono::milliseconds(50));
        options.cancel = cancel.flag();
        const Clock::time_point start = Clock::now();
        bool thrown = false;
        try {
            engine_->conv2d(large_, spec, options, cancelledOutput);
        } catch (const kl::Cancelled&) {
            thrown = true;
        }
        const Clock::time_point returned = Clock::now();
        QVERIFY2(thrown, kltest::msg("the run finished in " + std::to_string(msSince(start)) + " ms without cancelling"));
        const double latencyMs = std::chrono::duration<double, std::milli>(returned - cancel.setAt()).count();
        qInfo("cancel latency: %.1f ms (%s)", latencyMs, QTest::currentDataTag());
        QVERIFY2(latencyMs < kLatencyBoundMs, kltest::msg(std::to_string(latencyMs) + " ms"));

        options.cancel = nullptr;
        options.repetitions = 1;
        options.warmup = 0;
        cv::Mat after;
        engine_->conv2d(large_, spec, options, after);
        QVERIFY(kltest::bitwiseEqual(after, before));
    }
};

QTEST_GUILESS_MAIN(TestCancelGpu)
#include "tst_cancel_gpu.moc"
