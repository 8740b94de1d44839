#include "timings_panel.hpp"

#include "chart_series.hpp"
#include "table_items.hpp"
#include "timeline_widget.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QGraphicsLayout>
#include <QHBoxLayout>
#include <QCategoryAxis>
#include <QCheckBox>
#include <QHorizontalStackedBarSeries>
#include <QLabel>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTableWidget>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <limits>

namespace kl::gui {
namespace {

/// Longest over shortest bar beyond which the time axis is logarithmic by default: on a linear
/// axis a bar under 1/20 of the longest (a GPU run beside cpu-ref) is a sliver without stage colours.
constexpr double kLogScaleSpan = 20;

/// One bar / table row: a backend's result and the run it belongs to.
struct TimingRow {
    QString label;
    const app::BackendResult* result = nullptr;
};

std::vector<TimingRow> timingRows(const RunOutcome& outcome)
{
    std::vector<TimingRow> rows;
    for (const app::BackendResult& r : outcome.main.results)
        rows.push_back({backendLabel(r), &r});
    // A comparison that failed before reporting is named by what it asked for: two such would
    // otherwise share one label, and the chart's category axis one bar.
    for (const app::RunResult& run : outcome.gpuComparisons)
        for (const app::BackendResult& r : run.results) rows.push_back({backendLabel(r, run.request), &r});
    return rows;
}

/// The fastest successful CPU backend of the main run: the speed-ups' baseline.
const app::BackendResult* fastestCpu(const app::RunResult& result)
{
    const app::BackendResult* best = nullptr;
    for (const app::BackendResult& r : result.results)
        if (r.backend != app::Backend::Gpu && r.ok() && (!best || r.time.medianMs < best->time.medianMs)) best = &r;
    return best;
}

QString ms(double v)
{
    return QString::number(v, 'f', v < 1 ? 4 : 3);
}

/// A bar's length in ms: the sum of its segments (TimingsPanel::Bar is private, hence the segments).
double barTotal(const std::array<double, 4>& segments)
{
    return std::accumulate(segments.begin(), segments.end(), 0.0);
}

} // namespace

TimingsPanel::TimingsPanel(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    auto* top = new QHBoxLayout;
    summary_ = new QLabel;
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    logScale_ = new QCheckBox(tr("Log scale"));
    logScale_->setToolTip(tr("On by default when the longest bar is more than %1× the shortest").arg(kLogScaleSpan));
    top->addWidget(summary_, 1);
    top->addWidget(logScale_, 0, Qt::AlignTop);
    layout->addLayout(top);
    connect(logScale_, &QCheckBox::toggled, this, &TimingsPanel::drawBars);
    connect(logScale_, &QCheckBox::clicked, this, [this] { scaleChosen_ = true; });
    auto* row = new QSplitter;
    chart_ = new QChart;
    // Every pixel of height goes to the bars, whose labels Qt drops when rows get too thin.
    chart_->setMargins(QMargins(2, 2, 2, 2));
    chart_->layout()->setContentsMargins(0, 0, 0, 0);
    chart_->setBackgroundRoundness(0);
    chart_->legend()->setAlignment(Qt::AlignBottom);
    chartView_ = new QChartView(chart_);
    chartView_->setRenderHint(QPainter::Antialiasing);
    chartView_->setMinimumSize(320, 180);
    chartView_->setToolTip(tr("Median time per stage; with several streams the GPU stages overlap, so the "
                              "end-to-end time (table) is less than their sum"));
    row->addWidget(chartView_);
    table_ = newResultTable({tr("Backend"), tr("Median ms"), tr("Min ms"), tr("Max ms"), tr("H2D ms"), tr("Kernel ms"),
                       tr("D2H ms"), tr("Kernel GB/s"), tr("% of roof"), tr("End-to-end GB/s"), tr("Kernel speed-up"),
                       tr("End-to-end speed-up"), tr("Error")});
    table_->horizontalHeaderItem(KernelGBsColumn)
        ->setToolTip(tr("By the documented bytes: GPU rows the kernel alone, CPU rows their whole run (no copies)"));
    table_->horizontalHeaderItem(RoofPercentColumn)
        ->setToolTip(tr("Kernel GB/s as a share of a copy's bandwidth measured in this run: GPU rows against the "
                        "device-to-device copy, CPU rows against the host memory copy on the run's CPU threads"));
    scalingTable_ = newResultTable({tr("cpu-opencv threads"), tr("Median ms"), tr("Speed-up vs 1 thread"), tr("GB/s"),
                              tr("% of host BW")});
    scalingTable_->horizontalHeaderItem(HostPercentColumn)
        ->setToolTip(tr("GB/s as a share of the host memory copy bandwidth measured on as many threads"));
    scalingTable_->hide();
    auto* tables = new QSplitter(Qt::Vertical);
    tables->addWidget(table_);
    tables->addWidget(scalingTable_);
    row->addWidget(tables);
    // The chart gets the larger share: Qt elides bar labels wider than about a third of it.
    row->setSizes({560, 440});
    layout->addWidget(row, 1);
}

void TimingsPanel::setLogScale(bool on)
{
    scaleChosen_ = true;
    logScale_->setChecked(on);
}

bool TimingsPanel::logScale() const
{
    return logScale_->isChecked();
}

void TimingsPanel::drawBars()
{
    clearChart(chart_);
    if (bars_.empty()) return;

    // The smallest segment and the longest bar set the range.
    double smallest = 0, largest = 0;
    for (const Bar& bar : bars_) {
        for (double v : bar.segments)
            if (v > 0) smallest = smallest > 0 ? std::min(smallest, v) : v;
        largest = std::max(largest, barTotal(bar.segments));
    }
    const bool log = logScale_->isChecked() && smallest > 0;
    QAbstractAxis* timeAxis = nullptr;
    // On the log scale each segment is drawn from the logarithm of where it starts to that of
    // where it ends, on a linear axis in decades: Qt's log axis cannot draw a bar from zero.
    const double lo = log ? wholeDecades(smallest, largest).first : 0.0;
    const auto position = [log, lo](double ms) { return log ? (ms > lo ? std::log10(ms / lo) : 0.0) : ms; };
    if (log) {
        auto* axis = new QCategoryAxis;
        axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
        const int decades = std::max(1, int(std::ceil(std::log10(largest / lo))));
        axis->setStartValue(-1e-9);  // a category needs an end above the start; 0 is the first decade
        for (int d = 0; d <= decades; ++d) axis->append(QString::number(lo * std::pow(10.0, d), 'g', 3), d);
        axis->setRange(0, decades);
        timeAxis = axis;
    } else {
        auto* axis = new QValueAxis;
        axis->setLabelFormat(QStringLiteral("%.3g"));
        axis->setRange(0, largest > 0 ? largest : 1);
        axis->applyNiceNumbers();
        timeAxis = axis;
    }
    timeAxis->setTitleText(log ? tr("median ms (log scale)") : tr("median ms"));

    const std::array<QString, 4> names = {tr("H2D"), tr("Kernel"), tr("D2H"), tr("CPU total")};
    const std::array<QColor, 4> colours = {TimelineWidget::stageColor(gpu::Stage::H2D),
                                           TimelineWidget::stageColor(gpu::Stage::Kernel),
                                           TimelineWidget::stageColor(gpu::Stage::D2H), QColor(120, 120, 120)};
    std::array<QBarSet*, 4> sets{};
    for (size_t s = 0; s < sets.size(); ++s) {
        sets[s] = new QBarSet(names[s]);
        sets[s]->setColor(colours[s]);
    }
    // Horizontal bars run bottom to top: added in reverse, they read like the table.
    for (auto bar = bars_.rbegin(); bar != bars_.rend(); ++bar) {
        double end = 0;
        for (size_t s = 0; s < sets.size(); ++s) {
            const double start = end;
            end += bar->segments[s];
            *sets[s] << position(end) - position(start);
        }
    }
    auto* series = new QHorizontalStackedBarSeries;
    for (QBarSet* set : sets) series->append(set);
    QStringList categories;
    for (auto bar = bars_.rbegin(); bar != bars_.rend(); ++bar) categories << bar->label;
    chart_->addSeries(series);
    auto* categoryAxis = new QBarCategoryAxis;
    categoryAxis->append(categories);
    QFont small = categoryAxis->labelsFont();
    small.setPointSizeF(small.pointSizeF() * 0.8);
    categoryAxis->setLabelsFont(small);
    chart_->addAxis(categoryAxis, Qt::AlignLeft);
    chart_->addAxis(timeAxis, Qt::AlignBottom);
    series->attachAxis(categoryAxis);
    series->attachAxis(timeAxis);
}

QStringList TimingsPanel::barLabels() const
{
    const auto axes = chart_->axes(Qt::Vertical);
    auto* categories = axes.isEmpty() ? nullptr : qobject_cast<QBarCategoryAxis*>(axes.first());
    if (!categories) return {};
    QStringList labels = categories->categories();
    std::reverse(labels.begin(), labels.end());
    return labels;
}

void TimingsPanel::showMessage(const QString& text)
{
    bars_.clear();
    drawBars();
    table_->setRowCount(0);
    scalingTable_->setRowCount(0);
    scalingTable_->hide();
    summary_->setText(text);
}

QString TimingsPanel::summary() const
{
    return summary_->text();
}

void TimingsPanel::showOutcome(const RunOutcome& outcome)
{
    showMessage({});
    const app::RunResult& main = outcome.main;
    const std::vector<TimingRow> rows = timingRows(outcome);
    const app::BackendResult* baseline = fastestCpu(main);

    for (const TimingRow& row : rows) {
        const app::BackendResult& r = *row.result;
        Bar bar{r.ok() ? row.label : row.label + tr(" (failed)"), {0, 0, 0, 0}};
        if (r.gpu) bar.segments = {r.gpu->h2d.medianMs, r.gpu->kernel.medianMs, r.gpu->d2h.medianMs, 0};
        else if (r.ok()) bar.segments[3] = r.time.medianMs;
        bars_.push_back(bar);
    }
    if (!scaleChosen_) {
        double shortest = 0, longest = 0;
        for (const Bar& bar : bars_) {
            const double total = barTotal(bar.segments);
            if (total > 0) shortest = shortest > 0 ? std::min(shortest, total) : total;
            longest = std::max(longest, total);
        }
        const QSignalBlocker drawnBelow(logScale_);
        logScale_->setChecked(shortest > 0 && longest > kLogScaleSpan * shortest);
    }
    drawBars();

    table_->setRowCount(int(rows.size()));
    QStringList failures;
    for (int i = 0; i < int(rows.size()); ++i) {
        const app::BackendResult& r = *rows[size_t(i)].result;
        table_->setItem(i, BackendColumn, tableCell(rows[size_t(i)].label, false));
        if (!r.ok()) {
            failures << rows[size_t(i)].label + QStringLiteral(": ") + r.error;
            auto* error = tableCell(r.error, false);
            error->setForeground(QColor(198, 40, 40));
            error->setToolTip(r.error);
            table_->setItem(i, ErrorColumn, error);
            continue;
        }
        table_->setItem(i, MedianColumn, tableCell(ms(r.time.medianMs)));
        table_->setItem(i, MinColumn, tableCell(ms(r.time.minMs)));
        table_->setItem(i, MaxColumn, tableCell(ms(r.time.maxMs)));
        if (!r.gpu) {
            // CPU rows are all the main run's (the comparison runs are GPU only).
            table_->setItem(i, KernelGBsColumn, tableCell(QString::number(app::cpuGBs(main.request, r), 'f', 1)));
            if (main.hostBandwidthGBs > 0)
                table_->setItem(i, RoofPercentColumn,
                                tableCell(QString::number(app::hostBandwidthPercent(main, r), 'f', 1)));
            continue;
        }
        const gpu::GpuReport& g = *r.gpu;
        // How it ran: chunks and streams, or a user kernel's grid, registers and occupancy.
        table_->item(i, BackendColumn)->setToolTip(QString::fromStdString(g.launch));
        const bool endToEnd = g.total.medianMs > 0;
        if (endToEnd) {
            table_->setItem(i, H2DColumn, tableCell(ms(g.h2d.medianMs)));
            table_->setItem(i, D2HColumn, tableCell(ms(g.d2h.medianMs)));
            table_->setItem(i, EndToEndGBsColumn, tableCell(QString::number(g.endToEndGBs(), 'f', 2)));
        }
        table_->setItem(i, KernelColumn, tableCell(ms(g.kernel.medianMs)));
        table_->setItem(i, KernelGBsColumn, tableCell(QString::number(g.kernelGBs(), 'f', 1)));
        if (main.copyBandwidthGBs > 0)
            table_->setItem(i, RoofPercentColumn, tableCell(QString::number(100.0 * g.kernelGBs() / main.copyBandwidthGBs, 'f', 1)));
        if (baseline && g.kernel.medianMs > 0)
            table_->setItem(i, KernelSpeedupColumn,
                            tableCell(QStringLiteral("%1×").arg(baseline->time.medianMs / g.kernel.medianMs, 0, 'f', 2)));
        if (baseline && endToEnd)
            table_->setItem(i, EndToEndSpeedupColumn,
                            tableCell(QStringLiteral("%1×").arg(baseline->time.medianMs / g.total.medianMs, 0, 'f', 2)));
    }

    failures << showThreadScaling(outcome.threadScaling);

    // A failed backend has no bar; its reason heads the panel.
    QStringList summary = failures;
    if (main.hostBandwidthGBs > 0)
        summary << tr("Host: %1, memory bandwidth %2 GB/s measured (read + write)")
                       .arg(main.cpuThreads == 1 ? tr("1 CPU thread") : tr("%1 CPU threads").arg(main.cpuThreads))
                       .arg(main.hostBandwidthGBs, 0, 'f', 1);
    if (main.device)
        summary << tr("Device: %1, copy bandwidth %2 GB/s measured (%3 GB/s theoretical)")
                       .arg(QString::fromStdString(main.device->name))
                       .arg(main.copyBandwidthGBs, 0, 'f', 0)
                       .arg(main.device->theoreticalBandwidthGBs, 0, 'f', 0);
    if (baseline) summary << tr("Speed-ups are against %1 (%2 ms), the fastest CPU backend.")
                                 .arg(app::toString(baseline->backend), ms(baseline->time.medianMs));
    summary_->setText(summary.join(QLatin1Char('\n')));
}

QStringList TimingsPanel::showThreadScaling(const std::vector<app::RunResult>& runs)
{
    scalingTable_->setVisible(!runs.empty());
    scalingTable_->setRowCount(int(runs.size()));
    if (runs.empty()) return {};
    // The first run is the one on a single thread (threadScalingCounts starts at 1).
    const app::BackendResult& oneThread = runs.front().results.front();
    QStringList failures;
    for (int i = 0; i < int(runs.size()); ++i) {
        const app::RunResult& run = runs[size_t(i)];
        const app::BackendResult& r = run.results.front();
        scalingTable_->setItem(i, ThreadsColumn, tableCell(QString::number(run.cpuThreads)));
        if (!r.ok()) {
            failures << tr("cpu-opencv on %1 threads: %2").arg(run.cpuThreads).arg(r.error);
            continue;
        }
        scalingTable_->setItem(i, ScalingMedianColumn, tableCell(ms(r.time.medianMs)));
        if (oneThread.ok() && r.time.medianMs > 0)
            scalingTable_->setItem(
                i, ScalingSpeedupColumn,
                tableCell(QStringLiteral("%1×").arg(oneThread.time.medianMs / r.time.medianMs, 0, 'f', 2)));
        scalingTable_->setItem(i, ScalingGBsColumn, tableCell(QString::number(app::cpuGBs(run.request, r), 'f', 1)));
        if (run.hostBandwidthGBs > 0)
            scalingTable_->setItem(i, HostPercentColumn,
                                   tableCell(QString::number(app::hostBandwidthPercent(run, r), 'f', 1)));
    }
    return failures;
}

} // namespace kl::gui
