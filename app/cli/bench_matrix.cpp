#include "bench_matrix.hpp"

#include "csv.hpp"

#include "kernellab/conv2d.hpp"
#include "kernellab/image.hpp"
#include "kernellab/image_io.hpp"

#include <opencv2/core.hpp>

#include <QDateTime>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <functional>

namespace kl::cli {

namespace {

/// A conv2d kernel class of the preset menu.
struct KernelClass {
    QString name;
    std::function<Conv2DSpec()> spec;
};

Conv2DSpec presetSpec(Conv2DPreset preset, int size, double sigma = 0, bool floatOutput = false)
{
    Conv2DPresetParams params;
    params.width = params.height = size;
    params.sigma = sigma;
    Conv2DSpec spec;
    spec.kernel = makeConv2DKernel(preset, params);
    spec.floatOutput = floatOutput;
    return spec;
}

/// A fixed 5x5 kernel of rank 5 (no separable path applies), its taps summing to 1.
Conv2DSpec customNonSeparable()
{
    cv::Mat taps(5, 5, CV_32F);
    cv::RNG rng(5);
    rng.fill(taps, cv::RNG::UNIFORM, 0.0, 1.0);
    taps /= cv::sum(taps)[0];
    Conv2DSpec spec;
    spec.kernel = taps;
    return spec;
}

const std::vector<KernelClass>& kernelClasses()
{
    static const std::vector<KernelClass> classes = {
        {QStringLiteral("box 3x3"), [] { return presetSpec(Conv2DPreset::Box, 3); }},
        {QStringLiteral("box 7x7"), [] { return presetSpec(Conv2DPreset::Box, 7); }},
        {QStringLiteral("gaussian 5x5 s=1.3"), [] { return presetSpec(Conv2DPreset::Gaussian, 5, 1.3); }},
        {QStringLiteral("sharpen 3x3"), [] { return presetSpec(Conv2DPreset::Sharpen, 3); }},
        {QStringLiteral("laplacian (f32 out)"), [] { return presetSpec(Conv2DPreset::Laplacian, 3, 0, true); }},
        {QStringLiteral("sobel-x (f32 out)"), [] { return presetSpec(Conv2DPreset::SobelX, 3, 0, true); }},
        {QStringLiteral("custom 5x5 (rank 5)"), customNonSeparable},
        {QStringLiteral("gaussian 9x9"), [] { return presetSpec(Conv2DPreset::Gaussian, 9); }},
        {QStringLiteral("gaussian 15x15"), [] { return presetSpec(Conv2DPreset::Gaussian, 15); }},
    };
    return classes;
}

constexpr int kDepths[] = {CV_8U, CV_16U, CV_32F};
constexpr int kChannels[] = {1, 3, 4};
constexpr size_t kConv1dTaps[] = {15, 127, 1023, 8191};

struct Cell {
    QString op, what, size, depth;
    int channels = 1;
    QString variant;
    app::WorkClass workClass = app::WorkClass::Memory;
    TimingStats kernel;
    double gbs = 0, gflops = 0;
    double copyPct = 0, fmaPct = 0;  ///< of the two roofs
    /// The nearer roof: a cell is held to whichever of the two it comes closer to.
    [[nodiscard]] bool fmaBound() const { return fmaPct > copyPct; }
    [[nodiscard]] double roofPct() const { return std::max(copyPct, fmaPct); }
    /// Of its class's roof (app::WorkClass).
    [[nodiscard]] double classPct() const { return workClass == app::WorkClass::Compute ? fmaPct : copyPct; }
    QString error;
};

class Matrix {
public:
    Matrix(const MatrixSettings& settings, const MatrixRoofs& roofs, const gpu::DeviceInfo& device, ProgressBar& progress)
        : s_(settings), roofs_(roofs), device_(device), progress_(progress)
    {
        const double images = double(s_.imageSizes.size()) * std::size(kDepths) * std::size(kChannels);
        const double imageCells = (selected(app::Op::Conv2D) ? double(kernelClasses().size()) : 0) +
                                  selected(app::Op::Histogram) + selected(app::Op::Transpose);
        total_ = std::max(1.0, images * imageCells + (selected(app::Op::Conv1D) ? double(std::size(kConv1dTaps)) : 0));
    }

    void run()
    {
        BenchOpSettings settings;
        for (const auto& [cols, rows] : s_.imageSizes)
            for (int depth : kDepths)
                for (int channels : kChannels) {
                    settings.channels = channels;
                    app::RunRequest request = benchRequest(app::Op::Conv2D, settings, cols, rows, depth, 0);
                    if (selected(app::Op::Conv2D))
                        for (const KernelClass& k : kernelClasses()) {
                            request.conv2d = k.spec();
                            request.conv2d.border = s_.border;
                            measure(request, k.name);
                        }
                    // The same image for histogram and transpose (their requests share the generator's seed).
                    for (app::Op op : {app::Op::Histogram, app::Op::Transpose}) {
                        if (!selected(op)) continue;
                        app::RunRequest other = benchRequest(op, settings, 1, 1, depth, 0);
                        other.image = request.image;
                        measure(other, QStringLiteral("-"));
                    }
                }
        if (!selected(app::Op::Conv1D)) return;
        settings.channels = 1;
        for (size_t taps : kConv1dTaps) {
            settings.taps = int(taps);
            measure(benchRequest(app::Op::Conv1D, settings, 0, 0, 0, s_.frames), QStringLiteral("K=%1").arg(taps));
        }
    }

    [[nodiscard]] const std::vector<Cell>& cells() const { return cells_; }

private:
    [[nodiscard]] bool selected(app::Op op) const { return std::find(s_.ops.begin(), s_.ops.end(), op) != s_.ops.end(); }

    void measure(app::RunRequest request, const QString& what)
    {
        Cell cell;
        cell.op = app::toString(request.op);
        cell.what = what;
        if (request.image.empty()) {
            cell.size = QString::number(request.signal.frames);
            cell.depth = QStringLiteral("f32");
            cell.channels = request.signal.channels;
        } else {
            cell.size = QStringLiteral("%1x%2").arg(request.image.cols).arg(request.image.rows);
            cell.depth = QString::fromStdString(depthName(request.image.depth()));
            cell.channels = request.image.channels();
        }
        cell.workClass = app::workClass(request);
        progress_.update(done_++ / total_, cell.op + QLatin1Char(' ') + what + QLatin1Char(' ') + cell.size +
                                               QLatin1Char(' ') + cell.depth + QStringLiteral(" x%1").arg(cell.channels));
        request.cpuThreads = s_.cpuThreads;
        request.cpuRepetitions = 1;
        request.cpuWarmup = 1;
        request.gpu.variant = "auto";
        if (!s_.variants.isEmpty()) {
            const QStringList ofOp = app::gpuVariants(request.op);
            const auto applies = [&](const QString& v) {
                return v == QLatin1String("auto") ||
                       (ofOp.contains(v) && app::whyNotApplicable(request, v, device_).isEmpty());
            };
            const auto chosen = std::find_if(s_.variants.begin(), s_.variants.end(), applies);
            if (chosen == s_.variants.end()) return;
            request.gpu.variant = chosen->toStdString();
        }

        // Verified against cpu-opencv, untimed, before the kernel is timed.
        setCheckingRun(request.gpu, gpu::HostMemory::Pinned);
        const app::BackendResult check = runBackend(request, app::Backend::Gpu);
        const app::BackendResult reference = runBackend(request, app::Backend::CpuOpenCV);
        cell.error = !check.ok()       ? check.error
                     : !reference.ok() ? "cpu-opencv: " + reference.error
                                       : verify(request, check, reference);
        if (!cell.error.isEmpty() && check.ok() && reference.ok()) cell.error = "output differs from cpu-opencv: " + cell.error;
        if (cell.error.isEmpty() && !s_.dumpDir.isEmpty()) dump(request, cell, check);
        if (cell.error.isEmpty()) {
            request.gpu.endToEnd = false;
            request.gpu.repetitions = s_.repetitions;
            request.gpu.warmup = s_.warmup;
            const app::BackendResult timed = runBackend(request, app::Backend::Gpu);
            if (!timed.ok()) cell.error = timed.error;
            else record(cell, *timed.gpu);
        }
        if (!cell.error.isEmpty()) {
            progress_.clear();
            printError(QStringLiteral("FAILED %1 %2 %3 %4 x%5: %6")
                           .arg(cell.op, what, cell.size, cell.depth)
                           .arg(cell.channels)
                           .arg(cell.error));
        }
        cells_.push_back(cell);
    }

    /// The cell's input, kernel and verified GPU output, and a line of cells.csv naming them.
    void dump(const app::RunRequest& request, const Cell& cell, const app::BackendResult& output)
    {
        if (request.op != app::Op::Conv2D && request.op != app::Op::Transpose) return;
        const QDir dir(s_.dumpDir);
        const QString stem = QStringLiteral("%1_%2_%3_%4_c%5")
                                 .arg(cell.op, QString(cell.what).replace(QRegularExpression(QStringLiteral("[^a-z0-9.=]+")),
                                                                          QStringLiteral("-")),
                                      cell.size, cell.depth)
                                 .arg(cell.channels);
        const auto save = [&](const QString& name, const cv::Mat& m) {
            saveImageNpy(dir.filePath(stem + name).toStdString(), m);
            return stem + name;
        };
        const QString input = save(QStringLiteral("_input.npy"), request.image);
        const QString kernel = request.op == app::Op::Conv2D ? save(QStringLiteral("_kernel.npy"), request.conv2d.kernel)
                                                             : QString();
        const QString result = save(QStringLiteral("_output.npy"), output.image);
        manifest_ += QStringList{cell.op, app::csvField(cell.what), cell.depth, QString::number(cell.channels),
                                 QString::fromStdString(toString(s_.border)), input, kernel, result}
                         .join(QLatin1Char(',')) +
                     QLatin1Char('\n');
    }

public:
    /// cells.csv for dump(): op,case,depth,channels,border,input,kernel,output.
    [[nodiscard]] QString manifest() const
    {
        return QStringLiteral("op,case,depth,channels,border,input,kernel,output\n") + manifest_;
    }

private:
    void record(Cell& cell, const gpu::GpuReport& g) const
    {
        cell.variant = QString::fromStdString(g.variant);
        cell.kernel = g.kernel;
        cell.gbs = g.kernelGBs();
        cell.gflops = g.kernelGFlops();
        cell.copyPct = roofs_.copyGBs > 0 ? 100 * cell.gbs / roofs_.copyGBs : 0;
        cell.fmaPct = roofs_.fmaGFlops > 0 ? 100 * cell.gflops / roofs_.fmaGFlops : 0;
    }

    const MatrixSettings& s_;
    MatrixRoofs roofs_;
    const gpu::DeviceInfo& device_;
    ProgressBar& progress_;
    std::vector<Cell> cells_;
    QString manifest_;
    double total_ = 1, done_ = 0;
};

QString bound(const Cell& c) { return c.fmaBound() ? QStringLiteral("fma") : QStringLiteral("copy"); }
QString workClassName(app::WorkClass w) { return w == app::WorkClass::Compute ? QStringLiteral("compute") : QStringLiteral("memory"); }
QString workClassRoof(app::WorkClass w) { return w == app::WorkClass::Compute ? QStringLiteral("fma") : QStringLiteral("copy"); }
QString percent(double v) { return v > 0 ? QString::number(v, 'f', 1) : QStringLiteral("-"); }

Table matrixTable(const std::vector<Cell>& cells)
{
    Table t;
    t.header = {QStringLiteral("op"), QStringLiteral("case"), QStringLiteral("size"), QStringLiteral("depth"),
                QStringLiteral("ch"), QStringLiteral("variant"), QStringLiteral("kernel ms"), QStringLiteral("GB/s"),
                QStringLiteral("GFLOP/s"), QStringLiteral("% copy"), QStringLiteral("% FMA"), QStringLiteral("nearer roof"),
                QStringLiteral("class"), QStringLiteral("check")};
    for (const Cell& c : cells)
        t.rows.push_back({c.op, c.what, c.size, c.depth, QString::number(c.channels),
                          c.variant.isEmpty() ? QStringLiteral("-") : c.variant, formatMs(c.kernel.medianMs),
                          formatRate(c.gbs), c.gflops > 0 ? formatRate(c.gflops) : QStringLiteral("-"),
                          percent(c.copyPct), percent(c.fmaPct), c.error.isEmpty() ? bound(c) : QStringLiteral("-"),
                          workClassName(c.workClass), c.error.isEmpty() ? QStringLiteral("ok") : QStringLiteral("FAILED")});
    return t;
}

QJsonObject toJson(const Cell& c)
{
    return {{QStringLiteral("op"), c.op},
            {QStringLiteral("case"), c.what},
            {QStringLiteral("size"), c.size},
            {QStringLiteral("depth"), c.depth},
            {QStringLiteral("channels"), c.channels},
            {QStringLiteral("variant"), c.variant},
            {QStringLiteral("ok"), c.error.isEmpty()},
            {QStringLiteral("error"), c.error.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(c.error)},
            {QStringLiteral("kernel_ms"), c.kernel.repetitions > 0 ? QJsonValue(app::toJson(c.kernel)) : QJsonValue()},
            {QStringLiteral("gbs"), c.gbs},
            {QStringLiteral("gflops"), c.gflops},
            {QStringLiteral("copy_pct"), c.copyPct},
            {QStringLiteral("fma_pct"), c.fmaPct},
            {QStringLiteral("roof"), bound(c)},
            {QStringLiteral("roof_pct"), c.roofPct()},
            {QStringLiteral("class"), workClassName(c.workClass)},
            {QStringLiteral("class_pct"), c.classPct()}};
}

QString csvOf(const std::vector<Cell>& cells)
{
    QString csv = QStringLiteral("op,case,size,depth,channels,variant,ok,kernel_median_ms,kernel_min_ms,kernel_max_ms,"
                                 "gbs,gflops,copy_pct,fma_pct,roof,roof_pct,class,class_pct,error\n");
    for (const Cell& c : cells)
        csv += QStringList{c.op, app::csvField(c.what), c.size, c.depth, QString::number(c.channels), c.variant,
                           c.error.isEmpty() ? QStringLiteral("true") : QStringLiteral("false"),
                           QString::number(c.kernel.medianMs, 'g', 8), QString::number(c.kernel.minMs, 'g', 8),
                           QString::number(c.kernel.maxMs, 'g', 8), QString::number(c.gbs, 'g', 6),
                           QString::number(c.gflops, 'g', 6), QString::number(c.copyPct, 'f', 2),
                           QString::number(c.fmaPct, 'f', 2), bound(c), QString::number(c.roofPct(), 'f', 2),
                           workClassName(c.workClass), QString::number(c.classPct(), 'f', 2), app::csvField(c.error)}
                   .join(QLatin1Char(',')) +
               QLatin1Char('\n');
    return csv;
}

/// The worst cell against its nearer roof, then the worst of each class against its class's roof.
QStringList worstCells(const std::vector<Cell>& cells)
{
    const auto lowest = [&](auto pct, auto keep) {
        const Cell* worst = nullptr;
        for (const Cell& c : cells)
            if (c.error.isEmpty() && keep(c) && (!worst || pct(c) < pct(*worst))) worst = &c;
        return worst;
    };
    const auto describe = [](const Cell& c) {
        return QStringLiteral("%1 %2 %3 %4 x%5 (%6)").arg(c.op, c.what, c.size, c.depth).arg(c.channels).arg(c.variant);
    };
    const Cell* worst = lowest([](const Cell& c) { return c.roofPct(); }, [](const Cell&) { return true; });
    if (!worst) return {QStringLiteral("no cell ran")};
    QStringList lines{
        QStringLiteral("worst cell: %1: %2% of %3").arg(describe(*worst)).arg(worst->roofPct(), 0, 'f', 1).arg(bound(*worst))};
    for (app::WorkClass w : {app::WorkClass::Memory, app::WorkClass::Compute})
        if (const Cell* inClass = lowest([](const Cell& c) { return c.classPct(); }, [w](const Cell& c) { return c.workClass == w; }))
            lines << QStringLiteral("worst %1-bound cell: %2: %3% of %4")
                         .arg(workClassName(w), describe(*inClass))
                         .arg(inClass->classPct(), 0, 'f', 1)
                         .arg(workClassRoof(w));
    return lines;
}

} // namespace

int runMatrix(const MatrixSettings& settings, gpu::Engine& engine, const MatrixRoofs& roofs, ProgressBar& progress)
{
    if (!settings.dumpDir.isEmpty() && !QDir().mkpath(settings.dumpDir))
        throw CliError(kExitFailure, "cannot create --dump-inputs '" + settings.dumpDir + "'");
    Matrix matrix(settings, roofs, engine.device(), progress);
    matrix.run();
    progress.clear();
    if (!settings.dumpDir.isEmpty())
        writeTextFile(QDir(settings.dumpDir).filePath(QStringLiteral("cells.csv")), matrix.manifest().toUtf8());
    const std::vector<Cell>& cells = matrix.cells();
    const Table table = matrixTable(cells);
    printLine(table.text());

    const int failures = int(std::count_if(cells.begin(), cells.end(), [](const Cell& c) { return !c.error.isEmpty(); }));
    const QString roofText =
        QStringLiteral("device copy %1 GB/s (read + write), fp32 FMA %2 GFLOP/s. Each cell is held to the roof it comes "
                       "nearer; FLOPs are the direct form's (2 per tap per output), so separable and fft variants, "
                       "which execute fewer, show an effective rate that may pass 100% of FMA. Its class holds it to "
                       "one roof whatever its variant executes: %3")
            .arg(formatRate(roofs.copyGBs), formatRate(roofs.fmaGFlops), app::workClassRule());
    const QStringList worstLines = worstCells(cells);
    printLine(roofText);
    for (const QString& line : worstLines) printLine(line);

    const QString date = QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
    QJsonArray rows;
    for (const Cell& c : cells) rows.append(toJson(c));
    const QJsonObject json{
        {QStringLiteral("schema"), QStringLiteral("kernellab-matrix")},
        {QStringLiteral("schema_version"), 1},
        {QStringLiteral("date"), date},
        {QStringLiteral("device"), app::toJson(engine.device())},
        {QStringLiteral("roofs"), QJsonObject{{QStringLiteral("device_copy_gbs"), roofs.copyGBs},
                                              {QStringLiteral("fma_gflops"), roofs.fmaGFlops}}},
        {QStringLiteral("timing"), QJsonObject{{QStringLiteral("mode"), QStringLiteral("kernel-only")},
                                               {QStringLiteral("repetitions"), settings.repetitions},
                                               {QStringLiteral("warmup"), settings.warmup}}},
        {QStringLiteral("environment"), app::environmentJson()},
        {QStringLiteral("variants"), settings.variants.isEmpty() ? QStringLiteral("auto") : settings.variants.join(QLatin1Char(','))},
        {QStringLiteral("cells"), rows},
    };
    const QDir out(settings.outDir);
    writeTextFile(out.filePath(QStringLiteral("kernellab-matrix.json")), QJsonDocument(json).toJson(QJsonDocument::Indented));
    writeTextFile(out.filePath(QStringLiteral("kernellab-matrix.csv")), csvOf(cells).toUtf8());
    const QString variantText = settings.variants.isEmpty()
                                    ? QStringLiteral("auto variant")
                                    : QStringLiteral("the first of the variants %1 that applies to the cell (cells none "
                                                     "applies to are left out)")
                                          .arg(settings.variants.join(QStringLiteral(", ")));
    const QString markdown = QStringLiteral("# KernelLab coverage matrix, %1\n\n%2: %3.\n\nKernel only, %8, "
                                            "median of %4 after %5 warm-ups; every cell verified against cpu-opencv "
                                            "before timing.\n\n%6\n%7.\n")
                                 .arg(date, QString::fromStdString(engine.device().name), roofText)
                                 .arg(settings.repetitions)
                                 .arg(settings.warmup)
                                 .arg(table.markdown(), worstLines.join(QStringLiteral(".\n\n")), variantText);
    writeTextFile(out.filePath(QStringLiteral("kernellab-matrix.md")), markdown.toUtf8());
    printLine("wrote " + out.filePath(QStringLiteral("kernellab-matrix.{json,csv,md}")));
    if (failures > 0) {
        printError(QStringLiteral("%1 matrix cell(s) FAILED (see above)").arg(failures));
        return kExitFailure;
    }
    return kExitOk;
}

} // namespace kl::cli
