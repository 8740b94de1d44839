#pragma once
// Histograms of the input and of the outputs (per channel + luminance), CPU and GPU
// overlaid with any mismatch flagged and the values each left out of its bins; for the
// Histogram op, the op's own results.
#include "run_worker.hpp"

#include <QWidget>

class QChart;
class QChartView;
class QCheckBox;
class QLabel;
class QLineSeries;

namespace kl::gui {

class HistogramPanel : public QWidget {
    Q_OBJECT
public:
    explicit HistogramPanel(QWidget* parent = nullptr);

    /// Shows the job's histograms; `resultOfOp` when they are the Histogram op's results.
    void showHistograms(const HistogramSet& histograms, bool resultOfOp);
    /// No histograms (a signal input, a failed run): says why.
    void showMessage(const QString& text);

    /// A plotted series: chart "input" or "output", name "<source> <label>" ("gpu Y", "cpu 0"); null if absent.
    [[nodiscard]] QLineSeries* findSeries(const QString& chart, const QString& name) const;
    [[nodiscard]] QString mismatchText() const;
    /// The values outside the bins' range and the NaNs, per histogram shown and channel.
    [[nodiscard]] QString notBinnedText() const;
    void setLogScale(bool on);

private:
    struct Chart {
        QChartView* view = nullptr;
        QChart* chart = nullptr;
        QString key;  ///< "input" or "output" (findSeries)
    };
    void plot(Chart& chart, const QString& source, const HistogramResult& histogram, bool dashed);
    void replot();

    Chart input_, output_;
    QLabel* mismatch_ = nullptr;
    QLabel* notBinned_ = nullptr;
    QCheckBox* logScale_ = nullptr;
    HistogramSet shown_;
    bool resultOfOp_ = false;
};

} // namespace kl::gui
