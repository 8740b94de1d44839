#pragma once
// One run of an operation on the chosen backends — what both the GUI and the CLI
// do — and its report (the JSON/CSV schema both write). Qt Core only; no widgets.
#include "kernellab/acceptance.hpp"
#include "kernellab/conv1d.hpp"
#include "kernellab/cpu.hpp"
#include "kernellab/conv2d.hpp"
#include "kernellab/error.hpp"
#include "kernellab/gpu/engine.hpp"
#include "kernellab/gpu/user_kernel.hpp"
#include "kernellab/histogram.hpp"
#include "kernellab/metrics.hpp"
#include "kernellab/signal.hpp"
#include "kernellab/timing.hpp"

#include <opencv2/core/mat.hpp>

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kl::app {

enum class Op { Conv2D, Conv1D, Histogram, Transpose };
QString toString(Op op);            // "conv2d", "conv1d", "histogram", "transpose"
Op parseOp(const QString& name);    // throws kl::InvalidArgument
std::vector<Op> allOps();
/// The GPU variants of an op ("auto" excluded), as the engine names them.
QStringList gpuVariants(Op op);
/// The same with each one's one-line description.
std::vector<gpu::VariantInfo> gpuVariantInfo(Op op);

enum class Backend { CpuReference, CpuOpenCV, Gpu };
QString toString(Backend b);        // "cpu-ref", "cpu-opencv", "gpu"
Backend parseBackend(const QString& name);
/// "cpu-ref,cpu-opencv,gpu" -> list (throws kl::InvalidArgument naming the bad entry).
std::vector<Backend> parseBackends(const QString& commaList);

/// A user's own kernel (docs/custom-kernels.md), run as the GPU variant "custom:<entry>" in a
/// worker process (custom_kernel.hpp).
struct CustomKernel {
    QString path;         ///< the file it came from ("" for an editor's unsaved text): diagnostics name it
    std::string source;
    std::string entry;    ///< the __global__ function to run
    gpu::UserKernelLaunch launch;
    double timeoutSeconds = 5;  ///< per launch; a kernel still running then is stopped
    [[nodiscard]] QString variant() const { return QStringLiteral("custom:") + QString::fromStdString(entry); }
};

/// Everything one run needs. Exactly one of image/signal is the input (conv1d uses
/// the signal; conv2d/histogram/transpose the image; transpose of a signal converts planar -> interleaved).
struct RunRequest {
    Op op = Op::Conv2D;
    cv::Mat image;
    Signal signal;
    QString inputName;                 ///< file path or "generated: ..." for the report
    Conv2DSpec conv2d;
    Conv1DSpec conv1d;
    HistogramSpec histogram;
    QJsonObject opParameters;          ///< preset name and parameters, as given (recorded in the report)
    std::vector<Backend> backends = {Backend::CpuReference, Backend::CpuOpenCV, Backend::Gpu};
    gpu::RunOptions gpu;
    /// Set when the request carries a user kernel; gpu.variant may then be its variant().
    std::optional<CustomKernel> customKernel;
    int cpuRepetitions = 3;
    int cpuWarmup = 1;                 ///< at least one untimed run always comes first (it allocates the outputs)
    int cpuThreads = hardwareThreads();  ///< threads of the CPU backends, 1..kMaxCpuThreads
    /// Measure the roofs for "% of copy" and "% of host bandwidth": the device-to-device copy in
    /// this run, the host memory copy on cpuThreads threads (once per process and thread count).
    bool measureRoofs = true;
};

/// One backend's outcome. `error` set (and no output) when it failed or was unavailable.
struct BackendResult {
    Backend backend = Backend::CpuReference;
    QString error;
    TimingStats time;                      ///< CPU backends: wall time; GPU: see `gpu`
    cv::Mat image;                         ///< conv2d / transpose output
    Signal signal;                         ///< conv1d output
    std::vector<float> interleaved;        ///< transpose of a signal
    std::optional<HistogramResult> histogram;
    std::optional<gpu::GpuReport> gpu;     ///< GPU timings, timeline, bytes
    [[nodiscard]] bool ok() const { return error.isEmpty(); }
};

/// A backend's output against the comparison reference's.
struct BackendComparison {
    Backend backend = Backend::CpuOpenCV;
    Comparison comparison;
    QString disagreement;  ///< empty when the acceptance rule holds (disagreement() below)
};

struct RunResult {
    RunRequest request;                     ///< as run (input data kept for the views)
    std::vector<BackendResult> results;     ///< in request.backends order
    /// Each non-reference backend compared with the first successful CPU backend (absent if none).
    std::vector<BackendComparison> comparisons;
    std::optional<Backend> comparisonReference;  ///< the backend the comparisons are against
    gpu::GpuStatus gpuStatus;
    std::optional<gpu::DeviceInfo> device;
    double copyBandwidthGBs = 0;            ///< device-to-device, read+write, measured in this run (0 if not)
    double hostBandwidthGBs = 0;            ///< host memory copy, read+write, on cpuThreads threads (0 if not measured)
    /// Pinned H2D and D2H at once (Engine::linkBothWaysGBs), measured for end-to-end GPU runs on
    /// several streams: the link's share of their overlap limit (0 if not measured).
    double linkBothWaysGBs = 0;
    int cpuThreads = 0;                     ///< the CPU backends' threads
    QString date;                           ///< ISO 8601 UTC
    [[nodiscard]] const BackendResult* find(Backend b) const;
};

/// Progress (0..1) and a cancellation flag checked between backends and repetitions (the GPU
/// backend's too: it replaces RunRequest::gpu.cancel, so that a cancel stops a long GPU run).
struct RunControl {
    std::function<void(double fraction, const QString& what)> progress;
    const std::atomic<bool>* cancel = nullptr;
    /// Called as each backend finishes (ok or not), so a caller can show what finished before a cancel.
    std::function<void(const BackendResult& result)> backendFinished;
};

/// Runs the request on each backend in order. Never throws for a backend's failure (it is
/// recorded in that BackendResult); throws kl::InvalidArgument for an invalid request
/// (validated up front) and kl::Cancelled when RunControl::cancel becomes true.
RunResult execute(const RunRequest& request, const RunControl& control = {});

/// `actual`'s output compared with `reference`'s (histograms: every count, out-of-range and
/// NaN count as one element); nullopt when either has no output.
std::optional<Comparison> compareResults(const BackendResult& actual, const BackendResult& reference);
/// Empty when `actual` agrees with `reference` under the acceptance rule (acceptance.hpp: conv2d
/// by acceptConv2D; conv1d within kBackendsRelTolerance of the largest reference value;
/// histogram and transpose identical); otherwise what differs, for a loud failure.
QString disagreement(const RunRequest& request, const BackendResult& actual, const BackendResult& reference,
                     const Comparison& comparison);

/// The bytes one run of the op moves by the documented count (README "Bytes per op"): input read
/// and output written (conv1d also the taps; histogram the input only).
double bytesMoved(const RunRequest& request, const BackendResult& result);
/// The floating-point operations one run of the op does by the documented count (README "Bytes
/// per op"), a multiply-add counting 2: conv2d 2 per tap per output element, conv1d 2 per tap per
/// output sample; 0 for histogram and transpose, which do none.
double flopsDone(const RunRequest& request, const BackendResult& result);
/// A CPU backend's median GB/s by bytesMoved, and that as a share of the host memory bandwidth
/// measured in the run (0 when there is none).
double cpuGBs(const RunRequest& request, const BackendResult& result);
/// A CPU backend's median GFLOP/s by flopsDone (0 for a failed run or the GPU).
double cpuGFlops(const RunRequest& request, const BackendResult& result);
double hostBandwidthPercent(const RunResult& run, const BackendResult& result);
/// measureHostCopyBandwidthGBs(threads), measured once per process and thread count.
double hostCopyBandwidthGBs(int threads);

/// Whether `backends` lists `b`.
bool contains(const std::vector<Backend>& backends, Backend b);

/// The variants of the request's op, and its user kernel's ("custom:<entry>") when it has one.
std::vector<gpu::VariantInfo> gpuVariantInfo(const RunRequest& request);

/// Why GPU variant `variant` cannot run `request` (its op, input and spec) on `device`; empty when
/// it can ("auto" always can). Throws kl::InvalidArgument for an unknown variant or an invalid input.
QString whyNotApplicable(const RunRequest& request, const QString& variant, const gpu::DeviceInfo& device);

/// The report schema shared by GUI and CLI (documented in docs/report-format.md).
QJsonObject toJson(const RunResult& result);
/// One row per backend: backend, variant, median/min/max ms, stages, GB/s, % of copy, errors.
QString toCsv(const RunResult& result);
/// toCsv's columns, as its header line names them, and its rows (fields quoted where needed).
const QStringList& csvColumns();
std::vector<QStringList> csvRows(const RunResult& result);
/// Building blocks of the report, also used by the CLI's info and bench output.
QJsonObject toJson(const TimingStats& stats);    ///< {median, min, max, repetitions}
QJsonObject toJson(const Comparison& comparison);
QJsonObject toJson(const gpu::DeviceInfo& device);
/// A GPU run's stages, bytes, rates and timeline; % of copy bandwidth when copyBandwidthGBs > 0.
QJsonObject toJson(const gpu::GpuReport& report, double copyBandwidthGBs);
/// Versions of Qt, OpenCV, CUDA runtime/driver, cuFFT, and the CPU model/thread count.
QJsonObject environmentJson();

/// The shared GPU engine of the chosen device (selectGpuDevice), created on first use; nullptr
/// when there is no usable GPU, with `reasonIfNone` set to "no CUDA device: <reason>". It is destroyed with the QCoreApplication
/// (or at exit when there is none), so it must not be used after that.
gpu::Engine* sharedEngine(QString* reasonIfNone = nullptr);
/// Makes GPU `index` (gpu::listDevices()) the one sharedEngine() runs on from now on (0 until
/// chosen). An engine already made for another device is kept, so that a run under way finishes
/// on it. False, with `reason` naming the devices there are (or why there is none), when `index`
/// is not one of them.
bool selectGpuDevice(int index, QString* reason);
/// The device selectGpuDevice chose last (0 by default).
int selectedGpuDevice();

} // namespace kl::app
