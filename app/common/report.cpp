// The report schema (docs/report-format.md): toJson, toCsv and their building blocks.
#include "report.hpp"
#include "session.hpp"
#include "ops.hpp"

#include "csv.hpp"

#include "kernellab/image.hpp"

#include <opencv2/core/utility.hpp>
#include <opencv2/core/version.hpp>

#include <QFile>
#include <QJsonArray>
#include <QRegularExpression>
#include <QStringList>
#include <QSysInfo>
#include <QtGlobal>

#include <cmath>
#include <thread>

namespace kl::app {

namespace {

constexpr int kSchemaVersion = 2;

/// JSON has no infinity or NaN: those become null (documented: psnr null = identical).
QJsonValue finite(double v) { return std::isfinite(v) ? QJsonValue(v) : QJsonValue(QJsonValue::Null); }
QJsonValue positiveOrNull(double v) { return v > 0 && std::isfinite(v) ? QJsonValue(v) : QJsonValue(QJsonValue::Null); }

QString cudaVersion(int v) { return QStringLiteral("%1.%2").arg(v / 1000).arg((v % 1000) / 10); }

QString cpuModel()
{
    QFile cpuinfo(QStringLiteral("/proc/cpuinfo"));
    if (cpuinfo.open(QIODevice::ReadOnly | QIODevice::Text)) {
        static const QRegularExpression modelLine(QStringLiteral("^(model name|Model|Hardware)\\s*:\\s*(.+)$"),
                                                  QRegularExpression::MultilineOption);
        const QRegularExpressionMatch m = modelLine.match(QString::fromUtf8(cpuinfo.readAll()));
        if (m.hasMatch()) return m.captured(2).trimmed();
    }
    return QSysInfo::currentCpuArchitecture();
}

QJsonObject inputJson(const RunRequest& r)
{
    QJsonObject input{{QStringLiteral("name"), r.inputName}};
    if (!r.image.empty()) {
        input[QStringLiteral("kind")] = QStringLiteral("image");
        input[QStringLiteral("width")] = r.image.cols;
        input[QStringLiteral("height")] = r.image.rows;
        input[QStringLiteral("depth")] = QString::fromStdString(depthName(r.image.depth()));
        input[QStringLiteral("channels")] = r.image.channels();
        input[QStringLiteral("bytes")] = double(r.image.total() * r.image.elemSize());
    } else {
        input[QStringLiteral("kind")] = QStringLiteral("signal");
        input[QStringLiteral("frames")] = double(r.signal.frames);
        input[QStringLiteral("channels")] = r.signal.channels;
        input[QStringLiteral("sample_rate")] = r.signal.sampleRate;
        input[QStringLiteral("duration_s")] = r.signal.sampleRate > 0 ? double(r.signal.frames) / r.signal.sampleRate : 0.0;
        input[QStringLiteral("bytes")] = double(r.signal.data.size() * sizeof(float));
    }
    return input;
}

QJsonObject resourcesJson(const gpu::KernelResources& r)
{
    return {{QStringLiteral("registers"), r.registers},
            {QStringLiteral("static_shared_bytes"), r.staticSharedBytes},
            {QStringLiteral("dynamic_shared_bytes"), r.dynamicSharedBytes},
            {QStringLiteral("local_bytes"), r.localBytes},
            {QStringLiteral("block_threads"), r.blockThreads},
            {QStringLiteral("grid"), QJsonArray{r.gridX, r.gridY}},
            {QStringLiteral("active_blocks_per_sm"), r.activeBlocksPerSM},
            {QStringLiteral("occupancy"), r.occupancy}};
}

QJsonValue customKernelJson(const RunRequest& r)
{
    if (!r.customKernel) return QJsonValue(QJsonValue::Null);
    const CustomKernel& k = *r.customKernel;
    return QJsonObject{{QStringLiteral("source"), k.path.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(k.path)},
                       {QStringLiteral("entry"), QString::fromStdString(k.entry)},
                       {QStringLiteral("block"), QJsonArray{k.launch.blockX, k.launch.blockY}},
                       {QStringLiteral("tile"), QJsonArray{k.launch.tileWidth(), k.launch.tileHeight()}},
                       {QStringLiteral("shared_bytes"), k.launch.sharedBytes},
                       {QStringLiteral("timeout_s"), k.timeoutSeconds}};
}

QJsonObject optionsJson(const RunRequest& r)
{
    QJsonArray backends;
    for (Backend b : r.backends) backends.append(toString(b));
    return {
        {QStringLiteral("backends"), backends},
        {QStringLiteral("cpu"), QJsonObject{{QStringLiteral("repetitions"), r.cpuRepetitions},
                                            {QStringLiteral("warmup"), std::max(1, r.cpuWarmup)},
                                            {QStringLiteral("threads"), r.cpuThreads}}},
        {QStringLiteral("gpu"),
         QJsonObject{{QStringLiteral("variant"), QString::fromStdString(r.gpu.variant)},
                     {QStringLiteral("memory"), QString::fromStdString(gpu::toString(r.gpu.memory))},
                     {QStringLiteral("streams"), r.gpu.streams},
                     {QStringLiteral("repetitions"), r.gpu.repetitions},
                     {QStringLiteral("warmup"), r.gpu.warmup},
                     {QStringLiteral("graph"), r.gpu.graph},
                     {QStringLiteral("timing"), r.gpu.endToEnd ? QStringLiteral("end-to-end") : QStringLiteral("kernel-only")}}},
        {QStringLiteral("measure_roofs"), r.measureRoofs},
        {QStringLiteral("custom_kernel"), customKernelJson(r)},
    };
}

QJsonObject backendJson(const RunResult& run, const BackendResult& b)
{
    QJsonObject o{{QStringLiteral("backend"), toString(b.backend)},
                  {QStringLiteral("ok"), b.ok()},
                  {QStringLiteral("error"), textOrNull(b.error)}};
    if (!b.ok()) return o;
    o[QStringLiteral("time_ms")] = toJson(b.time);
    if (b.gpu) {
        o[QStringLiteral("gpu")] = toJson(*b.gpu, run.copyBandwidthGBs);
    } else {
        o[QStringLiteral("gbs")] = positiveOrNull(cpuGBs(run.request, b));
        o[QStringLiteral("host_bandwidth_pct")] = positiveOrNull(hostBandwidthPercent(run, b));
    }
    return o;
}

/// cpu median / gpu median for each successful CPU backend: "gpu_kernel_vs_cpu-opencv" etc.
QJsonObject speedupsJson(const RunResult& result)
{
    QJsonObject speedups;
    const BackendResult* gpuResult = result.find(Backend::Gpu);
    if (!gpuResult || !gpuResult->gpu) return speedups;
    const gpu::GpuReport& g = *gpuResult->gpu;
    for (const BackendResult& cpu : result.results) {
        if (cpu.backend == Backend::Gpu || !cpu.ok() || cpu.time.medianMs <= 0) continue;
        if (g.kernel.medianMs > 0)
            speedups[QStringLiteral("gpu_kernel_vs_") + toString(cpu.backend)] = cpu.time.medianMs / g.kernel.medianMs;
        if (result.request.gpu.endToEnd && g.total.medianMs > 0)
            speedups[QStringLiteral("gpu_end_to_end_vs_") + toString(cpu.backend)] = cpu.time.medianMs / g.total.medianMs;
    }
    return speedups;
}

QString csvNumber(double v) { return std::isfinite(v) ? QString::number(v, 'g', 8) : QString(); }

} // namespace

QJsonValue textOrNull(const QString& text) { return text.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(text); }

QJsonObject toJson(const TimingStats& stats)
{
    return {{QStringLiteral("median"), stats.medianMs},
            {QStringLiteral("min"), stats.minMs},
            {QStringLiteral("max"), stats.maxMs},
            {QStringLiteral("repetitions"), stats.repetitions}};
}

QJsonObject toJson(const Comparison& c)
{
    return {{QStringLiteral("max_abs"), finite(c.maxAbsError)},
            {QStringLiteral("mean_abs"), finite(c.meanAbsError)},
            {QStringLiteral("max_rel"), finite(c.maxRelError)},
            {QStringLiteral("norm_rel"), finite(c.normRelError)},
            {QStringLiteral("psnr"), finite(c.psnr)},
            {QStringLiteral("differing"), double(c.differing)},
            {QStringLiteral("elements"), double(c.elements)},
            {QStringLiteral("shape_matches"), c.shapeMatches}};
}

QJsonObject toJson(const gpu::DeviceInfo& d)
{
    return {{QStringLiteral("index"), d.index},
            {QStringLiteral("name"), QString::fromStdString(d.name)},
            {QStringLiteral("compute_capability"), QStringLiteral("%1.%2").arg(d.computeMajor).arg(d.computeMinor)},
            {QStringLiteral("multiprocessors"), d.multiprocessors},
            {QStringLiteral("global_memory_bytes"), double(d.globalMemoryBytes)},
            {QStringLiteral("l2_cache_bytes"), double(d.l2CacheBytes)},
            {QStringLiteral("sm_clock_mhz"), d.smClockKHz / 1000.0},
            {QStringLiteral("memory_clock_mhz"), d.memoryClockKHz / 1000.0},
            {QStringLiteral("memory_bus_width_bits"), d.memoryBusWidthBits},
            {QStringLiteral("theoretical_bandwidth_gbs"), d.theoreticalBandwidthGBs},
            {QStringLiteral("cuda_driver"), cudaVersion(d.driverVersion)},
            {QStringLiteral("cuda_runtime"), cudaVersion(d.runtimeVersion)},
            {QStringLiteral("cufft"), d.cufftVersion}};
}

QJsonObject toJson(const gpu::GpuReport& g, double copyBandwidthGBs)
{
    QJsonArray timeline;
    for (const gpu::TimelineEntry& t : g.timeline)
        timeline.append(QJsonObject{{QStringLiteral("stream"), t.stream},
                                    {QStringLiteral("chunk"), t.chunk},
                                    {QStringLiteral("stage"), QString::fromStdString(gpu::toString(t.stage))},
                                    {QStringLiteral("start_ms"), t.startMs},
                                    {QStringLiteral("end_ms"), t.endMs}});
    const double kernelGBs = g.kernelGBs();
    return {
        {QStringLiteral("variant"), QString::fromStdString(g.variant)},
        {QStringLiteral("device"), QString::fromStdString(g.device)},
        {QStringLiteral("memory"), QString::fromStdString(gpu::toString(g.memory))},
        {QStringLiteral("streams"), g.streams},
        {QStringLiteral("chunks"), g.chunks},
        {QStringLiteral("chunking"), QString::fromStdString(g.chunking)},
        {QStringLiteral("graph"), g.graph},
        {QStringLiteral("launch"), QString::fromStdString(g.launch)},
        {QStringLiteral("stages_ms"), QJsonObject{{QStringLiteral("h2d"), toJson(g.h2d)},
                                                  {QStringLiteral("kernel"), toJson(g.kernel)},
                                                  {QStringLiteral("d2h"), toJson(g.d2h)},
                                                  {QStringLiteral("total"), toJson(g.total)}}},
        {QStringLiteral("bytes"), QJsonObject{{QStringLiteral("h2d"), double(g.bytesH2D)},
                                              {QStringLiteral("d2h"), double(g.bytesD2H)},
                                              {QStringLiteral("kernel"), double(g.kernelBytes)}}},
        {QStringLiteral("kernel_gbs"), kernelGBs},
        {QStringLiteral("copy_bandwidth_pct"),
         copyBandwidthGBs > 0 ? QJsonValue(100.0 * kernelGBs / copyBandwidthGBs) : QJsonValue(QJsonValue::Null)},
        {QStringLiteral("end_to_end_gbs"), positiveOrNull(g.endToEndGBs())},
        {QStringLiteral("kernel_gflops"), positiveOrNull(g.kernelGFlops())},
        {QStringLiteral("timeline"), timeline},
        {QStringLiteral("kernel_resources"), g.resources ? QJsonValue(resourcesJson(*g.resources)) : QJsonValue(QJsonValue::Null)},
    };
}

QJsonObject toJson(const RunResult& result)
{
    const RunRequest& r = result.request;
    QJsonArray results;
    for (const BackendResult& b : result.results) results.append(backendJson(result, b));
    QJsonObject comparisons;
    for (const BackendComparison& compared : result.comparisons) {
        QJsonObject c = toJson(compared.comparison);
        c[QStringLiteral("agrees")] = compared.disagreement.isEmpty();
        c[QStringLiteral("disagreement")] = textOrNull(compared.disagreement);
        comparisons[toString(compared.backend)] = c;
    }
    return {
        {QStringLiteral("schema"), QStringLiteral("kernellab-report")},
        {QStringLiteral("schema_version"), kSchemaVersion},
        {QStringLiteral("date"), result.date},
        {QStringLiteral("input"), inputJson(r)},
        {QStringLiteral("op"), QJsonObject{{QStringLiteral("name"), toString(r.op)},
                                           {QStringLiteral("parameters"), r.opParameters},
                                           {QStringLiteral("spec"), describe(result.request.op).reportSpec(result)}}},
        {QStringLiteral("options"), optionsJson(r)},
        {QStringLiteral("results"), results},
        {QStringLiteral("comparison_reference"),
         result.comparisonReference ? QJsonValue(toString(*result.comparisonReference)) : QJsonValue(QJsonValue::Null)},
        {QStringLiteral("comparisons"), comparisons},
        {QStringLiteral("speedups"), speedupsJson(result)},
        {QStringLiteral("gpu_status"), QJsonObject{{QStringLiteral("available"), result.gpuStatus.available},
                                                   {QStringLiteral("reason"),
                                                    textOrNull(QString::fromStdString(result.gpuStatus.reason))}}},
        {QStringLiteral("device"), result.device ? QJsonValue(toJson(*result.device)) : QJsonValue(QJsonValue::Null)},
        {QStringLiteral("copy_bandwidth_gbs"), positiveOrNull(result.copyBandwidthGBs)},
        {QStringLiteral("link_both_ways_gbs"), positiveOrNull(result.linkBothWaysGBs)},
        {QStringLiteral("host_bandwidth_gbs"), positiveOrNull(result.hostBandwidthGBs)},
        {QStringLiteral("cpu_threads"), result.cpuThreads},
        {QStringLiteral("environment"), environmentJson()},
    };
}

const QStringList& csvColumns()
{
    static const QStringList columns = {
        QStringLiteral("op"), QStringLiteral("input"), QStringLiteral("backend"), QStringLiteral("ok"),
        QStringLiteral("error"), QStringLiteral("median_ms"), QStringLiteral("min_ms"), QStringLiteral("max_ms"),
        QStringLiteral("repetitions"), QStringLiteral("variant"), QStringLiteral("memory"), QStringLiteral("streams"),
        QStringLiteral("h2d_ms"), QStringLiteral("kernel_ms"), QStringLiteral("d2h_ms"), QStringLiteral("total_ms"),
        QStringLiteral("kernel_gbs"), QStringLiteral("copy_bandwidth_pct"), QStringLiteral("kernel_gflops"),
        QStringLiteral("max_abs"), QStringLiteral("mean_abs"), QStringLiteral("psnr"), QStringLiteral("differing"),
        QStringLiteral("cpu_threads"), QStringLiteral("cpu_gbs"), QStringLiteral("host_bandwidth_pct")};
    return columns;
}

QString toCsv(const RunResult& result)
{
    QString csv = csvColumns().join(QLatin1Char(',')) + QLatin1Char('\n');
    for (const QStringList& row : csvRows(result)) csv += row.join(QLatin1Char(',')) + QLatin1Char('\n');
    return csv;
}

std::vector<QStringList> csvRows(const RunResult& result)
{
    std::vector<QStringList> rows;
    for (const BackendResult& b : result.results) {
        QStringList row = {toString(result.request.op), csvField(result.request.inputName), toString(b.backend),
                           b.ok() ? QStringLiteral("true") : QStringLiteral("false"), csvField(b.error)};
        row << (b.ok() ? QStringList{csvNumber(b.time.medianMs), csvNumber(b.time.minMs), csvNumber(b.time.maxMs),
                                     QString::number(b.time.repetitions)}
                       : QStringList{QString(), QString(), QString(), QString()});
        if (b.gpu) {
            const gpu::GpuReport& g = *b.gpu;
            row << QString::fromStdString(g.variant) << QString::fromStdString(gpu::toString(g.memory))
                << QString::number(g.streams) << csvNumber(g.h2d.medianMs) << csvNumber(g.kernel.medianMs)
                << csvNumber(g.d2h.medianMs) << csvNumber(g.total.medianMs) << csvNumber(g.kernelGBs())
                << (result.copyBandwidthGBs > 0 ? csvNumber(100.0 * g.kernelGBs() / result.copyBandwidthGBs) : QString())
                << (g.kernelFlops > 0 ? csvNumber(g.kernelGFlops()) : QString());
        } else {
            for (int i = 0; i < 10; ++i) row << QString();
        }
        const auto compared = std::find_if(result.comparisons.begin(), result.comparisons.end(),
                                           [&](const BackendComparison& c) { return c.backend == b.backend; });
        if (compared != result.comparisons.end())
            row << csvNumber(compared->comparison.maxAbsError) << csvNumber(compared->comparison.meanAbsError)
                << csvNumber(compared->comparison.psnr) << QString::number(compared->comparison.differing);
        else
            row << QString() << QString() << QString() << QString();
        const bool cpu = b.backend != Backend::Gpu && b.ok();
        row << (b.backend != Backend::Gpu ? QString::number(result.cpuThreads) : QString())
            << (cpu ? csvNumber(cpuGBs(result.request, b)) : QString())
            << (cpu && result.hostBandwidthGBs > 0 ? csvNumber(hostBandwidthPercent(result, b)) : QString());
        rows.push_back(row);
    }
    return rows;
}

QJsonObject environmentJson()
{
    static const QJsonObject environment = [] {
        QJsonObject env{
            {QStringLiteral("qt"), QString::fromLatin1(qVersion())},
            {QStringLiteral("opencv"), QString::fromStdString(cv::getVersionString())},
            {QStringLiteral("cpu_model"), cpuModel()},
            {QStringLiteral("hardware_threads"), hardwareThreads()},
            {QStringLiteral("os"), QSysInfo::prettyProductName()},
            {QStringLiteral("kernel"), QSysInfo::kernelVersion()},
            {QStringLiteral("compiler"), QStringLiteral(__VERSION__)},
        };
        const QString unavailable = QStringLiteral("unavailable");
        env[QStringLiteral("cuda_runtime")] = unavailable;
        env[QStringLiteral("cuda_driver")] = unavailable;
        env[QStringLiteral("cufft")] = unavailable;
        try {
            const std::vector<gpu::DeviceInfo> devices = gpu::listDevices();
            if (!devices.empty()) {
                env[QStringLiteral("cuda_runtime")] = cudaVersion(devices.front().runtimeVersion);
                env[QStringLiteral("cuda_driver")] = cudaVersion(devices.front().driverVersion);
                env[QStringLiteral("cufft")] = QString::number(devices.front().cufftVersion);
            }
        } catch (const std::exception&) {
            // A driver that lists no device properly leaves the CUDA fields "unavailable".
        }
        return env;
    }();
    return environment;
}

} // namespace kl::app
