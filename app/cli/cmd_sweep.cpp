// kernellab-cli sweep: one op over sizes 2^from .. 2^to elements; CPU (OpenCV) against the GPU
// kernel alone and end to end (pageable and pinned), and where the GPU starts to win.
#include "bench_support.hpp"
#include "csv.hpp"

#include "kernellab/image.hpp"

#include <cmath>

namespace kl::cli {

namespace {

struct SweepRow {
    int log2Elements = 0;
    int cols = 0, rows = 0;
    size_t frames = 0;
    double cpuMs = 0, kernelMs = 0, pageableMs = 0, pinnedMs = 0;
    QString error;
    [[nodiscard]] QString size() const
    {
        return frames ? QString::number(frames) : QStringLiteral("%1x%2").arg(cols).arg(rows);
    }
};

/// The smallest row from which `gpuMs` beats the CPU at every larger size too; -1 if none.
int crossover(const std::vector<SweepRow>& rows, double SweepRow::*gpuMs)
{
    int from = -1;
    for (int i = int(rows.size()) - 1; i >= 0; --i) {
        const SweepRow& r = rows[size_t(i)];
        const bool wins = r.error.isEmpty() && r.*gpuMs > 0 && r.cpuMs > 0 && r.*gpuMs < r.cpuMs;
        if (!wins) break;
        from = i;
    }
    return from;
}

QString sweepCsv(const std::vector<SweepRow>& rows)
{
    QString csv = QStringLiteral("log2_elements,elements,width,height,frames,cpu_opencv_ms,gpu_kernel_ms,"
                                 "gpu_end_to_end_pageable_ms,gpu_end_to_end_pinned_ms,ok,error\n");
    auto num = [](double v) { return v > 0 ? QString::number(v, 'g', 8) : QString(); };
    for (const SweepRow& r : rows) {
        csv += QStringList{QString::number(r.log2Elements), QString::number(1ull << r.log2Elements),
                           QString::number(r.cols), QString::number(r.rows), QString::number(r.frames), num(r.cpuMs),
                           num(r.kernelMs), num(r.pageableMs), num(r.pinnedMs),
                           r.error.isEmpty() ? QStringLiteral("true") : QStringLiteral("false"),
                           app::csvField(r.error)}
                   .join(QLatin1Char(','))
               + QLatin1Char('\n');
    }
    return csv;
}

} // namespace

int runSweep(const QStringList& arguments)
{
    QCommandLineParser parser;
    parser.addOptions({
        {QStringLiteral("op"), QStringLiteral("conv2d, conv1d, histogram or transpose (default conv2d)."), QStringLiteral("OP")},
        {QStringLiteral("from"), QStringLiteral("Smallest size, as a power of two of elements (default 10)."), QStringLiteral("K")},
        {QStringLiteral("to"), QStringLiteral("Largest size, as a power of two of elements (default 26)."), QStringLiteral("K")},
        {QStringLiteral("depth"), QStringLiteral("Image depth u8, u16 or f32 (default u8; signals are f32)."), QStringLiteral("DEPTH")},
        {QStringLiteral("variant"), QStringLiteral("GPU variant (default auto)."), QStringLiteral("NAME")},
        {QStringLiteral("streams"), QStringLiteral("GPU streams for the end-to-end runs (default 1)."), QStringLiteral("N")},
        {QStringLiteral("repetitions"), QStringLiteral("GPU timed runs (default 10)."), QStringLiteral("N")},
        {QStringLiteral("cpu-repetitions"), QStringLiteral("CPU timed runs (default 3)."), QStringLiteral("N")},
        {QStringLiteral("csv"), QStringLiteral("Write the table as CSV here."), QStringLiteral("FILE")},
        {QStringLiteral("require-gpu"), QStringLiteral("Exit 3 when there is no GPU instead of timing the CPU only.")},
    });
    addBenchOpOptions(parser);
    if (!parseCommandLine(parser, arguments,
                          QStringLiteral("kernellab-cli sweep: one op over sizes 2^from..2^to elements, CPU OpenCV vs "
                                         "GPU kernel-only and end to end (pageable, pinned).")))
        return kExitOk;

    const app::Op op = app::parseOp(parser.value(QStringLiteral("op")).isEmpty() ? QStringLiteral("conv2d")
                                                                                 : parser.value(QStringLiteral("op")));
    const int from = intOption(parser, QStringLiteral("from"), 10, 0);
    const int to = intOption(parser, QStringLiteral("to"), 26, 0);
    if (from > to || to > 34)
        throw CliError(kExitBadArguments, QStringLiteral("--from %1 --to %2: need from <= to <= 34").arg(from).arg(to));
    const int depth = parseDepth(parser.value(QStringLiteral("depth")).isEmpty() ? std::string("u8")
                                                                                  : parser.value(QStringLiteral("depth")).toStdString());
    const BenchOpSettings settings = benchOpSettings(parser);
    const int cpuRepetitions = intOption(parser, QStringLiteral("cpu-repetitions"), 3, 1);
    const int gpuRepetitions = intOption(parser, QStringLiteral("repetitions"), 10, 1);
    const int streams = intOption(parser, QStringLiteral("streams"), 1, 1);
    const QString variant = parser.value(QStringLiteral("variant")).isEmpty() ? QStringLiteral("auto")
                                                                              : parser.value(QStringLiteral("variant"));

    QString noGpuReason;
    gpu::Engine* engine = gpuEngine(parser.isSet(QStringLiteral("require-gpu")), QStringLiteral("sweep --require-gpu"),
                                    &noGpuReason);
    if (!engine) printLine("GPU columns are empty: " + noGpuReason + "; timing the CPU only.");

    ProgressBar progress(parser.isSet(QStringLiteral("quiet")));
    std::vector<SweepRow> rows;
    bool cancelled = false;
    try {
        for (int k = from; k <= to; ++k) {
            SweepRow row;
            row.log2Elements = k;
            if (op == app::Op::Conv1D) row.frames = size_t(1) << k;
            else {
                row.cols = 1 << ((k + 1) / 2);
                row.rows = 1 << (k / 2);
            }
            progress.update(double(k - from) / (to - from + 1), app::toString(op) + QStringLiteral(" ") + row.size());
            app::RunRequest request = benchRequest(op, settings, row.cols, row.rows, depth, row.frames);
            request.cpuRepetitions = cpuRepetitions;
            request.gpu.variant = variant.toStdString();
            request.gpu.repetitions = gpuRepetitions;
            request.gpu.streams = streams;
            const app::BackendResult cpu = runBackend(request, app::Backend::CpuOpenCV);
            if (!cpu.ok()) row.error = "cpu-opencv: " + cpu.error;
            row.cpuMs = cpu.ok() ? cpu.time.medianMs : 0;
            if (engine && row.error.isEmpty()) {
                request.gpu.endToEnd = false;
                const app::BackendResult kernel = runBackend(request, app::Backend::Gpu);
                const QString problem = kernel.ok() ? verify(request, kernel, cpu) : kernel.error;
                if (!problem.isEmpty()) {
                    row.error = "gpu: " + problem;
                    progress.clear();
                    printError(QStringLiteral("FAILED %1 %2: %3").arg(app::toString(op), row.size(), row.error));
                } else {
                    row.kernelMs = kernel.gpu->kernel.medianMs;
                    request.gpu.endToEnd = true;
                    for (const auto& [memory, ms] : {std::pair{gpu::HostMemory::Pageable, &row.pageableMs},
                                                     std::pair{gpu::HostMemory::Pinned, &row.pinnedMs}}) {
                        request.gpu.memory = memory;
                        const app::BackendResult e2e = runBackend(request, app::Backend::Gpu);
                        if (e2e.ok()) *ms = e2e.gpu->total.medianMs;
                        else row.error = QString::fromStdString(gpu::toString(memory)) + ": " + e2e.error;
                    }
                }
            }
            rows.push_back(row);
        }
    } catch (const kl::Cancelled&) {
        cancelled = true;
    }
    progress.clear();

    Table table;
    table.header = QStringList{QStringLiteral("2^k"), QStringLiteral("size"), QStringLiteral("cpu-opencv ms"),
                               QStringLiteral("gpu kernel ms"), QStringLiteral("gpu e2e pageable ms"),
                               QStringLiteral("gpu e2e pinned ms"), QStringLiteral("error")};
    for (const SweepRow& r : rows)
        table.rows.push_back({QString::number(r.log2Elements), r.size(), formatMs(r.cpuMs), formatMs(r.kernelMs),
                              formatMs(r.pageableMs), formatMs(r.pinnedMs), r.error});
    printLine(table.text());
    if (engine)
        for (const auto& [label, column] : {std::pair{QStringLiteral("GPU kernel alone"), &SweepRow::kernelMs},
                                            std::pair{QStringLiteral("GPU end to end (pageable)"), &SweepRow::pageableMs},
                                            std::pair{QStringLiteral("GPU end to end (pinned)"), &SweepRow::pinnedMs}}) {
            const int i = crossover(rows, column);
            printLine(i < 0 ? label + QStringLiteral(" does not beat the CPU (OpenCV) at the largest size tried")
                            : QStringLiteral("%1 beats the CPU (OpenCV) from 2^%2 elements (%3) upwards")
                                  .arg(label)
                                  .arg(rows[size_t(i)].log2Elements)
                                  .arg(rows[size_t(i)].size()));
        }
    if (parser.isSet(QStringLiteral("csv"))) writeTextFile(parser.value(QStringLiteral("csv")), sweepCsv(rows).toUtf8());

    if (cancelled) {
        printError(QStringLiteral("sweep cancelled after %1 size(s)").arg(rows.size()));
        return kExitCancelled;
    }
    const bool failed = std::any_of(rows.begin(), rows.end(), [](const SweepRow& r) { return !r.error.isEmpty(); });
    return failed ? kExitFailure : kExitOk;
}

} // namespace kl::cli
