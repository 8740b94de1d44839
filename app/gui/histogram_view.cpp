#include "histogram_view.hpp"

#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

namespace kl::gui {

HistogramView::HistogramView(QWidget* parent)
    : QWidget(parent)
    , fit_(new ViewSync(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    auto* splitter = new QSplitter;
    auto* inputBox = new QWidget;
    auto* column = new QVBoxLayout(inputBox);
    column->setContentsMargins(0, 0, 0, 0);
    caption_ = new QLabel(tr("Input"));
    caption_->setStyleSheet(QStringLiteral("font-weight: bold"));
    caption_->setWordWrap(true);
    input_ = new ImageView;
    column->addWidget(caption_);
    column->addWidget(input_, 1);
    fit_->add(input_);
    histograms_ = new HistogramPanel;
    failures_ = new QLabel;
    failures_->setWordWrap(true);
    failures_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    failures_->setStyleSheet(QStringLiteral("color: #c62828"));
    auto* resultBox = new QWidget;
    auto* results = new QVBoxLayout(resultBox);
    results->setContentsMargins(0, 0, 0, 0);
    results->addWidget(histograms_, 1);
    results->addWidget(failures_);
    splitter->addWidget(inputBox);
    splitter->addWidget(resultBox);
    splitter->setStretchFactor(0, 0);
    splitter->setStretchFactor(1, 1);
    // The input is context; the histograms are the result.
    splitter->setSizes({280, 1000});
    layout->addWidget(splitter);
}

void HistogramView::setInput(const cv::Mat& image, const DisplayImage& display, const QString& caption)
{
    input_->setImage(image, display);
    caption_->setText(caption);
    caption_->setToolTip(caption);
    fit_->fit();
}

void HistogramView::showResults(const HistogramSet& histograms, const QStringList& failures)
{
    histograms_->showHistograms(histograms, true);
    failures_->setText(failures.join(QLatin1Char('\n')));
}

void HistogramView::showMessage(const QString& text)
{
    histograms_->showMessage(text);
    failures_->clear();
}

QString HistogramView::failuresText() const
{
    return failures_->text();
}

QString HistogramView::inputCaption() const
{
    return caption_->text();
}

} // namespace kl::gui
