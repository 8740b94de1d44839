#pragma once
// Feeding Qt Charts series in bulk: one replace() per update (one repaint, not one per
// point, as Qt's audio example does) and min/max decimation for long signals.
#include "session.hpp"

#include <QColor>
#include <QList>
#include <QPointF>

#include <cstddef>
#include <utility>

class QChart;
class QString;
class QXYSeries;
class QValueAxis;

namespace kl::gui {

/// Removes and deletes every series and axis of `chart` (QChart::removeAxis hands the axis back
/// to the caller, so a chart redrawn per run would otherwise keep every axis it ever had).
void clearChart(QChart* chart);

/// The series of `chart` named `name` (as QXYSeries; nullptr if none or not an XY series).
QXYSeries* findSeries(const QChart* chart, const QString& name);

/// Replaces every point of `series` at once.
void replacePoints(QXYSeries* series, const QList<QPointF>& points);

/// Samples [0, count) at `rate` Hz between `fromSeconds` and `toSeconds`, as points (t, value).
/// With more samples than 2 * `columns`, each pixel column contributes its min and max
/// sample, so every peak stays visible while the series has O(columns) points.
QList<QPointF> minMaxEnvelope(const float* samples, size_t count, double rate, double fromSeconds,
                              double toSeconds, int columns);

/// The colour of a CPU backend's line or point in every chart (cpu-ref grey, cpu-opencv blue).
QColor cpuBackendColour(app::Backend backend);

/// The colour of a GPU measure (sweepGpuMeasures' order: kernel alone, end to end pageable, end to
/// end pinned). The kernel's is the timeline's, so a kernel reads alike in the sweep and the roofline.
QColor gpuMeasureColour(size_t measure);

/// `lo` and `hi` widened to whole decades, so that a log axis over them has labelled ticks.
std::pair<double, double> wholeDecades(double lo, double hi);

/// A "nice" tick step (1, 2 or 5 times a power of ten) giving about `ticks` intervals over `span`.
double niceStep(double span, int ticks);

/// Sets `axis` to the y extent of `points` with a small margin (a flat trace gets +-1 around its value).
void fitYAxis(QValueAxis* axis, const QList<QPointF>& points);

} // namespace kl::gui
