#include "op_config.hpp"

#include "generators.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image_io.hpp"
#include "kernellab/kernel_io.hpp"
#include "kernellab/signal_io.hpp"

#include "names.hpp"

#include <QFile>
#include <QStringList>

#include <climits>

#include <algorithm>
#include <cmath>

namespace kl::app {

namespace {

const std::vector<Op> kConv2D = {Op::Conv2D};
const std::vector<Op> kConv1D = {Op::Conv1D};
const std::vector<Op> kConvolutions = {Op::Conv2D, Op::Conv1D};
const std::vector<Op> kHistogram = {Op::Histogram};

QString joined(const std::vector<std::string>& names)
{
    QStringList list;
    for (const std::string& n : names) list << QString::fromStdString(n);
    return list.join(QStringLiteral(", "));
}

QString presetNames(Op op)
{
    std::vector<std::string> names;
    if (op == Op::Conv2D)
        for (Conv2DPreset p : allConv2DPresets()) names.push_back(toString(p));
    else
        for (Conv1DPreset p : allConv1DPresets()) names.push_back(toString(p));
    return joined(names);
}

const ParameterInfo* findParameter(const QString& name)
{
    for (const auto* group : {&inputParameterInfo(), &opParameterInfo(), &backendParameterInfo()})
        for (const ParameterInfo& p : *group)
            if (p.name == name) return &p;
    return nullptr;
}

/// Typed reads of the map; every error names the parameter and the value.
class Reader {
public:
    explicit Reader(const ParameterMap& map) : map_(map) {}

    [[nodiscard]] const ParameterMap& map() const { return map_; }
    [[nodiscard]] bool has(const QString& name) const { return map_.contains(name); }
    [[nodiscard]] QString text(const QString& name, const QString& fallback = {}) const
    {
        return map_.value(name, fallback);
    }

    [[nodiscard]] double number(const QString& name, double fallback) const
    {
        if (!has(name)) return fallback;
        bool ok = false;
        const double value = map_[name].trimmed().toDouble(&ok);
        if (!ok || !std::isfinite(value)) fail(name + ": '" + map_[name] + "' is not a finite number");
        return value;
    }

    [[nodiscard]] int integer(const QString& name, int fallback, int minimum) const
    {
        if (!has(name)) return fallback;
        bool ok = false;
        const int value = map_[name].trimmed().toInt(&ok);
        if (!ok) fail(name + ": '" + map_[name] + "' is not a whole number");
        if (value < minimum) fail(name + ": " + map_[name] + " must be at least " + QString::number(minimum));
        return value;
    }

    [[nodiscard]] bool flag(const QString& name, bool fallback) const
    {
        if (!has(name)) return fallback;
        const QString v = map_[name].trimmed().toLower();
        if (v.isEmpty() || v == QLatin1String("true") || v == QLatin1String("1")) return true;
        if (v == QLatin1String("false") || v == QLatin1String("0")) return false;
        fail(name + ": '" + map_[name] + "' is not true or false");
    }

    /// "W" or "WxH"; returns {width, height}.
    [[nodiscard]] std::pair<int, int> size(const QString& name, int fallback) const
    {
        if (!has(name)) return {fallback, fallback};
        const QStringList parts = map_[name].trimmed().split(QLatin1Char('x'));
        bool okW = false, okH = true;
        const int w = parts.value(0).toInt(&okW);
        const int h = parts.size() == 2 ? parts[1].toInt(&okH) : w;
        if (parts.size() > 2 || !okW || !okH || w < 1 || h < 1)
            fail(name + ": '" + map_[name] + "' is not W or WxH (positive whole numbers, e.g. 5 or 7x3)");
        return {w, h};
    }

    /// The parameter as a typed JSON value for the report (flags as booleans, numbers as numbers).
    [[nodiscard]] QJsonValue json(const ParameterInfo& info) const
    {
        if (info.valueName.isEmpty()) return flag(info.name, true);
        bool ok = false;
        const double value = map_[info.name].toDouble(&ok);
        return ok ? QJsonValue(value) : QJsonValue(map_[info.name]);
    }

private:
    const ParameterMap& map_;
};

template <typename Parse> auto parseCore(const QString& name, const QString& value, Parse parse)
{
    try {
        return parse(value.trimmed().toStdString());
    } catch (const InvalidArgument& e) {
        fail(name + ": " + QString::fromUtf8(e.what()));
    }
}

/// Core's preset errors name its fields ("gaussian width", "lowHz"); this adds the parameters that set them.
template <typename Make> auto withParameterHint(const QString& parameters, Make make)
{
    try {
        return make();
    } catch (const InvalidArgument& e) {
        fail(QString::fromUtf8(e.what()) + " (set with: " + parameters + ")");
    }
}

void requireNoParameter(const Reader& reader, const QString& name, const QString& why)
{
    if (reader.has(name)) fail(name + ": " + why);
}

/// Preset + kernel file: "custom" is implied by a kernel file and needs one.
QString resolvePreset(const Reader& reader, const QString& defaultPreset)
{
    const bool hasKernel = reader.has(QStringLiteral("kernel"));
    const QString preset = reader.text(QStringLiteral("preset"), hasKernel ? QStringLiteral("custom") : defaultPreset);
    if (preset == QLatin1String("custom") && !hasKernel) fail("preset: custom needs a kernel file (kernel FILE)");
    if (preset != QLatin1String("custom") && hasKernel)
        fail("kernel: a kernel file makes the preset custom, but preset is '" + preset + "'");
    return preset;
}

void configureConv2D(RunRequest& request, const Reader& reader)
{
    const QString presetName = resolvePreset(reader, QStringLiteral("gaussian"));
    const Conv2DPreset preset = parseCore(QStringLiteral("preset"), presetName, [](const std::string& n) {
        return parseConv2DPreset(n);
    });
    Conv2DPresetParams params;
    std::tie(params.width, params.height) = reader.size(QStringLiteral("size"), 5);
    params.sigma = reader.number(QStringLiteral("sigma"), 0.0);
    params.length = reader.integer(QStringLiteral("length"), params.length, 1);
    params.angleDegrees = reader.number(QStringLiteral("angle"), 0.0);
    params.normalize = reader.flag(QStringLiteral("normalize"), false);
    if (preset == Conv2DPreset::Custom) params.custom = loadKernelFile(reader.text(QStringLiteral("kernel")).toStdString());

    Conv2DSpec& spec = request.conv2d;
    spec.kernel = withParameterHint(QStringLiteral("size, sigma, length, angle, kernel, normalize"),
                                    [&] { return makeConv2DKernel(preset, params); });
    if (reader.has(QStringLiteral("border")))
        spec.border = parseCore(QStringLiteral("border"), reader.text(QStringLiteral("border")),
                                [](const std::string& n) { return parseBorderMode(n); });
    spec.borderValue = reader.number(QStringLiteral("border-value"), 0.0);
    if (reader.has(QStringLiteral("border-value")) && spec.border != BorderMode::Constant)
        fail("border-value: applies to border constant, but border is " +
             QString::fromStdString(toString(spec.border)));
    spec.flipKernel = reader.flag(QStringLiteral("flip"), false);
    spec.floatOutput = reader.flag(QStringLiteral("float-output"), presetWantsFloatOutput(preset));
    request.opParameters[QStringLiteral("preset")] = presetName;
}

void configureConv1D(RunRequest& request, const Reader& reader)
{
    const QString presetName = resolvePreset(reader, QStringLiteral("gaussian"));
    const Conv1DPreset preset = parseCore(QStringLiteral("preset"), presetName, [](const std::string& n) {
        return parseConv1DPreset(n);
    });
    Conv1DPresetParams params;
    params.taps = size_t(reader.integer(QStringLiteral("taps"), int(params.taps), 1));
    params.sigma = reader.number(QStringLiteral("sigma"), 0.0);
    if (reader.has(QStringLiteral("cutoff")) && reader.has(QStringLiteral("low")))
        fail("cutoff: give either cutoff (low-pass, high-pass) or low and high (band-pass), not both");
    params.lowHz = reader.number(QStringLiteral("cutoff"), reader.number(QStringLiteral("low"), 0.0));
    params.highHz = reader.number(QStringLiteral("high"), 0.0);
    params.sampleRate = request.signal.sampleRate;
    if (reader.has(QStringLiteral("window")))
        params.window = parseCore(QStringLiteral("window"), reader.text(QStringLiteral("window")),
                                  [](const std::string& n) { return parseWindow(n); });
    params.normalize = reader.flag(QStringLiteral("normalize"), false);
    if (preset == Conv1DPreset::Custom) {
        const QString path = reader.text(QStringLiteral("kernel"));
        const cv::Mat taps = loadKernelFile(path.toStdString());
        if (taps.rows != 1 && taps.cols != 1)
            fail(QStringLiteral("kernel: '%1' is a %2x%3 matrix; conv1d needs one row or one column of taps")
                     .arg(path)
                     .arg(taps.rows)
                     .arg(taps.cols));
        params.custom.assign(taps.begin<float>(), taps.end<float>());
    }

    Conv1DSpec& spec = request.conv1d;
    spec.taps = withParameterHint(QStringLiteral("taps, sigma, cutoff (lowHz), low (lowHz), high (highHz), window"),
                                  [&] { return makeConv1DKernel(preset, params); });
    if (reader.has(QStringLiteral("mode")))
        spec.mode = parseCore(QStringLiteral("mode"), reader.text(QStringLiteral("mode")),
                              [](const std::string& n) { return parseConv1DMode(n); });
    request.opParameters[QStringLiteral("preset")] = presetName;
}

void configureHistogram(RunRequest& request, const Reader& reader)
{
    HistogramSpec& spec = request.histogram;
    spec.bins = reader.integer(QStringLiteral("bins"), spec.bins, 1);
    if (reader.has(QStringLiteral("range"))) {
        const QString text = reader.text(QStringLiteral("range"));
        const QStringList parts = text.split(QLatin1Char(','));
        bool okLo = false, okHi = false;
        const double lo = parts.value(0).trimmed().toDouble(&okLo), hi = parts.value(1).trimmed().toDouble(&okHi);
        if (parts.size() != 2 || !okLo || !okHi) fail("range: '" + text + "' is not LO,HI (two numbers)");
        spec.lo = lo;
        spec.hi = hi;
    }
    spec.luminance = !reader.flag(QStringLiteral("no-luminance"), false);
}

void configureBackends(RunRequest& request, const Reader& reader)
{
    request.backends = requestedBackends(reader.map());
    request.gpu.variant = reader.text(QStringLiteral("variant"), QStringLiteral("auto")).toStdString();
    if (reader.has(QStringLiteral("memory")))
        request.gpu.memory = parseCore(QStringLiteral("memory"), reader.text(QStringLiteral("memory")),
                                       [](const std::string& n) { return gpu::parseHostMemory(n); });
    request.gpu.streams = reader.integer(QStringLiteral("streams"), request.gpu.streams, 1);
    if (reader.has(QStringLiteral("repetitions")))
        request.cpuRepetitions = request.gpu.repetitions = reader.integer(QStringLiteral("repetitions"), 1, 1);
    if (reader.has(QStringLiteral("warmup")))
        request.cpuWarmup = request.gpu.warmup = reader.integer(QStringLiteral("warmup"), 0, 0);
    request.gpu.endToEnd = !reader.flag(QStringLiteral("kernel-only"), false);
    request.gpu.graph = !reader.flag(QStringLiteral("no-graph"), false);
    // Any whole number here: the session's validation names the range (kl::validateCpuThreads).
    request.cpuThreads = reader.integer(QStringLiteral("cpu-threads"), request.cpuThreads, INT_MIN);
}

const QStringList kCustomKernelParameters = {QStringLiteral("kernel-source"), QStringLiteral("kernel-name"),
                                             QStringLiteral("block"),         QStringLiteral("tile"),
                                             QStringLiteral("shared-bytes"),  QStringLiteral("kernel-timeout")};

/// --kernel-source and its launch options (docs/custom-kernels.md); nullopt without a source.
std::optional<CustomKernel> readCustomKernel(const Reader& reader)
{
    const QString sourceOption = QStringLiteral("kernel-source");
    if (!reader.has(sourceOption)) {
        for (const QString& name : kCustomKernelParameters)
            if (reader.has(name)) fail(name + ": applies to a user kernel only (--kernel-source FILE)");
        return std::nullopt;
    }
    CustomKernel k;
    k.path = reader.text(sourceOption);
    QFile file(k.path);
    if (!file.open(QIODevice::ReadOnly))
        throw IoError(("kernel-source: cannot read " + k.path + ": " + file.errorString()).toStdString());
    k.source = file.readAll().toStdString();
    try {
        k.launch = gpu::launchFromSource(k.source);
    } catch (const InvalidArgument& e) {
        fail(k.path + ": " + QString::fromUtf8(e.what()));
    }
    k.entry = reader.text(QStringLiteral("kernel-name"), QString::fromStdString(gpu::firstKernelName(k.source))).toStdString();
    if (k.entry.empty()) fail("kernel-source: " + k.path + " defines no __global__ function");
    const auto dimensions = [&](const QString& name, int& x, int& y) {
        if (reader.has(name)) gpu::parseDimensions(reader.text(name).toStdString(), x, y, name.toStdString());
    };
    dimensions(QStringLiteral("block"), k.launch.blockX, k.launch.blockY);
    dimensions(QStringLiteral("tile"), k.launch.tileX, k.launch.tileY);
    k.launch.sharedBytes = reader.integer(QStringLiteral("shared-bytes"), k.launch.sharedBytes, 0);
    k.timeoutSeconds = reader.number(QStringLiteral("kernel-timeout"), k.timeoutSeconds);
    if (!(k.timeoutSeconds > 0)) fail(QStringLiteral("kernel-timeout: must be a positive number of seconds"));
    return k;
}

} // namespace

const std::vector<ParameterInfo>& inputParameterInfo()
{
    static const std::vector<ParameterInfo> parameters = {
        {QStringLiteral("input"), QStringLiteral("FILE"),
         QStringLiteral("Input image or signal, chosen by extension (images: .png .jpg .tif .bmp .pgm .exr ...; "
                        "signals: .wav .flac .ogg .csv .npy .f32 .raw)."), {}},
        {QStringLiteral("generate"), QStringLiteral("SPEC"),
         QStringLiteral("Generated input instead of a file: image:WxH[:u8|u16|f32[:1|3|4[:noise|gradient|checker|"
                        "constant]]] or signal:FRAMES[:CHANNELS[:RATE[:noise|chirp|sines]]]."), {}},
        {QStringLiteral("rate"), QStringLiteral("HZ"),
         QStringLiteral("Sample rate of a signal file that does not store one (.npy, .raw, CSV without '# rate=')."), {}},
        {QStringLiteral("channels"), QStringLiteral("N"), QStringLiteral("Channel count of a raw float32 signal file."), {}},
    };
    return parameters;
}

const std::vector<ParameterInfo>& opParameterInfo()
{
    static const std::vector<ParameterInfo> parameters = {
        {QStringLiteral("op"), QStringLiteral("OP"), QStringLiteral("conv2d, conv1d, histogram or transpose."), {}},
        {QStringLiteral("preset"), QStringLiteral("NAME"),
         QStringLiteral("Kernel preset. conv2d: ") + presetNames(Op::Conv2D) +
             QStringLiteral(" (default gaussian). conv1d: ") + presetNames(Op::Conv1D) +
             QStringLiteral(" (default gaussian)."),
         kConvolutions},
        {QStringLiteral("size"), QStringLiteral("WxH"),
         QStringLiteral("conv2d box/gaussian kernel size, W or WxH, odd (default 5)."), kConv2D},
        {QStringLiteral("sigma"), QStringLiteral("SIGMA"),
         QStringLiteral("Gaussian sigma (conv2d: pixels; conv1d: samples); <= 0 picks the default."), kConvolutions},
        {QStringLiteral("length"), QStringLiteral("PIXELS"), QStringLiteral("conv2d motion-blur length, odd (default 9)."),
         kConv2D},
        {QStringLiteral("angle"), QStringLiteral("DEGREES"),
         QStringLiteral("conv2d motion-blur direction, counter-clockwise from +x."), kConv2D},
        {QStringLiteral("taps"), QStringLiteral("N"), QStringLiteral("conv1d preset length in taps (default 31)."),
         kConv1D},
        {QStringLiteral("cutoff"), QStringLiteral("HZ"), QStringLiteral("conv1d low-pass / high-pass cut-off."), kConv1D},
        {QStringLiteral("low"), QStringLiteral("HZ"), QStringLiteral("conv1d band-pass lower edge."), kConv1D},
        {QStringLiteral("high"), QStringLiteral("HZ"), QStringLiteral("conv1d band-pass upper edge."), kConv1D},
        {QStringLiteral("window"), QStringLiteral("NAME"),
         QStringLiteral("conv1d FIR window: rectangular, hann, hamming (default), blackman."), kConv1D},
        {QStringLiteral("kernel"), QStringLiteral("FILE"),
         QStringLiteral("Custom kernel: a text matrix (CSV or whitespace separated, '#' comments) or a float .npy; "
                        "implies --preset custom."),
         kConvolutions},
        {QStringLiteral("normalize"), {}, QStringLiteral("Custom kernel: divide by the sum of its taps."), kConvolutions},
        {QStringLiteral("flip"), {}, QStringLiteral("conv2d: rotate the kernel 180 degrees (true convolution)."), kConv2D},
        {QStringLiteral("float-output"), {},
         QStringLiteral("conv2d: f32 output whatever the input depth (on by default for sobel, scharr, laplacian)."),
         kConv2D},
        {QStringLiteral("border"), QStringLiteral("MODE"),
         QStringLiteral("conv2d border: constant, replicate, reflect, reflect101 (default), wrap."), kConv2D},
        {QStringLiteral("border-value"), QStringLiteral("V"), QStringLiteral("conv2d value for border constant."),
         kConv2D},
        {QStringLiteral("mode"), QStringLiteral("MODE"), QStringLiteral("conv1d output: full, same (default), valid."),
         kConv1D},
        {QStringLiteral("bins"), QStringLiteral("N"),
         QStringLiteral("Histogram bins for u16/f32 inputs (default 256; u8 always uses 256)."), kHistogram},
        {QStringLiteral("range"), QStringLiteral("LO,HI"),
         QStringLiteral("Histogram range [LO, HI) for u16/f32 (default: u16 full range, f32 the data's range)."),
         kHistogram},
        {QStringLiteral("no-luminance"), {}, QStringLiteral("Histogram: no luminance histogram for colour images."),
         kHistogram},
    };
    return parameters;
}

namespace {
/// --variant's help: the registry's names per op.
QString variantHelp()
{
    QStringList perOp;
    for (Op op : allOps()) perOp << toString(op) + QStringLiteral(": ") + gpuVariants(op).join(QStringLiteral(", "));
    return QStringLiteral("GPU kernel variant (default auto; `kernellab-cli info` describes each). ") +
           perOp.join(QStringLiteral("; ")) + QStringLiteral(".");
}
} // namespace

const std::vector<ParameterInfo>& backendParameterInfo()
{
    static const std::vector<ParameterInfo> parameters = {
        {QStringLiteral("backends"), QStringLiteral("LIST"),
         QStringLiteral("Comma-separated: cpu-ref, cpu-opencv, gpu (default: all three)."), {}},
        {QStringLiteral("variant"), QStringLiteral("NAME"), variantHelp(), {}},
        {QStringLiteral("memory"), QStringLiteral("KIND"),
         QStringLiteral("GPU host memory: pageable (default; the driver copies from your memory), staged (through a "
                        "ring of pinned buffers, host memcpy on all CPU threads overlapped with the DMA) or pinned "
                        "(the data kept in pinned memory)."),
         {}},
        {QStringLiteral("streams"), QStringLiteral("N"),
         QStringLiteral("GPU streams to pipeline chunks over, 1..%1.").arg(gpu::kMaxStreams), {}},
        {QStringLiteral("repetitions"), QStringLiteral("N"),
         QStringLiteral("Timed runs per backend (default: CPU 3, GPU 10)."), {}},
        {QStringLiteral("warmup"), QStringLiteral("N"), QStringLiteral("Untimed runs first (default: CPU 1, GPU 2)."), {}},
        {QStringLiteral("cpu-threads"), QStringLiteral("N"),
         QStringLiteral("Threads of the CPU backends, 1..%1 (default: all %2 hardware threads).")
             .arg(kMaxCpuThreads)
             .arg(hardwareThreads()),
         {}},
        {QStringLiteral("kernel-only"), {},
         QStringLiteral("GPU: upload once and time the kernel alone (default: end to end, with copies)."), {}},
        {QStringLiteral("no-graph"), {},
         QStringLiteral("GPU, pinned, end to end: launch every copy, kernel and event from the host instead of "
                        "replaying one CUDA graph per repetition."),
         {}},
        {QStringLiteral("kernel-source"), QStringLiteral("FILE"),
         QStringLiteral("Your own CUDA kernel (docs/custom-kernels.md; kernellab-cli template prints one to start "
                        "from), run as GPU variant custom:<name>, the default variant when given."),
         {}},
        {QStringLiteral("kernel-name"), QStringLiteral("NAME"),
         QStringLiteral("The __global__ function of --kernel-source to run (default: the first it defines)."), {}},
        {QStringLiteral("block"), QStringLiteral("XxY"),
         QStringLiteral("User kernel: threads per block, e.g. 256 or 32x8 (default: the source's "
                        "\"// kernellab: block ...\" line, else 16x16)."),
         {}},
        {QStringLiteral("tile"), QStringLiteral("XxY"),
         QStringLiteral("User kernel: elements one block covers; the grid covers the op's work in tiles "
                        "(default: the source's line, else the block)."),
         {}},
        {QStringLiteral("shared-bytes"), QStringLiteral("N"),
         QStringLiteral("User kernel: dynamic shared memory per block (default: the source's line, else 0)."), {}},
        {QStringLiteral("kernel-timeout"), QStringLiteral("S"),
         QStringLiteral("User kernel: stop a launch still running after S seconds (default 5)."), {}},
    };
    return parameters;
}

void loadInput(RunRequest& request, const ParameterMap& parameters)
{
    const Reader reader(parameters);
    const bool fromFile = reader.has(QStringLiteral("input")), generated = reader.has(QStringLiteral("generate"));
    if (fromFile == generated) fail("input: give either an input file (input FILE) or generate SPEC");
    request.image.release();
    request.signal = Signal();
    if (generated) {
        requireNoParameter(reader, QStringLiteral("rate"), QStringLiteral("the generate spec sets the rate"));
        requireNoParameter(reader, QStringLiteral("channels"), QStringLiteral("the generate spec sets the channels"));
        const GenerateSpec spec = parseGenerateSpec(reader.text(QStringLiteral("generate")));
        if (spec.image)
            request.image = generateImage(spec.rows, spec.cols, spec.depth, spec.channels, spec.imagePattern);
        else
            request.signal = generateSignal(spec.frames, spec.channels, spec.rate, spec.signalPattern);
        request.inputName = QStringLiteral("generated: ") + toString(spec);
        return;
    }
    const QString path = reader.text(QStringLiteral("input"));
    request.inputName = path;
    if (isSignalFile(path.toStdString())) {
        SignalLoadOptions options;
        options.sampleRate = reader.number(QStringLiteral("rate"), 0.0);
        options.channels = reader.integer(QStringLiteral("channels"), 1, 1);
        request.signal = loadSignal(path.toStdString(), options);
        return;
    }
    requireNoParameter(reader, QStringLiteral("rate"), "'" + path + "' is an image, which has no sample rate");
    requireNoParameter(reader, QStringLiteral("channels"), "'" + path + "' is an image; channels applies to raw signals");
    request.image = loadImage(path.toStdString());
}

Op requestedOp(const ParameterMap& parameters)
{
    return parseOp(parameters.value(QStringLiteral("op"), QStringLiteral("conv2d")));
}

std::vector<Backend> requestedBackends(const ParameterMap& parameters)
{
    return parameters.contains(QStringLiteral("backends")) ? parseBackends(parameters[QStringLiteral("backends")])
                                                           : RunRequest().backends;
}

void configureRequest(RunRequest& request, const ParameterMap& parameters)
{
    const Reader reader(parameters);
    // Everything not given takes its default, also when a request is configured again.
    const RunRequest defaults;
    request.conv2d = defaults.conv2d;
    request.conv1d = defaults.conv1d;
    request.histogram = defaults.histogram;
    request.gpu = defaults.gpu;
    request.cpuRepetitions = defaults.cpuRepetitions;
    request.cpuWarmup = defaults.cpuWarmup;
    request.cpuThreads = defaults.cpuThreads;
    request.op = requestedOp(parameters);
    request.opParameters = QJsonObject();
    for (auto it = parameters.begin(); it != parameters.end(); ++it) {
        const ParameterInfo* info = findParameter(it.key());
        if (!info) fail(it.key() + ": not a known parameter");
        if (!info->ops.empty() && std::find(info->ops.begin(), info->ops.end(), request.op) == info->ops.end())
            fail(it.key() + ": does not apply to " + toString(request.op));
        const bool isOpParameter = std::any_of(opParameterInfo().begin(), opParameterInfo().end(),
                                               [&](const ParameterInfo& p) { return p.name == info->name; });
        if (isOpParameter && info->name != QLatin1String("op")) request.opParameters[info->name] = reader.json(*info);
    }
    switch (request.op) {
    case Op::Conv2D: configureConv2D(request, reader); break;
    case Op::Conv1D: configureConv1D(request, reader); break;
    case Op::Histogram: configureHistogram(request, reader); break;
    case Op::Transpose: break;
    }
    configureBackends(request, reader);
    request.customKernel = readCustomKernel(reader);
    // Given a kernel, its variant is what runs unless --variant says otherwise.
    if (request.customKernel && !reader.has(QStringLiteral("variant")))
        request.gpu.variant = request.customKernel->variant().toStdString();
}

std::vector<ParameterInfo> customKernelParameterInfo()
{
    std::vector<ParameterInfo> parameters;
    for (const ParameterInfo& p : backendParameterInfo())
        if (kCustomKernelParameters.contains(p.name)) parameters.push_back(p);
    return parameters;
}

std::optional<CustomKernel> customKernelFrom(const ParameterMap& parameters)
{
    return readCustomKernel(Reader(parameters));
}

} // namespace kl::app
