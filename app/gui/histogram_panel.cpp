#include "histogram_panel.hpp"

#include "chart_series.hpp"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QValueAxis>
#include <QVBoxLayout>

#include <cmath>

namespace kl::gui {
namespace {

QColor channelColor(const std::string& label)
{
    if (label == "B") return QColor(40, 90, 220);
    if (label == "G") return QColor(30, 160, 60);
    if (label == "R") return QColor(215, 40, 40);
    if (label == "A") return QColor(150, 150, 150);
    if (label == "Y") return QColor(120, 70, 170);
    return QColor(60, 60, 60);
}

/// "" when the two results agree count for count (the values left out of the bins included);
/// otherwise where they first differ.
QString describeMismatch(const HistogramResult& cpu, const HistogramResult& gpu)
{
    if (cpu.labels != gpu.labels || cpu.binning.bins != gpu.binning.bins)
        return QObject::tr("CPU and GPU histograms have different channels or bins");
    int differing = 0;
    QString first;
    // `where` names the location lazily: only the first difference is described, so matching
    // bins (nearly all of them) cost no string.
    const auto differ = [&](const auto& where, uint64_t cpuCount, uint64_t gpuCount) {
        if (cpuCount == gpuCount) return;
        if (differing++ == 0) first = QObject::tr("first: %1: CPU %2, GPU %3").arg(where()).arg(cpuCount).arg(gpuCount);
    };
    for (size_t c = 0; c < cpu.counts.size(); ++c) {
        const QString channel = QString::fromStdString(cpu.labels[c]);
        for (size_t bin = 0; bin < cpu.counts[c].size(); ++bin)
            differ([&] { return QObject::tr("channel %1, bin %2").arg(channel).arg(bin); }, cpu.counts[c][bin],
                   gpu.counts[c][bin]);
        differ([&] { return QObject::tr("channel %1, out of range").arg(channel); }, cpu.outOfRange[c],
               gpu.outOfRange[c]);
        differ([&] { return QObject::tr("channel %1, NaN").arg(channel); }, cpu.nanCount[c], gpu.nanCount[c]);
    }
    return differing ? QObject::tr("Mismatch: %1 counts differ (%2)").arg(differing).arg(first) : QString();
}

/// "cpu: B 0 / 0 · G 12 / 3": out of range / NaN per channel.
QString notBinned(const QString& source, const HistogramResult& histogram)
{
    QStringList channels;
    for (size_t c = 0; c < histogram.counts.size(); ++c)
        channels << QStringLiteral("%1 %2 / %3")
                        .arg(QString::fromStdString(histogram.labels[c]))
                        .arg(histogram.outOfRange[c])
                        .arg(histogram.nanCount[c]);
    return source + QStringLiteral(": ") + channels.join(QStringLiteral(" · "));
}

} // namespace

HistogramPanel::HistogramPanel(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    auto* top = new QHBoxLayout;
    logScale_ = new QCheckBox(tr("Log scale"));
    logScale_->setToolTip(tr("Plot log10(1 + count), so sparse bins stay visible next to full ones"));
    mismatch_ = new QLabel;
    mismatch_->setWordWrap(true);
    top->addWidget(logScale_);
    top->addWidget(mismatch_, 1);
    layout->addLayout(top);
    notBinned_ = new QLabel;
    notBinned_->setWordWrap(true);
    notBinned_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    notBinned_->setToolTip(tr("Values outside the bins' range [lo, hi) and NaNs are not binned but counted, per channel"));
    layout->addWidget(notBinned_);
    auto* charts = new QHBoxLayout;
    for (Chart* c : {&input_, &output_}) {
        c->chart = new QChart;
        c->chart->legend()->setAlignment(Qt::AlignRight);
        c->chart->setMargins(QMargins(4, 4, 4, 4));
        c->chart->addAxis(new QValueAxis, Qt::AlignBottom);
        c->chart->addAxis(new QValueAxis, Qt::AlignLeft);
        c->view = new QChartView(c->chart);
        c->view->setRenderHint(QPainter::Antialiasing);
        c->view->setMinimumHeight(160);
        charts->addWidget(c->view, 1);
    }
    input_.key = QStringLiteral("input");
    output_.key = QStringLiteral("output");
    layout->addLayout(charts, 1);
    connect(logScale_, &QCheckBox::toggled, this, &HistogramPanel::replot);
}

void HistogramPanel::setLogScale(bool on)
{
    logScale_->setChecked(on);
}

void HistogramPanel::showHistograms(const HistogramSet& histograms, bool resultOfOp)
{
    shown_ = histograms;
    resultOfOp_ = resultOfOp;
    replot();
}

void HistogramPanel::showMessage(const QString& text)
{
    shown_ = {};
    replot();
    mismatch_->setText(text);
}

QLineSeries* HistogramPanel::findSeries(const QString& chart, const QString& name) const
{
    for (const Chart* c : {&input_, &output_})
        if (c->key == chart) return qobject_cast<QLineSeries*>(gui::findSeries(c->chart, name));
    return nullptr;
}

QString HistogramPanel::mismatchText() const
{
    return mismatch_->text();
}

QString HistogramPanel::notBinnedText() const
{
    return notBinned_->text();
}

void HistogramPanel::replot()
{
    for (Chart* c : {&input_, &output_}) {
        c->chart->removeAllSeries();
        c->chart->axes(Qt::Vertical).value(0)->setRange(0, 1);  // plot() grows it to the tallest series
    }

    input_.view->setVisible(!resultOfOp_);
    if (resultOfOp_) {
        output_.chart->setTitle(tr("Histogram of the input: CPU (solid) and GPU (dashed)"));
    } else {
        input_.chart->setTitle(shown_.input ? tr("Input (computed on %1)").arg(shown_.backend) : tr("Input"));
        output_.chart->setTitle(tr("Output: CPU (solid) and GPU (dashed)"));
        if (shown_.input) plot(input_, shown_.backend, *shown_.input, false);
    }
    if (shown_.cpuOutput) plot(output_, QStringLiteral("cpu"), *shown_.cpuOutput, false);
    if (shown_.gpuOutput) plot(output_, QStringLiteral("gpu"), *shown_.gpuOutput, true);

    QStringList notBinnedLines;
    if (shown_.input && !resultOfOp_) notBinnedLines << notBinned(tr("input (%1)").arg(shown_.backend), *shown_.input);
    if (shown_.cpuOutput) notBinnedLines << notBinned(QStringLiteral("cpu"), *shown_.cpuOutput);
    if (shown_.gpuOutput) notBinnedLines << notBinned(QStringLiteral("gpu"), *shown_.gpuOutput);
    notBinned_->setText(notBinnedLines.isEmpty() ? QString()
                                                 : tr("Not binned (out of range / NaN) — %1").arg(notBinnedLines.join(QStringLiteral("; "))));

    QString mismatch;
    if (shown_.cpuOutput && shown_.gpuOutput) mismatch = describeMismatch(*shown_.cpuOutput, *shown_.gpuOutput);
    if (!mismatch.isEmpty()) {
        mismatch_->setStyleSheet(QStringLiteral("color: #c62828; font-weight: bold"));
        mismatch_->setText(mismatch);
    } else {
        mismatch_->setStyleSheet({});
        mismatch_->setText(shown_.cpuOutput && shown_.gpuOutput ? tr("CPU and GPU histograms match") : QString());
    }
}

void HistogramPanel::plot(Chart& chart, const QString& source, const HistogramResult& histogram, bool dashed)
{
    const HistogramBinning& b = histogram.binning;
    const double binWidth = (b.hi - b.lo) / b.bins;
    const bool log = logScale_->isChecked();
    auto* xAxis = qobject_cast<QValueAxis*>(chart.chart->axes(Qt::Horizontal).value(0));
    auto* yAxis = qobject_cast<QValueAxis*>(chart.chart->axes(Qt::Vertical).value(0));
    double peak = 0;
    for (size_t c = 0; c < histogram.counts.size(); ++c) {
        const QString label = QString::fromStdString(histogram.labels[c]);
        const QString name = source + QLatin1Char(' ') + label;
        auto* series = new QLineSeries;
        series->setName(name);
        QPen pen(channelColor(histogram.labels[c]));
        pen.setWidthF(1.2);
        if (dashed) pen.setStyle(Qt::DashLine);
        series->setPen(pen);
        chart.chart->addSeries(series);
        series->attachAxis(xAxis);
        series->attachAxis(yAxis);
        // The dashed GPU lines share the solid CPU lines' colours: one legend entry per channel.
        if (dashed)
            for (QLegendMarker* marker : chart.chart->legend()->markers(series)) marker->setVisible(false);
        QList<QPointF> points;
        points.reserve(qsizetype(histogram.counts[c].size()));
        for (size_t bin = 0; bin < histogram.counts[c].size(); ++bin) {
            const double count = double(histogram.counts[c][bin]);
            const double y = log ? std::log10(1.0 + count) : count;
            peak = std::max(peak, y);
            points.append({b.lo + double(bin) * binWidth, y});
        }
        replacePoints(series, points);
    }
    xAxis->setRange(b.lo, b.hi);
    xAxis->setTitleText(tr("value"));
    xAxis->setLabelFormat(QStringLiteral("%g"));
    yAxis->setMax(std::max(yAxis->max(), peak * 1.05));
    yAxis->applyNiceNumbers();
    yAxis->setLabelFormat(log ? QStringLiteral("%.1f") : QStringLiteral("%.0f"));
    yAxis->setTitleText(log ? tr("log10(1 + count)") : tr("count"));
}

} // namespace kl::gui
