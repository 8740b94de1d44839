// Soak: many consecutive runs in one process, ops, backends and options alternating, some
// cancelled mid-run; the process's resident memory may grow by less than 5% from the end of a
// warm-up (the first fifth of the runs, in which every case runs, so caches and pools reach their
// size) to the end, and on a GPU the device's free memory must not fall. KERNELLAB_SOAK_RUNS sets
// the run count (default 1000).
//   sessionRuns:  the CLI's path (parameters -> configureRequest -> execute), as kernellab-cli run
//   windowRuns:   the desktop window offscreen, driven as a user would (panels, Run, Esc)
// Each prints "soak ...: N runs (C cancelled), RSS A -> B MiB (+x%)[, device free ...]" and the
// resident memory after every tenth of the runs.
#include "execution_panel.hpp"
#include "main_window.hpp"
#include "operation_panel.hpp"
#include "op_config.hpp"
#include "run_worker.hpp"
#include "session.hpp"

#include "kernellab/error.hpp"
#include "kernellab/gpu/engine.hpp"

#include <QSet>
#include <QSignalSpy>
#include <QtTest>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

using kl::app::Backend;
using kl::app::ParameterMap;

namespace {

int soakRuns()
{
    bool ok = false;
    const int runs = qEnvironmentVariableIntValue("KERNELLAB_SOAK_RUNS", &ok);
    return ok && runs > 0 ? runs : 1000;
}

double residentMiB()
{
    std::ifstream statm("/proc/self/statm");
    uint64_t size = 0, resident = 0;
    statm >> size >> resident;
    return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

bool gpuAvailable() { return kl::gpu::gpuStatus().available; }

/// The inputs and op parameters the runs cycle through: every op, depth and channel count,
/// odd sizes, and presets of each class.
const std::vector<ParameterMap>& cases()
{
    static const std::vector<ParameterMap> all = {
        {{"op", "conv2d"}, {"generate", "image:127x93:u8:3"}, {"preset", "gaussian"}},
        {{"op", "conv2d"}, {"generate", "image:101x67:f32:1"}, {"preset", "sharpen"}, {"border", "reflect"}},
        {{"op", "conv2d"}, {"generate", "image:64x61:u16:4"}, {"preset", "box"}, {"size", "7"}},
        {{"op", "histogram"}, {"generate", "image:131x61:u8:4"}},
        {{"op", "histogram"}, {"generate", "image:97x89:f32:1"}, {"bins", "37"}},
        {{"op", "transpose"}, {"generate", "image:129x77:u16:3"}},
        {{"op", "conv1d"}, {"generate", "signal:4099:2:8000"}, {"preset", "low-pass"}, {"cutoff", "900"}},
        {{"op", "transpose"}, {"generate", "signal:1001:3"}},
    };
    return all;
}

struct Growth {
    double baseline = 0, end = 0;
    QStringList samples;  ///< "run: MiB" after every tenth of the runs
    [[nodiscard]] double percent() const { return baseline > 0 ? 100.0 * (end - baseline) / baseline : 0; }
    /// Before run `i` of `runs`: the baseline at the end of the warm-up, and the samples.
    void sample(int i, int runs)
    {
        if (i == warmupRuns(runs)) baseline = residentMiB();
        if (runs >= 10 && i > 0 && i % (runs / 10) == 0)
            samples << QStringLiteral("%1: %2").arg(i).arg(residentMiB(), 0, 'f', 1);
    }
    static int warmupRuns(int runs) { return runs / 5; }
};

} // namespace

class TestSoak : public QObject {
    Q_OBJECT

private slots:
    void sessionRuns();
    void windowRuns();
};

void TestSoak::sessionRuns()
{
    const int runs = soakRuns();
    const bool gpu = gpuAvailable();
    const std::vector<QString> backendSets = gpu ? std::vector<QString>{"cpu-ref", "cpu-opencv", "gpu", "cpu-opencv,gpu"}
                                                 : std::vector<QString>{"cpu-ref", "cpu-opencv", "cpu-ref,cpu-opencv"};
    const char* const memories[] = {"pageable", "staged", "pinned"};
    Growth rss;
    Growth deviceFree;
    int cancelled = 0;
    for (int i = 0; i < runs; ++i) {
        rss.sample(i, runs);
        if (gpu && i == Growth::warmupRuns(runs))
            deviceFree.baseline = double(kl::app::sharedEngine()->deviceMemory().freeBytes);
        ParameterMap parameters = cases()[size_t(i) % cases().size()];
        parameters["backends"] = backendSets[size_t(i / 8) % backendSets.size()];
        parameters["memory"] = memories[size_t(i / 3) % 3];
        parameters["streams"] = QString::number(1 + (i / 5) % 4);
        parameters["kernel-only"] = i % 7 == 3 ? "true" : "false";
        parameters["no-graph"] = i % 11 == 5 ? "true" : "false";
        parameters["repetitions"] = "1";
        parameters["warmup"] = "0";
        const bool cancelThis = i % 25 == 24;
        if (cancelThis) {
            // Long enough (a 2048^2 f32 Gaussian, 40 repetitions) that a cancel lands mid-run.
            parameters = {{"op", "conv2d"}, {"generate", "image:2048x2048:f32:1"}, {"repetitions", "40"},
                          {"backends", backendSets[size_t(i / 25) % backendSets.size()]}};
        }
        kl::app::RunRequest request;
        kl::app::loadInput(request, parameters);
        kl::app::configureRequest(request, parameters);
        request.measureRoofs = i % 100 == 0;
        std::atomic<bool> cancel{false};
        kl::app::RunControl control;
        control.cancel = &cancel;
        std::thread canceller;
        if (cancelThis)
            canceller = std::thread([&cancel] {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                cancel = true;
            });
        try {
            const kl::app::RunResult result = kl::app::execute(request, control);
            for (const kl::app::BackendResult& r : result.results)
                QVERIFY2(r.ok(), qPrintable(QStringLiteral("run %1: %2: %3").arg(i).arg(kl::app::toString(r.backend), r.error)));
            for (const kl::app::BackendComparison& c : result.comparisons)
                QVERIFY2(c.disagreement.isEmpty(), qPrintable(QStringLiteral("run %1: %2").arg(i).arg(c.disagreement)));
        } catch (const kl::Cancelled&) {
            ++cancelled;
        }
        if (canceller.joinable()) canceller.join();
    }
    rss.end = residentMiB();
    QString line = QStringLiteral("soak session: %1 runs (%2 cancelled), RSS %3 -> %4 MiB (%5%)")
                       .arg(runs)
                       .arg(cancelled)
                       .arg(rss.baseline, 0, 'f', 1)
                       .arg(rss.end, 0, 'f', 1)
                       .arg(rss.percent(), 0, 'f', 2);
    if (gpu) {
        const kl::gpu::Engine::DeviceMemory memory = kl::app::sharedEngine()->deviceMemory();
        deviceFree.end = double(memory.freeBytes);
        line += QStringLiteral(", device free %1 -> %2 MiB, engine buffers %3 MiB")
                    .arg(deviceFree.baseline / 1048576, 0, 'f', 1)
                    .arg(deviceFree.end / 1048576, 0, 'f', 1)
                    .arg(double(memory.heldBytes) / 1048576, 0, 'f', 1);
    }
    qInfo("%s", qPrintable(line));
    qInfo("RSS MiB before run %s", qPrintable(rss.samples.join(QStringLiteral(", "))));
    QVERIFY(cancelled > 0);
    QVERIFY2(rss.percent() < 5.0, qPrintable(line));
    if (gpu) QVERIFY2(deviceFree.end >= deviceFree.baseline, qPrintable(line));
}

void TestSoak::windowRuns()
{
    const int runs = soakRuns();
    const bool gpu = gpuAvailable();
    kl::gui::MainWindow window{false};
    QSignalSpy finished(&window, &kl::gui::MainWindow::runFinished);
    QSignalSpy cancelledSpy(window.worker(), &kl::gui::RunWorker::cancelled);
    kl::gui::ExecutionPanel* execution = window.executionPanel();
    execution->setRepetitions(1);
    window.show();

    auto settle = [&] {
        QElapsedTimer clock;
        clock.start();
        do QTest::qWait(5);
        while (window.isBusy() && clock.elapsed() < 60000);
        return !window.isBusy();
    };
    const std::vector<std::vector<Backend>> backendSets =
        gpu ? std::vector<std::vector<Backend>>{{Backend::CpuReference}, {Backend::CpuOpenCV}, {Backend::Gpu},
                                                {Backend::CpuReference, Backend::CpuOpenCV, Backend::Gpu}}
            : std::vector<std::vector<Backend>>{{Backend::CpuReference}, {Backend::CpuOpenCV},
                                                {Backend::CpuReference, Backend::CpuOpenCV}};
    const kl::gpu::HostMemory memories[] = {kl::gpu::HostMemory::Pageable, kl::gpu::HostMemory::Staged,
                                            kl::gpu::HostMemory::Pinned};
    const kl::app::Op imageOps[] = {kl::app::Op::Conv2D, kl::app::Op::Histogram, kl::app::Op::Transpose};
    const kl::app::Op signalOps[] = {kl::app::Op::Conv1D, kl::app::Op::Transpose};

    Growth rss;
    QSet<QString> notShown;  // the status of runs whose outcome did not reach the window within a minute
    for (int i = 0; i < runs; ++i) {
        rss.sample(i, runs);
        // A new input every 10 runs: the nine image depth x channel combinations in turn, at odd
        // sizes, and every fourth time a signal.
        const int block = i / 10;
        const bool signal = block % 4 == 3;
        if (i % 10 == 0) {
            const int image = block - block / 4;
            kl::app::GenerateSpec spec = kl::app::parseGenerateSpec(
                signal ? QStringLiteral("signal:%1:2:8000").arg(3001 + 2 * (block % 5))
                       : QStringLiteral("image:%1x%2:%3:%4")
                             .arg(97 + 2 * (block % 5))
                             .arg(61 + block % 7)
                             .arg(QStringList{"u8", "u16", "f32"}[image % 3])
                             .arg(QStringList{"1", "3", "4"}[(image / 3) % 3]));
            window.generateInput(spec);
            QVERIFY(settle());
        }
        window.operationPanel()->setOp(signal ? signalOps[i % 2] : imageOps[i % 3]);
        execution->setBackends(backendSets[size_t(i / 3) % backendSets.size()]);
        execution->setHostMemory(memories[size_t(i / 2) % 3]);
        execution->setStreams(1 + (i / 5) % 4);
        execution->setKernelOnly(i % 7 == 3);
        const bool cancelThis = i % 20 == 19;
        if (cancelThis) {
            execution->setRepetitions(1000);  // the most the panel takes: the cancel lands mid-run
            window.runNow();
            QTest::qWait(5);
            window.cancelRun();
            QVERIFY2(settle(), qPrintable(QStringLiteral("run %1 was not cancelled").arg(i)));
            execution->setRepetitions(1);
        }
        const qsizetype shown = finished.count();
        window.runNow();  // at once, rather than after the re-run delay a parameter change starts
        // The outcome reaches the window by a queued signal after the worker is idle: wait for it.
        QElapsedTimer clock;
        clock.start();
        while (finished.count() == shown && clock.elapsed() < 60000) QTest::qWait(2);
        if (finished.count() == shown) notShown.insert(window.statusText());
        QVERIFY2(settle(), qPrintable(QStringLiteral("run %1 did not finish").arg(i)));
    }
    rss.end = residentMiB();
    const QString line = QStringLiteral("soak window: %1 runs (%2 cancelled, %3 runs finished), RSS %4 -> %5 MiB (%6%)")
                             .arg(runs)
                             .arg(cancelledSpy.count())
                             .arg(finished.count())
                             .arg(rss.baseline, 0, 'f', 1)
                             .arg(rss.end, 0, 'f', 1)
                             .arg(rss.percent(), 0, 'f', 2);
    qInfo("%s", qPrintable(line));
    qInfo("RSS MiB before run %s", qPrintable(rss.samples.join(QStringLiteral(", "))));
    QVERIFY(cancelledSpy.count() > 0);
    QVERIFY2(notShown.isEmpty(), qPrintable(QStringList(notShown.begin(), notShown.end()).join(QStringLiteral("\n"))));
    QVERIFY2(rss.percent() < 5.0, qPrintable(line));
}

QTEST_MAIN(TestSoak)
#include "tst_soak.moc"
