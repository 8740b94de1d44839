#include "timeline_widget.hpp"

#include "chart_series.hpp"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace kl::gui {
namespace {

constexpr int kLabelWidth = 70;
constexpr int kLegendHeight = 22;
constexpr int kAxisHeight = 24;
constexpr int kRowHeight = 22;

QString stageName(gpu::Stage stage)
{
    switch (stage) {
    case gpu::Stage::H2D: return QObject::tr("H2D copy");
    case gpu::Stage::Kernel: return QObject::tr("kernel");
    case gpu::Stage::D2H: return QObject::tr("D2H copy");
    }
    return {};
}

} // namespace

TimelineWidget::TimelineWidget(QWidget* parent)
    : QWidget(parent)
{
    setMinimumHeight(kLegendHeight + kAxisHeight + kRowHeight * 2);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

QColor TimelineWidget::stageColor(gpu::Stage stage)
{
    switch (stage) {
    case gpu::Stage::H2D: return QColor(66, 133, 244);
    case gpu::Stage::Kernel: return QColor(52, 168, 83);
    case gpu::Stage::D2H: return QColor(251, 140, 0);
    }
    return Qt::gray;
}

void TimelineWidget::setTimeline(std::vector<gpu::TimelineEntry> entries)
{
    entries_ = std::move(entries);
    endMs_ = 0;
    for (const gpu::TimelineEntry& e : entries_) endMs_ = std::max(endMs_, e.endMs);
    updateGeometry();
    update();
}

int TimelineWidget::streamCount() const
{
    int streams = 0;
    for (const gpu::TimelineEntry& e : entries_) streams = std::max(streams, e.stream + 1);
    return streams;
}

QSize TimelineWidget::sizeHint() const
{
    return {600, kLegendHeight + kAxisHeight + kRowHeight * std::max(1, streamCount()) + 8};
}

QRectF TimelineWidget::plotArea() const
{
    return QRectF(kLabelWidth, kLegendHeight, width() - kLabelWidth - 12,
                  std::max(0, height() - kLegendHeight - kAxisHeight));
}

QRectF TimelineWidget::barRect(const gpu::TimelineEntry& entry) const
{
    const QRectF area = plotArea();
    const double rowHeight = area.height() / std::max(1, streamCount());
    const double scale = endMs_ > 0 ? area.width() / endMs_ : 0;
    return QRectF(area.left() + entry.startMs * scale, area.top() + entry.stream * rowHeight + 3,
                  std::max(1.0, (entry.endMs - entry.startMs) * scale), rowHeight - 6);
}

void TimelineWidget::paintEvent(QPaintEvent*)
{
    QPainter painter(this);
    painter.fillRect(rect(), palette().base());
    painter.setPen(palette().color(QPalette::Text));
    if (entries_.empty()) {
        painter.drawText(rect(), Qt::AlignCenter, tr("No timeline"));
        return;
    }
    // Legend.
    int x = kLabelWidth;
    for (gpu::Stage stage : {gpu::Stage::H2D, gpu::Stage::Kernel, gpu::Stage::D2H}) {
        painter.fillRect(QRect(x, 6, 12, 12), stageColor(stage));
        const QString name = stageName(stage);
        painter.drawText(QPoint(x + 16, 16), name);
        x += 16 + painter.fontMetrics().horizontalAdvance(name) + 16;
    }
    // Rows.
    const QRectF area = plotArea();
    const int streams = streamCount();
    const double rowHeight = area.height() / std::max(1, streams);
    for (int s = 0; s < streams; ++s) {
        const QRectF label(0, area.top() + s * rowHeight, kLabelWidth - 6, rowHeight);
        painter.drawText(label, Qt::AlignRight | Qt::AlignVCenter, tr("stream %1").arg(s));
    }
    for (const gpu::TimelineEntry& e : entries_) painter.fillRect(barRect(e), stageColor(e.stage));
    // Time axis.
    const double scale = area.width() / endMs_;
    const double step = niceStep(endMs_, std::max(2, int(area.width() / 90)));
    painter.drawLine(area.bottomLeft(), area.bottomRight());
    for (double t = 0; t <= endMs_ + step * 1e-6; t += step) {
        const double px = area.left() + t * scale;
        painter.drawLine(QPointF(px, area.bottom()), QPointF(px, area.bottom() + 4));
        painter.drawText(QRectF(px - 40, area.bottom() + 4, 80, kAxisHeight - 4), Qt::AlignHCenter | Qt::AlignTop,
                         QStringLiteral("%1 ms").arg(t, 0, 'g', 4));
    }
}

bool TimelineWidget::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        const QPoint pos = static_cast<QHelpEvent*>(event)->pos();
        for (const gpu::TimelineEntry& e : entries_) {
            if (!barRect(e).contains(pos)) continue;
            QToolTip::showText(static_cast<QHelpEvent*>(event)->globalPos(),
                               tr("stream %1, chunk %2, %3: %4 – %5 ms (%6 ms)")
                                   .arg(e.stream)
                                   .arg(e.chunk)
                                   .arg(stageName(e.stage))
                                   .arg(e.startMs, 0, 'f', 3)
                                   .arg(e.endMs, 0, 'f', 3)
                                   .arg(e.endMs - e.startMs, 0, 'f', 3),
                               this);
            return true;
        }
        QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

} // namespace kl::gui
