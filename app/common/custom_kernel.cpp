#include "custom_kernel.hpp"

#include "app_paths.hpp"
#include "names.hpp"

#include "kernellab/conv2d.hpp"
#include "kernellab/error.hpp"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>

#include <cstdio>

namespace kl::app {

namespace {

constexpr char kCustomPrefix[] = "custom:";
/// What a worker may take beyond its kernels' own time (process start, CUDA context, copies)
/// before the app gives up on it.
constexpr int kWorkerAllowanceMs = 60000;

const CustomKernel& requireCustomKernel(const RunRequest& request)
{
    if (!request.customKernel)
        fail("variant: '" + QString::fromStdString(request.gpu.variant) +
             "' is a user kernel, but none was given (--kernel-source FILE)");
    return *request.customKernel;
}

int outputDepth(const RunRequest& r)
{
    if (r.op == Op::Conv2D) return conv2dOutputDepth(r.image, r.conv2d);
    return r.op == Op::Conv1D ? CV_32F : r.image.depth();
}

/// The op's inputs as the contract lays them out (user_kernel_args.hpp).
gpu::UserKernelJob makeJob(const RunRequest& r, const gpu::UserKernelBinary& binary, const gpu::RunOptions& options)
{
    const CustomKernel& k = *r.customKernel;
    gpu::UserKernelJob job;
    job.op = toString(r.op).toStdString();
    job.entry = k.entry;
    job.loweredName = binary.loweredName;
    job.cubin = binary.cubin;
    job.launch = k.launch;
    job.timeoutSeconds = k.timeoutSeconds;
    job.repetitions = options.repetitions;
    job.warmup = options.warmup;
    job.endToEnd = options.endToEnd;
    job.pinned = options.memory == gpu::HostMemory::Pinned;
    switch (r.op) {
    case Op::Conv2D:
        job.input = r.image;
        job.taps = effectiveKernel(r.conv2d);
        job.outputDepth = outputDepth(r);
        job.border = r.conv2d.border;
        job.borderValue = float(r.conv2d.borderValue);
        break;
    case Op::Conv1D: {
        const Signal& s = r.signal;
        job.input = cv::Mat(s.channels, int(s.frames), CV_32F, const_cast<float*>(s.data.data()));
        job.taps = cv::Mat(1, int(r.conv1d.taps.size()), CV_32F, const_cast<float*>(r.conv1d.taps.data()));
        job.outFrames = int64_t(conv1dOutputLength(s.frames, r.conv1d.taps.size(), r.conv1d.mode));
        job.offset = int64_t(conv1dOutputOffset(s.frames, r.conv1d.taps.size(), r.conv1d.mode));
        break;
    }
    case Op::Histogram:
        job.input = r.image;
        job.binning = resolveBinning(r.image, r.histogram);
        job.luminance = r.histogram.luminance && r.image.channels() >= 3;
        break;
    case Op::Transpose:
        job.input = r.image;
        break;
    }
    return job;
}

/// The outcome's output where the op's backends keep theirs.
void takeOutput(const RunRequest& r, const gpu::UserKernelJob& job, gpu::UserKernelOutcome& outcome, BackendResult& out)
{
    if (r.op == Op::Conv1D) {
        out.signal = Signal(r.signal.channels, size_t(job.outFrames), r.signal.sampleRate);
        std::copy(outcome.output.ptr<float>(), outcome.output.ptr<float>() + out.signal.data.size(), out.signal.data.begin());
    } else if (r.op == Op::Histogram) {
        HistogramResult h;
        h.binning = job.binning;
        h.hasLuminance = job.luminance;
        h.labels = histogramLabels(r.image.channels(), job.luminance);
        const size_t perEntry = size_t(job.binning.bins) + 2;
        for (size_t e = 0; e * perEntry < outcome.counts.size(); ++e) {
            const auto first = outcome.counts.begin() + ptrdiff_t(e * perEntry);
            h.counts.emplace_back(first, first + job.binning.bins);
            h.outOfRange.push_back(outcome.counts[e * perEntry + size_t(job.binning.bins)]);
            h.nanCount.push_back(outcome.counts[e * perEntry + size_t(job.binning.bins) + 1]);
        }
        out.histogram = std::move(h);
    } else {
        out.image = outcome.output;
    }
}

QString exitDescription(const QProcess& worker)
{
    if (worker.exitStatus() == QProcess::CrashExit) return QStringLiteral("it crashed");
    return QStringLiteral("exit code %1").arg(worker.exitCode());
}

/// Runs the job in kernellab-worker and returns its outcome. The worker stops a launch that
/// overruns by itself; the app kills a worker that overruns even its allowance, or on cancel.
gpu::UserKernelOutcome runInWorker(const gpu::UserKernelJob& job, const std::atomic<bool>* cancel)
{
    QTemporaryDir dir;
    if (!dir.isValid()) throw IoError("cannot create a directory for the kernel worker: " + dir.errorString().toStdString());
    writeJob(job, dir.path().toStdString());

    QProcess worker;
    worker.setProcessChannelMode(QProcess::ForwardedOutputChannel);  // its stdout is the user kernel's printf
    QStringList command = QProcess::splitCommand(qEnvironmentVariable(kWorkerWrapperVariable));
    command << workerExecutable() << dir.path();
    worker.start(command.takeFirst(), command);
    if (!worker.waitForStarted())
        throw std::runtime_error("cannot start the kernel worker (" + worker.program().toStdString() + "): " +
                                 worker.errorString().toStdString());
    const double launches = 1 + job.warmup + job.repetitions;
    const qint64 deadlineMs = kWorkerAllowanceMs + qint64(job.timeoutSeconds * 1000 * launches);
    QElapsedTimer clock;
    clock.start();
    while (!worker.waitForFinished(50)) {
        const bool cancelled = cancel && cancel->load();
        if (cancelled || clock.elapsed() > deadlineMs) {
            worker.kill();
            worker.waitForFinished();
            if (cancelled) throw Cancelled();
            throw std::runtime_error("kernel '" + job.entry + "': the worker did not finish within " +
                                     std::to_string(deadlineMs / 1000) + " s and was killed");
        }
    }
    const QString stderrText = QString::fromUtf8(worker.readAllStandardError()).trimmed();
    try {
        return gpu::readOutcome(dir.path().toStdString());
    } catch (const IoError&) {
        throw std::runtime_error("kernel '" + job.entry + "': the worker ended without a result (" +
                                 exitDescription(worker).toStdString() + ")" +
                                 (stderrText.isEmpty() ? std::string() : ": " + stderrText.toStdString()));
    }
}

std::string launchText(const gpu::UserKernelLaunch& l, const gpu::KernelResources& r)
{
    char occupancy[64];
    std::snprintf(occupancy, sizeof occupancy, "%.0f%%", 100 * r.occupancy);
    return "custom kernel: grid " + std::to_string(r.gridX) + "x" + std::to_string(r.gridY) + ", " + l.text() + "; " +
           std::to_string(r.registers) + " registers, " + std::to_string(r.staticSharedBytes) +
           " B static shared, " + std::to_string(r.activeBlocksPerSM) + " blocks per SM (occupancy " + occupancy + ")";
}

} // namespace

bool isCustomVariant(const std::string& variant) { return variant.rfind(kCustomPrefix, 0) == 0; }

gpu::UserKernelSource userKernelSource(const RunRequest& request)
{
    const CustomKernel& k = requireCustomKernel(request);
    gpu::UserKernelSource s;
    s.op = toString(request.op).toStdString();
    s.code = k.source;
    s.fileName = k.path.isEmpty() ? std::string("kernel.cu") : k.path.toStdString();
    s.entry = k.entry;
    s.inputDepth = request.op == Op::Conv1D ? CV_32F : request.image.depth();
    s.outputDepth = outputDepth(request);
    s.launch = k.launch;
    return s;
}

QString whyCustomKernelCannotRun(const RunRequest& request)
{
    if (!request.customKernel) return QStringLiteral("needs a kernel source (--kernel-source FILE)");
    if (request.op == Op::Transpose && request.image.empty())
        return QStringLiteral("needs an image; user transpose kernels do not take signals");
    if (request.gpu.streams > 1)
        return QStringLiteral("needs one stream (a user kernel runs the whole input at once); this is %1")
            .arg(request.gpu.streams);
    if (request.gpu.endToEnd && request.gpu.memory == gpu::HostMemory::Staged)
        return QStringLiteral("needs pageable or pinned host memory; this is staged");
    return {};
}

gpu::GpuReport runCustomKernel(const RunRequest& request, const gpu::RunOptions& options,
                               const gpu::DeviceInfo& device, BackendResult& out)
{
    const CustomKernel& k = requireCustomKernel(request);
    if (const QString why = whyCustomKernelCannotRun(request); !why.isEmpty())
        fail("variant '" + k.variant() + "' " + why);
    const gpu::UserKernelSource source = userKernelSource(request);
    const gpu::UserKernelBinary binary = gpu::compileUserKernel(source, gpu::archOf(device));
    if (!binary.ok) throw std::runtime_error("kernel does not compile:\n" + binary.diagnosticsText());

    gpu::UserKernelJob job = makeJob(request, binary, options);
    job.device = device.index;
    gpu::UserKernelOutcome outcome = runInWorker(job, options.cancel);
    if (!outcome.error.empty()) throw std::runtime_error(outcome.error);
    takeOutput(request, job, outcome, out);

    gpu::GpuReport report;
    report.op = job.op;
    report.variant = k.variant().toStdString();
    report.device = device.name;
    report.memory = options.memory;
    report.chunking = "a user kernel runs the whole input at once";
    report.launch = launchText(k.launch, outcome.resources);
    report.h2d = outcome.h2d;
    report.kernel = outcome.kernel;
    report.d2h = outcome.d2h;
    report.total = outcome.total;
    if (options.endToEnd) {
        report.bytesH2D = uint64_t(job.input.total() * job.input.elemSize());
        report.bytesD2H = outcome.counts.empty() ? uint64_t(outcome.output.total() * outcome.output.elemSize())
                                                 : uint64_t(outcome.counts.size() * sizeof(uint64_t));
    }
    report.kernelBytes = uint64_t(bytesMoved(request, out));
    report.kernelFlops = flopsDone(request, out);
    report.resources = outcome.resources;
    return report;
}

} // namespace kl::app
