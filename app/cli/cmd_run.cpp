// kernellab-cli run: one operation on the chosen backends, its output file and report; or on many
// input files, each output into a folder, with one report (run_batch.hpp).
#include "cli.hpp"

#include "output_files.hpp"
#include "run_batch.hpp"

#include "kernellab/error.hpp"

#include <QDateTime>
#include <QDir>
#include <QJsonDocument>

#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>

namespace kl::cli {

namespace {

std::vector<app::ParameterInfo> allParameters()
{
    std::vector<app::ParameterInfo> all = app::inputParameterInfo();
    for (const auto* group : {&app::opParameterInfo(), &app::backendParameterInfo()})
        all.insert(all.end(), group->begin(), group->end());
    return all;
}

QString comparisonText(const Comparison& c)
{
    return QStringLiteral("max |diff| %1, mean |diff| %2, PSNR %3, %4 of %5 elements differ")
        .arg(c.maxAbsError, 0, 'g', 4)
        .arg(c.meanAbsError, 0, 'g', 4)
        .arg(std::isfinite(c.psnr) ? QString::number(c.psnr, 'f', 1) + QStringLiteral(" dB") : QStringLiteral("inf"))
        .arg(c.differing)
        .arg(c.elements);
}

/// One line per finished backend (printed as each finishes, so a Ctrl-C still shows them).
QString resultLine(const app::RunRequest& request, const app::BackendResult& r)
{
    const QString name = app::toString(r.backend).leftJustified(10);
    if (!r.ok()) return name + QStringLiteral(" FAILED: ") + r.error;
    QString line = QStringLiteral("%1 median %2 ms (min %3, max %4, %5 runs)")
                       .arg(name, formatMs(r.time.medianMs), formatMs(r.time.minMs), formatMs(r.time.maxMs))
                       .arg(r.time.repetitions);
    if (!r.gpu)
        line += QStringLiteral(" on %1 thread(s), %2 GB/s").arg(request.cpuThreads).arg(formatRate(app::cpuGBs(request, r)));
    if (r.gpu) {
        const gpu::GpuReport& g = *r.gpu;
        line += QStringLiteral(" [%1, %2, %3 stream(s)] kernel %4 ms, %5 GB/s")
                    .arg(QString::fromStdString(g.variant), QString::fromStdString(gpu::toString(g.memory)))
                    .arg(g.streams)
                    .arg(formatMs(g.kernel.medianMs), formatRate(g.kernelGBs()));
        if (request.gpu.endToEnd)
            line += QStringLiteral("; h2d %1 + d2h %2 ms, end to end %3 ms").arg(formatMs(g.h2d.medianMs), formatMs(g.d2h.medianMs),
                                                                                 formatMs(g.total.medianMs));
        // How it was launched: end to end for the built-in variants; always for a user kernel (its occupancy).
        if (request.gpu.endToEnd || g.resources) line += QStringLiteral(" (%1)").arg(QString::fromStdString(g.launch));
    }
    return line;
}

void printSummary(const app::RunResult& result, const QJsonObject& report)
{
    if (result.comparisonReference)
        for (const app::BackendComparison& c : result.comparisons)
            printLine(QStringLiteral("%1 vs %2: %3%4")
                          .arg(app::toString(c.backend), app::toString(*result.comparisonReference),
                               comparisonText(c.comparison),
                               c.disagreement.isEmpty() ? QString() : " -- MISMATCH: " + c.disagreement));
    if (result.copyBandwidthGBs > 0)
        printLine(QStringLiteral("device copy bandwidth: %1 GB/s").arg(formatRate(result.copyBandwidthGBs)));
    if (result.hostBandwidthGBs > 0) {
        QStringList shares;
        for (const app::BackendResult& r : result.results)
            if (r.ok() && !r.gpu)
                shares << QStringLiteral("%1 %2%").arg(app::toString(r.backend)).arg(app::hostBandwidthPercent(result, r), 0, 'f', 1);
        printLine(QStringLiteral("host memory bandwidth: %1 GB/s on %2 thread(s) (read + write)%3")
                      .arg(formatRate(result.hostBandwidthGBs))
                      .arg(result.cpuThreads)
                      .arg(shares.isEmpty() ? QString() : QStringLiteral("; ") + shares.join(QStringLiteral(", "))));
    }
    const QJsonObject speedups = report[QStringLiteral("speedups")].toObject();
    for (auto it = speedups.begin(); it != speedups.end(); ++it)
        printLine(QStringLiteral("speedup %1: %2x").arg(it.key()).arg(it.value().toDouble(), 0, 'f', 2));
}

const app::BackendResult& outputSource(const app::RunResult& result, const QCommandLineParser& parser)
{
    if (parser.isSet(QStringLiteral("output-backend"))) {
        const app::Backend wanted = app::parseBackend(parser.value(QStringLiteral("output-backend")));
        const app::BackendResult* r = result.find(wanted);
        if (!r->ok())
            throw CliError(kExitFailure, "--output-backend " + app::toString(wanted) + " failed: " + r->error);
        return *r;
    }
    for (const app::BackendResult& r : result.results)
        if (r.ok()) return r;
    throw CliError(kExitFailure, QStringLiteral("no backend succeeded, so there is no output to write"));
}

void checkOutputBackend(const QCommandLineParser& parser, const std::vector<app::Backend>& backends)
{
    if (!parser.isSet(QStringLiteral("output-backend"))) return;
    const app::Backend b = app::parseBackend(parser.value(QStringLiteral("output-backend")));
    if (!app::contains(backends, b))
        throw CliError(kExitBadArguments, "--output-backend " + app::toString(b) + " is not among --backends");
}

/// Whether the GPU backend, if among `backends`, has a GPU. Asked for by name (`named`), a missing
/// GPU is an error (exit 3); in the default set it is only noted.
bool gpuReady(const std::vector<app::Backend>& backends, bool named, bool quiet)
{
    if (!app::contains(backends, app::Backend::Gpu)) return true;
    QString noGpuReason;
    const bool haveGpu = gpuEngine(named, QStringLiteral("--backends gpu"), &noGpuReason);
    if (!haveGpu && !quiet) printError("note: the gpu backend will be skipped: " + noGpuReason);
    return haveGpu;
}

/// The first backend that failed, as "cpu-ref failed: <why>"; empty when none did. The GPU's
/// absence is no failure when it was only part of the default set (gpuReady noted it).
QString backendFailure(const app::RunResult& result, bool haveGpu)
{
    for (const app::BackendResult& r : result.results)
        if (!r.ok() && !(r.backend == app::Backend::Gpu && !haveGpu)) return app::toString(r.backend) + " failed: " + r.error;
    return {};
}

/// --json, --report and --csv: each report serialised only when one of them asks for it.
void writeReports(const QCommandLineParser& parser, const QJsonObject& report, const std::function<QString()>& csv)
{
    const bool jsonToStdout = parser.isSet(QStringLiteral("json")), jsonToFile = parser.isSet(QStringLiteral("report"));
    if (jsonToStdout || jsonToFile) {
        const QByteArray json = QJsonDocument(report).toJson(QJsonDocument::Indented);
        if (jsonToStdout) std::fputs(json.constData(), stdout);
        if (jsonToFile) writeTextFile(parser.value(QStringLiteral("report")), json);
    }
    if (parser.isSet(QStringLiteral("csv"))) writeTextFile(parser.value(QStringLiteral("csv")), csv().toUtf8());
}

bool isBatch(const QCommandLineParser& parser)
{
    return parser.values(QStringLiteral("input")).size() > 1 || parser.isSet(QStringLiteral("input-list")) ||
           parser.isSet(QStringLiteral("output-dir")) || parser.isSet(QStringLiteral("shard"));
}

/// "a.png -> out/a.png: cpu-ref 12.3 ms, cpu-opencv 4.56 ms": one line per file of a batch.
QString fileLine(const QString& label, const BatchFile& file, const app::RunResult* result)
{
    QString line = label + (file.output.isEmpty() ? QString() : " -> " + file.output);
    if (result) {
        QStringList medians;
        for (const app::BackendResult& r : result->results)
            medians << app::toString(r.backend) + (r.ok() ? QStringLiteral(" %1 ms").arg(formatMs(r.time.medianMs))
                                                          : QStringLiteral(" failed"));
        line += QStringLiteral(": ") + medians.join(QStringLiteral(", "));
    }
    return file.error.isEmpty() ? line : line + QStringLiteral(" -- FAILED: ") + file.error;
}

/// run with several inputs (run_batch.hpp): each file run and written on its own, one report.
int runBatch(const QCommandLineParser& parser, const app::ParameterMap& parameters)
{
    if (parser.isSet(QStringLiteral("output")))
        throw CliError(kExitBadArguments, QStringLiteral("--output names one file; a batch writes each input's output "
                                                         "into --output-dir DIR"));
    if (parameters.contains(QStringLiteral("generate")))
        throw CliError(kExitBadArguments, QStringLiteral("--generate makes one input; a batch takes files "
                                                         "(--input FILE ... or --input-list FILE)"));
    if (parser.isSet(QStringLiteral("input-list")) && parser.isSet(QStringLiteral("input")))
        throw CliError(kExitBadArguments, QStringLiteral("give the inputs with --input or with --input-list, not both"));
    const QStringList listed = parser.isSet(QStringLiteral("input-list"))
                                   ? readInputList(parser.value(QStringLiteral("input-list")))
                                   : parser.values(QStringLiteral("input"));
    if (listed.isEmpty())
        throw CliError(kExitBadArguments, QStringLiteral("a batch needs input files (--input FILE ... or --input-list FILE)"));
    BatchReport batch;
    batch.date = QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
    batch.op = app::toString(app::requestedOp(parameters));
    batch.listed = int(listed.size());
    if (parser.isSet(QStringLiteral("shard"))) batch.shard = parseShard(parser.value(QStringLiteral("shard")));
    const Shard shard = batch.shard.value_or(Shard{});
    const QStringList inputs = shardOf(listed, shard);

    QStringList outputs;  // empty without --output-dir: the batch is then timed and reported only
    if (parser.isSet(QStringLiteral("output-dir"))) {
        const QString dir = parser.value(QStringLiteral("output-dir"));
        if (dir.isEmpty()) throw CliError(kExitBadArguments, QStringLiteral("--output-dir: the folder name is empty"));
        outputs = shardOf(batchOutputs(listed, dir, parameters), shard);
        if (!parser.isSet(QStringLiteral("overwrite"))) refuseExistingOutputs(outputs);
        if (!QDir().mkpath(dir)) throw CliError(kExitFailure, "cannot create --output-dir '" + dir + "'");
    } else if (parser.isSet(QStringLiteral("overwrite"))) {
        throw CliError(kExitBadArguments, QStringLiteral("--overwrite applies to the outputs of --output-dir DIR"));
    }
    const std::vector<app::Backend> backends = app::requestedBackends(parameters);
    checkOutputBackend(parser, backends);
    const bool quiet = parser.isSet(QStringLiteral("quiet"));
    const bool haveGpu = gpuReady(backends, parameters.contains(QStringLiteral("backends")), quiet);
    if (inputs.isEmpty() && !quiet)
        printError(QStringLiteral("note: shard %1/%2 has no file of the %3 listed").arg(shard.index).arg(shard.count).arg(listed.size()));

    ProgressBar progress(quiet);
    try {
        for (qsizetype i = 0; i < inputs.size(); ++i) {
            const QString label = QStringLiteral("[%1/%2] %3").arg(i + 1).arg(inputs.size()).arg(inputs[i]);
            app::RunControl control;
            control.cancel = &cancelFlag();
            control.progress = [&](double fraction, const QString& what) {
                progress.update((double(i) + fraction) / double(inputs.size()), label + ": " + what);
            };
            BatchFile file;
            file.input = inputs[i];
            std::optional<app::RunResult> result;
            // A file's failure is that file's alone: recorded, and the batch goes on.
            try {
                app::ParameterMap own = parameters;
                own[QStringLiteral("input")] = inputs[i];
                app::RunRequest request;
                app::loadInput(request, own);
                app::configureRequest(request, own);
                if (!outputs.isEmpty()) app::checkOutputPath(outputs[i], request);
                result = app::execute(request, control);
                file.report = app::toJson(*result);
                file.csvRows = app::csvRows(*result);
                if (!outputs.isEmpty()) {
                    app::saveOutput(outputs[i], outputSource(*result, parser), request);
                    file.output = outputs[i];
                }
                file.error = backendFailure(*result, haveGpu);
            } catch (const Cancelled&) {
                throw;
            } catch (const std::exception& e) {
                file.error = QString::fromUtf8(e.what());
            }
            progress.clear();
            if (!parser.isSet(QStringLiteral("json"))) printLine(fileLine(label, file, result ? &*result : nullptr));
            batch.files.push_back(std::move(file));
        }
    } catch (const Cancelled&) {
        batch.complete = false;  // the files that finished are still reported
    }
    progress.clear();
    writeReports(parser, toJson(batch), [&] { return toCsv(batch); });
    if (!batch.complete) throw Cancelled();

    if (batch.failed() == 0) return kExitOk;
    QStringList failed;
    for (const BatchFile& f : batch.files)
        if (!f.error.isEmpty()) failed << f.input;
    constexpr int named = 3;
    throw CliError(kExitFailure, QStringLiteral("%1 of %2 files failed: %3%4 (each one's error is above and in the report)")
                                     .arg(failed.size())
                                     .arg(batch.files.size())
                                     .arg(failed.mid(0, named).join(QStringLiteral(", ")))
                                     .arg(failed.size() > named ? QStringLiteral(" and %1 more").arg(failed.size() - named)
                                                                : QString()));
}

} // namespace

int runRun(const QStringList& arguments)
{
    QCommandLineParser parser;
    const std::vector<app::ParameterInfo> parameters = allParameters();
    addParameterOptions(parser, parameters);
    parser.addOptions({
        {QStringLiteral("output"), QStringLiteral("Write the output here (image, signal, or histogram CSV)."),
         QStringLiteral("FILE")},
        {QStringLiteral("output-backend"), QStringLiteral("Whose output --output writes (default: the first that succeeded)."),
         QStringLiteral("BACKEND")},
        {QStringLiteral("report"), QStringLiteral("Write the JSON report here."), QStringLiteral("FILE")},
        {QStringLiteral("csv"), QStringLiteral("Write the CSV report (one row per backend) here."), QStringLiteral("FILE")},
        {QStringLiteral("json"), QStringLiteral("Print the JSON report on stdout (instead of the summary).")},
        {QStringLiteral("input-list"),
         QStringLiteral("Batch: the input files, one per line (blank lines and # comments skipped; relative paths are "
                        "relative to the list's folder). Or repeat --input."),
         QStringLiteral("FILE")},
        {QStringLiteral("output-dir"),
         QStringLiteral("Batch: write each input's output here as <base name>.<ext>: the input's extension where its "
                        "format holds the output, else .csv (histogram), .wav (signal), .tif (image)."),
         QStringLiteral("DIR")},
        {QStringLiteral("overwrite"), QStringLiteral("Batch: replace outputs that exist in --output-dir (refused otherwise).")},
        {QStringLiteral("shard"),
         QStringLiteral("Batch: process inputs K, K+N, K+2N ... (1-based) of the list only, e.g. a Slurm array task's "
                        "share."),
         QStringLiteral("K/N")},
    });
    addDeviceOption(parser);
    if (!parseCommandLine(parser, arguments,
                          QStringLiteral("kernellab-cli run: one operation on the chosen backends, e.g.\n"
                                         "  kernellab-cli run --op conv2d --preset gaussian --size 5 --input camera.png "
                                         "--output out.png --backends cpu-ref,cpu-opencv,gpu --report report.json\n"
                                         "or on many files, each output into a folder:\n"
                                         "  kernellab-cli run --op conv2d --input-list files.txt --output-dir out "
                                         "--report batch.json")))
        return kExitOk;
    selectDevice(parser);
    const app::ParameterMap map = parameterMap(parser, parameters);
    if (isBatch(parser)) return runBatch(parser, map);
    if (parser.isSet(QStringLiteral("overwrite")))
        throw CliError(kExitBadArguments, QStringLiteral("--overwrite applies to the outputs of --output-dir DIR "
                                                         "(--output FILE is always replaced)"));

    app::RunRequest request;
    app::loadInput(request, map);
    app::configureRequest(request, map);
    if (parser.isSet(QStringLiteral("output"))) app::checkOutputPath(parser.value(QStringLiteral("output")), request);
    checkOutputBackend(parser, request.backends);
    const bool quiet = parser.isSet(QStringLiteral("quiet"));
    const bool jsonToStdout = parser.isSet(QStringLiteral("json"));
    const bool haveGpu = gpuReady(request.backends, map.contains(QStringLiteral("backends")), quiet);

    ProgressBar progress(quiet);
    app::RunControl control;
    control.cancel = &cancelFlag();
    control.progress = [&](double fraction, const QString& what) { progress.update(fraction, what); };
    control.backendFinished = [&](const app::BackendResult& r) {
        progress.clear();
        if (!jsonToStdout) printLine(resultLine(request, r));
    };
    const app::RunResult result = app::execute(request, control);
    progress.clear();

    const QJsonObject report = app::toJson(result);
    if (!jsonToStdout) printSummary(result, report);
    writeReports(parser, report, [&] { return app::toCsv(result); });
    if (parser.isSet(QStringLiteral("output"))) {
        try {
            app::saveOutput(parser.value(QStringLiteral("output")), outputSource(result, parser), request);
        } catch (const IoError& e) {
            throw CliError(kExitFailure, QString::fromUtf8(e.what()));
        }
    }
    const QString failure = backendFailure(result, haveGpu);
    if (!failure.isEmpty()) throw CliError(kExitFailure, failure);
    return kExitOk;
}

} // namespace kl::cli
