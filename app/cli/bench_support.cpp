#include "bench_support.hpp"

#include "kernellab/image.hpp"

#include <QJsonObject>

namespace kl::cli {

void addBenchOpOptions(QCommandLineParser& parser)
{
    parser.addOptions({
        {QStringLiteral("ksize"), QStringLiteral("conv2d gaussian kernel size (odd, default 5)."), QStringLiteral("N")},
        {QStringLiteral("taps"), QStringLiteral("conv1d low-pass FIR length (default 127)."), QStringLiteral("N")},
        {QStringLiteral("channels"), QStringLiteral("Channels of the generated images (1, 3, 4) and signals (default 1)."),
         QStringLiteral("N")},
        {QStringLiteral("pattern"),
         QStringLiteral("Pattern of the generated images: noise (default, uniform over the depth's range), "
                        "gradient, checker or constant (half scale)."),
         QStringLiteral("NAME")},
    });
}

BenchOpSettings benchOpSettings(const QCommandLineParser& parser)
{
    BenchOpSettings s;
    s.kernelSize = intOption(parser, QStringLiteral("ksize"), s.kernelSize, 1);
    s.taps = intOption(parser, QStringLiteral("taps"), s.taps, 1);
    s.channels = intOption(parser, QStringLiteral("channels"), s.channels, 1);
    if (parser.isSet(QStringLiteral("pattern")))  // a bad name is an InvalidArgument: exit 2, naming the choices
        s.imagePattern = app::parseImagePattern(parser.value(QStringLiteral("pattern")));
    return s;
}

QJsonObject toJson(const BenchOpSettings& s)
{
    return {
        {QStringLiteral("conv2d"), QJsonObject{{QStringLiteral("preset"), QStringLiteral("gaussian")},
                                               {QStringLiteral("size"), s.kernelSize},
                                               {QStringLiteral("border"), QStringLiteral("reflect101")}}},
        {QStringLiteral("conv1d"), QJsonObject{{QStringLiteral("preset"), QStringLiteral("low-pass")},
                                               {QStringLiteral("taps"), s.taps},
                                               {QStringLiteral("cutoff_hz"), s.signalRate / 8},
                                               {QStringLiteral("window"), QStringLiteral("hamming")},
                                               {QStringLiteral("mode"), QStringLiteral("same")}}},
        {QStringLiteral("histogram"), QJsonObject{{QStringLiteral("bins"), 256},
                                                  {QStringLiteral("range"), QStringLiteral("default")}}},
        {QStringLiteral("channels"), s.channels},
        {QStringLiteral("signal_rate"), s.signalRate},
        {QStringLiteral("image_pattern"), app::toString(s.imagePattern)},
        {QStringLiteral("seed"), QString::number(app::kDefaultSeed)},
    };
}

app::BackendResult runBackend(const app::RunRequest& request, app::Backend backend)
{
    return app::runBackend(request, backend, &cancelFlag());
}

void setCheckingRun(gpu::RunOptions& options, gpu::HostMemory memory)
{
    options.memory = memory;
    options.streams = 1;
    options.endToEnd = true;
    options.repetitions = 1;
    options.warmup = 0;
}

bool referenceIsAffordable(const app::RunRequest& request)
{
    constexpr double budget = double(1ull << 28);  // multiply-adds; about a second of plain loops
    double elements = request.image.empty() ? double(request.signal.data.size())
                                            : double(request.image.total()) * request.image.channels();
    if (request.op == app::Op::Conv2D) elements *= double(request.conv2d.kernel.total());
    if (request.op == app::Op::Conv1D) elements *= double(request.conv1d.taps.size());
    return elements <= budget;
}

} // namespace kl::cli
