#include "roofline_panel.hpp"

#include "chart_series.hpp"
#include "table_items.hpp"

#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <tuple>

namespace kl::gui {
namespace {

/// GPU points are the kernel alone, so they take the sweep's kernel-alone colour.
const QColor kGpuColour = gpuMeasureColour(0);
/// GPU points (the run and its comparison runs) share the kernel's colour and differ in shape.
constexpr QScatterSeries::MarkerShape kGpuShapes[] = {
    QScatterSeries::MarkerShapeCircle, QScatterSeries::MarkerShapeTriangle, QScatterSeries::MarkerShapeStar,
    QScatterSeries::MarkerShapePentagon, QScatterSeries::MarkerShapeRotatedRectangle};

/// The nearer roof and the share of it reached: a run is held to whichever roof it comes closer to
/// (as bench --matrix holds its cells), max(GB/s / bandwidth, GFLOP/s / peak).
void holdToRoofs(RooflinePanel::Point& p, const QString& bandwidthName, double bandwidthGBs, double peakGFlops)
{
    const double bandwidthShare = bandwidthGBs > 0 ? p.gbs / bandwidthGBs : 0;
    const double peakShare = peakGFlops > 0 && p.flops > 0 ? p.gflops / peakGFlops : 0;
    p.roof = peakShare > bandwidthShare ? QObject::tr("fp32 FMA") : bandwidthName;
    p.roofPercent = 100 * std::max(bandwidthShare, peakShare);
}

QString rate(double v)
{
    return QString::number(v, 'f', v < 10 ? 2 : (v < 1000 ? 1 : 0));
}

} // namespace

RooflinePanel::RooflinePanel(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    summary_ = new QLabel;
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(summary_);
    auto* row = new QSplitter;
    chart_ = new QChart;
    chart_->setMargins(QMargins(2, 2, 2, 2));
    chart_->legend()->setAlignment(Qt::AlignRight);
    chartView_ = new QChartView(chart_);
    chartView_->setRenderHint(QPainter::Antialiasing);
    chartView_->setMinimumSize(320, 180);
    chartView_->setToolTip(
        tr("Each run by the documented counts (README \"Bytes per op\"): the GPU's kernel alone, a CPU backend's whole "
           "run. GPU points sit under the device-to-device copy bandwidth and the fp32 FMA peak, CPU points under the "
           "host memory bandwidth (no CPU compute roof is measured), all measured in this session. Histogram and "
           "transpose do no floating-point arithmetic: their points are GB/s over the bytes moved, against the "
           "bandwidth roofs alone."));
    row->addWidget(chartView_);
    table_ = newResultTable({tr("Backend"), tr("GB/s"), tr("GFLOP/s"), tr("FLOP/byte"), tr("Nearer roof"), tr("% of roof")});
    table_->horizontalHeaderItem(RoofPercentColumn)
        ->setToolTip(tr("The larger of GB/s over the bandwidth roof and GFLOP/s over the FMA peak"));
    row->addWidget(table_);
    row->setSizes({600, 400});
    layout->addWidget(row, 1);
}

void RooflinePanel::showMessage(const QString& text)
{
    points_.clear();
    clearChart(chart_);
    table_->setRowCount(0);
    summary_->setText(text);
}

QString RooflinePanel::summary() const
{
    return summary_->text();
}

QXYSeries* RooflinePanel::findSeries(const QString& name) const
{
    return gui::findSeries(chart_, name);
}

void RooflinePanel::showOutcome(const RunOutcome& outcome)
{
    showMessage({});
    const app::RunResult& main = outcome.main;
    const Roofs roofs{main.copyBandwidthGBs, outcome.fmaPeakGFlops, main.hostBandwidthGBs};
    QStringList notes;
    const auto addGpu = [&](const app::BackendResult& r) {
        const gpu::GpuReport& g = *r.gpu;
        Point p{backendLabel(r), r.backend, double(g.kernelBytes), g.kernelFlops, g.kernelGBs(), g.kernelGFlops(), {}, 0};
        holdToRoofs(p, tr("device copy"), roofs.deviceCopyGBs, roofs.fmaGFlops);
        points_.push_back(p);
    };
    for (const app::BackendResult& r : main.results) {
        if (!r.ok()) {
            notes << QStringLiteral("%1: %2").arg(app::toString(r.backend), r.error);
        } else if (r.gpu) {
            addGpu(r);
        } else {
            Point p{backendLabel(r), r.backend, app::bytesMoved(main.request, r), app::flopsDone(main.request, r),
                    app::cpuGBs(main.request, r), app::cpuGFlops(main.request, r), {}, 0};
            holdToRoofs(p, tr("host memory"), roofs.hostGBs, 0);
            points_.push_back(p);
        }
    }
    for (const app::RunResult& run : outcome.gpuComparisons)
        for (const app::BackendResult& r : run.results)
            if (r.ok() && r.gpu) addGpu(r);
    if (points_.empty()) {
        showMessage(notes.isEmpty() ? tr("No backend ran") : notes.join(QLatin1Char('\n')));
        return;
    }
    plotsFlops_ = std::any_of(points_.begin(), points_.end(), [](const Point& p) { return p.flops > 0; });

    table_->setRowCount(int(points_.size()));
    for (int i = 0; i < int(points_.size()); ++i) {
        const Point& p = points_[size_t(i)];
        table_->setItem(i, BackendColumn, tableCell(p.label, false));
        table_->setItem(i, GBsColumn, tableCell(rate(p.gbs)));
        if (p.flops > 0) {
            table_->setItem(i, GFlopsColumn, tableCell(rate(p.gflops)));
            table_->setItem(i, IntensityColumn, tableCell(QString::number(p.flops / p.bytes, 'g', 3)));
        }
        table_->setItem(i, RoofColumn, tableCell(p.roof, false));
        if (p.roofPercent > 0) table_->setItem(i, RoofPercentColumn, tableCell(QString::number(p.roofPercent, 'f', 1)));
    }

    const auto measured = [](double v, const QString& unit) {
        return v > 0 ? QStringLiteral("%1 %2").arg(rate(v), unit) : tr("not measured");
    };
    QStringList summary;
    if (std::any_of(points_.begin(), points_.end(), [](const Point& p) { return p.gpu(); }))
        summary << tr("GPU roofs: device copy %1, fp32 FMA %2")
                       .arg(measured(roofs.deviceCopyGBs, tr("GB/s")), measured(roofs.fmaGFlops, tr("GFLOP/s")));
    if (std::any_of(points_.begin(), points_.end(), [](const Point& p) { return !p.gpu(); }))
        summary << tr("CPU roof: host memory %1 on %2 thread(s)").arg(measured(roofs.hostGBs, tr("GB/s"))).arg(main.cpuThreads);
    if (!plotsFlops_)
        summary << tr("%1 does no floating-point arithmetic: each run is its GB/s against the bandwidth roofs")
                       .arg(app::toString(main.request.op));
    summary_->setText((summary + notes).join(QLatin1Char('\n')));
    plot(roofs);
}

void RooflinePanel::plot(const Roofs& roofs)
{
    // x: FLOP/byte (or bytes moved), y: GFLOP/s (or GB/s), both logarithmic.
    const auto x = [this](const Point& p) { return plotsFlops_ ? p.flops / p.bytes : p.bytes; };
    const auto y = [this](const Point& p) { return plotsFlops_ ? p.gflops : p.gbs; };
    double xLo = x(points_.front()), xHi = xLo;
    for (const Point& p : points_) {
        xLo = std::min(xLo, x(p));
        xHi = std::max(xHi, x(p));
    }
    const double ridge = roofs.deviceCopyGBs > 0 ? roofs.fmaGFlops / roofs.deviceCopyGBs : 0;
    if (plotsFlops_ && ridge > 0) {
        xLo = std::min(xLo, ridge);
        xHi = std::max(xHi, ridge);
    }
    std::tie(xLo, xHi) = wholeDecades(xLo, xHi);

    // The roofs: what a run at x can reach at most.
    QList<QPointF> gpuRoof, cpuRoof;
    if (plotsFlops_) {
        std::vector<double> xs = {xLo, xHi};
        if (ridge > xLo && ridge < xHi) xs.insert(xs.begin() + 1, ridge);
        for (double at : xs) {
            if (roofs.deviceCopyGBs > 0)
                gpuRoof.append({at, roofs.fmaGFlops > 0 ? std::min(roofs.fmaGFlops, roofs.deviceCopyGBs * at)
                                                        : roofs.deviceCopyGBs * at});
            else if (roofs.fmaGFlops > 0)
                gpuRoof.append({at, roofs.fmaGFlops});
            if (roofs.hostGBs > 0) cpuRoof.append({at, roofs.hostGBs * at});
        }
    } else {
        for (double at : {xLo, xHi}) {
            if (roofs.deviceCopyGBs > 0) gpuRoof.append({at, roofs.deviceCopyGBs});
            if (roofs.hostGBs > 0) cpuRoof.append({at, roofs.hostGBs});
        }
    }
    const bool anyGpu = std::any_of(points_.begin(), points_.end(), [](const Point& p) { return p.gpu(); });
    const bool anyCpu = std::any_of(points_.begin(), points_.end(), [](const Point& p) { return !p.gpu(); });
    if (!anyGpu) gpuRoof.clear();
    if (!anyCpu) cpuRoof.clear();

    double yLo = y(points_.front()), yHi = yLo;
    for (const Point& p : points_) {
        yLo = std::min(yLo, y(p));
        yHi = std::max(yHi, y(p));
    }
    for (const QList<QPointF>* roof : {&gpuRoof, &cpuRoof})
        for (const QPointF& at : *roof) {
            yLo = std::min(yLo, at.y());
            yHi = std::max(yHi, at.y());
        }

    auto* xAxis = new QLogValueAxis;
    xAxis->setLabelFormat(QStringLiteral("%g"));
    xAxis->setTitleText(plotsFlops_ ? tr("FLOP per byte moved") : tr("bytes moved per run"));
    auto* yAxis = new QLogValueAxis;
    yAxis->setLabelFormat(QStringLiteral("%g"));
    yAxis->setTitleText(plotsFlops_ ? tr("GFLOP/s") : tr("GB/s"));
    chart_->addAxis(xAxis, Qt::AlignBottom);
    chart_->addAxis(yAxis, Qt::AlignLeft);
    const auto add = [&](QXYSeries* series, const QString& name, const QList<QPointF>& points) {
        series->setName(name);
        chart_->addSeries(series);
        series->attachAxis(xAxis);
        series->attachAxis(yAxis);
        replacePoints(series, points);
    };
    for (const auto& [roof, name, colour] : {std::tuple{&gpuRoof, tr("GPU roof"), kGpuColour},
                                             std::tuple{&cpuRoof, tr("CPU roof"), QColor(Qt::black)}}) {
        if (roof->isEmpty()) continue;
        auto* line = new QLineSeries;
        QPen pen(colour);
        pen.setWidthF(2);
        line->setPen(pen);
        add(line, name, *roof);
    }
    size_t gpuPoints = 0;
    for (const Point& p : points_) {
        auto* dot = new QScatterSeries;
        dot->setMarkerSize(11);
        dot->setMarkerShape(p.gpu() ? kGpuShapes[gpuPoints++ % std::size(kGpuShapes)] : QScatterSeries::MarkerShapeRectangle);
        dot->setColor(p.gpu() ? kGpuColour : cpuBackendColour(p.backend));
        add(dot, p.label, {{x(p), y(p)}});
    }
    xAxis->setRange(xLo, xHi);
    const auto [yFrom, yTo] = wholeDecades(yLo, yHi);
    yAxis->setRange(yFrom, yTo);
}

} // namespace kl::gui
