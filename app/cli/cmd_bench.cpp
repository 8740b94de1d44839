// kernellab-cli bench: ops x variants x sizes x depths x memory modes x stream counts,
// every GPU output verified against the CPU before it is timed.
#include "bench_matrix.hpp"
#include "bench_support.hpp"
#include "csv.hpp"
#include "generators.hpp"
#include "report.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"
#include "kernellab/image_io.hpp"
#include "kernellab/signal_io.hpp"

#include <QDateTime>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>

#include <cmath>
#include <map>

namespace kl::cli {

namespace {

struct BenchOptions {
    std::vector<app::Op> ops;
    std::vector<std::pair<int, int>> imageSizes;  ///< cols, rows
    std::vector<size_t> signalFrames;
    std::vector<int> depths;
    QStringList variants;  ///< empty: every variant of each op
    std::optional<app::CustomKernel> custom;  ///< --kernel-source: one more variant of the one op benched
    std::vector<gpu::HostMemory> memories;
    std::vector<int> streams;
    std::vector<app::Backend> backends;
    BenchOpSettings op;
    int cpuRepetitions = 3, cpuWarmup = 1, gpuRepetitions = 20, gpuWarmup = 3;
    int cpuThreads = hardwareThreads();
    std::vector<int> scalingThreads;  ///< --thread-scaling: cpu-opencv also at these counts
    bool quick = false, requireGpu = false, quiet = false;
    QString outDir, dumpDir;
    BorderMode border = BorderMode::Reflect101;  ///< --matrix's conv2d cells
};

struct Bandwidth {
    double deviceCopyGBs = 0;
    gpu::Engine::TransferRates pageable, staged, pinned;
    double linkBothWaysGBs = 0;  ///< pinned H2D and D2H at once
    std::map<int, double> hostGBs;  ///< host memory copy (read + write) per CPU thread count
};

struct BenchRow {
    QString op, backend, variant, size, depth, memory;
    int width = 0, height = 0, channels = 0, streams = 0, cpuThreads = 0;
    size_t frames = 0;
    QString error;            ///< empty when the row ran and verified
    QString verifiedAgainst;  ///< the CPU backend the output was checked against
    double maxAbsError = 0;
    TimingStats kernel, endToEnd;
    double gbs = 0, copyPct = 0, hostPct = 0, endToEndGBs = 0, speedupKernel = 0, speedupEndToEnd = 0;
    QString inputFile, kernelFile;
};

std::vector<std::pair<int, int>> parseImageSizes(const QStringList& items)
{
    std::vector<std::pair<int, int>> sizes;
    for (const QString& item : items) {
        const QStringList parts = item.split(QLatin1Char('x'));
        bool okW = false, okH = true;
        const int w = parts[0].toInt(&okW);
        const int h = parts.size() == 2 ? parts[1].toInt(&okH) : w;
        if (parts.size() > 2 || !okW || !okH || w < 1 || h < 1)
            throw CliError(kExitBadArguments, "--sizes: '" + item + "' is not N or WxH (e.g. 8192 or 4096x2048)");
        sizes.emplace_back(w, h);
    }
    return sizes;
}

BenchOptions parseOptions(const QCommandLineParser& parser)
{
    BenchOptions o;
    o.quick = parser.isSet(QStringLiteral("quick"));
    o.quiet = parser.isSet(QStringLiteral("quiet"));
    o.requireGpu = parser.isSet(QStringLiteral("require-gpu"));
    for (const QString& name : listOption(parser, QStringLiteral("ops"),
                                          {QStringLiteral("conv2d"), QStringLiteral("conv1d"),
                                           QStringLiteral("histogram"), QStringLiteral("transpose")}))
        o.ops.push_back(app::parseOp(name));
    // Defaults beyond the 60 MB L2 of an H200 (8192^2 u8 = 64 MiB); --quick stays small.
    o.imageSizes = parseImageSizes(listOption(parser, QStringLiteral("sizes"),
                                              {o.quick ? QStringLiteral("1024") : QStringLiteral("8192")}));
    for (const QString& f : listOption(parser, QStringLiteral("frames"), {o.quick ? QStringLiteral("1M") : QStringLiteral("16M")}))
        o.signalFrames.push_back(app::parseCount(f, QStringLiteral("--frames")));
    for (const QString& d : listOption(parser, QStringLiteral("depths"),
                                       o.quick ? QStringList{QStringLiteral("u8"), QStringLiteral("f32")}
                                               : QStringList{QStringLiteral("u8"), QStringLiteral("u16"), QStringLiteral("f32")}))
        o.depths.push_back(parseDepth(d.toStdString()));
    o.custom = app::customKernelFrom(parameterMap(parser, app::customKernelParameterInfo()));
    if (o.custom && o.ops.size() != 1)
        throw CliError(kExitBadArguments, QStringLiteral("--kernel-source: a user kernel is for one op; give it with --ops"));
    o.variants = listOption(parser, QStringLiteral("variants"), {});
    for (const QString& v : o.variants) {
        const auto ops = app::allOps();
        if (v != QLatin1String("auto") && !(o.custom && v == o.custom->variant()) &&
            std::none_of(ops.begin(), ops.end(), [&](app::Op op) { return app::gpuVariants(op).contains(v); }))
            throw CliError(kExitBadArguments, "--variants: '" + v + "' is not a variant of any op (see kernellab-cli info)" +
                                                  (v.startsWith(QLatin1String("custom:")) ? QStringLiteral("; a user kernel needs --kernel-source FILE")
                                                                                          : QString()));
    }
    for (const QString& m : listOption(parser, QStringLiteral("memory"),
                                         {QStringLiteral("pageable"), QStringLiteral("staged"), QStringLiteral("pinned")}))
        o.memories.push_back(gpu::parseHostMemory(m.toStdString()));
    for (const QString& s : listOption(parser, QStringLiteral("streams"), {QStringLiteral("1"), QStringLiteral("4")})) {
        bool ok = false;
        const int n = s.toInt(&ok);
        if (!ok || n < 1 || n > gpu::kMaxStreams)
            throw CliError(kExitBadArguments, QStringLiteral("--streams: '%1' is not in 1..%2").arg(s).arg(gpu::kMaxStreams));
        o.streams.push_back(n);
    }
    o.backends = app::parseBackends(parser.value(QStringLiteral("backends")).isEmpty()
                                        ? QStringLiteral("cpu-opencv,gpu")
                                        : parser.value(QStringLiteral("backends")));
    // CPU OpenCV is every row's baseline for the speedup columns.
    if (std::find(o.backends.begin(), o.backends.end(), app::Backend::CpuOpenCV) == o.backends.end())
        o.backends.insert(o.backends.begin(), app::Backend::CpuOpenCV);
    o.cpuRepetitions = intOption(parser, QStringLiteral("cpu-repetitions"), o.quick ? 1 : 3, 1);
    o.cpuWarmup = 1;  // the untimed run allocates the outputs: never inside the timed runs
    if (parser.isSet(QStringLiteral("cpu-threads"))) {
        bool ok = false;
        o.cpuThreads = parser.value(QStringLiteral("cpu-threads")).toInt(&ok);
        if (!ok)
            throw CliError(kExitBadArguments,
                           "--cpu-threads: '" + parser.value(QStringLiteral("cpu-threads")) + "' is not a whole number");
        validateCpuThreads(o.cpuThreads);
    }
    if (parser.isSet(QStringLiteral("thread-scaling"))) o.scalingThreads = threadScalingCounts(o.cpuThreads);
    o.gpuRepetitions = intOption(parser, QStringLiteral("repetitions"), o.quick ? 5 : 20, 1);
    o.gpuWarmup = intOption(parser, QStringLiteral("warmup"), o.quick ? 1 : 3, 0);
    o.op = benchOpSettings(parser);
    o.outDir = parser.value(QStringLiteral("out-dir"));
    if (parser.isSet(QStringLiteral("border"))) o.border = parseBorderMode(parser.value(QStringLiteral("border")).toStdString());
    o.dumpDir = parser.value(QStringLiteral("dump-inputs"));
    return o;
}

bool has(const std::vector<app::Backend>& list, app::Backend b) { return std::find(list.begin(), list.end(), b) != list.end(); }

QStringList variantsToRun(app::Op op, const BenchOptions& o)
{
    const QStringList& filter = o.variants;
    QStringList names = app::gpuVariants(op);
    if (o.custom) names << o.custom->variant();  // parseOptions: --ops is this one op
    if (filter.isEmpty()) return names;
    QStringList chosen;
    for (const QString& v : filter)
        if (names.contains(v) || v == QLatin1String("auto")) chosen << v;
    return chosen;
}

class Bench {
public:
    Bench(BenchOptions options, gpu::Engine* engine, const Bandwidth& bandwidth, ProgressBar& progress)
        : o_(std::move(options)), engine_(engine), bandwidth_(bandwidth), progress_(progress)
    {
        const auto steps = [&](app::Op op) {
            const double cpu = double(o_.backends.size()) - (has(o_.backends, app::Backend::Gpu) ? 1 : 0) +
                               double(o_.scalingThreads.size());
            const double gpu = engine_ ? double(variantsToRun(op, o_).size()) *
                                             double(2 + o_.memories.size() * o_.streams.size())
                                       : 0.0;
            const double sizes = op == app::Op::Conv1D ? double(o_.signalFrames.size())
                                                       : double(o_.imageSizes.size() * o_.depths.size());
            return sizes * (cpu + gpu);
        };
        for (app::Op op : o_.ops) totalSteps_ += steps(op);
    }

    void run()
    {
        for (const auto& [cols, rows] : o_.imageSizes)
            for (int depth : o_.depths)
                for (app::Op op : o_.ops)
                    if (op != app::Op::Conv1D) benchOne(benchRequest(op, o_.op, cols, rows, depth, 0));
        if (std::find(o_.ops.begin(), o_.ops.end(), app::Op::Conv1D) != o_.ops.end())
            for (size_t frames : o_.signalFrames) benchOne(benchRequest(app::Op::Conv1D, o_.op, 0, 0, 0, frames));
    }

    [[nodiscard]] const std::vector<BenchRow>& rows() const { return rows_; }
    [[nodiscard]] int failures() const
    {
        return int(std::count_if(rows_.begin(), rows_.end(), [](const BenchRow& r) { return !r.error.isEmpty(); }));
    }

private:
    void step(const QString& what)
    {
        progress_.update(totalSteps_ > 0 ? doneSteps_ / totalSteps_ : 0, what);
        doneSteps_ += 1;
    }

    BenchRow baseRow(const app::RunRequest& r, const QString& backend)
    {
        BenchRow row;
        row.op = app::toString(r.op);
        row.backend = backend;
        if (r.image.empty()) {
            row.frames = r.signal.frames;
            row.channels = r.signal.channels;
            row.size = QString::number(r.signal.frames);
            row.depth = QStringLiteral("f32");
        } else {
            row.width = r.image.cols;
            row.height = r.image.rows;
            row.channels = r.image.channels();
            row.size = QStringLiteral("%1x%2").arg(r.image.cols).arg(r.image.rows);
            row.depth = QString::fromStdString(depthName(r.image.depth()));
        }
        row.inputFile = inputFile_;
        row.kernelFile = kernelFile_;
        return row;
    }

    void fail(BenchRow& row, const QString& why)
    {
        row.error = why;
        progress_.clear();
        printError(QStringLiteral("FAILED %1 %2 %3 %4 %5: %6").arg(row.op, row.backend, row.variant, row.size, row.depth, why));
    }

    void dumpInputs(const app::RunRequest& r)
    {
        inputFile_.clear();
        kernelFile_.clear();
        if (o_.dumpDir.isEmpty()) return;
        QDir().mkpath(o_.dumpDir);
        const QDir dir(o_.dumpDir);
        const auto file = [&](const QString& name) { return dir.filePath(name).toStdString(); };
        try {
            if (r.image.empty()) {
                inputFile_ = QStringLiteral("signal_%1_c%2.npy").arg(r.signal.frames).arg(r.signal.channels);
                saveSignal(file(inputFile_), r.signal);
            } else {
                inputFile_ = QStringLiteral("image_%1x%2_%3_c%4.npy")
                                 .arg(r.image.cols)
                                 .arg(r.image.rows)
                                 .arg(QString::fromStdString(depthName(r.image.depth())))
                                 .arg(r.image.channels());
                saveImageNpy(file(inputFile_), r.image);
            }
            if (r.op == app::Op::Conv2D) {
                kernelFile_ = QStringLiteral("conv2d_kernel_%1x%2.npy").arg(r.conv2d.kernel.cols).arg(r.conv2d.kernel.rows);
                saveImageNpy(file(kernelFile_), r.conv2d.kernel);
            } else if (r.op == app::Op::Conv1D) {
                kernelFile_ = QStringLiteral("conv1d_taps_%1.npy").arg(r.conv1d.taps.size());
                Signal taps(1, r.conv1d.taps.size(), 1.0);
                taps.data = r.conv1d.taps;
                saveSignal(file(kernelFile_), taps);
            }
        } catch (const IoError& e) {
            throw CliError(kExitFailure, QString::fromUtf8(e.what()));  // a write failed (main() takes IoError for input)
        }
    }

    void benchOne(app::RunRequest request)
    {
        request.cpuRepetitions = o_.cpuRepetitions;
        request.cpuWarmup = o_.cpuWarmup;
        request.cpuThreads = o_.cpuThreads;
        request.customKernel = o_.custom;
        dumpInputs(request);
        const QString label = app::toString(request.op) + QLatin1Char(' ') + baseRow(request, {}).size + QLatin1Char(' ') +
                              baseRow(request, {}).depth;

        // CPU backends, timed; the first successful one is every other row's reference.
        std::vector<app::BackendResult> cpu;
        for (app::Backend b : o_.backends) {
            if (b == app::Backend::Gpu) continue;
            step(label + QStringLiteral(": ") + app::toString(b));
            cpu.push_back(runBackend(request, b));
        }
        const app::BackendResult* openCv = nullptr;
        const app::BackendResult* reference = nullptr;
        for (const app::BackendResult& r : cpu) {
            if (r.backend == app::Backend::CpuOpenCV) openCv = &r;
            if (r.backend == app::Backend::CpuReference && r.ok()) reference = &r;
        }
        std::optional<app::BackendResult> untimedReference;
        if (!reference && referenceIsAffordable(request)) {
            app::RunRequest once = request;
            once.cpuRepetitions = 1;
            untimedReference = runBackend(once, app::Backend::CpuReference);
            if (untimedReference->ok()) reference = &*untimedReference;
        }
        if (!reference && openCv && openCv->ok()) reference = openCv;
        // Speed-ups are against the fastest CPU backend of this run.
        double baselineMs = 0;
        for (const app::BackendResult& r : cpu)
            if (r.ok() && (baselineMs == 0 || r.time.medianMs < baselineMs)) baselineMs = r.time.medianMs;

        for (const app::BackendResult& r : cpu) cpuRow(request, r, reference, baselineMs, o_.cpuThreads);
        for (int threads : o_.scalingThreads) {
            if (threads == o_.cpuThreads) continue;  // timed above
            step(label + QStringLiteral(": cpu-opencv on %1 thread(s)").arg(threads));
            app::RunRequest scaled = request;
            scaled.cpuThreads = threads;
            cpuRow(scaled, runBackend(scaled, app::Backend::CpuOpenCV), reference, baselineMs, threads);
        }
        if (!engine_ || !has(o_.backends, app::Backend::Gpu)) return;
        for (const QString& variant : variantsToRun(request.op, o_)) {
            // e.g. separable for a kernel that is not rank-1, tma for u8: no row rather than a failure
            if (!app::whyNotApplicable(request, variant, engine_->device()).isEmpty()) {
                doneSteps_ += 2 + double(o_.memories.size() * o_.streams.size());
                continue;
            }
            benchVariant(request, variant, reference, baselineMs, label);
        }
    }

    void cpuRow(const app::RunRequest& request, const app::BackendResult& r, const app::BackendResult* reference,
                double baselineMs, int threads)
    {
        BenchRow row = baseRow(request, app::toString(r.backend));
        row.variant = QStringLiteral("-");
        row.cpuThreads = threads;
        if (!r.ok()) {
            fail(row, r.error);
        } else {
            row.endToEnd = r.time;
            row.gbs = app::cpuGBs(request, r);
            const auto host = bandwidth_.hostGBs.find(threads);
            row.hostPct = host != bandwidth_.hostGBs.end() && host->second > 0 ? 100 * row.gbs / host->second : 0;
            row.speedupEndToEnd = baselineMs / r.time.medianMs;
            if (reference && reference->backend != r.backend) {
                row.verifiedAgainst = app::toString(reference->backend);
                const QString problem = verify(request, r, *reference);
                if (!problem.isEmpty()) fail(row, "output differs from " + row.verifiedAgainst + ": " + problem);
            }
        }
        rows_.push_back(row);
    }

    void benchVariant(app::RunRequest request, const QString& variant, const app::BackendResult* reference,
                      double baselineMs, const QString& label)
    {
        BenchRow base = baseRow(request, QStringLiteral("gpu"));
        base.variant = variant;
        request.gpu.variant = variant.toStdString();

        // Verify once, untimed, before any timing.
        step(label + QStringLiteral(": gpu ") + variant + QStringLiteral(" verify"));
        setCheckingRun(request.gpu, gpu::HostMemory::Pageable);
        const app::BackendResult check = runBackend(request, app::Backend::Gpu);
        QString problem = check.error;
        if (problem.isEmpty() && !reference) problem = QStringLiteral("no CPU result to verify against");
        if (problem.isEmpty()) {
            base.verifiedAgainst = app::toString(reference->backend);
            if (const std::optional<Comparison> c = app::compareResults(check, *reference)) base.maxAbsError = c->maxAbsError;
            problem = verify(request, check, *reference);
            if (!problem.isEmpty()) problem = "output differs from " + base.verifiedAgainst + ": " + problem;
        }
        if (!problem.isEmpty()) {
            fail(base, problem);
            rows_.push_back(base);
            doneSteps_ += 1 + double(o_.memories.size() * o_.streams.size());
            return;
        }

        request.gpu.repetitions = o_.gpuRepetitions;
        request.gpu.warmup = o_.gpuWarmup;
        step(label + QStringLiteral(": gpu ") + variant + QStringLiteral(" kernel only"));
        request.gpu.endToEnd = false;
        const app::BackendResult kernelOnly = runBackend(request, app::Backend::Gpu);
        if (kernelOnly.ok()) {
            const gpu::GpuReport& g = *kernelOnly.gpu;
            base.kernel = g.kernel;
            base.gbs = g.kernelGBs();
            base.copyPct = bandwidth_.deviceCopyGBs > 0 ? 100 * g.kernelGBs() / bandwidth_.deviceCopyGBs : 0;
            base.speedupKernel = g.kernel.medianMs > 0 ? baselineMs / g.kernel.medianMs : 0;
        }
        request.gpu.endToEnd = true;
        for (gpu::HostMemory memory : o_.memories)
            for (int streams : o_.streams) {
                request.gpu.memory = memory;
                request.gpu.streams = streams;
                // A user kernel runs on one stream from pageable or pinned memory: no row for the rest.
                if (!app::whyNotApplicable(request, variant, engine_->device()).isEmpty()) {
                    ++doneSteps_;
                    continue;
                }
                BenchRow row = base;
                row.memory = QString::fromStdString(gpu::toString(memory));
                row.streams = streams;
                step(label + QStringLiteral(": gpu ") + variant + QLatin1Char(' ') + row.memory +
                     QStringLiteral(" x%1").arg(streams));
                const app::BackendResult e2e = runBackend(request, app::Backend::Gpu);
                if (!kernelOnly.ok()) fail(row, "kernel-only run: " + kernelOnly.error);
                else if (!e2e.ok()) fail(row, e2e.error);
                else {
                    row.endToEnd = e2e.gpu->total;
                    row.endToEndGBs = e2e.gpu->endToEndGBs();
                    row.speedupEndToEnd = row.endToEnd.medianMs > 0 ? baselineMs / row.endToEnd.medianMs : 0;
                }
                rows_.push_back(row);
            }
    }

    BenchOptions o_;
    gpu::Engine* engine_;
    Bandwidth bandwidth_;
    ProgressBar& progress_;
    std::vector<BenchRow> rows_;
    double totalSteps_ = 0, doneSteps_ = 0;
    QString inputFile_, kernelFile_;
};

QString ratio(double v) { return v > 0 && std::isfinite(v) ? QString::number(v, 'f', 2) + QLatin1Char('x') : QStringLiteral("-"); }

Table benchTable(const std::vector<BenchRow>& rows)
{
    Table t;
    t.header = QStringList{QStringLiteral("op"), QStringLiteral("backend"), QStringLiteral("variant"), QStringLiteral("size"),
                           QStringLiteral("depth"), QStringLiteral("threads"), QStringLiteral("memory"),
                           QStringLiteral("streams"), QStringLiteral("kernel ms"), QStringLiteral("GB/s"),
                           QStringLiteral("% copy"), QStringLiteral("% host"),
                           QStringLiteral("end-to-end ms"), QStringLiteral("speedup kernel"),
                           QStringLiteral("speedup e2e"), QStringLiteral("check")};
    for (const BenchRow& r : rows)
        t.rows.push_back({r.op, r.backend, r.variant, r.size, r.depth,
                          r.cpuThreads ? QString::number(r.cpuThreads) : QStringLiteral("-"),
                          r.memory.isEmpty() ? QStringLiteral("-") : r.memory,
                          r.streams ? QString::number(r.streams) : QStringLiteral("-"), formatMs(r.kernel.medianMs),
                          formatRate(r.gbs), r.copyPct > 0 ? QString::number(r.copyPct, 'f', 1) : QStringLiteral("-"),
                          r.hostPct > 0 ? QString::number(r.hostPct, 'f', 1) : QStringLiteral("-"),
                          formatMs(r.endToEnd.medianMs), ratio(r.speedupKernel), ratio(r.speedupEndToEnd),
                          !r.error.isEmpty() ? QStringLiteral("FAILED")
                                             : (r.verifiedAgainst.isEmpty() ? QStringLiteral("-")
                                                                            : QStringLiteral("ok vs ") + r.verifiedAgainst)});
    return t;
}

QJsonObject toJson(const BenchRow& r)
{
    auto nullIfZero = [](double v) { return v > 0 && std::isfinite(v) ? QJsonValue(v) : QJsonValue(QJsonValue::Null); };
    auto timing = [](const TimingStats& t) { return t.repetitions > 0 ? QJsonValue(app::toJson(t)) : QJsonValue(QJsonValue::Null); };
    return {{QStringLiteral("op"), r.op},
            {QStringLiteral("backend"), r.backend},
            {QStringLiteral("variant"), r.variant},
            {QStringLiteral("size"), r.size},
            {QStringLiteral("width"), r.width},
            {QStringLiteral("height"), r.height},
            {QStringLiteral("frames"), double(r.frames)},
            {QStringLiteral("depth"), r.depth},
            {QStringLiteral("channels"), r.channels},
            {QStringLiteral("memory"), app::textOrNull(r.memory)},
            {QStringLiteral("streams"), r.streams ? QJsonValue(r.streams) : QJsonValue(QJsonValue::Null)},
            {QStringLiteral("cpu_threads"), r.cpuThreads ? QJsonValue(r.cpuThreads) : QJsonValue(QJsonValue::Null)},
            {QStringLiteral("host_bandwidth_pct"), nullIfZero(r.hostPct)},
            {QStringLiteral("ok"), r.error.isEmpty()},
            {QStringLiteral("error"), app::textOrNull(r.error)},
            {QStringLiteral("verified_against"), app::textOrNull(r.verifiedAgainst)},
            {QStringLiteral("max_abs_error"), r.maxAbsError},
            {QStringLiteral("kernel_ms"), timing(r.kernel)},
            {QStringLiteral("gbs"), nullIfZero(r.gbs)},
            {QStringLiteral("copy_pct"), nullIfZero(r.copyPct)},
            {QStringLiteral("end_to_end_ms"), timing(r.endToEnd)},
            {QStringLiteral("end_to_end_gbs"), nullIfZero(r.endToEndGBs)},
            {QStringLiteral("speedup_kernel_vs_fastest_cpu"), nullIfZero(r.speedupKernel)},
            {QStringLiteral("speedup_end_to_end_vs_fastest_cpu"), nullIfZero(r.speedupEndToEnd)},
            {QStringLiteral("input_file"), app::textOrNull(r.inputFile)},
            {QStringLiteral("kernel_file"), app::textOrNull(r.kernelFile)}};
}

QString csvOf(const std::vector<BenchRow>& rows)
{
    QString csv = QStringLiteral("op,backend,variant,width,height,frames,depth,channels,cpu_threads,memory,streams,ok,kernel_median_ms,"
                                 "kernel_min_ms,kernel_max_ms,gbs,copy_pct,end_to_end_median_ms,end_to_end_min_ms,"
                                 "end_to_end_max_ms,end_to_end_gbs,host_bandwidth_pct,speedup_kernel,speedup_end_to_end,verified_against,"
                                 "max_abs_error,error\n");
    auto num = [](double v) { return v > 0 && std::isfinite(v) ? QString::number(v, 'g', 8) : QString(); };
    for (const BenchRow& r : rows) {
        csv += QStringList{r.op, r.backend, r.variant, QString::number(r.width), QString::number(r.height),
                           QString::number(r.frames), r.depth, QString::number(r.channels),
                           r.cpuThreads ? QString::number(r.cpuThreads) : QString(), r.memory,
                           r.streams ? QString::number(r.streams) : QString(),
                           r.error.isEmpty() ? QStringLiteral("true") : QStringLiteral("false"), num(r.kernel.medianMs),
                           num(r.kernel.minMs), num(r.kernel.maxMs), num(r.gbs), num(r.copyPct),
                           num(r.endToEnd.medianMs), num(r.endToEnd.minMs), num(r.endToEnd.maxMs), num(r.endToEndGBs),
                           num(r.hostPct),
                           num(r.speedupKernel), num(r.speedupEndToEnd), r.verifiedAgainst,
                           QString::number(r.maxAbsError, 'g', 6), app::csvField(r.error)}
                   .join(QLatin1Char(','))
               + QLatin1Char('\n');
    }
    return csv;
}

QString bandwidthText(const Bandwidth& b)
{
    return QStringLiteral("device-to-device copy %1 GB/s (read + write); H2D pageable %2, staged %3, pinned %4 GB/s; "
                          "D2H pageable %5, staged %6, pinned %7 GB/s; pinned both ways at once %8 GB/s together")
        .arg(formatRate(b.deviceCopyGBs), formatRate(b.pageable.h2dGBs), formatRate(b.staged.h2dGBs),
             formatRate(b.pinned.h2dGBs), formatRate(b.pageable.d2hGBs), formatRate(b.staged.d2hGBs),
             formatRate(b.pinned.d2hGBs), formatRate(b.linkBothWaysGBs));
}

QString hostBandwidthText(const Bandwidth& b)
{
    QStringList parts;
    for (const auto& [threads, gbs] : b.hostGBs) parts << QStringLiteral("%1 GB/s on %2 thread(s)").arg(formatRate(gbs)).arg(threads);
    return parts.join(QStringLiteral(", "));
}

/// bench --matrix: the roofs, then every cell (bench_matrix.hpp); a GPU is required.
int runMatrixCommand(const BenchOptions& options)
{
    QString noGpuReason;
    gpu::Engine& engine = *gpuEngine(true, QStringLiteral("bench --matrix"), &noGpuReason);
    ProgressBar progress(options.quiet);
    progress.update(0, QStringLiteral("measuring the roofs"));
    const MatrixRoofs roofs{engine.measureCopyBandwidthGBs(), engine.measureFmaPeakGFlops()};
    progress.clear();
    const MatrixSettings settings{options.ops, options.imageSizes, options.signalFrames.front(), options.gpuRepetitions,
                                  options.gpuWarmup, options.cpuThreads, options.border, options.variants,
                                  options.outDir, options.dumpDir};
    try {
        return runMatrix(settings, engine, roofs, progress);
    } catch (const kl::Cancelled&) {
        progress.clear();
        printError(QStringLiteral("bench --matrix cancelled"));
        return kExitCancelled;
    }
}

} // namespace

int runBench(const QStringList& arguments)
{
    QCommandLineParser parser;
    parser.addOptions({
        {QStringLiteral("quick"), QStringLiteral("Small sizes and few repetitions (well under a minute).")},
        {QStringLiteral("ops"), QStringLiteral("Ops to run (default all four)."), QStringLiteral("LIST")},
        {QStringLiteral("sizes"), QStringLiteral("Image sizes, N or WxH (default 8192; --quick 1024)."), QStringLiteral("LIST")},
        {QStringLiteral("frames"), QStringLiteral("Signal lengths for conv1d, K/M suffixes (default 16M; --quick 1M)."),
         QStringLiteral("LIST")},
        {QStringLiteral("depths"), QStringLiteral("Image depths (default u8,u16,f32; --quick u8,f32)."), QStringLiteral("LIST")},
        {QStringLiteral("variants"),
         QStringLiteral("GPU variants (default: every variant of each op, and custom:<name> with --kernel-source). With "
                        "--matrix, each cell runs the first of them that applies to it, and cells none applies to are "
                        "left out (default: auto)."),
         QStringLiteral("LIST")},
        {QStringLiteral("memory"), QStringLiteral("Host memory kinds (default pageable,staged,pinned)."), QStringLiteral("LIST")},
        {QStringLiteral("streams"), QStringLiteral("Stream counts (default 1,4)."), QStringLiteral("LIST")},
        {QStringLiteral("backends"),
         QStringLiteral("Backends (default cpu-opencv,gpu; cpu-opencv is always timed as the baseline)."),
         QStringLiteral("LIST")},
        {QStringLiteral("repetitions"), QStringLiteral("GPU timed runs (default 20; --quick 5)."), QStringLiteral("N")},
        {QStringLiteral("warmup"), QStringLiteral("GPU warm-up runs (default 3; --quick 1)."), QStringLiteral("N")},
        {QStringLiteral("cpu-repetitions"), QStringLiteral("CPU timed runs (default 3; --quick 1)."), QStringLiteral("N")},
        {QStringLiteral("cpu-threads"),
         QStringLiteral("Threads of the CPU backends, 1..%1 (default: all %2 hardware threads).")
             .arg(kMaxCpuThreads)
             .arg(hardwareThreads()),
         QStringLiteral("N")},
        {QStringLiteral("thread-scaling"),
         QStringLiteral("Also time cpu-opencv on 1, 2, 4 ... up to --cpu-threads threads (rows per thread count).")},
        {QStringLiteral("require-gpu"), QStringLiteral("Exit 3 when there is no GPU instead of timing the CPU only.")},
        {QStringLiteral("matrix"),
         QStringLiteral("The coverage matrix instead: conv2d kernel classes (box 3 and 7, Gaussian 5x5 s=1.3, sharpen, "
                        "Laplacian, Sobel, a rank-5 5x5, Gaussian 9 and 15) and histogram and transpose, each at every "
                        "depth (u8, u16, f32) and channel count (1, 3, 4), and conv1d K = 15, 127, 1023, 8191; kernel only, "
                        "auto variant, --sizes images (default 8192), each against the copy and FMA roofs measured first, "
                        "held to the nearer one and to its class's (memory- or compute-bound), the worst cell of each "
                        "printed last; --ops keeps the cells of those ops. Writes kernellab-matrix.{json,csv,md}; needs a "
                        "GPU.")},
        {QStringLiteral("border"),
         QStringLiteral("--matrix: the conv2d cells' border (default reflect101; NPP's filters have replicate only)."),
         QStringLiteral("MODE")},
        {QStringLiteral("out-dir"), QStringLiteral("Where kernellab-bench.json, .csv and .md go (default .)."),
         QStringLiteral("DIR"), QStringLiteral(".")},
        {QStringLiteral("dump-inputs"), QStringLiteral("Also write every input and kernel as .npy here (for bench/peers.py); with --matrix, each "
                        "conv2d and transpose cell's input, kernel and verified GPU output, listed in cells.csv (for "
                        "bench/npp_peer.cu)."),
         QStringLiteral("DIR")},
    });
    addBenchOpOptions(parser);
    addParameterOptions(parser, app::customKernelParameterInfo());
    addDeviceOption(parser);
    if (!parseCommandLine(parser, arguments,
                          QStringLiteral("kernellab-cli bench: ops x variants x sizes x depths x memory modes x streams; "
                                         "GPU outputs are verified against the CPU before timing.")))
        return kExitOk;
    const BenchOptions options = parseOptions(parser);
    selectDevice(parser);
    if (!QDir().mkpath(options.outDir)) throw CliError(kExitFailure, "cannot create --out-dir '" + options.outDir + "'");
    if (parser.isSet(QStringLiteral("matrix"))) return runMatrixCommand(options);

    QString noGpuReason;
    gpu::Engine* engine = has(options.backends, app::Backend::Gpu)
                              ? gpuEngine(options.requireGpu, QStringLiteral("bench --require-gpu"), &noGpuReason)
                              : nullptr;
    if (!engine && has(options.backends, app::Backend::Gpu))
        printLine("GPU columns are empty: " + noGpuReason + "; timing the CPU backends only.");

    ProgressBar progress(options.quiet);
    // Measured first, in the same run, so that "% copy" compares with this machine's roof.
    Bandwidth bw;
    if (engine) {
        progress.update(0, QStringLiteral("measuring copy bandwidth"));
        bw.deviceCopyGBs = engine->measureCopyBandwidthGBs();
        bw.pageable = engine->measureTransferGBs(gpu::HostMemory::Pageable);
        bw.staged = engine->measureTransferGBs(gpu::HostMemory::Staged);
        bw.linkBothWaysGBs = engine->linkBothWaysGBs();
        bw.pinned = engine->measureTransferGBs(gpu::HostMemory::Pinned);
        progress.clear();
        printLine(QStringLiteral("%1: %2").arg(QString::fromStdString(engine->device().name), bandwidthText(bw)));
    }
    // The CPU roof: host memory bandwidth for every thread count the CPU rows use.
    progress.update(0, QStringLiteral("measuring host memory bandwidth"));
    for (int threads : options.scalingThreads) bw.hostGBs[threads] = app::hostCopyBandwidthGBs(threads);
    bw.hostGBs[options.cpuThreads] = app::hostCopyBandwidthGBs(options.cpuThreads);
    progress.clear();
    printLine(QStringLiteral("host memory copy (read + write): %1").arg(hostBandwidthText(bw)));
    Bench bench(options, engine, bw, progress);

    bool cancelled = false;
    try {
        bench.run();
    } catch (const kl::Cancelled&) {
        cancelled = true;
    }
    progress.clear();

    const Table table = benchTable(bench.rows());
    printLine(table.text());

    const QString date = QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
    QJsonArray rows;
    for (const BenchRow& r : bench.rows()) rows.append(toJson(r));
    const QJsonObject json{
        {QStringLiteral("schema"), QStringLiteral("kernellab-bench")},
        {QStringLiteral("schema_version"), 2},
        {QStringLiteral("date"), date},
        {QStringLiteral("quick"), options.quick},
        {QStringLiteral("complete"), !cancelled},
        {QStringLiteral("parameters"), toJson(options.op)},
        {QStringLiteral("repetitions"), QJsonObject{{QStringLiteral("cpu"), options.cpuRepetitions},
                                                    {QStringLiteral("cpu_warmup"), options.cpuWarmup},
                                                    {QStringLiteral("cpu_threads"), options.cpuThreads},
                                                    {QStringLiteral("gpu"), options.gpuRepetitions},
                                                    {QStringLiteral("gpu_warmup"), options.gpuWarmup}}},
        {QStringLiteral("gpu_status"), QJsonObject{{QStringLiteral("available"), engine != nullptr},
                                                   {QStringLiteral("reason"), engine ? QJsonValue(QJsonValue::Null)
                                                                                     : QJsonValue(noGpuReason)}}},
        {QStringLiteral("device"), engine ? QJsonValue(app::toJson(engine->device())) : QJsonValue(QJsonValue::Null)},
        {QStringLiteral("bandwidth_gbs"),
         engine ? QJsonValue(QJsonObject{{QStringLiteral("device_copy"), bw.deviceCopyGBs},
                                         {QStringLiteral("h2d_pageable"), bw.pageable.h2dGBs},
                                         {QStringLiteral("d2h_pageable"), bw.pageable.d2hGBs},
                                         {QStringLiteral("h2d_staged"), bw.staged.h2dGBs},
                                         {QStringLiteral("d2h_staged"), bw.staged.d2hGBs},
                                         {QStringLiteral("h2d_pinned"), bw.pinned.h2dGBs},
                                         {QStringLiteral("d2h_pinned"), bw.pinned.d2hGBs},
                                         {QStringLiteral("both_ways_pinned"), bw.linkBothWaysGBs}})
                : QJsonValue(QJsonValue::Null)},
        {QStringLiteral("cpu_threads"), options.cpuThreads},
        {QStringLiteral("host_bandwidth_gbs"), [&] {
             QJsonObject host;
             for (const auto& [threads, gbs] : bw.hostGBs) host[QString::number(threads)] = gbs;
             return host;
         }()},
        {QStringLiteral("inputs_dir"), options.dumpDir.isEmpty() ? QJsonValue(QJsonValue::Null)
                                                                 : QJsonValue(QDir(options.dumpDir).absolutePath())},
        {QStringLiteral("environment"), app::environmentJson()},
        {QStringLiteral("rows"), rows},
    };
    const QDir out(options.outDir);
    writeTextFile(out.filePath(QStringLiteral("kernellab-bench.json")), QJsonDocument(json).toJson(QJsonDocument::Indented));
    writeTextFile(out.filePath(QStringLiteral("kernellab-bench.csv")), csvOf(bench.rows()).toUtf8());
    QString markdown = QStringLiteral("# KernelLab bench, %1\n\n").arg(date);
    markdown += engine ? QStringLiteral("GPU: %1. %2.\n\n").arg(QString::fromStdString(engine->device().name), bandwidthText(bw))
                       : QStringLiteral("GPU: none (%1).\n\n").arg(noGpuReason.isEmpty() ? QStringLiteral("not requested") : noGpuReason);
    markdown += QStringLiteral("CPU: %1, %2 threads (of %3); host memory copy (read + write): %4.\n\n")
                    .arg(app::environmentJson()[QStringLiteral("cpu_model")].toString())
                    .arg(options.cpuThreads)
                    .arg(hardwareThreads())
                    .arg(hostBandwidthText(bw));
    markdown += QStringLiteral("Generated images: %1 pattern.\n\n").arg(app::toString(options.op.imagePattern));
    markdown += table.markdown();
    for (const BenchRow& r : bench.rows())
        if (!r.error.isEmpty())
            markdown += QStringLiteral("\n- FAILED %1 %2 %3 %4 %5: %6").arg(r.op, r.backend, r.variant, r.size, r.depth, r.error);
    writeTextFile(out.filePath(QStringLiteral("kernellab-bench.md")), markdown.toUtf8() + '\n');
    printLine("wrote " + out.filePath(QStringLiteral("kernellab-bench.{json,csv,md}")));

    if (cancelled) {
        printError(QStringLiteral("bench cancelled: %1 rows finished (written above)").arg(bench.rows().size()));
        return kExitCancelled;
    }
    if (bench.failures() > 0) {
        printError(QStringLiteral("%1 bench row(s) FAILED (see above)").arg(bench.failures()));
        return kExitFailure;
    }
    return kExitOk;
}

} // namespace kl::cli
