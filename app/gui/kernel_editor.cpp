#include "kernel_editor.hpp"

#include "kernellab/conv2d.hpp"

#include <opencv2/core.hpp>

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace kl::gui {
namespace {

QSpinBox* oddSpinBox(const QString& tip)
{
    auto* spin = new QSpinBox;
    spin->setRange(1, kMaxConv2DKernelSize);
    spin->setSingleStep(2);
    spin->setToolTip(tip);
    return spin;
}

QString tapText(double v)
{
    return QString::number(v, 'g', 7);
}

} // namespace

KernelEditor::KernelEditor(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* sizeRow = new QHBoxLayout;
    rows_ = oddSpinBox(tr("Kernel rows (odd)"));
    cols_ = oddSpinBox(tr("Kernel columns (odd)"));
    normalise_ = new QPushButton(tr("Normalise"));
    normalise_->setToolTip(tr("Divide every tap by the sum of the taps, so a flat image keeps its level"));
    sizeRow->addWidget(new QLabel(tr("Kernel")));
    sizeRow->addWidget(rows_);
    sizeRow->addWidget(new QLabel(QStringLiteral("×")));
    sizeRow->addWidget(cols_);
    sizeRow->addStretch(1);
    sizeRow->addWidget(normalise_);
    layout->addLayout(sizeRow);
    table_ = new QTableWidget;
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->setMinimumHeight(120);
    table_->setToolTip(tr("Editing a tap makes the preset custom"));
    layout->addWidget(table_, 1);
    status_ = new QLabel;
    status_->setWordWrap(true);
    layout->addWidget(status_);

    const auto resizeFromSpins = [this] {
        if (updating_) return;
        // Even sizes are stepped over: conv2d kernels have a centre tap.
        resize(rows_->value() | 1, cols_->value() | 1);
        emit edited();
    };
    connect(rows_, &QSpinBox::valueChanged, this, resizeFromSpins);
    connect(cols_, &QSpinBox::valueChanged, this, resizeFromSpins);
    connect(normalise_, &QPushButton::clicked, this, &KernelEditor::normalise);
    connect(table_, &QTableWidget::itemChanged, this, [this] {
        if (updating_) return;
        validate();
        emit edited();
    });
}

void KernelEditor::setKernel(const cv::Mat& kernel)
{
    updating_ = true;
    rows_->setValue(kernel.rows);
    cols_->setValue(kernel.cols);
    table_->setRowCount(kernel.rows);
    table_->setColumnCount(kernel.cols);
    for (int r = 0; r < kernel.rows; ++r)
        for (int c = 0; c < kernel.cols; ++c) table_->setItem(r, c, new QTableWidgetItem(tapText(kernel.at<float>(r, c))));
    updating_ = false;
    validate();
}

cv::Mat KernelEditor::kernel() const
{
    if (!error_.isEmpty()) return {};
    cv::Mat kernel(table_->rowCount(), table_->columnCount(), CV_32F);
    for (int r = 0; r < kernel.rows; ++r)
        for (int c = 0; c < kernel.cols; ++c) kernel.at<float>(r, c) = table_->item(r, c)->text().toFloat();
    return kernel;
}

void KernelEditor::resize(int rows, int cols)
{
    updating_ = true;
    const int oldRows = table_->rowCount(), oldCols = table_->columnCount();
    table_->setRowCount(rows);
    table_->setColumnCount(cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            if (r >= oldRows || c >= oldCols || !table_->item(r, c)) table_->setItem(r, c, new QTableWidgetItem(QStringLiteral("0")));
    rows_->setValue(rows);
    cols_->setValue(cols);
    updating_ = false;
    validate();
}

void KernelEditor::normalise()
{
    const cv::Mat taps = kernel();
    if (taps.empty()) return;
    const double sum = cv::sum(taps)[0];
    if (std::abs(sum) < 1e-12) {
        status_->setText(tr("The taps sum to 0 (a derivative or edge kernel): there is nothing to normalise by."));
        return;
    }
    Conv2DPresetParams params;
    params.custom = taps;
    params.normalize = true;
    setKernel(makeConv2DKernel(Conv2DPreset::Custom, params));
    emit edited();
}

void KernelEditor::validate()
{
    // Colouring a cell is a change too; it must not read as the user's edit.
    const bool wasUpdating = updating_;
    updating_ = true;
    error_.clear();
    double sum = 0;
    for (int r = 0; r < table_->rowCount(); ++r)
        for (int c = 0; c < table_->columnCount(); ++c) {
            QTableWidgetItem* item = table_->item(r, c);
            bool ok = false;
            const double v = item ? item->text().trimmed().toDouble(&ok) : 0;
            const bool valid = ok && std::isfinite(v) && std::isfinite(float(v));
            if (item) item->setBackground(valid ? QBrush() : QBrush(QColor(255, 205, 210)));
            if (valid) sum += v;
            else if (error_.isEmpty())
                error_ = tr("Kernel row %1, column %2: '%3' is not a finite number")
                             .arg(r + 1)
                             .arg(c + 1)
                             .arg(item ? item->text() : QString());
        }
    status_->setStyleSheet(error_.isEmpty() ? QString() : QStringLiteral("color: #c62828"));
    status_->setText(error_.isEmpty() ? tr("Sum of taps: %1").arg(tapText(sum)) : error_);
    updating_ = wasUpdating;
}

} // namespace kl::gui
