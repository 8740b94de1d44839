// kernellab-cli sweep: one op over sizes 2^from .. 2^to elements; CPU (OpenCV) against the GPU
// kernel alone and end to end (pageable and pinned), and where the GPU starts to win. The sweep
// itself is app/common's (sweep.hpp), which the GUI's Run → Size sweep… runs too.
#include "bench_support.hpp"
#include "sweep.hpp"

#include "kernellab/image.hpp"

namespace kl::cli {

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
    addDeviceOption(parser);
    if (!parseCommandLine(parser, arguments,
                          QStringLiteral("kernellab-cli sweep: one op over sizes 2^from..2^to elements, CPU OpenCV vs "
                                         "GPU kernel-only and end to end (pageable, pinned).")))
        return kExitOk;
    selectDevice(parser);

    app::SweepSettings settings;
    if (!parser.value(QStringLiteral("op")).isEmpty()) settings.op = app::parseOp(parser.value(QStringLiteral("op")));
    settings.fromLog2 = intOption(parser, QStringLiteral("from"), 10, 0);
    settings.toLog2 = intOption(parser, QStringLiteral("to"), 26, 0);
    settings.depth = parseDepth(parser.value(QStringLiteral("depth")).isEmpty() ? std::string("u8")
                                                                                : parser.value(QStringLiteral("depth")).toStdString());
    settings.opSettings = benchOpSettings(parser);
    settings.cpuRepetitions = intOption(parser, QStringLiteral("cpu-repetitions"), settings.cpuRepetitions, 1);
    settings.gpuRepetitions = intOption(parser, QStringLiteral("repetitions"), settings.gpuRepetitions, 1);
    settings.streams = intOption(parser, QStringLiteral("streams"), settings.streams, 1);
    if (!parser.value(QStringLiteral("variant")).isEmpty()) settings.variant = parser.value(QStringLiteral("variant")).toStdString();
    app::validate(settings);

    QString noGpuReason;
    settings.gpu = gpuEngine(parser.isSet(QStringLiteral("require-gpu")), QStringLiteral("sweep --require-gpu"),
                             &noGpuReason) != nullptr;
    if (!settings.gpu) printLine("GPU columns are empty: " + noGpuReason + "; timing the CPU only.");

    ProgressBar progress(parser.isSet(QStringLiteral("quiet")));
    std::vector<app::SweepRow> rows;
    app::SweepControl control;
    control.cancel = &cancelFlag();
    control.progress = [&progress](double fraction, const QString& what) { progress.update(fraction, what); };
    control.rowFinished = [&](const app::SweepRow& row) {
        rows.push_back(row);
        if (row.error.isEmpty()) return;
        progress.clear();
        printError(QStringLiteral("FAILED %1 %2: %3").arg(app::toString(settings.op), row.size(), row.error));
    };
    bool cancelled = false;
    try {
        app::runSweep(settings, control);
    } catch (const kl::Cancelled&) {
        cancelled = true;
    }
    progress.clear();

    Table table;
    table.header = QStringList{QStringLiteral("2^k"), QStringLiteral("size")};
    for (app::Backend b : settings.cpuBackends) table.header << app::toString(b) + QStringLiteral(" ms");
    table.header << QStringLiteral("gpu kernel ms") << QStringLiteral("gpu e2e pageable ms")
                 << QStringLiteral("gpu e2e pinned ms") << QStringLiteral("error");
    for (const app::SweepRow& r : rows) {
        QStringList cells = {QString::number(r.log2Elements), r.size()};
        for (double ms : r.cpuMs) cells << formatMs(ms);
        for (const app::SweepGpuMeasure& m : app::sweepGpuMeasures()) cells << formatMs(r.*m.ms);
        table.rows.push_back(cells << r.error);
    }
    printLine(table.text());
    if (settings.gpu)
        for (const app::SweepGpuMeasure& m : app::sweepGpuMeasures()) printLine(app::crossoverText(settings, rows, m));
    if (parser.isSet(QStringLiteral("csv")))
        writeTextFile(parser.value(QStringLiteral("csv")), app::sweepCsv(settings, rows).toUtf8());

    if (cancelled) {
        printError(QStringLiteral("sweep cancelled after %1 size(s)").arg(rows.size()));
        return kExitCancelled;
    }
    const bool failed = std::any_of(rows.begin(), rows.end(), [](const app::SweepRow& r) { return !r.error.isEmpty(); });
    return failed ? kExitFailure : kExitOk;
}

} // namespace kl::cli
