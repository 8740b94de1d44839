#pragma once
// The roofline of the shown run: each backend's run (and each GPU comparison run) as a point,
// by the documented bytes and FLOPs per op, against the roofs measured in this session: the
// device-to-device copy bandwidth and the fp32 FMA peak for GPU points, the host memory
// bandwidth for CPU points. Histogram and transpose do no floating-point arithmetic: their
// points are plotted by GB/s against the bandwidth roofs alone.
#include "run_worker.hpp"

#include <QWidget>

#include <vector>

class QChart;
class QChartView;
class QLabel;
class QTableWidget;
class QXYSeries;

namespace kl::gui {

class RooflinePanel : public QWidget {
    Q_OBJECT
public:
    enum Column { BackendColumn, GBsColumn, GFlopsColumn, IntensityColumn, RoofColumn, RoofPercentColumn, ColumnCount };

    /// One run by the documented counts: the GPU's kernel alone, a CPU backend's whole run.
    struct Point {
        QString label;       ///< backendLabel()
        app::Backend backend = app::Backend::CpuReference;
        double bytes = 0, flops = 0;
        double gbs = 0, gflops = 0;
        QString roof;        ///< the nearer roof, as the table names it
        double roofPercent = 0;  ///< of that roof; 0 when it was not measured
        [[nodiscard]] bool gpu() const { return backend == app::Backend::Gpu; }
    };

    explicit RooflinePanel(QWidget* parent = nullptr);

    void showOutcome(const RunOutcome& outcome);
    void showMessage(const QString& text);

    [[nodiscard]] const std::vector<Point>& points() const { return points_; }
    /// Whether the chart plots GFLOP/s over FLOP/byte (conv2d, conv1d) rather than GB/s over bytes.
    [[nodiscard]] bool plotsFlops() const { return plotsFlops_; }
    /// A point's series by its label, or a roof's ("GPU roof", "CPU roof"); null if absent.
    [[nodiscard]] QXYSeries* findSeries(const QString& name) const;
    [[nodiscard]] QTableWidget* table() const { return table_; }
    [[nodiscard]] QString summary() const;

private:
    struct Roofs {
        double deviceCopyGBs = 0, fmaGFlops = 0, hostGBs = 0;
    };
    void plot(const Roofs& roofs);

    std::vector<Point> points_;
    bool plotsFlops_ = false;
    QLabel* summary_ = nullptr;
    QChart* chart_ = nullptr;
    QChartView* chartView_ = nullptr;
    QTableWidget* table_ = nullptr;
};

} // namespace kl::gui
