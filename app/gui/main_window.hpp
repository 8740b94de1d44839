#pragma once
// The KernelLab window: open an input, choose an operation, see CPU and GPU results side
// by side and where the time went. Every number shown comes from a kl::app::RunResult.
#include "generators.hpp"
#include "image_grid.hpp"
#include "op_config.hpp"
#include "run_worker.hpp"

#include <QFutureWatcher>
#include <QMainWindow>
#include <QPointer>
#include <QTimer>

#include <memory>

class QLabel;
class QMenu;
class QPlainTextEdit;
class QProgressBar;
class QStackedWidget;
class QToolButton;

namespace kl::gui {

class ExecutionPanel;
class HistogramPanel;
class HistogramView;
class KernelSourcePanel;
class OperationPanel;
class RooflinePanel;
class SignalView;
class StreamsPanel;
class SweepDialog;
class TimingsPanel;

/// An input as loaded (or generated) in the background, with its display image.
struct LoadedInput {
    InputData input;
    DisplayImage display;   ///< image inputs
    QString error;
    bool needsRate = false; ///< a signal file that does not store its sample rate
};

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    /// `interactive`: restores and saves QSettings and may ask questions (a signal file's sample
    /// rate); off for --screenshot runs and tests, which must neither block nor touch settings.
    explicit MainWindow(bool interactive = true, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Loads an image or signal in the background and runs on it; a file that fails to load
    /// leaves the current input as it was.
    void openFile(const QString& path);
    /// Generates a synthetic input (generators.hpp) in the background and runs on it.
    void generateInput(const app::GenerateSpec& spec);
    /// Runs now with the current parameters (F5); a run in flight is superseded.
    void runNow();
    /// Cancels the run in flight (Esc).
    void cancelRun();
    /// Compiles the Kernel source dock's text for the current op, input depth and GPU (sm_90
    /// without one) and lists the messages there (Ctrl+B); true when it compiles.
    bool compileKernel();
    /// Opens `path` in the Kernel source dock and makes it the GPU variant of the next runs;
    /// false with `error` set when the file cannot be read or defines no kernel.
    bool useKernelSource(const QString& path, QString* error);
    /// Writes the shown CPU or GPU output as the CLI's --output does (output_files.hpp: an image,
    /// a signal or a histogram CSV, by the op and the path's extension); false, with the error in
    /// the status bar and log, when there is none or it cannot be written.
    bool saveOutput(app::Backend backend, const QString& path);
    /// The last run's report as the CLI's --report (JSON) or --csv writes it, by the path's extension.
    bool saveReport(const QString& path);
    bool saveWidgetPng(QWidget* widget, const QString& path);

    /// Run → Size sweep…: cancels the window's run (the sweep uses the same engine) and opens the
    /// sweep dialog, window-modal, on the current op; runs wait until it closes. Returns the dialog.
    SweepDialog* openSweep();

    /// Brings a panel to the front: "operation", "execution", "timings", "streams", "histogram",
    /// "roofline", "log" or "kernel".
    bool showPanel(const QString& name);
    /// Loading, running, or a re-run pending.
    [[nodiscard]] bool isBusy() const;

    [[nodiscard]] OperationPanel* operationPanel() const { return operation_; }
    [[nodiscard]] ExecutionPanel* executionPanel() const { return execution_; }
    [[nodiscard]] ImageGrid* imageGrid() const { return images_; }
    [[nodiscard]] SignalView* signalView() const { return signals_; }
    [[nodiscard]] TimingsPanel* timingsPanel() const { return timings_; }
    [[nodiscard]] StreamsPanel* streamsPanel() const { return streams_; }
    [[nodiscard]] HistogramPanel* histogramPanel() const { return histogram_; }
    /// The Histogram op's main area (its histograms beside the input image).
    [[nodiscard]] HistogramView* histogramView() const { return histogramView_; }
    [[nodiscard]] RooflinePanel* rooflinePanel() const { return roofline_; }
    /// What the main area shows: the image grid, the signal view or the histogram view.
    [[nodiscard]] QWidget* mainView() const;
    [[nodiscard]] KernelSourcePanel* kernelSourcePanel() const { return kernelSource_; }
    [[nodiscard]] RunWorker* worker() const { return worker_; }
    /// The last outcome shown (null before the first run finishes).
    [[nodiscard]] std::shared_ptr<const RunOutcome> lastOutcome() const { return outcome_; }
    [[nodiscard]] const InputData& input() const { return input_; }
    [[nodiscard]] QString logText() const;
    [[nodiscard]] QString statusText() const;

signals:
    void inputLoaded(const QString& name);
    void inputFailed(const QString& message);
    /// A run's outcome is on screen.
    void runFinished();
    void runFailed(const QString& message);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildActions();
    /// The request `parameters` (the Operation and Execution docks') give for the current input
    /// (a signal's shape only, not its samples), with the conv2d kernel editor's taps; throws
    /// kl::InvalidArgument or kl::IoError as configureRequest does.
    app::RunRequest configuredRequest(const app::ParameterMap& parameters) const;
    void buildDocks();
    void startLoad(const app::ParameterMap& parameters);
    void inputReady();
    void scheduleRun();
    void showOutcome(const std::shared_ptr<const RunOutcome>& outcome);
    void showImageOutcome(const RunOutcome& outcome);
    void showSignalOutcome(const RunOutcome& outcome);
    /// The main area for an input kind and op: signals, the Histogram op's view, or the image grid.
    void showMainViewFor(bool signal, app::Op op);
    void clearOutputs(const QString& why);
    void logLine(const QString& line);
    void reportError(const QString& message);
    void setProgress(bool visible, double fraction = 0, const QString& what = {});
    void addRecentFile(const QString& path);
    void rebuildRecentMenu();
    void rebuildSamplesMenu();
    /// The shown CPU or GPU result when it succeeded (then it has an output), or null.
    [[nodiscard]] const app::BackendResult* savableOutput(app::Backend backend) const;
    void saveOutputAs(app::Backend backend);
    void saveReportAs(bool json);
    void saveWidgetPngAs(QWidget* widget, const QString& suggestedName);
    [[nodiscard]] QString askSavePath(const QString& title, const QString& suggestedName, const QString& filter);

    OperationPanel* operation_ = nullptr;
    ExecutionPanel* execution_ = nullptr;
    ImageGrid* images_ = nullptr;
    SignalView* signals_ = nullptr;
    TimingsPanel* timings_ = nullptr;
    StreamsPanel* streams_ = nullptr;
    HistogramPanel* histogram_ = nullptr;
    HistogramView* histogramView_ = nullptr;
    RooflinePanel* roofline_ = nullptr;
    KernelSourcePanel* kernelSource_ = nullptr;
    QPlainTextEdit* log_ = nullptr;
    QStackedWidget* views_ = nullptr;  ///< the image grid, the signal view or the histogram view
    QProgressBar* progress_ = nullptr;
    QToolButton* cancelButton_ = nullptr;
    QLabel* zoom_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    QMenu* samplesMenu_ = nullptr;

    RunWorker* worker_ = nullptr;
    QPointer<SweepDialog> sweep_;  ///< open: runs wait for it to close
    bool runAfterSweep_ = false;   ///< a run was cancelled or asked for while it was open
    QTimer rerun_;
    QFutureWatcher<LoadedInput> loader_;
    app::ParameterMap loading_;   ///< what the loader is loading (to retry with a sample rate)
    InputData input_;
    quint64 currentRun_ = 0;      ///< the id of the run whose outcome is wanted
    std::shared_ptr<const RunOutcome> outcome_;
    QString lastFolder_;
    QStringList recentFiles_;
    bool interactive_ = true;
};

} // namespace kl::gui
