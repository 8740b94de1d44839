#pragma once
// A Gantt chart of one GPU run: a row per stream, each H2D / kernel / D2H chunk a coloured bar.
#include "kernellab/gpu/engine.hpp"

#include <QWidget>

#include <vector>

namespace kl::gui {

class TimelineWidget : public QWidget {
    Q_OBJECT
public:
    explicit TimelineWidget(QWidget* parent = nullptr);

    void setTimeline(std::vector<gpu::TimelineEntry> entries);
    [[nodiscard]] const std::vector<gpu::TimelineEntry>& entries() const { return entries_; }
    /// The colour a stage is drawn in (the legend's too).
    static QColor stageColor(gpu::Stage stage);

    [[nodiscard]] QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    /// Where the bars go (the widget less the labels, legend and axis).
    [[nodiscard]] QRectF plotArea() const;
    [[nodiscard]] QRectF barRect(const gpu::TimelineEntry& entry) const;
    [[nodiscard]] int streamCount() const;

    std::vector<gpu::TimelineEntry> entries_;
    double endMs_ = 0;
};

} // namespace kl::gui
