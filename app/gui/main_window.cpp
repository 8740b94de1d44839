#include "main_window.hpp"

#include "app_paths.hpp"
#include "custom_kernel.hpp"
#include "execution_panel.hpp"
#include "histogram_panel.hpp"
#include "histogram_view.hpp"
#include "kernel_source_panel.hpp"
#include "operation_panel.hpp"
#include "roofline_panel.hpp"
#include "signal_view.hpp"
#include "streams_panel.hpp"
#include "sweep_dialog.hpp"
#include "timings_panel.hpp"

#include "kernellab/image.hpp"
#include "kernellab/signal.hpp"

#include <QCheckBox>
#include <QCloseEvent>
#include <QDateTime>
#include <QDockWidget>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QRegularExpression>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QToolButton>
#include <QtConcurrent/QtConcurrentRun>

#include <utility>

// The resources live in this static library, whose registration object the linker would
// otherwise leave out; Q_INIT_RESOURCE must be called outside any namespace.
static void initResources()
{
    Q_INIT_RESOURCE(kernellab);
}

namespace kl::gui {
namespace {

constexpr int kRerunDelayMs = 300;
constexpr int kProgressSteps = 1000;

QString ms(double v)
{
    return QStringLiteral("%1 ms").arg(v, 0, 'f', v < 1 ? 4 : 3);
}

QString fileLabel(const QString& inputName)
{
    return QFileInfo(inputName).exists() ? QFileInfo(inputName).fileName() : inputName;
}

/// "cpu-ref · 3.214 ms" or "gpu tiled pinned ×4 · kernel 0.05 ms · end-to-end 0.51 ms" (medians).
QString backendCaption(const app::BackendResult& r)
{
    if (!r.gpu) return QStringLiteral("%1 · %2").arg(backendLabel(r), ms(r.time.medianMs));
    QString caption = backendLabel(r) + QObject::tr(" · kernel %1").arg(ms(r.gpu->kernel.medianMs));
    if (r.gpu->total.medianMs > 0) caption += QObject::tr(" · end-to-end %1").arg(ms(r.gpu->total.medianMs));
    return caption;
}

QString windowNote(const DisplayImage& display)
{
    return display.autoWindow ? QObject::tr(" · window [%1, %2]")
                                    .arg(display.windowLo, 0, 'g', 6)
                                    .arg(display.windowHi, 0, 'g', 6)
                              : QString();
}

/// Why a view has no output for a backend (the engine's error, or that it was not run).
QString missingOutput(const app::BackendResult* r, const QString& what)
{
    if (!r) return QObject::tr("%1 was not selected to run (Execution panel)").arg(what);
    return r->error;
}

/// The first CPU backend that ran, failed or not (what the CPU view explains when none succeeded).
const app::BackendResult* firstCpuResult(const app::RunResult& result)
{
    for (const app::BackendResult& r : result.results)
        if (r.backend != app::Backend::Gpu) return &r;
    return nullptr;
}

QString joinParameters(const app::ParameterMap& parameters)
{
    QStringList parts;
    for (auto it = parameters.begin(); it != parameters.end(); ++it) parts << it.key() + QLatin1Char('=') + it.value();
    return parts.join(QLatin1Char(' '));
}

/// The sample rate a file name suggests ("ecg_360hz.npy" -> 360), or 48000.
double guessSampleRate(const QString& path)
{
    static const QRegularExpression hz(QStringLiteral("(\\d+)\\s*hz"), QRegularExpression::CaseInsensitiveOption);
    const QRegularExpressionMatch m = hz.match(QFileInfo(path).fileName());
    return m.hasMatch() ? m.captured(1).toDouble() : 48000.0;
}

LoadedInput loadInBackground(const app::ParameterMap& parameters)
{
    LoadedInput loaded;
    try {
        app::RunRequest request;
        app::loadInput(request, parameters);
        loaded.input.name = request.inputName;
        loaded.input.image = request.image;
        if (request.image.empty()) loaded.input.signal = std::make_shared<const Signal>(std::move(request.signal));
        else loaded.display = toDisplayImage(request.image);
    } catch (const std::bad_alloc&) {
        loaded.error = QObject::tr("out of memory");
    } catch (const std::exception& e) {
        loaded.error = QString::fromUtf8(e.what());
        // The signal reader's own words for a file that does not store its rate.
        loaded.needsRate = loaded.error.contains(QLatin1String("sample rate unknown"));
    }
    return loaded;
}

} // namespace

MainWindow::MainWindow(bool interactive, QWidget* parent)
    : QMainWindow(parent)
    , interactive_(interactive)
{
    initResources();
    setWindowTitle(tr("KernelLab"));
    // PNG renderings of kernellab.svg: Qt's SVG plugin is not a dependency.
    QIcon icon;
    icon.addFile(QStringLiteral(":/icons/kernellab-64.png"));
    icon.addFile(QStringLiteral(":/icons/kernellab-128.png"));
    setWindowIcon(icon);
    setAcceptDrops(true);
    setDockOptions(AnimatedDocks | AllowTabbedDocks | AllowNestedDocks);
    // The parameter docks run the full height; the result panels sit under the views only.
    setCorner(Qt::TopRightCorner, Qt::RightDockWidgetArea);
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);

    views_ = new QStackedWidget;
    images_ = new ImageGrid;
    signals_ = new SignalView;
    histogramView_ = new HistogramView;
    views_->addWidget(images_);
    views_->addWidget(signals_);
    views_->addWidget(histogramView_);
    setCentralWidget(views_);

    worker_ = new RunWorker(this);
    buildDocks();
    buildActions();

    progress_ = new QProgressBar;
    progress_->setRange(0, kProgressSteps);
    progress_->setMaximumWidth(260);
    progress_->setTextVisible(true);
    cancelButton_ = new QToolButton;
    cancelButton_->setText(tr("Cancel"));
    cancelButton_->setToolTip(tr("Cancel the run (Esc)"));
    zoom_ = new QLabel;
    zoom_->setToolTip(tr("Zoom of the image views (wheel; Ctrl+0 fits, Ctrl+1 is 100 %)"));
    connect(images_->sync(), &ViewSync::scaleChanged, this,
            [this](double scale) { zoom_->setText(tr("Zoom %1 %").arg(scale * 100, 0, 'f', scale < 0.1 ? 1 : 0)); });
    statusBar()->addPermanentWidget(zoom_);
    statusBar()->addPermanentWidget(progress_);
    statusBar()->addPermanentWidget(cancelButton_);
    setProgress(false);
    connect(cancelButton_, &QToolButton::clicked, this, &MainWindow::cancelRun);

    rerun_.setSingleShot(true);
    rerun_.setInterval(kRerunDelayMs);
    connect(&rerun_, &QTimer::timeout, this, &MainWindow::runNow);
    connect(operation_, &OperationPanel::changed, this, &MainWindow::scheduleRun);
    connect(operation_, &OperationPanel::changed, this, [this] { kernelSource_->setOp(operation_->op()); });
    connect(kernelSource_, &KernelSourcePanel::compileRequested, this, &MainWindow::compileKernel);
    connect(kernelSource_, &KernelSourcePanel::kernelChanged, this, [this] {
        QString variant;
        try {
            if (const std::optional<app::CustomKernel> k = kernelSource_->customKernel();
                k && kernelSource_->op() == operation_->op())
                variant = k->variant();
        } catch (const std::exception&) {
            // no kernel in the text yet: no variant to offer
        }
        operation_->setCustomVariant(variant);
    });
    connect(execution_, &ExecutionPanel::changed, this, &MainWindow::scheduleRun);

    connect(worker_, &RunWorker::progressed, this, [this](quint64 id, double fraction, const QString& what) {
        if (id == currentRun_) setProgress(true, fraction, what);
    });
    connect(worker_, &RunWorker::finished, this, &MainWindow::showOutcome);
    connect(worker_, &RunWorker::failed, this, [this](quint64 id, const QString& message) {
        if (id != currentRun_) return;
        setProgress(false);
        reportError(tr("Run failed: %1").arg(message));
        emit runFailed(message);
    });
    connect(worker_, &RunWorker::cancelled, this, [this](quint64 id) {
        if (id != currentRun_) return;
        setProgress(false);
        logLine(tr("Run #%1 cancelled").arg(id));
        statusBar()->showMessage(tr("Cancelled"));
    });
    connect(&loader_, &QFutureWatcher<LoadedInput>::finished, this, &MainWindow::inputReady);

    // Asking the CUDA runtime can take a while on a machine with a GPU, so not on the GUI thread.
    auto* status = new QFutureWatcher<gpu::GpuStatus>(this);
    connect(status, &QFutureWatcher<gpu::GpuStatus>::finished, this, [this, status] {
        const gpu::GpuStatus s = status->result();
        const QString text =
            s.available ? tr("GPU available") : tr("GPU unavailable: %1").arg(QString::fromStdString(s.reason));
        execution_->setGpuStatus(text);
        logLine(text);
        status->deleteLater();
    });
    status->setFuture(QtConcurrent::run([] { return gpu::gpuStatus(); }));

    clearOutputs(tr("Open an image or a signal (File menu, Samples, or drop a file here)"));
    resize(1400, 900);
    if (interactive_) {
        QSettings settings;
        restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
        restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
        lastFolder_ = settings.value(QStringLiteral("lastFolder"), app::sampleDataDir()).toString();
        recentFiles_ = settings.value(QStringLiteral("recentFiles")).toStringList();
        execution_->restoreSettings(settings);
    } else {
        lastFolder_ = app::sampleDataDir();
    }
    rebuildRecentMenu();
}

MainWindow::~MainWindow()
{
    delete sweep_;  // before the worker it asks whether the engine is free
    loader_.waitForFinished();
}

SweepDialog* MainWindow::openSweep()
{
    if (sweep_) return sweep_;
    runAfterSweep_ = isBusy();
    cancelRun();
    sweep_ = new SweepDialog(operation_->op(), [worker = worker_] { return worker->busy(); }, this);
    sweep_->setAttribute(Qt::WA_DeleteOnClose);
    connect(sweep_, &QDialog::finished, this, [this] {
        sweep_ = nullptr;
        if (std::exchange(runAfterSweep_, false)) runNow();
    });
    sweep_->open();
    return sweep_;
}

QWidget* MainWindow::mainView() const
{
    return views_->currentWidget();
}

void MainWindow::showMainViewFor(bool signal, app::Op op)
{
    if (signal) views_->setCurrentWidget(signals_);
    else if (op == app::Op::Histogram) views_->setCurrentWidget(histogramView_);
    else views_->setCurrentWidget(images_);
}

bool MainWindow::showPanel(const QString& name)
{
    auto* dock = findChild<QDockWidget*>(name + QStringLiteral("Dock"));
    if (!dock) return false;
    dock->show();
    dock->raise();
    return true;
}

void MainWindow::openFile(const QString& path)
{
    lastFolder_ = QFileInfo(path).absolutePath();
    startLoad({{QStringLiteral("input"), path}});
}

void MainWindow::generateInput(const app::GenerateSpec& spec)
{
    startLoad({{QStringLiteral("generate"), app::toString(spec)}});
}

void MainWindow::startLoad(const app::ParameterMap& parameters)
{
    // A newer request wins; the older load finishes unobserved (loads cannot be interrupted).
    loader_.disconnect(this);
    loader_.waitForFinished();
    connect(&loader_, &QFutureWatcher<LoadedInput>::finished, this, &MainWindow::inputReady);
    loading_ = parameters;
    const QString what = parameters.value(QStringLiteral("input"), parameters.value(QStringLiteral("generate")));
    statusBar()->showMessage(tr("Loading %1…").arg(what));
    setProgress(true, 0, tr("loading"));
    loader_.setFuture(QtConcurrent::run(loadInBackground, parameters));
}

void MainWindow::inputReady()
{
    LoadedInput loaded = loader_.result();
    setProgress(false);
    const QString what = loading_.value(QStringLiteral("input"), loading_.value(QStringLiteral("generate")));
    if (!loaded.error.isEmpty()) {
        if (loaded.needsRate && !loading_.contains(QStringLiteral("rate")) && interactive_) {
            bool ok = false;
            const double rate = QInputDialog::getDouble(this, tr("Sample rate"),
                                                        tr("%1 does not store its sample rate. Sample rate (Hz):")
                                                            .arg(QFileInfo(what).fileName()),
                                                        guessSampleRate(what), 1e-3, 1e9, 3, &ok);
            if (ok) {
                app::ParameterMap retry = loading_;
                retry[QStringLiteral("rate")] = QString::number(rate, 'g', 12);
                const QString suffix = QFileInfo(what).suffix().toLower();
                if (suffix == QLatin1String("raw") || suffix == QLatin1String("f32"))
                    retry[QStringLiteral("channels")] = QString::number(QInputDialog::getInt(
                        this, tr("Channels"), tr("Interleaved channels in the raw file:"), 1, 1, 64));
                startLoad(retry);
                return;
            }
        }
        reportError(tr("Cannot open %1: %2").arg(what, loaded.error));
        emit inputFailed(loaded.error);
        return;
    }
    input_ = std::move(loaded.input);
    const bool isSignal = input_.signal != nullptr;
    const QString description =
        QString::fromStdString(isSignal ? describeSignal(*input_.signal) : describeImage(input_.image));
    showMainViewFor(isSignal, operation_->op());
    operation_->setInput(isSignal, isSignal ? input_.signal->sampleRate : 0.0);
    if (isSignal) {
        signals_->setTrace(SignalView::Trace::Input, input_.signal,
                           tr("Input · %1 · %2").arg(fileLabel(input_.name), description));
    } else {
        const QString caption = tr("Input · %1 · %2%3").arg(fileLabel(input_.name), description, windowNote(loaded.display));
        images_->view(ImageGrid::Pane::Input)->setImage(input_.image, loaded.display);
        images_->setCaption(ImageGrid::Pane::Input, caption);
        images_->sync()->fit();
        histogramView_->setInput(input_.image, loaded.display, caption);
    }
    clearOutputs(tr("Running…"));
    if (loading_.contains(QStringLiteral("input"))) addRecentFile(loading_.value(QStringLiteral("input")));
    setWindowTitle(tr("%1 — KernelLab").arg(fileLabel(input_.name)));
    logLine(tr("Opened %1: %2").arg(input_.name, description));
    emit inputLoaded(input_.name);
    runNow();
}

void MainWindow::scheduleRun()
{
    rerun_.start();
}

bool MainWindow::isBusy() const
{
    return loader_.isRunning() || rerun_.isActive() || worker_->busy();
}

app::RunRequest MainWindow::configuredRequest(const app::ParameterMap& parameters) const
{
    app::RunRequest request;
    request.image = input_.image;
    // Configuring needs only the signal's shape and rate; the worker copies the samples in.
    if (input_.signal) request.signal = Signal(input_.signal->channels, 0, input_.signal->sampleRate);
    request.inputName = input_.name;
    app::configureRequest(request, parameters);
    operation_->applyCustomKernel(request);
    return request;
}

void MainWindow::runNow()
{
    rerun_.stop();
    if (sweep_) {
        runAfterSweep_ = true;
        statusBar()->showMessage(tr("Runs wait for the size sweep to close"));
        return;
    }
    if (input_.empty()) {
        statusBar()->showMessage(tr("Open an image or a signal first"));
        return;
    }
    app::ParameterMap parameters = operation_->parameters();
    parameters.insert(execution_->parameters());
    app::RunRequest request;
    try {
        request = configuredRequest(parameters);
        if (kernelSource_->op() == request.op) request.customKernel = kernelSource_->customKernel();
        // (The request holds a signal's shape only, not its samples, so signals are checked by the run.)
        const gpu::Engine* engine = request.image.empty() ? nullptr : app::sharedEngine();
        if (engine) operation_->showVariantApplicability(request, engine->device());
    } catch (const std::exception& e) {
        reportError(tr("Not run: %1").arg(QString::fromUtf8(e.what())));
        return;
    }
    RunJob job;
    job.request = std::move(request);
    job.signal = input_.signal;
    job.compareMemory = execution_->compareMemory();
    job.compareVariants = operation_->compareVariants();
    job.threadScaling = execution_->threadScaling();
    currentRun_ = worker_->submit(std::move(job));
    logLine(tr("Run #%1: %2 on %3: %4")
                .arg(currentRun_)
                .arg(app::toString(operation_->op()), fileLabel(input_.name), joinParameters(parameters)));
    setProgress(true, 0, tr("starting"));
    statusBar()->showMessage(tr("Running %1…").arg(app::toString(operation_->op())));
}

bool MainWindow::compileKernel()
{
    showPanel(QStringLiteral("kernel"));
    kernelSource_->setOp(operation_->op());
    try {
        // The kernel's kl::In and kl::Out are the current input's and op's; f32 before any input.
        app::RunRequest request;
        if (input_.empty()) {
            request.op = operation_->op();
            request.image = cv::Mat(1, 1, CV_32F);
        } else {
            app::ParameterMap parameters = operation_->parameters();
            parameters.insert(execution_->parameters());
            request = configuredRequest(parameters);
        }
        request.customKernel = kernelSource_->kernel();
        const gpu::Engine* engine = app::sharedEngine();
        const std::string arch = engine ? gpu::archOf(engine->device()) : std::string("sm_90");
        const gpu::UserKernelSource source = app::userKernelSource(request);
        const gpu::UserKernelBinary binary = gpu::compileUserKernel(source, arch);
        kernelSource_->showBuild(binary, QStringLiteral("%1, kl::In = %2").arg(QString::fromStdString(arch),
                                                                                QString::fromStdString(depthName(source.inputDepth))));
        logLine(binary.ok ? tr("Kernel %1 compiles for %2").arg(QString::fromStdString(source.entry), QString::fromStdString(arch))
                          : tr("Kernel %1 does not compile:\n%2").arg(QString::fromStdString(source.entry),
                                                                      QString::fromStdString(binary.diagnosticsText()).trimmed()));
        return binary.ok;
    } catch (const std::exception& e) {
        kernelSource_->showError(tr("Not compiled: %1").arg(QString::fromUtf8(e.what())));
        return false;
    }
}

bool MainWindow::useKernelSource(const QString& path, QString* error)
{
    kernelSource_->setOp(operation_->op());
    if (!kernelSource_->openFile(path, error)) return false;
    kernelSource_->useInRuns()->setChecked(true);
    try {
        operation_->setVariant(kernelSource_->kernel().variant());
    } catch (const std::exception& e) {
        *error = path + QStringLiteral(": ") + QString::fromUtf8(e.what());
        return false;
    }
    return true;
}

void MainWindow::cancelRun()
{
    rerun_.stop();
    worker_->cancel();
}

void MainWindow::showOutcome(const std::shared_ptr<const RunOutcome>& outcome)
{
    if (outcome->id != currentRun_) return;  // superseded while it finished
    outcome_ = outcome;
    setProgress(false);
    const app::RunResult& main = outcome->main;
    showMainViewFor(main.request.image.empty(), main.request.op);
    if (main.request.image.empty()) showSignalOutcome(*outcome);
    else showImageOutcome(*outcome);
    timings_->showOutcome(*outcome);
    streams_->showOutcome(*outcome);
    roofline_->showOutcome(*outcome);

    QStringList summary;
    for (const app::BackendResult& r : main.results) {
        if (r.ok()) {
            logLine(QStringLiteral("  %1: median %2 (min %3, max %4, %5 runs)")
                        .arg(backendLabel(r), ms(r.time.medianMs),
                             ms(r.time.minMs), ms(r.time.maxMs))
                        .arg(r.time.repetitions));
            summary << QStringLiteral("%1 %2").arg(app::toString(r.backend), ms(r.time.medianMs));
        } else {
            logLine(QStringLiteral("  %1: ERROR: %2").arg(app::toString(r.backend), r.error));
            summary << QStringLiteral("%1: %2").arg(app::toString(r.backend), r.error);
        }
    }
    for (const app::BackendComparison& c : main.comparisons)
        logLine(QStringLiteral("  %1 vs %2: max |diff| %3, %4 of %5 differ%6")
                    .arg(app::toString(c.backend), app::toString(*main.comparisonReference))
                    .arg(c.comparison.maxAbsError, 0, 'g', 6)
                    .arg(c.comparison.differing)
                    .arg(c.comparison.elements)
                    .arg(c.disagreement.isEmpty() ? QString() : QStringLiteral(": DISAGREES: ") + c.disagreement));
    for (const app::RunResult& run : outcome->gpuComparisons)
        for (const app::BackendResult& r : run.results)
            logLine(QStringLiteral("  comparison %1").arg(r.ok() ? backendCaption(r) : QStringLiteral("gpu: ERROR: ") + r.error));
    for (const app::RunResult& run : outcome->threadScaling)
        for (const app::BackendResult& r : run.results)
            logLine(QStringLiteral("  thread scaling: %1 threads: %2")
                        .arg(run.cpuThreads)
                        .arg(r.ok() ? backendCaption(r) : QStringLiteral("ERROR: ") + r.error));
    statusBar()->showMessage(tr("%1 done: %2").arg(app::toString(main.request.op), summary.join(QStringLiteral("; "))));
    emit runFinished();
}

void MainWindow::showImageOutcome(const RunOutcome& outcome)
{
    const app::RunResult& main = outcome.main;
    if (main.request.op == app::Op::Histogram) {
        QStringList failures;
        for (const app::BackendResult& r : main.results)
            if (!r.ok()) failures << QStringLiteral("%1: %2").arg(app::toString(r.backend), r.error);
        histogramView_->showResults(outcome.histograms, failures);
        histogram_->showMessage(tr("The Histogram op's results are in the main area"));
        return;
    }
    const app::BackendResult* cpu = shownCpuResult(main);
    const app::BackendResult* gpuResult = main.find(app::Backend::Gpu);
    ImageView* cpuView = images_->view(ImageGrid::Pane::Cpu);
    ImageView* gpuView = images_->view(ImageGrid::Pane::Gpu);
    ImageView* diffView = images_->view(ImageGrid::Pane::Difference);

    if (cpu && !cpu->image.empty()) {
        cpuView->setImage(cpu->image, outcome.cpuImage);
        images_->setCaption(ImageGrid::Pane::Cpu, backendCaption(*cpu) + windowNote(outcome.cpuImage));
    } else {
        cpuView->showMessage(missingOutput(cpu ? cpu : firstCpuResult(main), tr("No CPU backend")));
        images_->setCaption(ImageGrid::Pane::Cpu, tr("CPU"));
    }
    if (gpuResult && gpuResult->ok() && !gpuResult->image.empty()) {
        gpuView->setImage(gpuResult->image, outcome.gpuImage);
        images_->setCaption(ImageGrid::Pane::Gpu, backendCaption(*gpuResult) + windowNote(outcome.gpuImage));
    } else {
        gpuView->showMessage(missingOutput(gpuResult, tr("The GPU")));
        images_->setCaption(ImageGrid::Pane::Gpu, gpuResult && !gpuResult->ok() ? tr("GPU · unavailable") : tr("GPU"));
    }
    if (outcome.differenceBackend && cpu) {
        diffView->setImage(outcome.difference, outcome.differenceImage);
        QString stats;
        for (const app::BackendComparison& compared : main.comparisons)
            if (compared.backend == *outcome.differenceBackend)
                stats = tr(" · max %1 · mean %2 · %3 of %4 differ")
                            .arg(compared.comparison.maxAbsError, 0, 'g', 4)
                            .arg(compared.comparison.meanAbsError, 0, 'g', 4)
                            .arg(compared.comparison.differing)
                            .arg(compared.comparison.elements);
        images_->setCaption(ImageGrid::Pane::Difference,
                            tr("Difference |%1 − %2|%3")
                                .arg(app::toString(*outcome.differenceBackend), app::toString(cpu->backend), stats));
    } else {
        diffView->showMessage(tr("The difference needs a CPU output and a second output (GPU or the other CPU "
                                 "backend).\n%1")
                                  .arg(gpuResult && !gpuResult->ok() ? gpuResult->error : QString()));
        images_->setCaption(ImageGrid::Pane::Difference, tr("Difference"));
    }
    histogram_->showHistograms(outcome.histograms, false);
}

void MainWindow::showSignalOutcome(const RunOutcome& outcome)
{
    const app::RunResult& main = outcome.main;
    const app::BackendResult* cpu = shownCpuResult(main);
    const app::BackendResult* gpuResult = main.find(app::Backend::Gpu);
    // A transposed signal is shown as its interleaved samples, one channel at channels x the rate.
    const QString layout = main.request.op == app::Op::Transpose
                               ? tr(" · interleaved: %1 channels at %2 Hz")
                                     .arg(main.request.signal.channels)
                                     .arg(main.request.signal.sampleRate * main.request.signal.channels)
                               : QString();
    if (outcome.cpuSignal)
        signals_->setTrace(SignalView::Trace::Cpu, outcome.cpuSignal, backendCaption(*cpu) + layout);
    else
        signals_->setTrace(SignalView::Trace::Cpu, nullptr,
                           tr("CPU: %1").arg(missingOutput(firstCpuResult(main), tr("No CPU backend"))));
    if (outcome.gpuSignal)
        signals_->setTrace(SignalView::Trace::Gpu, outcome.gpuSignal, backendCaption(*gpuResult) + layout);
    else
        signals_->setTrace(SignalView::Trace::Gpu, nullptr, tr("GPU: %1").arg(missingOutput(gpuResult, tr("The GPU"))));
    histogram_->showMessage(tr("Histograms are computed for image inputs."));
}

void MainWindow::clearOutputs(const QString& why)
{
    for (ImageGrid::Pane pane : {ImageGrid::Pane::Cpu, ImageGrid::Pane::Gpu, ImageGrid::Pane::Difference})
        images_->view(pane)->showMessage(why);
    images_->setCaption(ImageGrid::Pane::Cpu, tr("CPU"));
    images_->setCaption(ImageGrid::Pane::Gpu, tr("GPU"));
    images_->setCaption(ImageGrid::Pane::Difference, tr("Difference"));
    signals_->setTrace(SignalView::Trace::Cpu, nullptr, tr("CPU: %1").arg(why));
    signals_->setTrace(SignalView::Trace::Gpu, nullptr, tr("GPU: %1").arg(why));
    timings_->showMessage(why);
    streams_->showMessage(why);
    histogram_->showMessage(why);
    histogramView_->showMessage(why);
    roofline_->showMessage(why);
    outcome_.reset();
}

QString MainWindow::logText() const
{
    return log_->toPlainText();
}

QString MainWindow::statusText() const
{
    return statusBar()->currentMessage();
}

void MainWindow::logLine(const QString& line)
{
    log_->appendPlainText(QTime::currentTime().toString(QStringLiteral("HH:mm:ss  ")) + line);
}

void MainWindow::reportError(const QString& message)
{
    logLine(QStringLiteral("ERROR: ") + message);
    statusBar()->showMessage(message);
}

void MainWindow::setProgress(bool visible, double fraction, const QString& what)
{
    progress_->setVisible(visible);
    cancelButton_->setVisible(visible);
    progress_->setValue(int(fraction * kProgressSteps));
    progress_->setFormat(what.isEmpty() ? QStringLiteral("%p%") : what + QStringLiteral(" %p%"));
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    cancelRun();
    if (interactive_) {
        QSettings settings;
        settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
        settings.setValue(QStringLiteral("window/state"), saveState());
        settings.setValue(QStringLiteral("lastFolder"), lastFolder_);
        settings.setValue(QStringLiteral("recentFiles"), recentFiles_);
        execution_->saveSettings(settings);
    }
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.first().isLocalFile()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.isEmpty() || !urls.first().isLocalFile()) return;
    openFile(urls.first().toLocalFile());
    event->acceptProposedAction();
}

} // namespace kl::gui
