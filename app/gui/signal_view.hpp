#pragma once
// Input, CPU output and GPU output waveforms, one chart each, with a shared time axis,
// a channel selector and the sample values under the cursor.
#include "kernellab/signal.hpp"

#include <QWidget>

#include <array>
#include <memory>

class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QLineSeries;
class QValueAxis;

namespace kl::gui {

class SignalView : public QWidget {
    Q_OBJECT
public:
    enum class Trace { Input, Cpu, Gpu };

    explicit SignalView(QWidget* parent = nullptr);

    /// Shows `signal` in a trace under `caption`; no signal shows `caption` alone (why there is none).
    void setTrace(Trace trace, std::shared_ptr<const Signal> signal, const QString& caption);
    /// The signal behind a trace (what the engine produced).
    [[nodiscard]] const Signal& signal(Trace trace) const;
    [[nodiscard]] QLineSeries* series(Trace trace) const;
    [[nodiscard]] QString caption(Trace trace) const;
    /// The channel shown (clamped per trace to the channels it has).
    [[nodiscard]] int channel() const;
    void setChannel(int channel);
    /// The whole length of the longest signal.
    void resetZoom();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct TraceView {
        QChartView* view = nullptr;
        QChart* chart = nullptr;
        QLineSeries* series = nullptr;
        QValueAxis* time = nullptr;
        QValueAxis* value = nullptr;
        std::shared_ptr<const Signal> signal;
    };
    void setTimeRange(double from, double to);
    void redraw();
    void showValuesAt(double seconds);
    [[nodiscard]] double duration() const;

    std::array<TraceView, 3> traces_;
    QComboBox* channel_ = nullptr;
    QLabel* hover_ = nullptr;
    bool settingRange_ = false;
};

} // namespace kl::gui
