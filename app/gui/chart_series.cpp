#include "chart_series.hpp"

#include "timeline_widget.hpp"

#include <QChart>
#include <QValueAxis>
#include <QXYSeries>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace kl::gui {

void clearChart(QChart* chart)
{
    chart->removeAllSeries();
    for (QAbstractAxis* axis : chart->axes()) {
        chart->removeAxis(axis);
        delete axis;
    }
}

QXYSeries* findSeries(const QChart* chart, const QString& name)
{
    for (QAbstractSeries* s : chart->series())
        if (s->name() == name) return qobject_cast<QXYSeries*>(s);
    return nullptr;
}

void replacePoints(QXYSeries* series, const QList<QPointF>& points)
{
    series->replace(points);
}

QList<QPointF> minMaxEnvelope(const float* samples, size_t count, double rate, double fromSeconds,
                              double toSeconds, int columns)
{
    QList<QPointF> points;
    if (count == 0 || rate <= 0 || columns <= 0) return points;
    const auto toIndex = [&](double index) { return size_t(std::clamp(index, 0.0, double(count))); };
    const size_t first = toIndex(std::floor(fromSeconds * rate));
    const size_t last = std::min(count, toIndex(std::ceil(toSeconds * rate)) + 1);
    if (first >= last) return points;
    const size_t visible = last - first;
    if (visible <= size_t(columns) * 2) {
        points.reserve(qsizetype(visible));
        for (size_t i = first; i < last; ++i) points.append({double(i) / rate, double(samples[i])});
        return points;
    }
    points.reserve(qsizetype(columns) * 2);
    for (int column = 0; column < columns; ++column) {
        const size_t begin = first + visible * size_t(column) / size_t(columns);
        const size_t end = first + visible * size_t(column + 1) / size_t(columns);
        const auto [lo, hi] = std::minmax_element(samples + begin, samples + end);
        // Keep the pair in time order so the line goes through the extremes as the signal did.
        const bool minFirst = lo < hi;
        const float* a = minFirst ? lo : hi;
        const float* b = minFirst ? hi : lo;
        points.append({double(a - samples) / rate, double(*a)});
        points.append({double(b - samples) / rate, double(*b)});
    }
    return points;
}

QColor cpuBackendColour(app::Backend backend)
{
    return backend == app::Backend::CpuReference ? QColor(120, 120, 120) : QColor(40, 90, 220);
}

QColor gpuMeasureColour(size_t measure)
{
    static const QColor colours[] = {TimelineWidget::stageColor(gpu::Stage::Kernel), QColor(230, 130, 20),
                                     QColor(215, 40, 40)};
    return colours[measure % std::size(colours)];
}

std::pair<double, double> wholeDecades(double lo, double hi)
{
    const double decadeLo = std::pow(10.0, std::floor(std::log10(lo)));
    const double decadeHi = std::pow(10.0, std::ceil(std::log10(hi)));
    return {decadeLo, decadeHi > decadeLo ? decadeHi : decadeLo * 10};
}

double niceStep(double span, int ticks)
{
    if (!(span > 0)) return 1;
    const double raw = span / std::max(ticks, 1);
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0})
        if (m * magnitude >= raw) return m * magnitude;
    return 10 * magnitude;
}

void fitYAxis(QValueAxis* axis, const QList<QPointF>& points)
{
    double lo = INFINITY, hi = -INFINITY;
    for (const QPointF& p : points) {
        if (!std::isfinite(p.y())) continue;
        lo = std::min(lo, p.y());
        hi = std::max(hi, p.y());
    }
    if (lo > hi) {
        axis->setRange(-1, 1);
        return;
    }
    if (hi - lo < 1e-12) {
        axis->setRange(lo - 1, hi + 1);
        return;
    }
    const double margin = (hi - lo) * 0.05;
    axis->setRange(lo - margin, hi + margin);
    axis->applyNiceNumbers();
}

} // namespace kl::gui
