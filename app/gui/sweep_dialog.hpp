#pragma once
// Run → Size sweep…: one op over sizes 2^from .. 2^to elements on the CPU backends and the GPU
// (kernel alone, end to end from pageable and pinned memory), drawn log-log with where the GPU
// starts to win. The sweep is app/common's (sweep.hpp), kernellab-cli sweep's own, run off the
// GUI thread with progress and cancel.
#include "sweep.hpp"

#include <QDialog>
#include <QFutureWatcher>

#include <atomic>
#include <functional>
#include <vector>

class QChart;
class QChartView;
class QCheckBox;
class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QXYSeries;

namespace kl::gui {

class SweepDialog : public QDialog {
    Q_OBJECT
public:
    /// `engineBusy` says whether the window's own run still holds the engine (the two share it):
    /// a sweep waits for it to finish before it starts.
    SweepDialog(app::Op op, std::function<bool()> engineBusy, QWidget* parent = nullptr);
    /// Cancels a sweep in flight and waits for it.
    ~SweepDialog() override;

    void setOp(app::Op op);
    void setRange(int fromLog2, int toLog2);
    void setCpuBackends(const std::vector<app::Backend>& backends);
    void setGpu(bool on);
    /// The settings the fields give.
    [[nodiscard]] app::SweepSettings settings() const;

    /// Starts a sweep with settings() (nothing while one runs); an invalid choice is shown in the status line.
    void start();
    void cancel();
    /// From start() until sweepFinished.
    [[nodiscard]] bool isRunning() const { return running_; }

    /// The last sweep: its settings and the rows finished so far.
    [[nodiscard]] const app::SweepSettings& sweptSettings() const { return swept_; }
    [[nodiscard]] const std::vector<app::SweepRow>& rows() const { return rows_; }
    [[nodiscard]] QString statusText() const;
    [[nodiscard]] QString crossoverText() const;
    /// A plotted series by name: a CPU backend ("cpu-opencv") or a GPU measure ("GPU kernel alone"); null if absent.
    [[nodiscard]] QXYSeries* findSeries(const QString& name) const;
    [[nodiscard]] QProgressBar* progressBar() const { return progress_; }

    /// The rows as kernellab-cli sweep --csv writes them; false, with the reason in the status line, on failure.
    bool exportCsv(const QString& path);
    bool exportPng(const QString& path);

    /// Close (Esc): cancels a sweep in flight first.
    void reject() override;

signals:
    /// A sweep ended: every size done, cancelled or failed (statusText() says which).
    void sweepFinished();

private:
    struct SweepEnd {
        bool cancelled = false;
        QString error;    ///< what stopped it (not a size's failure: those are in the rows)
        QString noGpu;    ///< why the GPU columns are empty when the GPU was asked for
    };
    SweepEnd sweepInBackground(app::SweepSettings settings);
    void addRow(const app::SweepRow& row);
    void finish();
    void setRunning(bool running);
    void plot();

    std::function<bool()> engineBusy_;
    QComboBox* op_ = nullptr;
    QComboBox* depth_ = nullptr;
    QSpinBox* from_ = nullptr;
    QSpinBox* to_ = nullptr;
    QCheckBox* cpuRef_ = nullptr;
    QCheckBox* cpuOpenCV_ = nullptr;
    QCheckBox* gpu_ = nullptr;
    QSpinBox* cpuRepetitions_ = nullptr;
    QSpinBox* gpuRepetitions_ = nullptr;
    QWidget* fields_ = nullptr;
    QChart* chart_ = nullptr;
    QChartView* chartView_ = nullptr;
    QLabel* crossover_ = nullptr;
    QLabel* status_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QPushButton* run_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QPushButton* exportCsv_ = nullptr;
    QPushButton* exportPng_ = nullptr;

    app::SweepSettings swept_;
    std::vector<app::SweepRow> rows_;
    QFutureWatcher<SweepEnd> watcher_;
    std::atomic<bool> cancelFlag_{false};
    bool running_ = false;
};

} // namespace kl::gui
