#include "session.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"
#include "kernellab/transpose.hpp"

#include "custom_kernel.hpp"
#include "names.hpp"
#include "ops.hpp"

#include <opencv2/core.hpp>

#include <QCoreApplication>
#include <QDateTime>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>

namespace kl::app {

namespace {

bool isCpu(Backend b) { return b != Backend::Gpu; }

QString noGpuMessage(const QString& reason)
{
    const QString prefix = QStringLiteral("no CUDA device: ");
    return reason.startsWith(prefix) ? reason : prefix + reason;
}

void throwIfCancelled(const RunControl& control)
{
    if (control.cancel && control.cancel->load()) throw Cancelled();
}

void validateRequest(const RunRequest& r)
{
    if (r.backends.empty()) fail("backends: none chosen");
    for (size_t i = 0; i < r.backends.size(); ++i)
        if (std::count(r.backends.begin(), r.backends.end(), r.backends[i]) > 1)
            fail("backends: " + toString(r.backends[i]) + " is listed twice");
    describe(r.op).validate(r);
    if (r.cpuRepetitions < 1) fail(QStringLiteral("repetitions: %1 must be at least 1").arg(r.cpuRepetitions));
    if (r.cpuWarmup < 0) fail(QStringLiteral("warmup: %1 must not be negative").arg(r.cpuWarmup));
    validateCpuThreads(r.cpuThreads);
    // GPU options are checked even without the GPU backend: a bad value is a mistake either way.
    const gpu::RunOptions& o = r.gpu;
    if (o.streams < 1 || o.streams > gpu::kMaxStreams)
        fail(QStringLiteral("streams: %1 is not in 1..%2").arg(o.streams).arg(gpu::kMaxStreams));
    if (o.repetitions < 1) fail(QStringLiteral("repetitions: %1 must be at least 1").arg(o.repetitions));
    if (o.warmup < 0) fail(QStringLiteral("warmup: %1 must not be negative").arg(o.warmup));
    const QString variant = QString::fromStdString(o.variant);
    QStringList known = gpuVariants(r.op);
    if (r.customKernel) {
        gpu::validateLaunch(r.customKernel->launch);
        if (!(r.customKernel->timeoutSeconds > 0)) fail(QStringLiteral("kernel-timeout: must be positive"));
        known << r.customKernel->variant();
    }
    if (variant != QLatin1String("auto") && !known.contains(variant))
        fail("variant: '" + variant + "' is not a " + toString(r.op) + " variant (auto, " +
             known.join(QStringLiteral(", ")) + ")" +
             (isCustomVariant(o.variant) && !r.customKernel ? QStringLiteral("; a user kernel needs --kernel-source FILE")
                                                            : QString()));
}

void runCpu(const RunRequest& r, const RunControl& control, BackendResult& out)
{
    const ScopedCpuThreads threads(r.cpuThreads);
    CpuScratch scratch;
    const OpDescriptor& op = describe(r.op);
    const bool reference = out.backend == Backend::CpuReference;
    // Checked before every repetition so that a long reference run stops promptly. The first
    // untimed run allocates and first-touches the outputs and scratch, as the GPU's buffer cache
    // is warm before its timed runs: timed runs do the op's work only.
    out.time = timeCpu(
        [&] {
            throwIfCancelled(control);
            op.runCpu(r, reference, out, scratch);
        },
        r.cpuRepetitions, std::max(1, r.cpuWarmup));
}

void runGpu(const RunRequest& r, const RunControl& control, gpu::Engine& engine, BackendResult& out)
{
    gpu::RunOptions options = r.gpu;
    options.cancel = control.cancel;  // the engine stops between repetitions and chunks
    gpu::GpuReport report = isCustomVariant(options.variant) ? runCustomKernel(r, options, engine.device(), out)
                                                             : describe(r.op).runGpu(r, options, engine, out);
    out.time = options.endToEnd ? report.total : report.kernel;
    out.gpu = std::move(report);
}

/// Runs `body`, turning any failure but a cancel into the result's error text.
/// (kl::OutOfMemory messages already say which memory and how much.)
template <typename Body> void recordFailure(BackendResult& out, Body body)
{
    try {
        body();
    } catch (const Cancelled&) {
        throw;
    } catch (const std::bad_alloc&) {
        out.error = QStringLiteral("out of host memory (allocation failed)");
    } catch (const std::exception& e) {
        out.error = QString::fromUtf8(e.what());
    }
    if (!out.ok()) {
        out.image.release();
        out.signal = Signal();
        out.interleaved.clear();
        out.histogram.reset();
        out.gpu.reset();
    }
}

QString describeStep(const RunRequest& r, Backend b)
{
    const QString reps = b == Backend::Gpu ? QStringLiteral("%1 + %2 warm-up").arg(r.gpu.repetitions).arg(r.gpu.warmup)
                                           : QStringLiteral("%1 + %2 warm-up").arg(r.cpuRepetitions).arg(r.cpuWarmup);
    return toString(b) + ": " + toString(r.op) + " (" + reps + " runs)";
}

Comparison compareHistograms(const HistogramResult& actual, const HistogramResult& reference)
{
    Comparison c;
    c.shapeMatches = actual.counts.size() == reference.counts.size() &&
                     actual.binning.bins == reference.binning.bins && actual.labels == reference.labels &&
                     actual.outOfRange.size() == reference.outOfRange.size() &&
                     actual.nanCount.size() == reference.nanCount.size();
    for (size_t i = 0; c.shapeMatches && i < reference.counts.size(); ++i)
        c.shapeMatches = actual.counts[i].size() == reference.counts[i].size();
    if (!c.shapeMatches) return c;

    double sumAbs = 0, sumSquares = 0, peak = 0;
    auto add = [&](uint64_t a, uint64_t b) {
        const double diff = a > b ? double(a - b) : double(b - a);
        if (diff > 0 && c.differing++ == 0) {
            c.firstDiffering = c.elements;
            c.firstActual = double(a);
            c.firstReference = double(b);
        }
        ++c.elements;
        if (diff > 0) {
            c.maxRelError = std::max(c.maxRelError, diff / std::max(double(b), 1e-30));
        }
        c.maxAbsError = std::max(c.maxAbsError, diff);
        sumAbs += diff;
        sumSquares += diff * diff;
        peak = std::max(peak, double(b));
    };
    for (size_t i = 0; i < reference.counts.size(); ++i) {
        for (size_t bin = 0; bin < reference.counts[i].size(); ++bin) add(actual.counts[i][bin], reference.counts[i][bin]);
        add(actual.outOfRange[i], reference.outOfRange[i]);
        add(actual.nanCount[i], reference.nanCount[i]);
    }
    c.meanAbsError = c.elements ? sumAbs / double(c.elements) : 0;
    c.normRelError = c.maxAbsError == 0 ? 0 : (peak > 0 ? c.maxAbsError / peak : HUGE_VAL);
    const double meanSquare = c.elements ? sumSquares / double(c.elements) : 0;
    c.psnr = meanSquare == 0 ? HUGE_VAL : 10 * std::log10(peak * peak / meanSquare);
    return c;
}

/// The shared engine, or why there is none. A QCoreApplication post routine releases it at the end
/// of main, while the CUDA runtime and cuFFT are certainly alive: cuFFT sets itself up lazily, after
/// the engine, so static destruction may tear it down first. Without a QCoreApplication the
/// static's destruction at exit releases it (the resources' destructors tolerate a runtime that is
/// unloading by then).
struct SharedEngine {
    std::mutex mutex;
    int device = 0;  ///< selectGpuDevice's choice
    /// One engine per device used, kept when another is chosen: a run under way holds its engine.
    std::map<int, std::unique_ptr<gpu::Engine>> engines;
    std::map<int, QString> failures;  ///< why a device's engine could not be created
    bool postRoutineAdded = false;
    bool released = false;
};

SharedEngine& sharedEngineState()
{
    static SharedEngine shared;
    return shared;
}

void releaseSharedEngine()
{
    SharedEngine& shared = sharedEngineState();
    const std::lock_guard<std::mutex> lock(shared.mutex);
    shared.engines.clear();
    shared.released = true;
}

Signal asSignal(const std::vector<float>& samples)
{
    Signal s(1, samples.size(), 1.0);
    s.data = samples;
    return s;
}

} // namespace

QString toString(Op op) { return QString::fromLatin1(describe(op).name); }

std::vector<Op> allOps()
{
    std::vector<Op> ops;
    for (const OpDescriptor* d : opDescriptors()) ops.push_back(d->op);
    return ops;
}

QStringList gpuVariants(Op op)
{
    QStringList names;
    for (const gpu::VariantInfo& v : gpuVariantInfo(op)) names << QString::fromStdString(v.name);
    return names;
}

std::vector<gpu::VariantInfo> gpuVariantInfo(Op op) { return gpu::variantInfo(toString(op).toStdString()); }

std::vector<gpu::VariantInfo> gpuVariantInfo(const RunRequest& request)
{
    std::vector<gpu::VariantInfo> variants = gpuVariantInfo(request.op);
    if (request.customKernel)
        variants.push_back({request.customKernel->variant().toStdString(),
                            "your kernel " + request.customKernel->entry + " (" + request.customKernel->launch.text() + ")"});
    return variants;
}

QString whyNotApplicable(const RunRequest& request, const QString& variant, const gpu::DeviceInfo& device)
{
    if (isCustomVariant(variant.toStdString())) return whyCustomKernelCannotRun(request);
    return QString::fromStdString(describe(request.op).whyNotApplicable(request, variant.toStdString(), device));
}

Op parseOp(const QString& name)
{
    return parseName<Op>(name, allOps(), QStringLiteral("op"));
}

QString toString(Backend b)
{
    switch (b) {
    case Backend::CpuReference: return QStringLiteral("cpu-ref");
    case Backend::CpuOpenCV: return QStringLiteral("cpu-opencv");
    case Backend::Gpu: return QStringLiteral("gpu");
    }
    return {};
}

Backend parseBackend(const QString& name)
{
    const Backend all[] = {Backend::CpuReference, Backend::CpuOpenCV, Backend::Gpu};
    return parseName<Backend>(name, all, QStringLiteral("backends"));
}

std::vector<Backend> parseBackends(const QString& commaList)
{
    std::vector<Backend> backends;
    for (const QString& name : commaList.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const Backend b = parseBackend(name.trimmed());
        if (contains(backends, b)) fail("backends: '" + name.trimmed() + "' is listed twice");
        backends.push_back(b);
    }
    if (backends.empty()) fail("backends: '" + commaList + "' names no backend (use cpu-ref, cpu-opencv, gpu)");
    return backends;
}

const BackendResult* RunResult::find(Backend b) const
{
    for (const BackendResult& r : results)
        if (r.backend == b) return &r;
    return nullptr;
}

bool selectGpuDevice(int index, QString* reason)
{
    const std::vector<gpu::DeviceInfo> devices = gpu::listDevices();
    if (index >= 0 && index < int(devices.size())) {
        SharedEngine& shared = sharedEngineState();
        const std::lock_guard<std::mutex> lock(shared.mutex);
        shared.device = index;
        return true;
    }
    if (devices.empty()) {
        *reason = noGpuMessage(QString::fromStdString(gpu::gpuStatus().reason));
    } else {
        QStringList names;
        for (const gpu::DeviceInfo& d : devices) names << QStringLiteral("%1 (%2)").arg(d.index).arg(QString::fromStdString(d.name));
        *reason = QStringLiteral("there is no GPU %1; the devices are %2").arg(index).arg(names.join(QStringLiteral(", ")));
    }
    return false;
}

int selectedGpuDevice()
{
    SharedEngine& shared = sharedEngineState();
    const std::lock_guard<std::mutex> lock(shared.mutex);
    return shared.device;
}

gpu::Engine* sharedEngine(QString* reasonIfNone)
{
    SharedEngine& shared = sharedEngineState();
    const std::lock_guard<std::mutex> lock(shared.mutex);
    if (shared.released) {
        if (reasonIfNone) *reasonIfNone = noGpuMessage(QStringLiteral("the engine was released when the application ended"));
        return nullptr;
    }
    std::unique_ptr<gpu::Engine>& engine = shared.engines[shared.device];
    QString& failure = shared.failures[shared.device];
    if (!engine && failure.isEmpty()) {
        const gpu::GpuStatus status = gpu::gpuStatus();
        if (!status.available) {
            failure = noGpuMessage(QString::fromStdString(status.reason));
        } else {
            try {
                engine = std::make_unique<gpu::Engine>(shared.device);
                if (QCoreApplication::instance() && !shared.postRoutineAdded) {
                    qAddPostRoutine(releaseSharedEngine);
                    shared.postRoutineAdded = true;
                }
            } catch (const std::exception& e) {
                failure = noGpuMessage(QString::fromUtf8(e.what()));
            }
        }
    }
    if (!engine && reasonIfNone) *reasonIfNone = failure;
    return engine.get();
}

RunResult execute(const RunRequest& request, const RunControl& control)
{
    validateRequest(request);
    RunResult result;
    result.request = request;
    result.date = QDateTime::currentDateTimeUtc().toString(Qt::ISODate);
    result.cpuThreads = request.cpuThreads;
    result.gpuStatus = gpu::gpuStatus();

    const bool wantsGpu = contains(request.backends, Backend::Gpu);
    QString noEngineReason;
    gpu::Engine* engine = wantsGpu ? sharedEngine(&noEngineReason) : nullptr;
    if (engine) result.device = engine->device();
    const bool measureBandwidth = engine && request.measureRoofs;
    const bool measureHostBandwidth =
        request.measureRoofs && std::any_of(request.backends.begin(), request.backends.end(), isCpu);

    const double steps = double(request.backends.size()) + (measureBandwidth ? 1 : 0) + (measureHostBandwidth ? 1 : 0);
    int step = 0;
    auto announce = [&](const QString& what) {
        throwIfCancelled(control);
        if (control.progress) control.progress(step / steps, what);
        ++step;
    };

    if (measureBandwidth) {
        announce(QStringLiteral("measuring device copy bandwidth"));
        try {
            result.copyBandwidthGBs = engine->copyBandwidthGBs();
        } catch (const std::exception&) {
            result.copyBandwidthGBs = 0;  // reported as not measured; the run itself may still fit
        }
    }

    if (engine && request.gpu.endToEnd && request.gpu.streams > 1) {
        try {
            result.linkBothWaysGBs = engine->linkBothWaysGBs();
        } catch (const std::exception&) {
            result.linkBothWaysGBs = 0;  // the limit then leaves the link out, and says so
        }
    }

    if (measureHostBandwidth) {
        announce(QStringLiteral("measuring host memory bandwidth"));
        try {
            result.hostBandwidthGBs = hostCopyBandwidthGBs(request.cpuThreads);
        } catch (const std::exception&) {
            result.hostBandwidthGBs = 0;  // reported as not measured (e.g. too little free memory)
        }
    }

    for (Backend backend : request.backends) {
        announce(describeStep(request, backend));
        BackendResult out;
        out.backend = backend;
        if (backend == Backend::Gpu) {
            if (!engine) out.error = noEngineReason;
            else recordFailure(out, [&] { runGpu(request, control, *engine, out); });
        } else {
            recordFailure(out, [&] { runCpu(request, control, out); });
        }
        result.results.push_back(std::move(out));
        if (control.backendFinished) control.backendFinished(result.results.back());
    }
    throwIfCancelled(control);

    const auto reference = std::find_if(result.results.begin(), result.results.end(),
                                        [](const BackendResult& r) { return isCpu(r.backend) && r.ok(); });
    if (reference != result.results.end()) {
        result.comparisonReference = reference->backend;
        for (const BackendResult& r : result.results) {
            if (&r == &*reference) continue;
            if (const std::optional<Comparison> c = compareResults(r, *reference))
                result.comparisons.push_back({r.backend, *c, disagreement(request, r, *reference, *c)});
        }
    }
    if (control.progress) control.progress(1.0, QStringLiteral("done"));
    return result;
}

std::optional<Comparison> compareResults(const BackendResult& actual, const BackendResult& reference)
{
    if (!actual.ok() || !reference.ok()) return std::nullopt;
    if (actual.histogram && reference.histogram) return compareHistograms(*actual.histogram, *reference.histogram);
    if (!actual.image.empty() && !reference.image.empty()) return compare(actual.image, reference.image);
    if (!actual.signal.empty() && !reference.signal.empty()) return compare(actual.signal, reference.signal);
    if (!actual.interleaved.empty() && !reference.interleaved.empty())
        return compare(asSignal(actual.interleaved), asSignal(reference.interleaved));
    return std::nullopt;
}

namespace {

/// "first at row 3, column 7, channel 1: 12 where the reference has 13".
QString firstDifference(const BackendResult& reference, const Comparison& c)
{
    const uint64_t i = c.firstDiffering;
    QString where;
    if (reference.histogram) {
        const HistogramResult& h = *reference.histogram;
        const uint64_t perEntry = uint64_t(h.binning.bins) + 2;  // the bins, out of range, NaN
        const uint64_t entry = i / perEntry, k = i % perEntry;
        const QString label = QString::fromStdString(h.labels.at(size_t(entry)));
        where = k < uint64_t(h.binning.bins) ? QStringLiteral("%1 bin %2").arg(label).arg(k)
                                              : label + (k == perEntry - 2 ? QStringLiteral(" out-of-range count")
                                                                           : QStringLiteral(" NaN count"));
    } else if (!reference.image.empty()) {
        const uint64_t channels = uint64_t(reference.image.channels()), rowElements = reference.image.cols * channels;
        where = QStringLiteral("row %1, column %2, channel %3")
                    .arg(i / rowElements)
                    .arg(i % rowElements / channels)
                    .arg(i % channels);
    } else if (!reference.signal.empty()) {
        where = QStringLiteral("channel %1, sample %2").arg(i / reference.signal.frames).arg(i % reference.signal.frames);
    } else {
        where = QStringLiteral("element %1").arg(i);
    }
    return QStringLiteral("first at %1: %2 where the reference has %3")
        .arg(where)
        .arg(c.firstActual, 0, 'g', 9)
        .arg(c.firstReference, 0, 'g', 9);
}

} // namespace

QString disagreement(const RunRequest& request, const BackendResult& actual, const BackendResult& reference,
                     const Comparison& c)
{
    if (!c.shapeMatches) return QStringLiteral("the outputs differ in size, type or layout");
    const QString counts = QStringLiteral("%1 of %2 elements differ, max |diff| %3; %4")
                               .arg(c.differing)
                               .arg(c.elements)
                               .arg(c.maxAbsError, 0, 'g', 6)
                               .arg(c.differing ? firstDifference(reference, c) : QString());
    const Agreement agreement = describe(request.op).agreement;
    if (agreement == Agreement::Identical) return c.differing == 0 ? QString() : counts + QStringLiteral(" (must be identical)");
    if (agreement == Agreement::Conv2dRule) {
        if (c.differing == 0) return {};
        const Verdict verdict =
            acceptConv2D(actual.image, reference.image, request.image, request.conv2d, kBackendsRelTolerance);
        return verdict.passed() ? QString() : counts + QStringLiteral(": ") + QString::fromStdString(verdict.failure);
    }
    // conv1d: the float rule on the comparison's max|a - r| / max|r|.
    const bool viaFft = actual.gpu && actual.gpu->variant == "fft";
    const double tolerance = viaFft ? kFftBackendsRelTolerance : kBackendsRelTolerance;
    if (c.normRelError <= tolerance) return {};
    return counts + QStringLiteral(", %1 of the largest |reference| (allowed %2)")
                        .arg(c.normRelError, 0, 'g', 3)
                        .arg(tolerance);
}

double bytesMoved(const RunRequest& request, const BackendResult& result)
{
    const double input = request.image.empty() ? double(request.signal.data.size() * sizeof(float))
                                               : double(request.image.total() * request.image.elemSize());
    double output = 0;
    if (!result.image.empty()) output = double(result.image.total() * result.image.elemSize());
    else if (!result.signal.empty()) output = double((result.signal.data.size() + request.conv1d.taps.size()) * sizeof(float));
    else if (!result.interleaved.empty()) output = double(result.interleaved.size() * sizeof(float));
    // Histogram counts are a few KiB: the input dominates.
    return input + output;
}

double flopsDone(const RunRequest& request, const BackendResult& result)
{
    if (request.op == Op::Conv2D)
        return 2.0 * double(request.conv2d.kernel.total()) * double(result.image.total()) * result.image.channels();
    if (request.op == Op::Conv1D) return 2.0 * double(request.conv1d.taps.size()) * double(result.signal.data.size());
    return 0;
}

double cpuGBs(const RunRequest& request, const BackendResult& result)
{
    if (!result.ok() || result.backend == Backend::Gpu || result.time.medianMs <= 0) return 0;
    return bytesMoved(request, result) / (result.time.medianMs * 1e6);
}

double cpuGFlops(const RunRequest& request, const BackendResult& result)
{
    if (!result.ok() || result.backend == Backend::Gpu || result.time.medianMs <= 0) return 0;
    return flopsDone(request, result) / (result.time.medianMs * 1e6);
}

bool contains(const std::vector<Backend>& backends, Backend b)
{
    return std::find(backends.begin(), backends.end(), b) != backends.end();
}

double hostBandwidthPercent(const RunResult& run, const BackendResult& result)
{
    return run.hostBandwidthGBs > 0 ? 100.0 * cpuGBs(run.request, result) / run.hostBandwidthGBs : 0;
}

double hostCopyBandwidthGBs(int threads)
{
    static std::mutex mutex;
    static std::map<int, double> measured;
    const std::lock_guard<std::mutex> lock(mutex);
    const auto known = measured.find(threads);
    if (known != measured.end()) return known->second;
    return measured[threads] = measureHostCopyBandwidthGBs(threads);
}

} // namespace kl::app
