#include "signal_view.hpp"

#include "chart_series.hpp"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QMouseEvent>
#include <QPushButton>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace kl::gui {
namespace {

int clampedChannel(const Signal& s, int channel)
{
    return std::clamp(channel, 0, std::max(0, s.channels - 1));
}

const Signal kNoSignal;

/// The sample at `seconds`, as text ("—" outside the signal).
QString sampleText(const Signal& s, int channel, double seconds)
{
    if (s.empty()) return QStringLiteral("—");
    const double index = std::floor(seconds * s.sampleRate);
    if (index < 0 || index >= double(s.frames)) return QStringLiteral("—");
    return QString::number(double(s.channel(clampedChannel(s, channel))[size_t(index)]), 'g', 6);
}

} // namespace

SignalView::SignalView(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    auto* controls = new QHBoxLayout;
    channel_ = new QComboBox;
    channel_->setToolTip(tr("Channel shown in every chart"));
    auto* reset = new QPushButton(tr("Whole signal"));
    reset->setToolTip(tr("Zoom out to the whole signal (drag across a chart to zoom in, right-click to zoom out)"));
    hover_ = new QLabel;
    hover_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    controls->addWidget(new QLabel(tr("Channel:")));
    controls->addWidget(channel_);
    controls->addWidget(reset);
    controls->addWidget(hover_, 1);
    layout->addLayout(controls);

    for (TraceView& trace : traces_) {
        trace.chart = new QChart;
        trace.chart->legend()->hide();
        trace.chart->setMargins(QMargins(4, 4, 4, 4));
        trace.series = new QLineSeries;
        trace.series->setUseOpenGL(false);
        trace.chart->addSeries(trace.series);
        trace.time = new QValueAxis;
        trace.time->setTitleText(tr("time (s)"));
        trace.value = new QValueAxis;
        trace.chart->addAxis(trace.time, Qt::AlignBottom);
        trace.chart->addAxis(trace.value, Qt::AlignLeft);
        trace.series->attachAxis(trace.time);
        trace.series->attachAxis(trace.value);
        trace.view = new QChartView(trace.chart);
        trace.view->setRubberBand(QChartView::HorizontalRubberBand);
        trace.view->setRenderHint(QPainter::Antialiasing, false);
        trace.view->setMouseTracking(true);
        trace.view->setAcceptDrops(false);  // a dropped file goes to the window, which opens it
        trace.view->viewport()->installEventFilter(this);
        layout->addWidget(trace.view, 1);
        connect(trace.time, &QValueAxis::rangeChanged, this, &SignalView::setTimeRange);
    }
    connect(channel_, &QComboBox::currentIndexChanged, this, &SignalView::redraw);
    connect(reset, &QPushButton::clicked, this, &SignalView::resetZoom);
}

void SignalView::setTrace(Trace trace, std::shared_ptr<const Signal> signal, const QString& caption)
{
    TraceView& t = traces_[size_t(trace)];
    t.signal = std::move(signal);
    t.chart->setTitle(caption);
    if (trace == Trace::Input) {
        const int channels = t.signal ? t.signal->channels : 0;
        const int keep = channel_->currentIndex();
        const QSignalBlocker block(channel_);
        channel_->clear();
        for (int c = 0; c < channels; ++c) channel_->addItem(QString::number(c));
        channel_->setCurrentIndex(std::clamp(keep, 0, std::max(0, channels - 1)));
        resetZoom();  // a new input: show all of it
        return;
    }
    redraw();
}

const Signal& SignalView::signal(Trace trace) const
{
    const TraceView& t = traces_[size_t(trace)];
    return t.signal ? *t.signal : kNoSignal;
}

QLineSeries* SignalView::series(Trace trace) const
{
    return traces_[size_t(trace)].series;
}

QString SignalView::caption(Trace trace) const
{
    return traces_[size_t(trace)].chart->title();
}

int SignalView::channel() const
{
    return std::max(0, channel_->currentIndex());
}

void SignalView::setChannel(int channel)
{
    channel_->setCurrentIndex(channel);
}

double SignalView::duration() const
{
    double longest = 0;
    for (const TraceView& t : traces_)
        if (t.signal && !t.signal->empty()) longest = std::max(longest, double(t.signal->frames) / t.signal->sampleRate);
    return longest;
}

void SignalView::resetZoom()
{
    setTimeRange(0, std::max(duration(), 1e-9));
}

void SignalView::setTimeRange(double from, double to)
{
    if (settingRange_) return;
    settingRange_ = true;
    const double step = niceStep(to - from, 8);
    for (TraceView& t : traces_) {
        t.time->setRange(from, to);
        // Ticks on round times, whatever the zoom.
        t.time->setTickType(QValueAxis::TicksDynamic);
        t.time->setTickAnchor(0);
        t.time->setTickInterval(step);
    }
    settingRange_ = false;
    redraw();
}

void SignalView::redraw()
{
    for (TraceView& t : traces_) {
        if (!t.signal || t.signal->empty()) {
            replacePoints(t.series, {});
            continue;
        }
        const Signal& s = *t.signal;
        const int columns = std::max(64, int(t.chart->plotArea().width()));
        const QList<QPointF> points = minMaxEnvelope(s.channel(clampedChannel(s, channel())), s.frames, s.sampleRate,
                                                     t.time->min(), t.time->max(), columns);
        replacePoints(t.series, points);
        fitYAxis(t.value, points);
    }
}

bool SignalView::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::MouseMove) {
        for (const TraceView& t : traces_) {
            if (t.view->viewport() != watched) continue;
            const QPointF scenePos = t.view->mapToScene(static_cast<QMouseEvent*>(event)->position().toPoint());
            showValuesAt(t.chart->mapToValue(t.chart->mapFromScene(scenePos), t.series).x());
        }
    }
    return QWidget::eventFilter(watched, event);
}

void SignalView::showValuesAt(double seconds)
{
    hover_->setText(tr("t = %1 s   input: %2   CPU: %3   GPU: %4")
                        .arg(seconds, 0, 'f', 6)
                        .arg(sampleText(signal(Trace::Input), channel(), seconds),
                             sampleText(signal(Trace::Cpu), channel(), seconds),
                             sampleText(signal(Trace::Gpu), channel(), seconds)));
}

} // namespace kl::gui
