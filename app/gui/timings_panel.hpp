#pragma once
// Where the time went: stacked bars per backend (H2D, kernel, D2H for the GPU; the total
// for each CPU backend) and a table of medians, rates and speed-ups.
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
    /// The table's columns.
    enum Column {
        BackendColumn, MedianColumn, MinColumn, MaxColumn, H2DColumn, KernelColumn, D2HColumn, KernelGBsColumn,
        CopyPercentColumn, EndToEndGBsColumn, KernelSpeedupColumn, EndToEndSpeedupColumn, ErrorColumn, ColumnCount
    };

    explicit TimingsPanel(QWidget* parent = nullptr);

    /// The main run's backends, then every comparison run (other memory kind, other variants).
    void showOutcome(const RunOutcome& outcome);
    void showMessage(const QString& text);

    [[nodiscard]] QTableWidget* table() const { return table_; }
    /// The category labels of the bars, top to bottom.
    [[nodiscard]] QStringList barLabels() const;

    void setLogScale(bool on);

private:
    /// One bar: H2D, kernel, D2H (GPU) and CPU total medians in ms.
    struct Bar {
        QString label;
        std::array<double, 4> segments;
    };
    /// Draws bars_ on a linear or a logarithmic time axis (a 0.01 ms GPU bar next to a
    /// 20 ms CPU one is invisible on a linear axis).
    void drawBars();

    std::vector<Bar> bars_;  ///< top to bottom, as the table's rows
    QLabel* summary_ = nullptr;
    QCheckBox* logScale_ = nullptr;
    QChart* chart_ = nullptr;
    QChartView* chartView_ = nullptr;
    QTableWidget* table_ = nullptr;
};

} // namespace kl::gui
