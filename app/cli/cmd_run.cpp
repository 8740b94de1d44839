// kernellab-cli run: one operation on the chosen backends, its output file and report.
#include "cli.hpp"

#include "output_files.hpp"

#include "kernellab/error.hpp"

#include <algorithm>
#include <cmath>

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
    });
    if (!parseCommandLine(parser, arguments,
                          QStringLiteral("kernellab-cli run: one operation on the chosen backends, e.g.\n"
                                         "  kernellab-cli run --op conv2d --preset gaussian --size 5 --input camera.png "
                                         "--output out.png --backends cpu-ref,cpu-opencv,gpu --report report.json")))
        return kExitOk;

    const app::ParameterMap map = parameterMap(parser, parameters);
    app::RunRequest request;
    app::loadInput(request, map);
    app::configureRequest(request, map);
    if (parser.isSet(QStringLiteral("output"))) app::checkOutputPath(parser.value(QStringLiteral("output")), request);
    if (parser.isSet(QStringLiteral("output-backend"))) {
        const app::Backend b = app::parseBackend(parser.value(QStringLiteral("output-backend")));
        if (std::find(request.backends.begin(), request.backends.end(), b) == request.backends.end())
            throw CliError(kExitBadArguments, "--output-backend " + app::toString(b) + " is not among --backends");
    }
    const bool wantsGpu = std::find(request.backends.begin(), request.backends.end(), app::Backend::Gpu) != request.backends.end();
    // Asked for by name, a missing GPU is an error (exit 3); in the default set it is only reported.
    const bool gpuExplicit = wantsGpu && map.contains(QStringLiteral("backends"));
    QString noGpuReason;
    const bool haveGpu = !wantsGpu || gpuEngine(gpuExplicit, QStringLiteral("--backends gpu"), &noGpuReason);
    const bool quiet = parser.isSet(QStringLiteral("quiet"));
    const bool jsonToStdout = parser.isSet(QStringLiteral("json"));
    if (!haveGpu && !quiet) printError("note: the gpu backend will be skipped: " + noGpuReason);

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

    if (jsonToStdout) std::fputs(app::reportBytes(result, app::ReportFormat::Json).constData(), stdout);
    else printSummary(result, app::toJson(result));
    try {
        if (parser.isSet(QStringLiteral("report")))
            app::saveReport(parser.value(QStringLiteral("report")), result, app::ReportFormat::Json);
        if (parser.isSet(QStringLiteral("csv")))
            app::saveReport(parser.value(QStringLiteral("csv")), result, app::ReportFormat::Csv);
        if (parser.isSet(QStringLiteral("output")))
            app::saveOutput(parser.value(QStringLiteral("output")), outputSource(result, parser), request);
    } catch (const IoError& e) {
        throw CliError(kExitFailure, QString::fromUtf8(e.what()));
    }

    // The GPU's absence was reported above when it was only part of the default set.
    for (const app::BackendResult& r : result.results)
        if (!r.ok() && !(r.backend == app::Backend::Gpu && !haveGpu))
            throw CliError(kExitFailure, app::toString(r.backend) + " failed: " + r.error);
    return kExitOk;
}

} // namespace kl::cli
