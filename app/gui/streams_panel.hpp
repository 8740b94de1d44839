#pragma once
// One stream against N streams end to end, and the Gantt timeline of the GPU run.
#include "run_worker.hpp"

#include <QWidget>

class QChart;
class QChartView;
class QLabel;

namespace kl::gui {

class TimelineWidget;

class StreamsPanel : public QWidget {
    Q_OBJECT
public:
    explicit StreamsPanel(QWidget* parent = nullptr);

    void showOutcome(const RunOutcome& outcome);
    void showMessage(const QString& text);

    [[nodiscard]] TimelineWidget* timeline() const { return timeline_; }
    [[nodiscard]] QString summary() const;

private:
    QLabel* summary_ = nullptr;
    QChart* chart_ = nullptr;
    QChartView* chartView_ = nullptr;
    TimelineWidget* timeline_ = nullptr;
};

} // namespace kl::gui
