#include "sweep.hpp"

#include "csv.hpp"
#include "names.hpp"

#include <algorithm>

namespace kl::app {
namespace {

SweepRow shapeOf(Op op, int log2Elements)
{
    SweepRow row;
    row.log2Elements = log2Elements;
    if (op == Op::Conv1D) {
        row.frames = size_t(1) << log2Elements;
    } else {
        row.cols = 1 << ((log2Elements + 1) / 2);
        row.rows = 1 << (log2Elements / 2);
    }
    return row;
}

void addError(SweepRow& row, const QString& error)
{
    row.error += (row.error.isEmpty() ? QString() : QStringLiteral("; ")) + error;
}

/// The GPU kernel alone, checked against `reference`, then end to end from each host memory kind.
void runGpu(RunRequest request, const BackendResult& reference, const std::atomic<bool>* cancel, SweepRow& row)
{
    request.gpu.endToEnd = false;
    const BackendResult kernel = runBackend(request, Backend::Gpu, cancel);
    const QString problem = kernel.ok() ? verify(request, kernel, reference) : kernel.error;
    if (!problem.isEmpty()) {
        addError(row, QStringLiteral("gpu: ") + problem);
        return;
    }
    row.kernelMs = kernel.gpu->kernel.medianMs;
    request.gpu.endToEnd = true;
    for (const auto& [memory, ms] : {std::pair{gpu::HostMemory::Pageable, &row.pageableMs},
                                     std::pair{gpu::HostMemory::Pinned, &row.pinnedMs}}) {
        request.gpu.memory = memory;
        const BackendResult e2e = runBackend(request, Backend::Gpu, cancel);
        if (e2e.ok()) *ms = e2e.gpu->total.medianMs;
        else addError(row, QString::fromStdString(gpu::toString(memory)) + QStringLiteral(": ") + e2e.error);
    }
}

} // namespace

void validate(const SweepSettings& s)
{
    if (s.fromLog2 < 0 || s.fromLog2 > s.toLog2 || s.toLog2 > kMaxSweepLog2)
        fail(QStringLiteral("sizes 2^%1 to 2^%2 elements: need from <= to <= %3, from >= 0")
                 .arg(s.fromLog2)
                 .arg(s.toLog2)
                 .arg(kMaxSweepLog2));
    if (s.cpuBackends.empty())
        fail(QStringLiteral("a sweep needs a CPU backend: the GPU is checked against it and wins where it beats it"));
}

QString SweepRow::size() const
{
    return frames ? QString::number(frames) : QStringLiteral("%1x%2").arg(cols).arg(rows);
}

double SweepRow::fastestCpuMs() const
{
    double fastest = 0;
    for (double ms : cpuMs)
        if (ms > 0 && (fastest == 0 || ms < fastest)) fastest = ms;
    return fastest;
}

const std::vector<SweepGpuMeasure>& sweepGpuMeasures()
{
    static const std::vector<SweepGpuMeasure> measures = {
        {QStringLiteral("GPU kernel alone"), &SweepRow::kernelMs},
        {QStringLiteral("GPU end to end (pageable)"), &SweepRow::pageableMs},
        {QStringLiteral("GPU end to end (pinned)"), &SweepRow::pinnedMs},
    };
    return measures;
}

void runSweep(const SweepSettings& settings, const SweepControl& control)
{
    validate(settings);
    const int sizes = settings.toLog2 - settings.fromLog2 + 1;
    for (int k = settings.fromLog2; k <= settings.toLog2; ++k) {
        SweepRow row = shapeOf(settings.op, k);
        if (control.progress)
            control.progress(double(k - settings.fromLog2) / sizes, toString(settings.op) + QLatin1Char(' ') + row.size());
        RunRequest request = benchRequest(settings.op, settings.opSettings, row.cols, row.rows, settings.depth, row.frames);
        request.cpuRepetitions = settings.cpuRepetitions;
        request.gpu.variant = settings.variant;
        request.gpu.repetitions = settings.gpuRepetitions;
        request.gpu.streams = settings.streams;
        std::optional<BackendResult> reference;
        for (Backend backend : settings.cpuBackends) {
            BackendResult cpu = runBackend(request, backend, control.cancel);
            row.cpuMs.push_back(cpu.ok() ? cpu.time.medianMs : 0);
            if (!cpu.ok()) addError(row, toString(backend) + QStringLiteral(": ") + cpu.error);
            else if (!reference) reference = std::move(cpu);
        }
        if (settings.gpu && reference) runGpu(request, *reference, control.cancel, row);
        if (control.rowFinished) control.rowFinished(row);
    }
}

int crossover(const std::vector<SweepRow>& rows, const SweepGpuMeasure& measure)
{
    int from = -1;
    for (int i = int(rows.size()) - 1; i >= 0; --i) {
        const SweepRow& r = rows[size_t(i)];
        const double gpuMs = r.*measure.ms, cpuMs = r.fastestCpuMs();
        if (!(r.error.isEmpty() && gpuMs > 0 && cpuMs > 0 && gpuMs < cpuMs)) break;
        from = i;
    }
    return from;
}

QString crossoverText(const SweepSettings& settings, const std::vector<SweepRow>& rows, const SweepGpuMeasure& measure)
{
    QStringList cpus;
    for (Backend b : settings.cpuBackends) cpus << toString(b);
    const QString cpu = cpus.size() == 1 ? QStringLiteral("the CPU (%1)").arg(cpus.front())
                                         : QStringLiteral("the fastest CPU backend (%1)").arg(cpus.join(QStringLiteral(", ")));
    const int i = crossover(rows, measure);
    if (i < 0) return QStringLiteral("%1 does not beat %2 at the largest size tried").arg(measure.label, cpu);
    return QStringLiteral("%1 beats %2 from 2^%3 elements (%4) upwards")
        .arg(measure.label, cpu)
        .arg(rows[size_t(i)].log2Elements)
        .arg(rows[size_t(i)].size());
}

QString sweepCsv(const SweepSettings& settings, const std::vector<SweepRow>& rows)
{
    QStringList header = {QStringLiteral("log2_elements"), QStringLiteral("elements"), QStringLiteral("width"),
                          QStringLiteral("height"), QStringLiteral("frames")};
    for (Backend b : settings.cpuBackends) header << toString(b).replace(QLatin1Char('-'), QLatin1Char('_')) + QStringLiteral("_ms");
    header << QStringLiteral("gpu_kernel_ms") << QStringLiteral("gpu_end_to_end_pageable_ms")
           << QStringLiteral("gpu_end_to_end_pinned_ms") << QStringLiteral("ok") << QStringLiteral("error");
    QString csv = header.join(QLatin1Char(',')) + QLatin1Char('\n');
    const auto number = [](double v) { return v > 0 ? QString::number(v, 'g', 8) : QString(); };
    for (const SweepRow& r : rows) {
        QStringList fields = {QString::number(r.log2Elements), QString::number(1ull << r.log2Elements),
                              QString::number(r.cols), QString::number(r.rows), QString::number(r.frames)};
        for (double ms : r.cpuMs) fields << number(ms);
        for (const SweepGpuMeasure& m : sweepGpuMeasures()) fields << number(r.*m.ms);
        fields << (r.error.isEmpty() ? QStringLiteral("true") : QStringLiteral("false")) << csvField(r.error);
        csv += fields.join(QLatin1Char(',')) + QLatin1Char('\n');
    }
    return csv;
}

} // namespace kl::app
