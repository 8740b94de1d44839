// kernellab-cli on a GPU machine: `run --backends gpu` for every op and variant end to end
// (report with GPU stages, bytes, timeline and a comparison that agrees with the CPU),
// kernel-only timing, pinned memory with several streams, bench --quick with GPU rows,
// sweep and info; a clean exit (code 0, no failed CUDA release on stderr) once the engine
// and the runtime shut down, and Ctrl-C stopping a long GPU run promptly (it prints
// "Ctrl-C to exit: X ms"). Skipped ("no CUDA device: <reason>") without a GPU.
//
#include "kernellab/gpu/engine.hpp"
#include "cli_runner.hpp"
#include "gpu_skip.hpp"
#include "test_support.hpp"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QtTest>

#include <csignal>

#include <sys/types.h>

namespace {

using kltest::cliPath;
using kltest::CliRun;
using kltest::describe;
using kltest::readJson;
using kltest::runCli;

QString sample(const char* name) { return QString::fromStdString(kltest::samplePath(name)); }

QJsonObject backendResult(const QJsonObject& report, const QString& backend)
{
    for (const QJsonValue& r : report[QStringLiteral("results")].toArray())
        if (r.toObject()[QStringLiteral("backend")].toString() == backend) return r.toObject();
    return {};
}

double median(const QJsonObject& stages, const char* stage)
{
    return stages[QLatin1String(stage)].toObject()[QStringLiteral("median")].toDouble();
}

/// Inputs and parameters of one op on a sample file.
QStringList opArguments(const QString& op)
{
    if (op == QLatin1String("conv2d"))
        return {"--op", "conv2d", "--preset", "gaussian", "--size", "7", "--input", sample("astronaut.png")};
    if (op == QLatin1String("conv1d"))
        return {"--op", "conv1d", "--preset", "low-pass", "--cutoff", "40", "--taps", "101", "--input",
                sample("ecg_mitbih208_360hz.npy"), "--rate", "360"};
    if (op == QLatin1String("histogram")) return {"--op", "histogram", "--input", sample("astronaut.png")};
    if (op == QLatin1String("transpose-signal")) return {"--op", "transpose", "--input", sample("chirp_noise_48k_stereo.wav")};
    return {"--op", "transpose", "--input", sample("coffee.png")};
}

} // namespace

class TestCliGpu : public QObject {
    Q_OBJECT

    QJsonObject variants_;

    /// `run` on cpu-opencv and gpu with `extra` options; the report, after the common checks.
    QJsonObject runOnGpu(const QString& op, const QStringList& extra) { return runOnGpuWith(opArguments(op), extra); }
    QJsonObject runOnGpuWith(const QStringList& opArgs, const QStringList& extra)
    {
        const QString report = QString::fromStdString(kltest::tempDir()) + QStringLiteral("/report.json");
        QStringList arguments = {"run", "--backends", "cpu-opencv,gpu", "--repetitions", "3", "--warmup", "1", "--report", report};
        arguments << opArgs << extra;
        const CliRun run = runCli(arguments);
        if (run.exitCode != 0) qWarning("%s", describe(run).constData());
        const QJsonObject json = readJson(report);
        const QJsonObject gpu = backendResult(json, QStringLiteral("gpu"));
        if (!gpu[QStringLiteral("ok")].toBool()) qWarning("gpu: %s", qPrintable(gpu[QStringLiteral("error")].toString()));
        const QJsonObject comparison =
            json[QStringLiteral("comparisons")].toObject()[QStringLiteral("gpu")].toObject();
        if (!comparison[QStringLiteral("agrees")].toBool())
            qWarning("gpu vs cpu-opencv: %s", qPrintable(comparison[QStringLiteral("disagreement")].toString()));
        return run.exitCode == 0 && gpu[QStringLiteral("ok")].toBool() && comparison[QStringLiteral("agrees")].toBool()
                   ? json
                   : QJsonObject();
    }

private slots:
    void initTestCase()
    {
        KL_SKIP_WITHOUT_GPU();
        QVERIFY2(QFileInfo(cliPath()).isExecutable(), qPrintable("kernellab-cli not found at " + cliPath() +
                                                                 " (build it, or set KL_CLI_PATH)"));
        const CliRun info = runCli({"info", "--json"});
        QVERIFY2(info.exitCode == 0, describe(info));
        variants_ = QJsonDocument::fromJson(info.out.toUtf8()).object()[QStringLiteral("variants")].toObject();
    }

    void infoListsTheDevice()
    {
        const CliRun run = runCli({"info"});
        QVERIFY2(run.exitCode == 0 && run.out.contains(QStringLiteral("GPU 0: ")), describe(run));
        QVERIFY(run.out.contains(QStringLiteral("theoretical memory bandwidth")));
    }

    void endToEndReportHasStages_data()
    {
        QTest::addColumn<QString>("op");
        for (const char* op : {"conv2d", "conv1d", "histogram", "transpose", "transpose-signal"}) QTest::newRow(op) << op;
    }

    void endToEndReportHasStages()
    {
        QFETCH(QString, op);
        const QJsonObject report = runOnGpu(op, {});
        QVERIFY(!report.isEmpty());
        const QJsonObject gpu = backendResult(report, QStringLiteral("gpu"))[QStringLiteral("gpu")].toObject();
        const QJsonObject stages = gpu[QStringLiteral("stages_ms")].toObject();
        for (const char* stage : {"h2d", "kernel", "d2h", "total"}) QVERIFY2(median(stages, stage) > 0, stage);
        QVERIFY(median(stages, "total") >= median(stages, "kernel"));
        const QJsonObject bytes = gpu[QStringLiteral("bytes")].toObject();
        QVERIFY(bytes[QStringLiteral("h2d")].toDouble() > 0 && bytes[QStringLiteral("d2h")].toDouble() > 0);
        QVERIFY(bytes[QStringLiteral("kernel")].toDouble() > 0);
        QVERIFY(gpu[QStringLiteral("kernel_gbs")].toDouble() > 0);
        QVERIFY(gpu[QStringLiteral("copy_bandwidth_pct")].toDouble() > 0);
        QVERIFY(!gpu[QStringLiteral("variant")].toString().isEmpty() && gpu[QStringLiteral("variant")].toString() != "auto");
        const QJsonArray timeline = gpu[QStringLiteral("timeline")].toArray();
        QVERIFY(!timeline.isEmpty());
        for (const QJsonValue& entry : timeline)
            QVERIFY(entry.toObject()[QStringLiteral("end_ms")].toDouble() >= entry.toObject()[QStringLiteral("start_ms")].toDouble());
        QVERIFY(report[QStringLiteral("copy_bandwidth_gbs")].toDouble() > 0);
        QVERIFY(report[QStringLiteral("device")].isObject());
        QVERIFY(report[QStringLiteral("speedups")].toObject().contains(QStringLiteral("gpu_end_to_end_vs_cpu-opencv")));
        QVERIFY(report[QStringLiteral("environment")].toObject()[QStringLiteral("cuda_runtime")].toString() != "unavailable");
    }

    // 4 streams: the chunk count follows the data (a small image runs as one chunk, a 24 MiB one
    // as 6, 4 MiB each), and the report says how many and why.
    void memoryKindsWithStreams_data()
    {
        QTest::addColumn<QStringList>("input");
        QTest::addColumn<QStringList>("memory");
        QTest::addColumn<int>("chunks");
        QTest::addColumn<QString>("chunking");
        QTest::addColumn<QString>("launch");
        const QStringList large = {"--op", "conv2d", "--generate", "image:2048x2048:u8:3"};
        QTest::newRow("small, pinned") << opArguments(QStringLiteral("conv2d")) << QStringList{"pinned"} << 1
                                       << "chunks of at least 4.0 MiB" << "streams: one chunk";
        QTest::newRow("2048^2 u8 x3, pinned") << large << QStringList{"pinned"} << 6 << "24.0 MiB in and out"
                                              << "graph, ";
        QTest::newRow("2048^2 u8 x3, pinned, no graph")
            << large << QStringList{"pinned", "--no-graph"} << 6 << "24.0 MiB in and out"
            << "streams: graphs are off for this run";
        QTest::newRow("2048^2 u8 x3, staged") << large << QStringList{"staged"} << 6 << "24.0 MiB in and out"
                                              << "streams: staged copies need the host between their pieces";
    }

    void memoryKindsWithStreams()
    {
        QFETCH(QStringList, input);
        QFETCH(QStringList, memory);
        QFETCH(int, chunks);
        QFETCH(QString, chunking);
        QFETCH(QString, launch);
        const QJsonObject report = runOnGpuWith(input, QStringList{"--memory"} + memory + QStringList{"--streams", "4"});
        QVERIFY(!report.isEmpty());
        const QJsonObject gpu = backendResult(report, QStringLiteral("gpu"))[QStringLiteral("gpu")].toObject();
        QCOMPARE(gpu[QStringLiteral("memory")].toString(), memory.front());
        QCOMPARE(gpu[QStringLiteral("streams")].toInt(), 4);
        QCOMPARE(gpu[QStringLiteral("chunks")].toInt(), chunks);
        QVERIFY2(gpu[QStringLiteral("chunking")].toString().contains(chunking),
                 qPrintable(gpu[QStringLiteral("chunking")].toString()));
        QVERIFY2(gpu[QStringLiteral("launch")].toString().startsWith(launch),
                 qPrintable(gpu[QStringLiteral("launch")].toString()));
        QCOMPARE(gpu[QStringLiteral("graph")].toBool(), launch.startsWith(QLatin1String("graph")));
        int highestStream = 0;
        for (const QJsonValue& entry : gpu[QStringLiteral("timeline")].toArray())
            highestStream = std::max(highestStream, entry.toObject()[QStringLiteral("stream")].toInt());
        QCOMPARE(highestStream, std::min(chunks, 4) - 1);
    }

    void kernelOnlyTimesTheKernelAlone()
    {
        const QJsonObject report = runOnGpu(QStringLiteral("transpose"), {"--kernel-only"});
        QVERIFY(!report.isEmpty());
        QCOMPARE(report[QStringLiteral("options")].toObject()[QStringLiteral("gpu")].toObject()[QStringLiteral("timing")].toString(),
                 QStringLiteral("kernel-only"));
        const QJsonObject stages =
            backendResult(report, QStringLiteral("gpu"))[QStringLiteral("gpu")].toObject()[QStringLiteral("stages_ms")].toObject();
        QVERIFY(median(stages, "kernel") > 0);
        QCOMPARE(median(stages, "h2d"), 0.0);
    }

    // A device that runs out of memory mid-run (simulated with the engine's cap): the GPU's result
    // names the buffer and its size, the CPU's result is reported as usual, and the exit status is 1.
    void deviceOutOfMemoryKeepsTheCpuResult()
    {
        const QString report = QString::fromStdString(kltest::tempDir()) + QStringLiteral("/report.json");
        qputenv(kl::gpu::kDeviceMemoryLimitVariable, "1M");
        const CliRun run = runCli({"run", "--op", "conv2d", "--generate", "image:1031x677:u8:3", "--backends",
                                   "cpu-opencv,gpu", "--repetitions", "1", "--report", report});
        qunsetenv(kl::gpu::kDeviceMemoryLimitVariable);
        QVERIFY2(run.exitCode == 1, describe(run));
        QVERIFY2(run.err.contains(QLatin1String("gpu failed: GPU out of memory: the device buffer 'conv2d.in' needs")),
                 describe(run));
        const QJsonObject json = readJson(report);
        const QJsonObject cpu = backendResult(json, QStringLiteral("cpu-opencv"));
        QVERIFY(cpu[QStringLiteral("ok")].toBool());
        QVERIFY(cpu[QStringLiteral("time_ms")].toObject()[QStringLiteral("median")].toDouble() > 0);
        const QJsonObject gpu = backendResult(json, QStringLiteral("gpu"));
        QVERIFY(!gpu[QStringLiteral("ok")].toBool());
        QVERIFY2(gpu[QStringLiteral("error")].toString().contains(QLatin1String("KERNELLAB_DEVICE_MEMORY_LIMIT allows 1.0 MiB")),
                 qPrintable(gpu[QStringLiteral("error")].toString()));
    }

    void everyVariantAgreesWithTheCpu()
    {
        for (const QString& op : {QStringLiteral("conv2d"), QStringLiteral("conv1d"), QStringLiteral("histogram"),
                                  QStringLiteral("transpose")})
            for (const QJsonValue& variant : variants_[op].toArray()) {
                const QStringList extra = {"--variant", variant.toString()};
                const bool conv2d = op == QLatin1String("conv2d");
                // conv2d's tma takes f32 single-channel images (the image samples are 8-bit colour); integer
                // needs integer taps times one factor (the 7x7 Gaussian's are not), dp4a integer taps, dp2a them
                // on u16, rows-mma one u16 channel; histogram's tma one channel (the grey sample)
                const QJsonObject report =
                    op == QLatin1String("histogram") && variant.toString() == QLatin1String("tma")
                        ? runOnGpuWith({"--op", "histogram", "--input", sample("camera.png")}, extra)
                    : conv2d && variant.toString() == QLatin1String("tma")
                        ? runOnGpuWith({"--op", "conv2d", "--preset", "gaussian", "--size", "7", "--generate",
                                        "image:613x409:f32:1:noise"},
                                       extra)
                    : conv2d && variant.toString() == QLatin1String("integer")
                        ? runOnGpuWith({"--op", "conv2d", "--preset", "gaussian", "--size", "5", "--input",
                                        sample("astronaut.png")},
                                       extra)
                    : conv2d && variant.toString() == QLatin1String("dp4a")
                        ? runOnGpuWith({"--op", "conv2d", "--preset", "sharpen", "--input", sample("astronaut.png")},
                                       extra)
                    : conv2d && variant.toString() == QLatin1String("dp2a")
                        ? runOnGpuWith({"--op", "conv2d", "--preset", "sharpen", "--generate", "image:613x409:u16:1:noise"},
                                       extra)
                    : conv2d && variant.toString() == QLatin1String("rows-mma")
                        ? runOnGpuWith({"--op", "conv2d", "--preset", "gaussian", "--size", "15", "--generate",
                                        "image:613x409:u16:1:noise"},
                                       extra)
                        : runOnGpu(op, extra);
                QVERIFY2(!report.isEmpty(), qPrintable(op + " " + variant.toString()));
                QCOMPARE(backendResult(report, QStringLiteral("gpu"))[QStringLiteral("gpu")].toObject()[QStringLiteral("variant")].toString(),
                         variant.toString());
            }
    }

    /// A user kernel from a template file: run reports it as its variant with its resources and
    /// agrees with the CPU; bench gives it rows beside the built-in variants, on one stream only.
    void userKernelRunsAndBenches()
    {
        const QString dir = QString::fromStdString(kltest::tempDir());
        const QString source = dir + QStringLiteral("/tiled.cu");
        const CliRun printed = runCli({"template", "--op", "transpose", "--name", "tiled"});
        QVERIFY2(printed.exitCode == 0, describe(printed));
        kltest::writeFile(source.toStdString(), printed.out.toStdString());

        const QJsonObject report = runOnGpuWith({"--op", "transpose", "--input", sample("coffee.png")},
                                                {"--kernel-source", source});
        QVERIFY(!report.isEmpty());
        const QJsonObject gpu = backendResult(report, QStringLiteral("gpu"))[QStringLiteral("gpu")].toObject();
        QCOMPARE(gpu[QStringLiteral("variant")].toString(), QStringLiteral("custom:transpose_tiled"));
        const QJsonObject resources = gpu[QStringLiteral("kernel_resources")].toObject();
        QVERIFY(resources[QStringLiteral("registers")].toInt() > 0);
        QCOMPARE(resources[QStringLiteral("static_shared_bytes")].toInt(), 32 * 32 * 4);  // 32 x 32 pixels of up to 4 u8 channels
        QVERIFY(resources[QStringLiteral("active_blocks_per_sm")].toInt() > 0);
        QCOMPARE(report[QStringLiteral("options")].toObject()[QStringLiteral("custom_kernel")].toObject()[QStringLiteral("entry")].toString(),
                 QStringLiteral("transpose_tiled"));

        const CliRun bench = runCli({"bench", "--quick", "--require-gpu", "--ops", "transpose", "--depths", "u8",
                                     "--kernel-source", source, "--variants", "custom:transpose_tiled,optimized",
                                     "--out-dir", dir});
        QVERIFY2(bench.exitCode == 0, describe(bench));
        int customRows = 0;
        for (const QJsonValue& value : readJson(dir + QStringLiteral("/kernellab-bench.json"))[QStringLiteral("rows")].toArray()) {
            const QJsonObject row = value.toObject();
            if (row[QStringLiteral("variant")].toString() != QLatin1String("custom:transpose_tiled")) continue;
            ++customRows;
            QVERIFY2(row[QStringLiteral("ok")].toBool(), qPrintable(row[QStringLiteral("error")].toString()));
            QCOMPARE(row[QStringLiteral("streams")].toInt(), 1);
        }
        QCOMPARE(customRows, 2);  // pageable and pinned (not staged), one stream each
    }

    /// --device picks the GPU the run uses; one that is not there is exit 2 naming those that are.
    void deviceOptionPicksTheGpu()
    {
        const std::vector<kl::gpu::DeviceInfo> devices = kl::gpu::listDevices();
        const QString last = QString::number(devices.size() - 1);
        const QString report = QString::fromStdString(kltest::tempDir()) + QStringLiteral("/report.json");
        const CliRun run = runCli({"run", "--op", "transpose", "--generate", "image:67x45:u8:3", "--backends", "cpu-ref,gpu",
                                   "--device", last, "--report", report});
        QVERIFY2(run.exitCode == 0, describe(run));
        QCOMPARE(readJson(report)[QStringLiteral("device")].toObject()[QStringLiteral("index")].toInt(), last.toInt());
        const CliRun missing = runCli({"run", "--op", "transpose", "--generate", "image:67x45:u8:3", "--backends", "gpu",
                                       "--device", QString::number(devices.size())});
        QVERIFY2(missing.exitCode == 2, describe(missing));
        QVERIFY2(missing.err.contains(QStringLiteral("there is no GPU %1; the devices are 0 (%2)")
                                          .arg(devices.size())
                                          .arg(QString::fromStdString(devices.front().name))),
                 describe(missing));
    }

    void benchQuickHasGpuRows()
    {
        const QString out = QString::fromStdString(kltest::tempDir());
        const CliRun run = runCli({"bench", "--quick", "--require-gpu", "--out-dir", out});
        QVERIFY2(run.exitCode == 0, describe(run));
        const QJsonObject json = readJson(out + QStringLiteral("/kernellab-bench.json"));
        QVERIFY(json[QStringLiteral("bandwidth_gbs")].toObject()[QStringLiteral("device_copy")].toDouble() > 0);
        QVERIFY(json[QStringLiteral("bandwidth_gbs")].toObject()[QStringLiteral("h2d_pinned")].toDouble() > 0);
        int gpuRows = 0;
        for (const QJsonValue& value : json[QStringLiteral("rows")].toArray()) {
            const QJsonObject row = value.toObject();
            QVERIFY2(row[QStringLiteral("ok")].toBool(), qPrintable(row[QStringLiteral("error")].toString()));
            if (row[QStringLiteral("backend")].toString() != QLatin1String("gpu")) continue;
            ++gpuRows;
            QVERIFY(!row[QStringLiteral("verified_against")].toString().isEmpty());
            QVERIFY(row[QStringLiteral("kernel_ms")].toObject()[QStringLiteral("median")].toDouble() > 0);
            QVERIFY(row[QStringLiteral("end_to_end_ms")].toObject()[QStringLiteral("median")].toDouble() > 0);
        }
        QVERIFY(gpuRows > 0);
        QVERIFY(run.out.contains(QStringLiteral(" gpu ")));
        QVERIFY(QFileInfo::exists(out + QStringLiteral("/kernellab-bench.csv")));
        QVERIFY(QFileInfo::exists(out + QStringLiteral("/kernellab-bench.md")));
    }

    /// bench --matrix on small odd sizes: every cell (9 conv2d classes + histogram + transpose at 3
    /// depths x 3 channel counts, 4 conv1d tap counts) runs, verifies, is held to its nearer roof and to
    /// its class's (conv1d from 127 taps compute-bound, every other cell memory-bound), and the output
    /// ends with the worst cell of each.
    void matrixCoversEveryCell()
    {
        const QString out = QString::fromStdString(kltest::tempDir());
        const CliRun run = runCli({"bench", "--matrix", "--sizes", "67x41", "--frames", "5003", "--repetitions", "2",
                                   "--warmup", "0", "--out-dir", out});
        QVERIFY2(run.exitCode == 0, describe(run));
        const QJsonObject json = readJson(out + QStringLiteral("/kernellab-matrix.json"));
        QVERIFY(json[QStringLiteral("roofs")].toObject()[QStringLiteral("device_copy_gbs")].toDouble() > 100);
        QVERIFY(json[QStringLiteral("roofs")].toObject()[QStringLiteral("fma_gflops")].toDouble() > 1000);
        const QJsonArray cells = json[QStringLiteral("cells")].toArray();
        QCOMPARE(cells.size(), 3 * 3 * (9 + 2) + 4);
        for (const QJsonValue& value : cells) {
            const QJsonObject cell = value.toObject();
            QVERIFY2(cell[QStringLiteral("ok")].toBool(), qPrintable(cell[QStringLiteral("error")].toString()));
            QVERIFY(!cell[QStringLiteral("variant")].toString().isEmpty());
            QVERIFY(cell[QStringLiteral("copy_pct")].toDouble() > 0);
            QCOMPARE(cell[QStringLiteral("roof_pct")].toDouble(),
                     std::max(cell[QStringLiteral("copy_pct")].toDouble(), cell[QStringLiteral("fma_pct")].toDouble()));
            const QString roof = cell[QStringLiteral("roof")].toString();
            QVERIFY2(roof == QLatin1String("copy") || roof == QLatin1String("fma"), qPrintable(roof));
            const bool compute = cell[QStringLiteral("op")].toString() == QLatin1String("conv1d") &&
                                 cell[QStringLiteral("case")].toString() != QLatin1String("K=15");
            QCOMPARE(cell[QStringLiteral("class")].toString(), compute ? QStringLiteral("compute") : QStringLiteral("memory"));
            QCOMPARE(cell[QStringLiteral("class_pct")].toDouble(),
                     cell[compute ? QStringLiteral("fma_pct") : QStringLiteral("copy_pct")].toDouble());
        }
        QVERIFY2(run.out.contains(QStringLiteral("worst cell: ")), describe(run));
        QVERIFY2(run.out.contains(QStringLiteral("worst memory-bound cell: ")), describe(run));
        QVERIFY2(run.out.contains(QStringLiteral("worst compute-bound cell: conv1d K=")), describe(run));
        QVERIFY(QFileInfo::exists(out + QStringLiteral("/kernellab-matrix.csv")));
        QVERIFY(QFileInfo::exists(out + QStringLiteral("/kernellab-matrix.md")));
    }

    /// bench --matrix --variants: each cell runs the first listed variant that applies to it; cells none
    /// applies to are left out. dp4a takes the u8 cells of integer taps (box 3x3 as ones / 9, sharpen,
    /// Laplacian, Sobel) at each channel count, and no histogram, transpose or conv1d cell.
    void matrixRunsTheGivenVariants()
    {
        const QString out = QString::fromStdString(kltest::tempDir());
        const CliRun run = runCli({"bench", "--matrix", "--variants", "dp4a", "--sizes", "67x41", "--frames", "5003",
                                   "--repetitions", "2", "--warmup", "0", "--out-dir", out});
        QVERIFY2(run.exitCode == 0, describe(run));
        const QJsonObject json = readJson(out + QStringLiteral("/kernellab-matrix.json"));
        QCOMPARE(json[QStringLiteral("variants")].toString(), QStringLiteral("dp4a"));
        const QJsonArray cells = json[QStringLiteral("cells")].toArray();
        QCOMPARE(cells.size(), 3 * 4);
        for (const QJsonValue& value : cells) {
            const QJsonObject cell = value.toObject();
            QVERIFY2(cell[QStringLiteral("ok")].toBool(), qPrintable(cell[QStringLiteral("error")].toString()));
            QCOMPARE(cell[QStringLiteral("variant")].toString(), QStringLiteral("dp4a"));
            QCOMPARE(cell[QStringLiteral("depth")].toString(), QStringLiteral("u8"));
        }
        QFile markdown(out + QStringLiteral("/kernellab-matrix.md"));
        QVERIFY(markdown.open(QIODevice::ReadOnly));
        QVERIFY(markdown.readAll().contains("the first of the variants dp4a that applies to the cell"));
    }

    /// bench --matrix --ops: only the cells of the given ops (every depth and channel count for
    /// histogram, the 4 tap counts for conv1d).
    void matrixRunsTheGivenOps()
    {
        const QString out = QString::fromStdString(kltest::tempDir());
        const CliRun run = runCli({"bench", "--matrix", "--ops", "histogram,conv1d", "--sizes", "67x41", "--frames",
                                   "5003", "--repetitions", "2", "--warmup", "0", "--out-dir", out});
        QVERIFY2(run.exitCode == 0, describe(run));
        const QJsonArray cells = readJson(out + QStringLiteral("/kernellab-matrix.json"))[QStringLiteral("cells")].toArray();
        QCOMPARE(cells.size(), 3 * 3 + 4);
        int conv1d = 0;
        for (const QJsonValue& value : cells) {
            const QJsonObject cell = value.toObject();
            const QString op = cell[QStringLiteral("op")].toString();
            QVERIFY2(op == QLatin1String("histogram") || op == QLatin1String("conv1d"), qPrintable(op));
            QVERIFY2(cell[QStringLiteral("ok")].toBool(), qPrintable(cell[QStringLiteral("error")].toString()));
            conv1d += op == QLatin1String("conv1d");
        }
        QCOMPARE(conv1d, 4);
    }

    void sweepFindsWhereTheGpuWins()
    {
        const CliRun run = runCli({"sweep", "--op", "transpose", "--from", "10", "--to", "20", "--require-gpu"});
        QVERIFY2(run.exitCode == 0, describe(run));
        QVERIFY2(run.out.contains(QStringLiteral("GPU end to end (pinned)")), describe(run));
    }

    void exitsCleanlyAfterGpuWork_data()
    {
        QTest::addColumn<QStringList>("opArgs");
        const QStringList conv2d = {"--op", "conv2d", "--size", "7", "--generate", "image:640x480:u8:3:noise"};
        QTest::newRow("conv2d pinned x4") << conv2d + QStringList{"--memory", "pinned", "--streams", "4"};
        QTest::newRow("conv2d kernel-only") << conv2d + QStringList{"--kernel-only"};  // the stream gate's mapped memory
        QTest::newRow("conv1d fft") << QStringList{"--op", "conv1d", "--preset", "low-pass", "--cutoff", "4000", "--taps",
                                                   "255", "--variant", "fft", "--generate", "signal:100000:2:48000:noise"};
        QTest::newRow("histogram") << QStringList{"--op", "histogram", "--generate", "image:640x480:u16:1:noise"};
    }

    /// The shared engine (buffers, streams, events, cuFFT plans) is released as the process ends,
    /// before the CUDA runtime unloads; none of it may fail noisily or change the exit code.
    void exitsCleanlyAfterGpuWork()
    {
        QFETCH(QStringList, opArgs);
        const CliRun run = runCli(QStringList{"run", "--backends", "gpu", "--repetitions", "2", "--quiet"} + opArgs);
        QVERIFY2(run.exitCode == 0, describe(run));
        QVERIFY2(!run.err.contains(QStringLiteral("failed")), describe(run));
    }

    /// Ctrl-C reaches the engine between repetitions and chunks: a GPU run of about a minute
    /// (8192x8192 f32, 15x15 naive, 1000 end-to-end repetitions) exits with 130 at once.
    void interruptStopsAGpuRun()
    {
        QProcess process;
        process.start(cliPath(), {"run", "--generate", "image:8192x8192:f32:1:noise", "--op", "conv2d", "--preset", "box",
                                  "--size", "15", "--variant", "naive", "--backends", "gpu", "--repetitions", "1000"});
        QVERIFY(process.waitForStarted());
        // The run prints nothing before it ends; this covers generating the input and starting the engine.
        QTest::qWait(5000);
        QCOMPARE(process.state(), QProcess::Running);
        QElapsedTimer sinceInterrupt;
        sinceInterrupt.start();
        ::kill(pid_t(process.processId()), SIGINT);
        QVERIFY(process.waitForFinished(120000));
        const qint64 ms = sinceInterrupt.elapsed();
        qInfo("Ctrl-C to exit: %lld ms", static_cast<long long>(ms));
        const QString err = QString::fromUtf8(process.readAllStandardError());
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        QVERIFY2(process.exitCode() == 130, qPrintable(err));
        QVERIFY2(err.contains(QStringLiteral("cancelled")) && !err.contains(QStringLiteral("failed")), qPrintable(err));
        QVERIFY2(ms < 2000, qPrintable(QStringLiteral("%1 ms from Ctrl-C to exit").arg(ms)));
    }
};

QTEST_GUILESS_MAIN(TestCliGpu)
#include "tst_cli_gpu.moc"
