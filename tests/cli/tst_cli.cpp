// kernellab-cli end to end, without a GPU: argument errors and their exit codes, `run` on
// the sample files for every op (the output file read back against core's functions, the
// report's schema), batches over many files, bench --quick on the CPU backends, sweep, info, and Ctrl-C.
#include "kernellab/conv1d.hpp"
#include "kernellab/conv2d.hpp"
#include "kernellab/histogram.hpp"
#include "kernellab/image_io.hpp"
#include "kernellab/signal_io.hpp"
#include "kernellab/timing.hpp"
#include "kernellab/transpose.hpp"
#include "cli_runner.hpp"
#include "test_support.hpp"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QThread>
#include <QtTest>

#include <opencv2/core.hpp>

#include <signal.h>

#include <cmath>
#include <cstring>

namespace {

using kltest::CliRun;
using kltest::describe;
using kltest::readJson;
using kltest::runCli;

QString sample(const char* name) { return QString::fromStdString(kltest::samplePath(name)); }

QString readTemplate(const QString& op, const QString& name)
{
    return kltest::runCli({"template", "--op", op, "--name", name}).out;
}

/// A template written to a file of its own (kernellab-cli template's output).
QString templateFile(const QString& op, const QString& name)
{
    const QString path = QString::fromStdString(kltest::tempDir()) + QStringLiteral("/%1_%2.cu").arg(op, name);
    kltest::writeFile(path.toStdString(), readTemplate(op, name).toStdString());
    return path;
}

/// The GPU status as the CLI sees it (the tests do not link the CUDA engine).
QJsonObject gpuStatus()
{
    static const QJsonObject status = [] {
        const CliRun run = runCli({QStringLiteral("info"), QStringLiteral("--json")});
        return QJsonDocument::fromJson(run.out.toUtf8()).object()[QStringLiteral("gpu_status")].toObject();
    }();
    return status;
}

/// Counts per label from the CLI's histogram CSV (comment lines skipped).
std::vector<std::vector<uint64_t>> readHistogramCsv(const QString& path, QStringList* labels)
{
    QFile file(path);
    std::vector<std::vector<uint64_t>> counts;
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) return counts;
    bool header = true;
    while (!file.atEnd()) {
        const QString line = QString::fromUtf8(file.readLine()).trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#'))) continue;
        const QStringList fields = line.split(QLatin1Char(','));
        if (header) {
            *labels = fields.mid(3);
            counts.resize(size_t(labels->size()));
            header = false;
            continue;
        }
        for (int i = 3; i < fields.size(); ++i) counts[size_t(i - 3)].push_back(fields[i].toULongLong());
    }
    return counts;
}

/// Runs `run` with cpu-ref once (no warm-up) on the given extra arguments, in `workingDir`.
CliRun runQuick(const QStringList& arguments, const QString& workingDir = {})
{
    return runCli(QStringList{"run", "--backends", "cpu-ref", "--repetitions", "1", "--warmup", "0"} + arguments, workingDir);
}

/// `count` small distinct PNGs in a fresh folder, named f0.png, f1.png ...
QStringList smallImages(int count)
{
    const QString dir = QString::fromStdString(kltest::tempDir()) + QStringLiteral("/in");
    QDir().mkpath(dir);
    QStringList paths;
    for (int i = 0; i < count; ++i) {
        cv::Mat image(9 + i, 13, CV_8UC1);
        cv::randu(image, 0, 256);
        paths << dir + QStringLiteral("/f%1.png").arg(i);
        kl::saveImage(paths.back().toStdString(), image);
    }
    return paths;
}

/// The names in a folder, sorted.
QStringList filesIn(const QString& dir) { return QDir(dir).entryList(QDir::Files, QDir::Name); }

QByteArray bytesOf(const QString& path) { return QByteArray::fromStdString(kltest::readFile(path.toStdString())); }

} // namespace

class TestCli : public QObject {
    Q_OBJECT

    QString dir_;

    /// Runs `run` with CPU backends, a report and an output in a fresh directory; checks exit 0.
    CliRun runOp(const QStringList& arguments, const QString& output)
    {
        dir_ = QString::fromStdString(kltest::tempDir());
        QStringList all = {QStringLiteral("run"), QStringLiteral("--backends"), QStringLiteral("cpu-ref,cpu-opencv"),
                           QStringLiteral("--repetitions"), QStringLiteral("1"), QStringLiteral("--warmup"),
                           QStringLiteral("0"), QStringLiteral("--report"), dir_ + QStringLiteral("/report.json"),
                           QStringLiteral("--csv"), dir_ + QStringLiteral("/report.csv"), QStringLiteral("--output"),
                           dir_ + QLatin1Char('/') + output};
        all << arguments;
        return runCli(all, dir_);
    }

    /// The report's schema fields for a run of `op` on both CPU backends.
    void checkReport(const QString& op)
    {
        const QJsonObject report = readJson(dir_ + QStringLiteral("/report.json"));
        QCOMPARE(report[QStringLiteral("schema")].toString(), QStringLiteral("kernellab-report"));
        QCOMPARE(report[QStringLiteral("schema_version")].toInt(), 2);
        QVERIFY(!report[QStringLiteral("date")].toString().isEmpty());
        const QJsonObject input = report[QStringLiteral("input")].toObject();
        QVERIFY(input.contains(QStringLiteral("name")) && input.contains(QStringLiteral("kind")));
        QVERIFY(input.contains(QStringLiteral("channels")));
        const QJsonObject opJson = report[QStringLiteral("op")].toObject();
        QCOMPARE(opJson[QStringLiteral("name")].toString(), op);
        QVERIFY(opJson[QStringLiteral("parameters")].isObject());
        QVERIFY(opJson[QStringLiteral("spec")].isObject());
        const QJsonObject options = report[QStringLiteral("options")].toObject();
        QCOMPARE(options[QStringLiteral("backends")].toArray().size(), 2);
        for (const char* key : {"variant", "memory", "streams", "repetitions", "warmup", "graph", "timing"})
            QVERIFY2(options[QStringLiteral("gpu")].toObject().contains(QLatin1String(key)), key);
        const QJsonArray results = report[QStringLiteral("results")].toArray();
        QCOMPARE(results.size(), 2);
        for (const QJsonValue& r : results) {
            const QJsonObject result = r.toObject();
            QVERIFY2(result[QStringLiteral("ok")].toBool(), qPrintable(result[QStringLiteral("error")].toString()));
            QVERIFY(result[QStringLiteral("time_ms")].toObject()[QStringLiteral("median")].toDouble() > 0);
        }
        QCOMPARE(report[QStringLiteral("comparison_reference")].toString(), QStringLiteral("cpu-ref"));
        const QJsonObject versusReference =
            report[QStringLiteral("comparisons")].toObject()[QStringLiteral("cpu-opencv")].toObject();
        QVERIFY(versusReference[QStringLiteral("agrees")].toBool());
        for (const char* key : {"max_abs", "mean_abs", "max_rel", "psnr", "differing", "elements"})
            QVERIFY2(versusReference.contains(QLatin1String(key)), key);
        QVERIFY(report[QStringLiteral("speedups")].isObject());
        QVERIFY(report[QStringLiteral("gpu_status")].toObject().contains(QStringLiteral("available")));
        QVERIFY(report[QStringLiteral("cpu_threads")].toInt() >= 1);
        const QJsonObject environment = report[QStringLiteral("environment")].toObject();
        for (const char* key : {"qt", "opencv", "cuda_runtime", "cuda_driver", "cufft", "cpu_model", "hardware_threads"})
            QVERIFY2(environment.contains(QLatin1String(key)), key);

        QFile csv(dir_ + QStringLiteral("/report.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 3);  // header + one row per backend
        QVERIFY(lines[0].startsWith(QStringLiteral("op,input,backend,ok")));
    }

    QString outputPath(const QString& name) const { return dir_ + QLatin1Char('/') + name; }

private slots:
    // ---- argument errors -----------------------------------------------------------

    void noCommandIsBadArguments()
    {
        const CliRun run = runCli({});
        QCOMPARE(run.exitCode, 2);
        QVERIFY(run.err.contains(QStringLiteral("Usage")));
    }

    void unknownCommandIsBadArguments()
    {
        const CliRun run = runCli({QStringLiteral("frobnicate")});
        QVERIFY2(run.exitCode == 2, describe(run));
        QVERIFY(run.err.contains(QStringLiteral("unknown command 'frobnicate'")));
    }

    void badArgumentsExitTwoWithTheReason_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("reason");
        const QString camera = sample("camera.png");
        QTest::newRow("unknown op") << QStringList{"run", "--op", "conv9d", "--input", camera} << "op: 'conv9d' is not one of";
        QTest::newRow("even size") << QStringList{"run", "--op", "conv2d", "--size", "4", "--input", camera} << "must be odd";
        QTest::newRow("bad size") << QStringList{"run", "--op", "conv2d", "--size", "5y", "--input", camera}
                                  << "size: '5y' is not W or WxH";
        QTest::newRow("missing input") << QStringList{"run", "--op", "conv2d", "--input", "/nonexistent/in.png"}
                                       << "cannot read '/nonexistent/in.png'";
        QTest::newRow("no input") << QStringList{"run", "--op", "conv2d"} << "give either an input file";
        QTest::newRow("unknown option") << QStringList{"run", "--frobnicate", "--input", camera} << "frobnicate";
        QTest::newRow("stray argument") << QStringList{"run", "camera.png"} << "unexpected argument";
        QTest::newRow("unknown backend") << QStringList{"run", "--backends", "cpu,gpu", "--input", camera}
                                         << "backends: 'cpu' is not one of";
        QTest::newRow("option of another op") << QStringList{"run", "--op", "conv2d", "--bins", "8", "--input", camera}
                                              << "bins: does not apply to conv2d";
        QTest::newRow("image for conv1d") << QStringList{"run", "--op", "conv1d", "--backends", "cpu-ref", "--input", camera}
                                          << "conv1d: needs a signal input";
        QTest::newRow("npy without rate")
            << QStringList{"run", "--op", "conv1d", "--input", sample("ecg_mitbih208_360hz.npy")} << "pass --rate";
        QTest::newRow("bad preset") << QStringList{"run", "--op", "conv2d", "--preset", "blurry", "--input", camera}
                                    << "preset:";
        QTest::newRow("bad generate") << QStringList{"run", "--generate", "image:12:u8"} << "is not <W>x<H>";
        QTest::newRow("bad output extension")
            << QStringList{"run", "--op", "histogram", "--backends", "cpu-ref", "--input", camera, "--output", "h.png"}
            << "needs one of .csv";
        QTest::newRow("custom without kernel") << QStringList{"run", "--preset", "custom", "--input", camera}
                                               << "custom needs a kernel file";
        QTest::newRow("bad variant") << QStringList{"run", "--backends", "cpu-ref", "--variant", "warp", "--input", camera}
                                     << "variant: 'warp'";
        // Refused before any work (the runs would take seconds); the temporary working directory stays empty.
        QTest::newRow("f32 output as PNG") << QStringList{"run", "--op", "conv2d", "--preset", "sobel-x", "--float-output",
                                                          "--backends", "cpu-ref", "--input", camera, "--output", "out.png"}
                                           << "output: cannot write 'out.png': PNG cannot store a 1-channel f32 image; use";
        QTest::newRow("u16 output as JPEG") << QStringList{"run", "--op", "transpose", "--generate", "image:31x17:u16:3",
                                                           "--backends", "cpu-ref", "--output", "out.jpg"}
                                            << "JPEG cannot store a 3-channel u16 image";
        QTest::newRow("bad memory") << QStringList{"run", "--backends", "cpu-ref", "--memory", "fast", "--input", camera}
                                    << "host memory: 'fast' is not one of pageable, staged, pinned";
        QTest::newRow("bad streams") << QStringList{"run", "--backends", "cpu-ref", "--streams", "0", "--input", camera}
                                     << "streams: 0";
        QTest::newRow("bench bad size") << QStringList{"bench", "--quick", "--sizes", "big"} << "--sizes: 'big'";
        QTest::newRow("bench bad pattern") << QStringList{"bench", "--quick", "--pattern", "stripes"}
                                           << "image pattern: 'stripes' is not one of noise, gradient, checker, constant";
        for (const char* threads : {"0", "-2", "100000"})
            QTest::newRow(qPrintable(QStringLiteral("cpu-threads %1").arg(QLatin1String(threads))))
                << QStringList{"run", "--backends", "cpu-opencv", "--cpu-threads", threads, "--input", camera}
                << QStringLiteral("cpu-threads: %1 is not in 1..1024").arg(QLatin1String(threads));
        QTest::newRow("cpu-threads text") << QStringList{"run", "--cpu-threads", "all", "--input", camera}
                                          << "cpu-threads: 'all' is not a whole number";
        QTest::newRow("bench cpu-threads") << QStringList{"bench", "--quick", "--cpu-threads", "0"}
                                           << "cpu-threads: 0 is not in 1..1024";
        QTest::newRow("sweep bad range") << QStringList{"sweep", "--from", "12", "--to", "10"} << "need from <= to";
        QTest::newRow("block without a kernel") << QStringList{"run", "--block", "32x8", "--input", camera}
                                                << "block: applies to a user kernel only (--kernel-source FILE)";
        QTest::newRow("custom variant without a kernel")
            << QStringList{"run", "--backends", "cpu-ref", "--variant", "custom:mine", "--input", camera}
            << "a user kernel needs --kernel-source FILE";
        QTest::newRow("missing kernel source") << QStringList{"run", "--kernel-source", "/nonexistent/k.cu", "--input", camera}
                                               << "kernel-source: cannot read /nonexistent/k.cu";
        QTest::newRow("unknown template") << QStringList{"template", "--op", "histogram", "--name", "magic"}
                                          << "template: 'magic' is not a histogram template (global-atomics, shared)";
        for (const char* shard : {"0/3", "4/3", "1/0", "a/b", "3", "1/3/2", "-1/3", ""})
            QTest::newRow(qPrintable(QStringLiteral("shard '%1'").arg(QLatin1String(shard))))
                << QStringList{"run", "--backends", "cpu-ref", "--input", camera, "--shard", shard}
                << QStringLiteral("--shard: '%1' is not K/N with whole numbers 1 <= K <= N").arg(QLatin1String(shard));
        QTest::newRow("batch with --output") << QStringList{"run", "--input", camera, "--input", camera, "--output", "o.png"}
                                             << "--output names one file; a batch writes each input's output into --output-dir";
        QTest::newRow("batch of a generated input") << QStringList{"run", "--generate", "image:8x8", "--output-dir", "out"}
                                                    << "--generate makes one input; a batch takes files";
        QTest::newRow("overwrite without output-dir") << QStringList{"run", "--input", camera, "--overwrite"}
                                                      << "--overwrite applies to the outputs of --output-dir DIR";
        QTest::newRow("input and input-list") << QStringList{"run", "--input", camera, "--input-list", "list.txt"}
                                              << "give the inputs with --input or with --input-list, not both";
        QTest::newRow("missing input list") << QStringList{"run", "--input-list", "/nonexistent/list.txt"}
                                            << "--input-list: cannot read '/nonexistent/list.txt'";
        QTest::newRow("same base name twice")
            << QStringList{"run", "--input", camera, "--input", camera, "--output-dir", "out"}
            << QStringLiteral("inputs '%1' and '%1' would both write 'out/camera.png'").arg(camera);
        QTest::newRow("negative device") << QStringList{"run", "--backends", "cpu-ref", "--device", "-1", "--input", camera}
                                         << "--device: '-1' is not a whole number >= 0";
        QTest::newRow("compile unknown arch") << QStringList{"compile", "--op", "transpose", "--kernel-source",
                                                             templateFile("transpose", "naive"), "--arch", "sm_20"}
                                              << "arch: 'sm_20' is not one NVRTC compiles for";
    }

    void badArgumentsExitTwoWithTheReason()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, reason);
        const CliRun run = runCli(arguments, QString::fromStdString(kltest::tempDir()));
        QVERIFY2(run.exitCode == 2, describe(run));
        QVERIFY2(run.err.contains(reason), describe(run));
    }

    /// An output path that is the input (also by another spelling) is refused before any work,
    /// and the input stays as it was.
    void outputOverTheInputIsRefused()
    {
        const QString dir = QString::fromStdString(kltest::tempDir());
        const QString input = dir + QStringLiteral("/in.png");
        QVERIFY(QFile::copy(sample("camera.png"), input));
        const QByteArray before = QByteArray::fromStdString(kltest::readFile(input.toStdString()));
        for (const QString& output : {input, dir + QStringLiteral("/./in.png")}) {
            const CliRun run = runCli({"run", "--op", "conv2d", "--backends", "cpu-ref", "--input", input, "--output", output});
            QVERIFY2(run.exitCode == 2, describe(run));
            QVERIFY2(run.err.contains(QStringLiteral("is the input file; write the result elsewhere")), describe(run));
        }
        QCOMPARE(QByteArray::fromStdString(kltest::readFile(input.toStdString())), before);
    }

    void gpuRequestedWithoutDeviceExitsThree()
    {
        if (gpuStatus()[QStringLiteral("available")].toBool()) QSKIP("a GPU is present: the no-device path cannot occur");
        const CliRun run = runCli({QStringLiteral("run"), QStringLiteral("--backends"), QStringLiteral("cpu-ref,gpu"),
                                   QStringLiteral("--input"), sample("camera.png")});
        QVERIFY2(run.exitCode == 3, describe(run));
        QVERIFY2(run.err.contains(QStringLiteral("no CUDA device: ")), describe(run));
        // The runtime's "insufficient driver" names neither case: the reason tells no driver from an old one.
        const QString reason = gpuStatus()[QStringLiteral("reason")].toString();
        if (reason.contains(QLatin1String("cudaErrorInsufficientDriver")))
            QVERIFY2(reason.startsWith(QLatin1String("no NVIDIA driver found (")) ||
                         reason.startsWith(QLatin1String("the NVIDIA driver is too old: it supports CUDA ")),
                     qPrintable(reason));
        for (const QStringList& command : {QStringList{"bench", "--require-gpu"}, QStringList{"sweep", "--require-gpu"},
                                           QStringList{"bench", "--matrix"},
                                           QStringList{"run", "--backends", "cpu-ref", "--device", "0", "--input", sample("camera.png")},
                                           QStringList{"bench", "--quick", "--backends", "cpu-ref", "--device", "1"}}) {
            const CliRun required = runCli(command);
            QVERIFY2(required.exitCode == 3, describe(required));
            QVERIFY2(required.err.contains(QStringLiteral("no CUDA device: ")), describe(required));
        }
    }

    void defaultBackendsReportTheMissingGpu()
    {
        if (gpuStatus()[QStringLiteral("available")].toBool()) QSKIP("a GPU is present: the no-device path cannot occur");
        dir_ = QString::fromStdString(kltest::tempDir());
        const CliRun run = runCli({QStringLiteral("run"), QStringLiteral("--input"), sample("camera.png"),
                                   QStringLiteral("--repetitions"), QStringLiteral("1"), QStringLiteral("--report"),
                                   outputPath(QStringLiteral("report.json"))});
        QVERIFY2(run.exitCode == 0, describe(run));
        const QJsonArray results = readJson(outputPath(QStringLiteral("report.json")))[QStringLiteral("results")].toArray();
        QCOMPARE(results.size(), 3);
        const QJsonObject gpu = results[2].toObject();
        QCOMPARE(gpu[QStringLiteral("backend")].toString(), QStringLiteral("gpu"));
        QVERIFY(!gpu[QStringLiteral("ok")].toBool());
        QVERIFY(gpu[QStringLiteral("error")].toString().startsWith(QStringLiteral("no CUDA device: ")));
    }

    // ---- run on the sample files ------------------------------------------------------

    void conv2dGaussianCamera()
    {
        const CliRun run = runOp({"--op", "conv2d", "--preset", "gaussian", "--size", "5", "--input", sample("camera.png")},
                                 QStringLiteral("out.png"));
        QVERIFY2(run.exitCode == 0, describe(run));
        const cv::Mat input = kl::loadImage(sample("camera.png").toStdString());
        kl::Conv2DSpec spec;
        spec.kernel = kl::makeConv2DKernel(kl::Conv2DPreset::Gaussian, {});
        QVERIFY(kltest::bitwiseEqual(kl::loadImage(outputPath(QStringLiteral("out.png")).toStdString()), kl::conv2dReference(input, spec)));
        checkReport(QStringLiteral("conv2d"));
    }

    void conv2dSobelAstronautFloat()
    {
        const CliRun run = runOp({"--op", "conv2d", "--preset", "sobel-x", "--border", "replicate", "--input",
                                  sample("astronaut.png")},
                                 QStringLiteral("out.tif"));
        QVERIFY2(run.exitCode == 0, describe(run));
        kl::Conv2DSpec spec;
        spec.kernel = kl::makeConv2DKernel(kl::Conv2DPreset::SobelX, {});
        spec.border = kl::BorderMode::Replicate;
        spec.floatOutput = true;  // the preset's natural result is signed
        const cv::Mat want = kl::conv2dReference(kl::loadImage(sample("astronaut.png").toStdString()), spec);
        QVERIFY(kltest::bitwiseEqual(kl::loadImage(outputPath(QStringLiteral("out.tif")).toStdString()), want));
        checkReport(QStringLiteral("conv2d"));
    }

    void conv2dCustomKernelOnU16()
    {
        dir_ = QString::fromStdString(kltest::tempDir());
        QFile kernelFile(dir_ + QStringLiteral("/kernel.txt"));
        QVERIFY(kernelFile.open(QIODevice::WriteOnly | QIODevice::Text));
        kernelFile.write("# a 3x5 blur\n1, 2, 3, 2, 1\n2 4 6 4 2\n1;2;3;2;1\n");
        kernelFile.close();
        const QString kernelPath = kernelFile.fileName();
        const CliRun run = runOp({"--op", "conv2d", "--kernel", kernelPath, "--normalize", "--border", "constant",
                                  "--border-value", "1000", "--input", sample("chessboard_GRAY_U16.tif")},
                                 QStringLiteral("out.png"));
        QVERIFY2(run.exitCode == 0, describe(run));
        kl::Conv2DPresetParams params;
        params.custom = (cv::Mat_<float>(3, 5) << 1, 2, 3, 2, 1, 2, 4, 6, 4, 2, 1, 2, 3, 2, 1);
        params.normalize = true;
        kl::Conv2DSpec spec;
        spec.kernel = kl::makeConv2DKernel(kl::Conv2DPreset::Custom, params);
        spec.border = kl::BorderMode::Constant;
        spec.borderValue = 1000;
        const cv::Mat want = kl::conv2dReference(kl::loadImage(sample("chessboard_GRAY_U16.tif").toStdString()), spec);
        QVERIFY(kltest::bitwiseEqual(kl::loadImage(outputPath(QStringLiteral("out.png")).toStdString()), want));
        checkReport(QStringLiteral("conv2d"));
    }

    void conv1dLowPassEcg()
    {
        const CliRun run = runOp({"--op", "conv1d", "--preset", "low-pass", "--cutoff", "40", "--taps", "101", "--input",
                                  sample("ecg_mitbih208_360hz.npy"), "--rate", "360"},
                                 QStringLiteral("out.npy"));
        QVERIFY2(run.exitCode == 0, describe(run));
        kl::SignalLoadOptions rate;
        rate.sampleRate = 360;
        const kl::Signal input = kl::loadSignal(sample("ecg_mitbih208_360hz.npy").toStdString(), rate);
        kl::Conv1DPresetParams params;
        params.taps = 101;
        params.lowHz = 40;
        params.sampleRate = 360;
        kl::Conv1DSpec spec;
        spec.taps = kl::makeConv1DKernel(kl::Conv1DPreset::LowPass, params);
        const kl::Signal want = kl::conv1dReference(input, spec);
        const kl::Signal got = kl::loadSignal(outputPath(QStringLiteral("out.npy")).toStdString(), rate);
        QCOMPARE(got.frames, want.frames);
        QVERIFY(got.data == want.data);
        checkReport(QStringLiteral("conv1d"));
        const QJsonObject input_ = readJson(outputPath(QStringLiteral("report.json")))[QStringLiteral("input")].toObject();
        QCOMPARE(input_[QStringLiteral("sample_rate")].toDouble(), 360.0);
        QCOMPARE(input_[QStringLiteral("frames")].toInt(), 108000);
    }

    void conv1dCustomTapsSpeech()
    {
        dir_ = QString::fromStdString(kltest::tempDir());
        kl::Signal taps(1, 5, 1.0);
        taps.data = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};
        const QString tapsPath = dir_ + QStringLiteral("/taps.npy");
        kl::saveSignal(tapsPath.toStdString(), taps);
        const CliRun run = runOp({"--op", "conv1d", "--kernel", tapsPath, "--mode", "full", "--input", sample("speech_22k.wav")},
                                 QStringLiteral("out.wav"));
        QVERIFY2(run.exitCode == 0, describe(run));
        kl::Conv1DSpec spec;
        spec.taps = taps.data;
        spec.mode = kl::Conv1DMode::Full;
        const kl::Signal want = kl::conv1dReference(kl::loadSignal(sample("speech_22k.wav").toStdString()), spec);
        const kl::Signal got = kl::loadSignal(outputPath(QStringLiteral("out.wav")).toStdString());
        QCOMPARE(got.frames, want.frames);
        QCOMPARE(got.sampleRate, 22050.0);
        QVERIFY(got.data == want.data);
        checkReport(QStringLiteral("conv1d"));
    }

    void histogramAstronaut()
    {
        const CliRun run = runOp({"--op", "histogram", "--input", sample("astronaut.png")}, QStringLiteral("hist.csv"));
        QVERIFY2(run.exitCode == 0, describe(run));
        const kl::HistogramResult want = kl::histogramReference(kl::loadImage(sample("astronaut.png").toStdString()), {});
        QStringList labels;
        const auto counts = readHistogramCsv(outputPath(QStringLiteral("hist.csv")), &labels);
        QCOMPARE(labels, (QStringList{"B", "G", "R", "Y"}));
        QVERIFY(counts == want.counts);
        checkReport(QStringLiteral("histogram"));
    }

    void histogramU16BinsAndRange()
    {
        const CliRun run = runOp({"--op", "histogram", "--bins", "64", "--range", "1000,60000", "--input",
                                  sample("chessboard_GRAY_U16.tif")},
                                 QStringLiteral("hist.csv"));
        QVERIFY2(run.exitCode == 0, describe(run));
        kl::HistogramSpec spec;
        spec.bins = 64;
        spec.lo = 1000;
        spec.hi = 60000;
        const kl::HistogramResult want = kl::histogramReference(kl::loadImage(sample("chessboard_GRAY_U16.tif").toStdString()), spec);
        QStringList labels;
        QVERIFY(readHistogramCsv(outputPath(QStringLiteral("hist.csv")), &labels) == want.counts);
        checkReport(QStringLiteral("histogram"));
        const QJsonObject spec_ =
            readJson(outputPath(QStringLiteral("report.json")))[QStringLiteral("op")].toObject()[QStringLiteral("spec")].toObject();
        QCOMPARE(spec_[QStringLiteral("bins")].toInt(), 64);
        QCOMPARE(spec_[QStringLiteral("range")].toArray().at(1).toDouble(), 60000.0);
    }

    void transposeCamera()
    {
        const CliRun run = runOp({"--op", "transpose", "--input", sample("coffee.png")}, QStringLiteral("out.png"));
        QVERIFY2(run.exitCode == 0, describe(run));
        const cv::Mat want = kl::transposeReference(kl::loadImage(sample("coffee.png").toStdString()));
        QVERIFY(kltest::bitwiseEqual(kl::loadImage(outputPath(QStringLiteral("out.png")).toStdString()), want));
        checkReport(QStringLiteral("transpose"));
    }

    void transposeStereoSignalInterleaves()
    {
        const CliRun run = runOp({"--op", "transpose", "--input", sample("chirp_noise_48k_stereo.wav")}, QStringLiteral("out.npy"));
        QVERIFY2(run.exitCode == 0, describe(run));
        const kl::Signal input = kl::loadSignal(sample("chirp_noise_48k_stereo.wav").toStdString());
        // A (frames, channels) .npy holds the interleaved samples in file order.
        QFile npy(outputPath(QStringLiteral("out.npy")));
        QVERIFY(npy.open(QIODevice::ReadOnly));
        const QByteArray bytes = npy.readAll();
        const std::vector<float> want = kl::toInterleaved(input);
        const qsizetype dataBytes = qsizetype(want.size() * sizeof(float));
        QVERIFY(bytes.size() > dataBytes);
        QVERIFY(std::memcmp(bytes.constData() + bytes.size() - dataBytes, want.data(), size_t(dataBytes)) == 0);
        QVERIFY(bytes.contains("(192000, 2)"));
        checkReport(QStringLiteral("transpose"));
    }

    void generatedInputAndJsonOnStdout()
    {
        const CliRun run = runCli({"run", "--generate", "image:64x48:u16:3:checker", "--op", "conv2d", "--preset",
                                   "box", "--size", "3x5", "--backends", "cpu-ref,cpu-opencv", "--json"});
        QVERIFY2(run.exitCode == 0, describe(run));
        const QJsonObject report = QJsonDocument::fromJson(run.out.toUtf8()).object();
        const QJsonObject input = report[QStringLiteral("input")].toObject();
        QCOMPARE(input[QStringLiteral("name")].toString(), QStringLiteral("generated: image:64x48:u16:3:checker"));
        QCOMPARE(input[QStringLiteral("width")].toInt(), 64);
        QCOMPARE(input[QStringLiteral("depth")].toString(), QStringLiteral("u16"));
        const QJsonObject spec = report[QStringLiteral("op")].toObject()[QStringLiteral("spec")].toObject();
        QCOMPARE(spec[QStringLiteral("kernel_width")].toInt(), 3);
        QCOMPARE(spec[QStringLiteral("kernel_height")].toInt(), 5);
    }

    void everyGeneratePattern_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<int>("elements");
        QTest::newRow("noise u8") << "image:17x9:u8:1:noise" << 17 * 9;
        QTest::newRow("gradient u16") << "image:17x9:u16:3:gradient" << 17 * 9 * 3;
        QTest::newRow("checker f32") << "image:17x9:f32:4:checker" << 17 * 9 * 4;
        QTest::newRow("constant") << "image:5x5:u8:1:constant" << 25;
        QTest::newRow("defaults") << "image:5x3" << 15;
        QTest::newRow("noise signal") << "signal:1000:2:8000:noise" << 2000;
        QTest::newRow("chirp") << "signal:1K:1:48000:chirp" << 1024;
        QTest::newRow("sines") << "signal:100:3:1000:sines" << 300;
    }

    void everyGeneratePattern()
    {
        QFETCH(QString, spec);
        QFETCH(int, elements);
        const CliRun run = runCli({"run", "--generate", spec, "--op", "transpose", "--backends", "cpu-ref,cpu-opencv", "--json"});
        QVERIFY2(run.exitCode == 0, describe(run));
        const QJsonObject report = QJsonDocument::fromJson(run.out.toUtf8()).object();
        const QJsonObject comparison = report[QStringLiteral("comparisons")].toObject()[QStringLiteral("cpu-opencv")].toObject();
        QVERIFY(comparison[QStringLiteral("agrees")].toBool());
        QCOMPARE(comparison[QStringLiteral("elements")].toInt(), elements);
    }

    void outputBackendChoosesWhoseOutput()
    {
        const CliRun run = runOp({"--op", "conv2d", "--preset", "sharpen", "--output-backend", "cpu-opencv", "--input",
                                  sample("camera.png")},
                                 QStringLiteral("out.png"));
        QVERIFY2(run.exitCode == 0, describe(run));
        kl::Conv2DSpec spec;
        spec.kernel = kl::makeConv2DKernel(kl::Conv2DPreset::Sharpen, {});
        const cv::Mat want = kl::conv2dOpenCV(kl::loadImage(sample("camera.png").toStdString()), spec);
        QVERIFY(kltest::bitwiseEqual(kl::loadImage(outputPath(QStringLiteral("out.png")).toStdString()), want));
    }

    // ---- run over many files (--output-dir, --input-list, --shard) ---------------------------------

    void batchOutputNames_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("output");
        QTest::newRow("png stays png") << QStringList{"--op", "conv2d"} << sample("camera.png") << "camera.png";
        QTest::newRow("f32 result from png") << QStringList{"--op", "conv2d", "--preset", "sobel-x"} << sample("camera.png")
                                             << "camera.tif";
        QTest::newRow("float-output from png") << QStringList{"--op", "conv2d", "--float-output"} << sample("coffee.png")
                                               << "coffee.tif";
        QTest::newRow("u16 tif") << QStringList{"--op", "conv2d"} << sample("chessboard_GRAY_U16.tif")
                                 << "chessboard_GRAY_U16.tif";
        QTest::newRow("transpose png") << QStringList{"--op", "transpose"} << sample("coffee.png") << "coffee.png";
        QTest::newRow("histogram") << QStringList{"--op", "histogram"} << sample("astronaut.png") << "astronaut.csv";
        QTest::newRow("conv1d wav") << QStringList{"--op", "conv1d"} << sample("speech_22k.wav") << "speech_22k.wav";
        QTest::newRow("conv1d csv") << QStringList{"--op", "conv1d"} << sample("ecg_mitbih208_360hz.csv")
                                    << "ecg_mitbih208_360hz.csv";
        QTest::newRow("raw signal to wav") << QStringList{"--op", "conv1d", "--rate", "1000"} << "signal.f32" << "signal.wav";
    }

    /// The input's own extension where its format holds the output, else .tif, .wav or .csv.
    void batchOutputNames()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, input);
        QFETCH(QString, output);
        const QString dir = QString::fromStdString(kltest::tempDir());
        QString path = input;
        if (input == QLatin1String("signal.f32")) {  // a raw float32 signal, written here
            path = dir + QLatin1Char('/') + input;
            const std::vector<float> samples = {0.5f, -1, 2, 0.25f, 3, -0.5f, 1, 0};
            kltest::writeFile(path.toStdString(), std::string(reinterpret_cast<const char*>(samples.data()), samples.size() * 4));
        }
        const CliRun run = runQuick(arguments + QStringList{"--input", path, "--output-dir", dir + "/out"});
        QVERIFY2(run.exitCode == 0, describe(run));
        QCOMPARE(filesIn(dir + QStringLiteral("/out")), QStringList{output});
    }

    /// A bad file fails alone: the others are written as a single run writes them, the report has a
    /// row per file with the bad one's error, and the exit code is 1 with the count.
    void batchWithABadFileWritesTheOthersAndExitsOne()
    {
        const QString dir = QString::fromStdString(kltest::tempDir());
        QVERIFY(QFile::copy(sample("camera.png"), dir + QStringLiteral("/a.png")));
        kltest::writeFile((dir + QStringLiteral("/b.png")).toStdString(), "not a PNG at all");
        QVERIFY(QFile::copy(sample("coffee.png"), dir + QStringLiteral("/c.png")));
        const QStringList inputs = {dir + "/a.png", dir + "/b.png", dir + "/c.png"};
        const QStringList gaussian = {"--op", "conv2d", "--preset", "gaussian", "--size", "5"};
        const CliRun run = runQuick(gaussian + QStringList{"--input", inputs[0], "--input", inputs[1], "--input", inputs[2],
                                                           "--output-dir", dir + "/out", "--report", dir + "/batch.json",
                                                           "--csv", dir + "/batch.csv"});
        QVERIFY2(run.exitCode == 1, describe(run));
        QVERIFY2(run.err.contains(QStringLiteral("1 of 3 files failed: %1").arg(inputs[1])), describe(run));
        QCOMPARE(filesIn(dir + QStringLiteral("/out")), (QStringList{"a.png", "c.png"}));
        for (const QString& name : {QStringLiteral("a.png"), QStringLiteral("c.png")}) {
            const CliRun single = runQuick(gaussian + QStringList{"--input", dir + "/" + name, "--output", dir + "/single_" + name});
            QVERIFY2(single.exitCode == 0, describe(single));
            QVERIFY(kltest::bitwiseEqual(kl::loadImage((dir + "/out/" + name).toStdString()),
                                         kl::loadImage((dir + "/single_" + name).toStdString())));
        }

        const QJsonObject report = readJson(dir + QStringLiteral("/batch.json"));
        QCOMPARE(report[QStringLiteral("schema")].toString(), QStringLiteral("kernellab-batch-report"));
        QCOMPARE(report[QStringLiteral("failed")].toInt(), 1);
        QVERIFY(report[QStringLiteral("complete")].toBool());
        const QJsonArray files = report[QStringLiteral("files")].toArray();
        QCOMPARE(files.size(), 3);
        for (int i : {0, 2}) {
            const QJsonObject file = files[i].toObject();
            QCOMPARE(file[QStringLiteral("input")].toString(), inputs[i]);
            QVERIFY(file[QStringLiteral("ok")].toBool());
            QCOMPARE(file[QStringLiteral("output")].toString(), dir + "/out/" + QFileInfo(inputs[i]).fileName());
            const QJsonObject runReport = file[QStringLiteral("report")].toObject();
            QCOMPARE(runReport[QStringLiteral("schema")].toString(), QStringLiteral("kernellab-report"));
            QCOMPARE(runReport[QStringLiteral("input")].toObject()[QStringLiteral("name")].toString(), inputs[i]);
        }
        const QJsonObject bad = files[1].toObject();
        QVERIFY(!bad[QStringLiteral("ok")].toBool());
        QVERIFY(bad[QStringLiteral("output")].isNull() && bad[QStringLiteral("report")].isNull());
        QVERIFY2(bad[QStringLiteral("error")].toString().contains(inputs[1]), qPrintable(bad[QStringLiteral("error")].toString()));

        QFile csv(dir + QStringLiteral("/batch.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 4);  // header + one backend row per file
        QVERIFY(lines[0].startsWith(QStringLiteral("op,input,backend,ok,")) &&
                lines[0].endsWith(QStringLiteral(",output,file_ok,file_error")));
        QVERIFY2(lines[1].startsWith(QStringLiteral("conv2d,%1,cpu-ref,true,").arg(inputs[0])) &&
                     lines[1].endsWith(QStringLiteral(",%1/out/a.png,true,").arg(dir)),
                 qPrintable(lines[1]));
        QVERIFY2(lines[2].startsWith(QStringLiteral("conv2d,%1,,false,").arg(inputs[1])) && lines[2].contains(",,false,"),
                 qPrintable(lines[2]));
    }

    /// Existing outputs are refused before any work, naming one; --overwrite replaces them.
    void batchRefusesExistingOutputsUnlessOverwrite()
    {
        const QStringList inputs = smallImages(2);
        const QString out = QString::fromStdString(kltest::tempDir());
        kltest::writeFile((out + QStringLiteral("/f1.png")).toStdString(), "an older result");
        const QStringList batch = {"--op", "transpose", "--input", inputs[0], "--input", inputs[1], "--output-dir", out};
        const CliRun refused = runQuick(batch);
        QVERIFY2(refused.exitCode == 2, describe(refused));
        QVERIFY2(refused.err.contains(QStringLiteral("the output '%1/f1.png' exists (1 of the 2 outputs do); pass "
                                                     "--overwrite").arg(out)),
                 describe(refused));
        QCOMPARE(filesIn(out), QStringList{"f1.png"});  // nothing written
        QCOMPARE(bytesOf(out + QStringLiteral("/f1.png")), QByteArray("an older result"));

        const CliRun replaced = runQuick(batch + QStringList{"--overwrite"});
        QVERIFY2(replaced.exitCode == 0, describe(replaced));
        QCOMPARE(filesIn(out), (QStringList{"f0.png", "f1.png"}));
        for (int i = 0; i < 2; ++i)
            QVERIFY(kltest::bitwiseEqual(kl::loadImage((out + QStringLiteral("/f%1.png").arg(i)).toStdString()),
                                         kl::transposeReference(kl::loadImage(inputs[i].toStdString()))));
    }

    /// Shards K = 1..N of one list process every file exactly once: shard K takes K, K+N ... (1-based).
    void shardsCoverEveryFileOnce()
    {
        const QStringList inputs = smallImages(7);
        const QString dir = QString::fromStdString(kltest::tempDir());
        const int shards = 3;
        QStringList processed;
        for (int k = 1; k <= shards; ++k) {
            const QString report = dir + QStringLiteral("/shard%1.json").arg(k);
            QStringList arguments = {"--op", "transpose", "--shard", QStringLiteral("%1/%2").arg(k).arg(shards),
                                     "--output-dir", dir + "/out", "--report", report};
            for (const QString& input : inputs) arguments << "--input" << input;
            const CliRun run = runQuick(arguments);
            QVERIFY2(run.exitCode == 0, describe(run));
            const QJsonObject json = readJson(report);
            QCOMPARE(json[QStringLiteral("listed")].toInt(), 7);
            QCOMPARE(json[QStringLiteral("shard")].toObject()[QStringLiteral("index")].toInt(), k);
            QStringList mine;
            for (const QJsonValue& file : json[QStringLiteral("files")].toArray())
                mine << file.toObject()[QStringLiteral("input")].toString();
            QStringList expected;
            for (int i = k - 1; i < inputs.size(); i += shards) expected << inputs[i];
            QCOMPARE(mine, expected);
            processed << mine;
        }
        processed.sort();
        QStringList all = inputs;
        all.sort();
        QCOMPARE(processed, all);
        QCOMPARE(filesIn(dir + QStringLiteral("/out")).size(), 7);
    }

    /// An output that is an input is refused, --overwrite or not, also through a symlinked folder.
    void batchOutputOverAnInputIsRefused()
    {
        const QStringList inputs = smallImages(2);
        const QString inputDir = QFileInfo(inputs[0]).absolutePath();
        const QString link = QString::fromStdString(kltest::tempDir()) + QStringLiteral("/link");
        QVERIFY(QFile::link(inputDir, link));
        const QByteArray before = bytesOf(inputs[1]);
        for (const QString& outputDir : {inputDir, link, inputDir + QStringLiteral("/../in")}) {
            const CliRun run = runQuick({"--op", "conv2d", "--input", inputs[0], "--input", inputs[1], "--output-dir",
                                         outputDir, "--overwrite"});
            QVERIFY2(run.exitCode == 2, describe(run));
            QVERIFY2(run.err.contains(QStringLiteral("the output '%1/f0.png' of '%2' is the input file '%2'; choose another "
                                                     "--output-dir").arg(outputDir, inputs[0])),
                     describe(run));
        }
        QCOMPARE(bytesOf(inputs[1]), before);
    }

    /// --input-list: comments and blank lines skipped, relative paths relative to the list's folder.
    void inputListReadsPathsBesideIt()
    {
        const QStringList inputs = smallImages(3);
        const QString listDir = QFileInfo(inputs[0]).absolutePath();
        const QString list = listDir + QStringLiteral("/files.txt");
        kltest::writeFile(list.toStdString(), QStringLiteral("# the batch\n\nf0.png\n  f2.png  \n# f1.png is left out\n%1\n")
                                                  .arg(inputs[1])
                                                  .toStdString());
        const QString elsewhere = QString::fromStdString(kltest::tempDir());
        const CliRun run = runQuick({"--op", "transpose", "--input-list", list, "--output-dir", "out", "--json"}, elsewhere);
        QVERIFY2(run.exitCode == 0, describe(run));
        QStringList processed;
        for (const QJsonValue& file : QJsonDocument::fromJson(run.out.toUtf8()).object()[QStringLiteral("files")].toArray())
            processed << file.toObject()[QStringLiteral("input")].toString();
        QCOMPARE(processed, (QStringList{inputs[0], inputs[2], inputs[1]}));
        QCOMPARE(filesIn(elsewhere + QStringLiteral("/out")), (QStringList{"f0.png", "f1.png", "f2.png"}));

        kltest::writeFile(list.toStdString(), "# nothing\n\n");
        const CliRun empty = runQuick({"--op", "transpose", "--input-list", list});
        QVERIFY2(empty.exitCode == 2, describe(empty));
        QVERIFY2(empty.err.contains(QStringLiteral("--input-list: '%1' names no input file").arg(list)), describe(empty));
    }

    // ---- info, bench, sweep, Ctrl-C ---------------------------------------------------------

    void infoPrintsCpuThreads()
    {
        const CliRun run = runCli({QStringLiteral("info")});
        QVERIFY2(run.exitCode == 0, describe(run));
        const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("CPU threads: (\\d+)")).match(run.out);
        QVERIFY2(m.hasMatch(), describe(run));
        QCOMPARE(m.captured(1).toInt(), kl::hardwareThreads());
        QVERIFY(run.out.contains(QStringLiteral("OpenCV")));
        if (!gpuStatus()[QStringLiteral("available")].toBool())
            QVERIFY2(run.out.contains(QStringLiteral("no CUDA device: ")), describe(run));
    }

    void benchQuickOnCpuWritesThreeFiles()
    {
        const QString out = QString::fromStdString(kltest::tempDir());
        const CliRun run = runCli({"bench", "--quick", "--backends", "cpu-ref,cpu-opencv", "--out-dir", out});
        QVERIFY2(run.exitCode == 0, describe(run));
        const QJsonObject json = readJson(out + QStringLiteral("/kernellab-bench.json"));
        QCOMPARE(json[QStringLiteral("schema")].toString(), QStringLiteral("kernellab-bench"));
        const QJsonArray rows = json[QStringLiteral("rows")].toArray();
        // (conv2d, histogram, transpose) x (u8, f32) + conv1d, each on both CPU backends.
        QCOMPARE(rows.size(), (3 * 2 + 1) * 2);
        for (const QJsonValue& row : rows) {
            QVERIFY2(row.toObject()[QStringLiteral("ok")].toBool(), qPrintable(row.toObject()[QStringLiteral("error")].toString()));
            QVERIFY(row.toObject()[QStringLiteral("end_to_end_ms")].toObject()[QStringLiteral("median")].toDouble() > 0);
        }
        QCOMPARE(json[QStringLiteral("gpu_status")].toObject()[QStringLiteral("available")].toBool(), false);
        QCOMPARE(json[QStringLiteral("parameters")].toObject()[QStringLiteral("image_pattern")].toString(),
                 QStringLiteral("noise"));

        QFile csv(out + QStringLiteral("/kernellab-bench.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly | QIODevice::Text));
        QCOMPARE(QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n')).size(), 1 + rows.size());
        QFile markdown(out + QStringLiteral("/kernellab-bench.md"));
        QVERIFY(markdown.open(QIODevice::ReadOnly | QIODevice::Text));
        const QString table = QString::fromUtf8(markdown.readAll());
        QVERIFY(table.contains(QStringLiteral("| op | backend | variant | size | depth |")));
        QCOMPARE(int(table.count(QStringLiteral("| conv2d | cpu-"))), 4);
        QVERIFY(run.out.contains(QStringLiteral("kernel ms")));  // the table on stdout
    }

    void benchDumpsInputsAsNpy()
    {
        const QString out = QString::fromStdString(kltest::tempDir());
        const QString inputs = out + QStringLiteral("/inputs");
        const CliRun run = runCli({"bench", "--quick", "--ops", "conv2d", "--sizes", "64x32", "--depths", "u8",
                                   "--backends", "cpu-opencv", "--out-dir", out, "--dump-inputs", inputs});
        QVERIFY2(run.exitCode == 0, describe(run));
        const QJsonObject row = readJson(out + QStringLiteral("/kernellab-bench.json"))[QStringLiteral("rows")]
                                    .toArray()
                                    .first()
                                    .toObject();
        const auto dumped = [&](const char* field) {
            return (inputs + QLatin1Char('/') + row[QLatin1String(field)].toString()).toStdString();
        };
        // The image: NumPy's header (the data 64-byte aligned), then the 32 x 64 u8 pixels.
        const std::string image = kltest::readFile(dumped("input_file"));
        QVERIFY(image.find("'descr': '|u1', 'fortran_order': False, 'shape': (32, 64), }") != std::string::npos);
        QCOMPARE(image.size() % 64, size_t(0));
        QCOMPARE(image.size() - (10 + (uint8_t(image[8]) | size_t(uint8_t(image[9])) << 8)), size_t(32 * 64));
        // The 5 x 5 Gaussian, read back through the signal reader as 5 frames x 5 channels.
        kl::SignalLoadOptions options;
        options.sampleRate = 1;
        const kl::Signal kernel = kl::loadSignal(dumped("kernel_file"), options);
        QCOMPARE(kernel.frames, size_t(5));
        QCOMPARE(kernel.channels, 5);
        double sum = 0;
        for (float tap : kernel.data) sum += tap;
        QVERIFY(std::fabs(sum - 1) < 1e-5);
    }

    // The threads and the host roof in the report; the same output on 1 thread as on all.
    void cpuThreadsAndHostBandwidthReported()
    {
        QByteArray firstOutput;
        for (const QString& threads : {QStringLiteral("1"), QString::number(kl::hardwareThreads())}) {
            const CliRun run = runOp({"--op", "conv2d", "--preset", "gaussian", "--sigma", "1.3", "--output-backend",
                                      "cpu-opencv", "--cpu-threads", threads, "--input", sample("astronaut.png")},
                                     QStringLiteral("out.png"));
            QVERIFY2(run.exitCode == 0, describe(run));
            QVERIFY2(run.out.contains(QStringLiteral("on %1 thread(s)").arg(threads)), describe(run));
            QVERIFY2(run.out.contains(QStringLiteral("host memory bandwidth: ")), describe(run));
            const QJsonObject report = readJson(outputPath(QStringLiteral("report.json")));
            QCOMPARE(report[QStringLiteral("cpu_threads")].toInt(), threads.toInt());
            QCOMPARE(report[QStringLiteral("options")].toObject()[QStringLiteral("cpu")].toObject()[QStringLiteral("threads")].toInt(),
                     threads.toInt());
            QVERIFY(report[QStringLiteral("host_bandwidth_gbs")].toDouble() > 0);
            for (const QJsonValue& result : report[QStringLiteral("results")].toArray()) {
                QVERIFY(result.toObject()[QStringLiteral("gbs")].toDouble() > 0);
                QVERIFY(result.toObject()[QStringLiteral("host_bandwidth_pct")].toDouble() > 0);
            }
            QFile out(outputPath(QStringLiteral("out.png")));
            QVERIFY(out.open(QIODevice::ReadOnly));
            if (firstOutput.isEmpty()) firstOutput = out.readAll();
            else QVERIFY(out.readAll() == firstOutput);
        }
    }

    void benchThreadScalingRowsPerThreadCount()
    {
        const QString out = QString::fromStdString(kltest::tempDir());
        const CliRun run = runCli({"bench", "--quick", "--ops", "transpose", "--depths", "u8", "--sizes", "257x131",
                                   "--backends", "cpu-opencv", "--thread-scaling", "--cpu-threads", "3", "--out-dir", out});
        QVERIFY2(run.exitCode == 0, describe(run));
        const QJsonObject json = readJson(out + QStringLiteral("/kernellab-bench.json"));
        QCOMPARE(json[QStringLiteral("cpu_threads")].toInt(), 3);
        QList<int> threads;
        for (const QJsonValue& row : json[QStringLiteral("rows")].toArray()) {
            QVERIFY2(row.toObject()[QStringLiteral("ok")].toBool(), qPrintable(row.toObject()[QStringLiteral("error")].toString()));
            QVERIFY(row.toObject()[QStringLiteral("host_bandwidth_pct")].toDouble() > 0);
            threads << row.toObject()[QStringLiteral("cpu_threads")].toInt();
        }
        QCOMPARE(threads, (QList<int>{3, 1, 2}));  // the bench's own count first, then the scaling runs
        for (const char* count : {"1", "2", "3"})
            QVERIFY2(json[QStringLiteral("host_bandwidth_gbs")].toObject()[QLatin1String(count)].toDouble() > 0, count);
    }

    // --pattern constant: the histogram's worst case (every pixel in one bin), as the bench times it.
    void benchPatternConstantTimesAConstantImage()
    {
        const QString out = QString::fromStdString(kltest::tempDir()), inputs = out + QStringLiteral("/inputs");
        const CliRun run = runCli({"bench", "--quick", "--ops", "histogram", "--depths", "u8", "--sizes", "257x131",
                                   "--pattern", "constant", "--backends", "cpu-ref,cpu-opencv", "--out-dir", out,
                                   "--dump-inputs", inputs});
        QVERIFY2(run.exitCode == 0, describe(run));
        const QJsonObject json = readJson(out + QStringLiteral("/kernellab-bench.json"));
        QCOMPARE(json[QStringLiteral("parameters")].toObject()[QStringLiteral("image_pattern")].toString(),
                 QStringLiteral("constant"));
        QCOMPARE(json[QStringLiteral("rows")].toArray().size(), 2);
        QFile markdown(out + QStringLiteral("/kernellab-bench.md"));
        QVERIFY(markdown.open(QIODevice::ReadOnly | QIODevice::Text));
        QVERIFY(QString::fromUtf8(markdown.readAll()).contains(QStringLiteral("Generated images: constant pattern.")));
        // The dumped input (.npy, u8, 131 rows x 257 columns) is half scale everywhere.
        QFile npy(inputs + QStringLiteral("/image_257x131_u8_c1.npy"));
        QVERIFY(npy.open(QIODevice::ReadOnly));
        const QByteArray bytes = npy.readAll();
        QVERIFY(bytes.size() > 257 * 131);
        const QByteArray pixels = bytes.right(257 * 131);
        QCOMPARE(int(pixels.count(char(128))), 257 * 131);
    }

    void reportCsvQuotesFieldsWithCommasAndQuotes()
    {
        const QString input = QString::fromStdString(kltest::tempDir()) + QStringLiteral("/a,\"b\".png");
        QVERIFY(QFile::copy(sample("camera.png"), input));
        const CliRun run = runOp({"--op", "transpose", "--input", input}, QStringLiteral("out.png"));
        QVERIFY2(run.exitCode == 0, describe(run));
        QFile csv(outputPath(QStringLiteral("report.csv")));
        QVERIFY(csv.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines = QString::fromUtf8(csv.readAll()).split(QLatin1Char('\n'));
        const QString quoted = QLatin1Char('"') + QString(input).replace(QStringLiteral("\""), QStringLiteral("\"\"")) +
                               QLatin1Char('"');
        QVERIFY2(lines.value(1).startsWith(QStringLiteral("transpose,") + quoted + QStringLiteral(",cpu-ref,true,,")),
                 qPrintable(lines.value(1)));
    }

    void sweepWritesCsv()
    {
        const QString dir = QString::fromStdString(kltest::tempDir());
        const CliRun run = runCli({"sweep", "--op", "histogram", "--from", "8", "--to", "10", "--csv", dir + "/sweep.csv"});
        QVERIFY2(run.exitCode == 0, describe(run));
        QFile csv(dir + QStringLiteral("/sweep.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 4);
        QVERIFY(lines[1].startsWith(QStringLiteral("8,256,16,16,")));
    }

    /// What CI can check of users' kernels without a GPU: every template compiles for the oldest
    /// and the newest architecture the project targets.
    void everyTemplateCompiles()
    {
        const CliRun list = runCli({"template", "--list"});
        QVERIFY2(list.exitCode == 0, describe(list));
        const QStringList rows = list.out.trimmed().split(QLatin1Char('\n')).mid(2);
        QCOMPARE(rows.size(), 7);
        for (const QString& row : rows) {
            const QStringList fields = row.split(QLatin1Char(' '), Qt::SkipEmptyParts);
            const QString source = templateFile(fields[0], fields[1]);
            for (const char* arch : {"sm_75", "sm_90"}) {
                const CliRun run = runCli({"compile", "--op", fields[0], "--kernel-source", source, "--arch", arch});
                QVERIFY2(run.exitCode == 0, describe(run));
                QVERIFY2(run.out.contains(QStringLiteral("compiles for %1").arg(QLatin1String(arch))), describe(run));
            }
        }
    }

    void aCompileErrorNamesItsLine()
    {
        QStringList lines = readTemplate("conv2d", "naive").split(QLatin1Char('\n'));
        const int broken = lines.indexOf(QRegularExpression(QStringLiteral(".*rowSum \\+= .*"))) + 1;
        QVERIFY(broken > 0);
        lines[broken - 1].replace(QStringLiteral("rowSum +="), QStringLiteral("rowSum +== "));
        const QString path = QString::fromStdString(kltest::tempDir()) + QStringLiteral("/broken.cu");
        kltest::writeFile(path.toStdString(), lines.join(QLatin1Char('\n')).toStdString());
        const CliRun run = runCli({"compile", "--op", "conv2d", "--kernel-source", path, "--arch", "sm_90"});
        QVERIFY2(run.exitCode == 2, describe(run));
        QVERIFY2(run.err.contains(QStringLiteral("%1:%2:").arg(path).arg(broken)) && run.err.contains(QStringLiteral("error:")),
                 describe(run));
    }

    void aKernelOffTheContractIsExplained()
    {
        QString text = readTemplate("transpose", "naive");
        text.replace(QStringLiteral("(kl::TransposeArgs a)"), QStringLiteral("(kl::TransposeArgs a, int rowsPerThread)"));
        const QString path = QString::fromStdString(kltest::tempDir()) + QStringLiteral("/mine.cu");
        kltest::writeFile(path.toStdString(), text.toStdString());
        const CliRun run = runCli({"compile", "--op", "transpose", "--kernel-source", path});
        QVERIFY2(run.exitCode == 2, describe(run));
        QVERIFY2(run.err.contains(QStringLiteral("'transpose_naive' does not match the transpose entry point "
                                                 "__global__ void transpose_naive(kl::TransposeArgs args)")),
                 describe(run));
        const CliRun missing = runCli({"compile", "--op", "transpose", "--kernel-source", path, "--kernel-name", "other"});
        QVERIFY2(missing.exitCode == 2 && missing.err.contains(QStringLiteral("no kernel named 'other'")), describe(missing));
    }

    void interruptStopsCleanlyWithExit130()
    {
        QProcess process;
        process.start(QStringLiteral(KL_CLI_PATH),
                      {"run", "--generate", "image:4096x4096:u8:1:noise", "--op", "conv2d", "--size", "9",
                       "--backends", "cpu-opencv,cpu-ref", "--repetitions", "20"});
        QVERIFY(process.waitForStarted());
        // The first backend's line shows that the handler is installed and work is under way.
        QVERIFY(process.waitForReadyRead(60000));
        ::kill(pid_t(process.processId()), SIGINT);
        QVERIFY(process.waitForFinished(120000));
        const QString out = QString::fromUtf8(process.readAllStandardOutput());
        const QString err = QString::fromUtf8(process.readAllStandardError());
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        QVERIFY2(process.exitCode() == 130, qPrintable(out + err));
        QVERIFY2(out.contains(QStringLiteral("cpu-opencv")), qPrintable(out));  // what finished was printed
        QVERIFY2(err.contains(QStringLiteral("cancelled")), qPrintable(err));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
