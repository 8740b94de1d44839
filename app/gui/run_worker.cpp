#include "run_worker.hpp"

#include "kernellab/metrics.hpp"

#include <QMutexLocker>

#include <algorithm>
#include <new>

namespace kl::gui {
namespace {

bool isCpu(app::Backend b)
{
    return b != app::Backend::Gpu;
}

/// A GPU-only copy of `request` for a comparison run (the main run already measured the copy bandwidth).
app::RunRequest gpuOnly(const app::RunRequest& request)
{
    app::RunRequest copy = request;
    copy.backends = {app::Backend::Gpu};
    copy.measureRoofs = false;
    return copy;
}

/// One quick histogram of `image` for the Histogram panel (binning like `like` when given, so outputs compare bin by bin).
app::RunRequest histogramOf(const cv::Mat& image, app::Backend backend, const HistogramResult* like)
{
    app::RunRequest request;
    request.op = app::Op::Histogram;
    request.image = image;
    request.inputName = QStringLiteral("histogram panel");
    request.backends = {backend};
    request.cpuRepetitions = request.gpu.repetitions = 1;
    request.cpuWarmup = request.gpu.warmup = 0;
    request.measureRoofs = false;
    if (like && image.depth() != CV_8U) {
        request.histogram.bins = like->binning.bins;
        request.histogram.lo = like->binning.lo;
        request.histogram.hi = like->binning.hi;
    }
    return request;
}

/// A backend's signal output as a waveform: conv1d's signal, or a transpose's interleaved
/// samples as one channel at channels x the rate (so it lines up in time with the input).
std::shared_ptr<const Signal> waveform(const app::BackendResult& r, const Signal& input)
{
    if (r.interleaved.empty()) return std::make_shared<const Signal>(r.signal);
    Signal s(1, r.interleaved.size(), input.sampleRate * std::max(1, input.channels));
    s.data = r.interleaved;
    return std::make_shared<const Signal>(std::move(s));
}

std::optional<HistogramResult> histogramFrom(const app::RunResult& result)
{
    if (result.results.empty() || !result.results.front().ok()) return std::nullopt;
    return result.results.front().histogram;
}

QString gpuLabel(const std::string& variant, gpu::HostMemory memory, int streams)
{
    QString label = QStringLiteral("gpu ") + QString::fromStdString(variant);
    if (memory != gpu::HostMemory::Pageable) label += QLatin1Char(' ') + QString::fromStdString(gpu::toString(memory));
    if (streams > 1) label += QStringLiteral(" ×%1").arg(streams);
    return label;
}

} // namespace

const app::BackendResult* shownCpuResult(const app::RunResult& result)
{
    return result.comparisonReference ? result.find(*result.comparisonReference) : nullptr;
}

const app::BackendResult* comparedResult(const app::RunResult& result)
{
    const app::BackendResult* cpu = shownCpuResult(result);
    const app::BackendResult* gpu = result.find(app::Backend::Gpu);
    if (gpu && gpu->ok() && cpu) return gpu;
    for (const app::BackendResult& r : result.results)
        if (isCpu(r.backend) && r.ok() && &r != cpu) return &r;
    return nullptr;
}

QString backendLabel(const app::BackendResult& result)
{
    if (!result.gpu) return app::toString(result.backend);
    const gpu::GpuReport& g = *result.gpu;
    return gpuLabel(g.variant, g.memory, g.streams);
}

QString backendLabel(const app::BackendResult& result, const app::RunRequest& request)
{
    if (result.gpu || result.backend != app::Backend::Gpu) return backendLabel(result);
    return gpuLabel(request.gpu.variant, request.gpu.memory, request.gpu.streams);
}

RunWorker::RunWorker(QObject* parent)
    : QThread(parent)
{
    qRegisterMetaType<std::shared_ptr<const RunOutcome>>();
}

RunWorker::~RunWorker()
{
    {
        QMutexLocker lock(&mutex_);
        quit_ = true;
        cancel_ = true;
        wake_.wakeOne();
    }
    wait();
}

quint64 RunWorker::submit(RunJob job)
{
    QMutexLocker lock(&mutex_);
    const quint64 id = nextId_++;
    pending_.emplace(id, std::move(job));
    if (inFlight_) cancel_ = true;
    if (!isRunning()) start();
    else wake_.wakeOne();
    return id;
}

void RunWorker::cancel()
{
    QMutexLocker lock(&mutex_);
    pending_.reset();
    if (inFlight_) cancel_ = true;
}

bool RunWorker::busy() const
{
    QMutexLocker lock(&mutex_);
    return inFlight_ || pending_.has_value();
}

RunJob RunWorker::lastJob() const
{
    QMutexLocker lock(&mutex_);
    return last_;
}

void RunWorker::run()
{
    forever {
        std::pair<quint64, RunJob> next;
        {
            QMutexLocker lock(&mutex_);
            while (!pending_ && !quit_) wake_.wait(&mutex_);
            if (quit_) return;
            next = std::move(*pending_);
            pending_.reset();
            last_ = next.second;
            inFlight_ = true;
            cancel_ = false;
        }
        const quint64 id = next.first;
        try {
            std::shared_ptr<const RunOutcome> outcome = process(id, next.second);
            emit finished(std::move(outcome));
        } catch (const kl::Cancelled&) {
            QMutexLocker lock(&mutex_);
            // Superseded jobs end silently: the next one is already queued.
            if (!pending_) emit cancelled(id);
        } catch (const std::bad_alloc&) {
            emit failed(id, tr("Out of memory: the run needs more memory than is available."));
        } catch (const std::exception& e) {
            emit failed(id, QString::fromUtf8(e.what()));
        }
        QMutexLocker lock(&mutex_);
        inFlight_ = false;
    }
}

std::shared_ptr<RunOutcome> RunWorker::process(quint64 id, const RunJob& job)
{
    app::RunRequest request = job.request;
    if (job.signal) request.signal = *job.signal;
    const bool gpuRequested = app::contains(request.backends, app::Backend::Gpu);
    const bool gpuAvailable = gpu::gpuStatus().available;
    const bool imageInput = !request.image.empty();
    const bool panelHistograms = job.histograms && imageInput && request.op != app::Op::Histogram;
    const std::vector<gpu::VariantInfo> variants = app::gpuVariantInfo(request);
    const std::vector<int> scalingThreads = job.threadScaling ? threadScalingCounts(hardwareThreads()) : std::vector<int>();

    // Progress is shared evenly among the runs this job may make.
    const int plannedRuns = 1 + (gpuRequested && gpuAvailable
                                     ? (job.compareMemory ? int(gpu::kHostMemories.size()) - 1 : 0) + (job.compareVariants ? int(variants.size()) : 0) +
                                           int(request.gpu.streams > 1)
                                     : 0) +
                            int(scalingThreads.size()) + (panelHistograms ? 3 : 0);
    int runsDone = 0;
    const auto runStep = [&](const app::RunRequest& stepRequest) {
        if (cancel_) throw kl::Cancelled();
        app::RunControl control;
        control.cancel = &cancel_;
        control.progress = [&](double fraction, const QString& what) {
            emit progressed(id, (runsDone + fraction) / plannedRuns, what);
        };
        app::RunResult result = app::execute(stepRequest, control);
        ++runsDone;
        return result;
    };

    auto outcome = std::make_shared<RunOutcome>();
    outcome->id = id;
    outcome->main = runStep(request);
    const app::RunResult& main = outcome->main;

    if (gpuRequested && gpuAvailable) {
        if (job.compareMemory)
            for (gpu::HostMemory memory : gpu::kHostMemories) {
                if (memory == request.gpu.memory) continue;
                app::RunRequest other = gpuOnly(request);
                other.gpu.memory = memory;
                outcome->gpuComparisons.push_back(runStep(other));
            }
        if (job.compareVariants) {
            const app::BackendResult* mainGpu = main.find(app::Backend::Gpu);
            const std::string usedVariant = mainGpu && mainGpu->gpu ? mainGpu->gpu->variant : std::string();
            for (const gpu::VariantInfo& variant : variants) {
                if (variant.name == usedVariant) continue;
                app::RunRequest other = gpuOnly(request);
                other.gpu.variant = variant.name;
                outcome->gpuComparisons.push_back(runStep(other));
            }
        }
        if (request.gpu.streams > 1) {
            app::RunRequest single = gpuOnly(request);
            single.gpu.streams = 1;
            outcome->singleStream = runStep(single);
        }
    }
    for (int threads : scalingThreads) {
        app::RunRequest scaled = request;
        scaled.backends = {app::Backend::CpuOpenCV};
        scaled.cpuThreads = threads;
        scaled.measureRoofs = true;  // each thread count against the host bandwidth on as many threads
        outcome->threadScaling.push_back(runStep(scaled));
    }

    const app::BackendResult* cpu = shownCpuResult(main);
    const app::BackendResult* gpuResult = main.find(app::Backend::Gpu);
    const app::BackendResult* compared = comparedResult(main);
    if (gpuResult && gpuResult->ok()) {
        try {
            if (gpu::Engine* engine = app::sharedEngine()) outcome->fmaPeakGFlops = engine->fmaPeakGFlops();
        } catch (const std::exception&) {
            // not measured (a capped or full device), as the roofline then says; tried again next run
        }
    }
    HistogramSet& histograms = outcome->histograms;
    if (request.op == app::Op::Histogram) {
        if (cpu) histograms.cpuOutput = cpu->histogram;
        if (gpuResult && gpuResult->ok()) histograms.gpuOutput = gpuResult->histogram;
    } else if (panelHistograms) {
        const app::Backend backend = gpuAvailable ? app::Backend::Gpu : app::Backend::CpuOpenCV;
        histograms.backend = app::toString(backend);
        histograms.input = histogramFrom(runStep(histogramOf(request.image, backend, nullptr)));
        if (cpu && !cpu->image.empty())
            histograms.cpuOutput = histogramFrom(runStep(histogramOf(cpu->image, backend, nullptr)));
        if (gpuResult && gpuResult->ok() && !gpuResult->image.empty())
            histograms.gpuOutput = histogramFrom(runStep(
                histogramOf(gpuResult->image, backend, histograms.cpuOutput ? &*histograms.cpuOutput : nullptr)));
    }

    if (cpu && job.signal) outcome->cpuSignal = waveform(*cpu, request.signal);
    if (gpuResult && gpuResult->ok() && job.signal) outcome->gpuSignal = waveform(*gpuResult, request.signal);
    if (cpu && !cpu->image.empty()) outcome->cpuImage = toDisplayImage(cpu->image);
    if (gpuResult && gpuResult->ok() && !gpuResult->image.empty()) outcome->gpuImage = toDisplayImage(gpuResult->image);
    if (cpu && compared && !cpu->image.empty() && !compared->image.empty() && cpu->image.size == compared->image.size &&
        cpu->image.type() == compared->image.type()) {
        outcome->difference = absDifference(compared->image, cpu->image);
        outcome->differenceImage.image = differenceHeatMap(outcome->difference);
        outcome->differenceBackend = compared->backend;
    }
    return outcome;
}

} // namespace kl::gui
