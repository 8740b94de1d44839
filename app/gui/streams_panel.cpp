#include "streams_panel.hpp"

#include "chart_series.hpp"
#include "timeline_widget.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>

namespace kl::gui {

StreamsPanel::StreamsPanel(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    summary_ = new QLabel;
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    summary_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    layout->addWidget(summary_);
    auto* row = new QHBoxLayout;
    chart_ = new QChart;
    chart_->legend()->hide();
    chart_->setMargins(QMargins(4, 4, 4, 4));
    chartView_ = new QChartView(chart_);
    chartView_->setRenderHint(QPainter::Antialiasing);
    chartView_->setMinimumSize(260, 140);
    row->addWidget(chartView_, 1);
    timeline_ = new TimelineWidget;
    timeline_->setToolTip(tr("Each bar is one chunk's copy or kernel on one stream (last timed repetition)"));
    row->addWidget(timeline_, 3);
    layout->addLayout(row, 1);
}

QString StreamsPanel::summary() const
{
    return summary_->text();
}

void StreamsPanel::showMessage(const QString& text)
{
    clearChart(chart_);
    timeline_->setTimeline({});
    chartView_->hide();
    timeline_->hide();
    summary_->setText(text);
}

void StreamsPanel::showOutcome(const RunOutcome& outcome)
{
    const app::BackendResult* gpuResult = outcome.main.find(app::Backend::Gpu);
    if (!gpuResult) {
        showMessage(tr("The GPU backend is not selected (Execution panel)."));
        return;
    }
    if (!gpuResult->ok()) {
        showMessage(tr("GPU: %1").arg(gpuResult->error));
        return;
    }
    showMessage({});
    chartView_->show();
    timeline_->show();
    const gpu::GpuReport& report = *gpuResult->gpu;
    timeline_->setTimeline(report.timeline);
    const bool endToEnd = outcome.main.request.gpu.endToEnd;

    const app::BackendResult* single = outcome.singleStream ? outcome.singleStream->find(app::Backend::Gpu) : nullptr;
    auto* bars = new QBarSet(tr("end-to-end ms"));
    bars->setColor(TimelineWidget::stageColor(gpu::Stage::Kernel));
    QStringList categories;
    // Horizontal bars run bottom to top: the N-stream bar first puts 1 stream on top.
    categories << (report.streams == 1 ? tr("1 stream") : tr("%1 streams").arg(report.streams));
    *bars << gpuResult->time.medianMs;
    if (single && single->ok()) {
        categories << tr("1 stream");
        *bars << single->time.medianMs;
    }
    auto* series = new QHorizontalBarSeries;
    series->append(bars);
    series->setLabelsVisible(true);
    series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
    series->setLabelsPrecision(3);
    series->setLabelsFormat(QStringLiteral("@value ms"));
    chart_->addSeries(series);
    auto* categoryAxis = new QBarCategoryAxis;
    categoryAxis->append(categories);
    auto* msAxis = new QValueAxis;
    msAxis->setTitleText(endToEnd ? tr("end-to-end ms") : tr("kernel ms"));
    msAxis->setLabelFormat(QStringLiteral("%.2g"));
    chart_->addAxis(categoryAxis, Qt::AlignLeft);
    chart_->addAxis(msAxis, Qt::AlignBottom);
    series->attachAxis(categoryAxis);
    series->attachAxis(msAxis);
    // Room after the longer bar for its label.
    msAxis->setRange(0, 1.35 * std::max(gpuResult->time.medianMs, single && single->ok() ? single->time.medianMs : 0.0));
    msAxis->applyNiceNumbers();

    if (!endToEnd)
        summary_->setText(tr("Kernel-only timing has no copies to overlap: choose end-to-end timing to compare streams."));
    else if (single && single->ok()) {
        const double speedup = single->time.medianMs / gpuResult->time.medianMs;
        QString text = tr("End to end: 1 stream %1 ms, %2 streams %3 ms: %4× the speed of one stream.")
                           .arg(single->time.medianMs, 0, 'f', 3)
                           .arg(report.streams)
                           .arg(gpuResult->time.medianMs, 0, 'f', 3)
                           .arg(speedup, 0, 'f', 2);
        text += tr(" %n chunk(s): %1. Launched as %2.", nullptr, report.chunks)
                    .arg(QString::fromStdString(report.chunking), QString::fromStdString(report.launch));
        const double linkGBs = outcome.main.linkBothWaysGBs;
        const double limit = gpu::overlapLimitMs(*single->gpu, report.chunks, linkGBs);
        if (report.streams > 1 && limit > 0) {
            text += tr(" Physical limit for %n chunk(s): %1 ms: the slowest stage whole and the others for one chunk, "
                       "at one stream's rates (H2D %2, kernel %3, D2H %4 ms)",
                       nullptr, report.chunks)
                        .arg(limit, 0, 'f', 3)
                        .arg(single->gpu->h2d.medianMs, 0, 'f', 3)
                        .arg(single->gpu->kernel.medianMs, 0, 'f', 3)
                        .arg(single->gpu->d2h.medianMs, 0, 'f', 3);
            text += linkGBs > 0 ? tr(", and no less than the link's time for both directions at once (%1 GB/s "
                                     "together: %2 ms)")
                                      .arg(linkGBs, 0, 'f', 1)
                                      .arg(double(single->gpu->bytesH2D + single->gpu->bytesD2H) / (linkGBs * 1e6), 0,
                                           'f', 3)
                                : tr(" (the link's rate both ways at once was not measured)");
            text += tr("; this run took %1× it.").arg(gpuResult->time.medianMs / limit, 0, 'f', 2);
        }
        if (speedup < 1 && report.memory == gpu::HostMemory::Pageable)
            text += tr(" Asynchronous copies from pageable memory go through the driver's staging buffer and do not "
                       "overlap with kernels: try staged or pinned host memory.");
        if (speedup < 1 && report.memory == gpu::HostMemory::Staged)
            text += tr(" Staged copies run through the host, which waits for each chunk's kernel before copying its "
                       "result out, so chunks do not overlap: staged memory pays on one stream; pinned memory "
                       "overlaps.");
        summary_->setText(text);
    }
    else
        summary_->setText(tr("End to end with 1 stream: %1 ms. Set streams above 1 (Execution panel) to overlap "
                             "copies with kernels and compare.")
                              .arg(gpuResult->time.medianMs, 0, 'f', 3));
}

} // namespace kl::gui
