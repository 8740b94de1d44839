#pragma once
// Where the time went: stacked bars per backend (H2D, kernel, D2H for the GPU; the total
// for each CPU backend), a table of medians, rates and speed-ups, and the CPU thread scaling.
#include "run_worker.hpp"

#include <QWidget>

#include <array>
#include <vector>

class QChart;
class QChartView;
class QCheckBox;
class QLabel;
class QTableWidget;

namespace kl::gui {

class TimingsPanel : public QWidget {
    Q_OBJECT
public:
    /// The table's columns. The roof: the device copy for GPU rows, the host memory copy for CPU rows.
    enum Column {
        BackendColumn, MedianColumn, MinColumn, MaxColumn, H2DColumn, KernelColumn, D2HColumn, KernelGBsColumn,
        RoofPercentColumn, EndToEndGBsColumn, KernelSpeedupColumn, EndToEndSpeedupColumn, ErrorColumn, ColumnCount
    };
    /// The thread scaling table's columns.
    enum ScalingColumn {
        ThreadsColumn, ScalingMedianColumn, ScalingSpeedupColumn, ScalingGBsColumn, HostPercentColumn,
        ScalingColumnCount
    };

    explicit TimingsPanel(QWidget* parent = nullptr);

    /// The main run's backends, then every comparison run (other memory kind, other variants);
    /// the thread scaling runs in their own table, shown only when there are some.
    void showOutcome(const RunOutcome& outcome);
    void showMessage(const QString& text);

    [[nodiscard]] QTableWidget* table() const { return table_; }
    [[nodiscard]] QTableWidget* scalingTable() const { return scalingTable_; }
    [[nodiscard]] QString summary() const;
    /// The category labels of the bars, top to bottom.
    [[nodiscard]] QStringList barLabels() const;

    /// The user's choice of time axis: kept for every later outcome.
    void setLogScale(bool on);
    [[nodiscard]] bool logScale() const;

private:
    /// One bar: H2D, kernel, D2H (GPU) and CPU total medians in ms.
    struct Bar {
        QString label;
        std::array<double, 4> segments;
    };
    /// Draws bars_ on a linear or a logarithmic time axis (a 0.01 ms GPU bar next to a
    /// 20 ms CPU one is invisible on a linear axis).
    void drawBars();
    /// Fills the thread scaling table (hidden when there are no runs); returns the failed runs' reasons.
    QStringList showThreadScaling(const std::vector<app::RunResult>& runs);

    std::vector<Bar> bars_;  ///< top to bottom, as the table's rows
    QLabel* summary_ = nullptr;
    QCheckBox* logScale_ = nullptr;
    /// Until the user picks the axis, each outcome gets the log axis when its bars span more than kLogScaleSpan.
    bool scaleChosen_ = false;
    QChart* chart_ = nullptr;
    QChartView* chartView_ = nullptr;
    QTableWidget* table_ = nullptr;
    QTableWidget* scalingTable_ = nullptr;
};

} // namespace kl::gui
