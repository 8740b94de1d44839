#pragma once
// The main area for the Histogram op: its histograms large (HistogramPanel: per channel and
// luminance, CPU solid and GPU dashed, mismatches, log scale, what was not binned) with the
// input image small beside them, fitted to its pane.
#include "histogram_panel.hpp"
#include "image_view.hpp"

#include <QWidget>

class QLabel;

namespace kl::gui {

class HistogramView : public QWidget {
    Q_OBJECT
public:
    explicit HistogramView(QWidget* parent = nullptr);

    void setInput(const cv::Mat& image, const DisplayImage& display, const QString& caption);
    /// The op's histograms, and why a backend has none (its error).
    void showResults(const HistogramSet& histograms, const QStringList& failures);
    void showMessage(const QString& text);
    [[nodiscard]] QString failuresText() const;
    [[nodiscard]] ImageView* input() const { return input_; }
    [[nodiscard]] QString inputCaption() const;
    [[nodiscard]] HistogramPanel* histograms() const { return histograms_; }

private:
    QLabel* caption_ = nullptr;
    ImageView* input_ = nullptr;
    ViewSync* fit_ = nullptr;
    HistogramPanel* histograms_ = nullptr;
    QLabel* failures_ = nullptr;
};

} // namespace kl::gui
