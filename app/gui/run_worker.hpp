#pragma once
// Runs the engine off the GUI thread. One job at a time; a new job supersedes the one
// in flight (it is cancelled and the latest queued), as Qt's Mandelbrot RenderThread does.
#include "display_image.hpp"
#include "session.hpp"

#include <QMutex>
#include <QThread>
#include <QWaitCondition>

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

namespace kl::gui {

/// The input worked on: an image, or a signal shared by the views and the jobs (its
/// samples are copied into a request in the worker, not on the GUI thread).
struct InputData {
    cv::Mat image;
    std::shared_ptr<const Signal> signal;
    QString name;  ///< file path or "generated: ..."
    [[nodiscard]] bool empty() const { return image.empty() && !signal; }
};

/// What the user asked for: the main run and the extra runs the panels compare it with.
struct RunJob {
    app::RunRequest request;  ///< as configured; a signal input's samples are in `signal`
    std::shared_ptr<const Signal> signal;
    bool compareMemory = false;    ///< GPU also with the other host memory kinds
    bool compareVariants = false;  ///< GPU also with every other variant of the op
    bool threadScaling = false;    ///< cpu-opencv also on each of threadScalingCounts(hardwareThreads())
    bool histograms = true;        ///< input/output histograms for the Histogram panel (image inputs)
};

/// Histograms for the Histogram panel, and which backend computed them.
struct HistogramSet {
    QString backend;                            ///< "gpu" or "cpu-opencv" (panel runs), or the op's own backends
    std::optional<HistogramResult> input;       ///< of the input image
    std::optional<HistogramResult> cpuOutput;   ///< of the CPU output image (the Histogram op: the CPU result)
    std::optional<HistogramResult> gpuOutput;   ///< of the GPU output image (the Histogram op: the GPU result)
};

/// Everything one job produced, ready to show: engine results and display images prepared in the worker.
struct RunOutcome {
    quint64 id = 0;
    app::RunResult main;
    std::vector<app::RunResult> gpuComparisons;  ///< other memory kind and other variants (GPU only)
    std::optional<app::RunResult> singleStream;  ///< the 1-stream baseline when the job used more streams
    std::vector<app::RunResult> threadScaling;   ///< cpu-opencv alone on each of those counts, in order
    HistogramSet histograms;
    /// The GPU's fp32 FMA roof (Engine::fmaPeakGFlops: measured once per device in this session,
    /// on its first successful GPU run); 0 without one.
    double fmaPeakGFlops = 0;
    /// The views' images: CPU = first successful CPU backend, GPU, and |other - CPU|.
    DisplayImage cpuImage, gpuImage, differenceImage;
    /// The waveforms' signals (a transposed signal's interleaved samples as one channel at channels x the rate).
    std::shared_ptr<const Signal> cpuSignal, gpuSignal;
    cv::Mat difference;  ///< kl::absDifference values behind differenceImage
    /// The backend compared with the CPU one in the Difference view (the GPU, else the second CPU backend).
    std::optional<app::Backend> differenceBackend;
};

/// The CPU result the views show: the comparisons' reference (the first successful CPU backend).
const app::BackendResult* shownCpuResult(const app::RunResult& result);
/// The result compared with shownCpuResult: the GPU when it succeeded, else another successful CPU backend.
const app::BackendResult* comparedResult(const app::RunResult& result);

/// A short name for a backend's run: "cpu-ref", "gpu tiled", "gpu tiled pinned ×4"
/// (the defaults, pageable memory and one stream, are left out).
QString backendLabel(const app::BackendResult& result);
/// backendLabel, and for a GPU run that failed before reporting, the variant, memory and streams
/// `request` asked for (a comparison run's label).
QString backendLabel(const app::BackendResult& result, const app::RunRequest& request);

class RunWorker : public QThread {
    Q_OBJECT
public:
    explicit RunWorker(QObject* parent = nullptr);
    ~RunWorker() override;

    /// Queues `job`, cancelling the one in flight; returns its id.
    quint64 submit(RunJob job);
    /// Cancels the job in flight and drops the queued one.
    void cancel();
    [[nodiscard]] bool busy() const;
    /// The last job the worker took up (what the engine was asked to run).
    [[nodiscard]] RunJob lastJob() const;

signals:
    void progressed(quint64 id, double fraction, const QString& what);
    void finished(std::shared_ptr<const kl::gui::RunOutcome> outcome);
    void failed(quint64 id, const QString& message);
    void cancelled(quint64 id);

protected:
    void run() override;

private:
    std::shared_ptr<RunOutcome> process(quint64 id, const RunJob& job);

    mutable QMutex mutex_;
    QWaitCondition wake_;
    std::optional<std::pair<quint64, RunJob>> pending_;
    RunJob last_;
    quint64 nextId_ = 1;
    bool inFlight_ = false;
    bool quit_ = false;
    std::atomic<bool> cancel_{false};
};

} // namespace kl::gui

Q_DECLARE_METATYPE(std::shared_ptr<const kl::gui::RunOutcome>)
