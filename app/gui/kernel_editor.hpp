#pragma once
// The conv2d kernel as an editable matrix: size, taps, validation and normalise.
#include <opencv2/core/mat.hpp>

#include <QWidget>

class QLabel;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace kl::gui {

class KernelEditor : public QWidget {
    Q_OBJECT
public:
    explicit KernelEditor(QWidget* parent = nullptr);

    /// Shows `kernel` (CV_32F) without reporting an edit.
    void setKernel(const cv::Mat& kernel);
    /// The taps as typed (CV_32F); empty when a cell is not a finite number (see error()).
    [[nodiscard]] cv::Mat kernel() const;
    /// Why kernel() is empty ("row 2, column 3: 'x' is not a number"); empty when valid.
    [[nodiscard]] QString error() const { return error_; }
    [[nodiscard]] QTableWidget* table() const { return table_; }

signals:
    /// The user changed a tap, the size, or normalised.
    void edited();

private:
    void resize(int rows, int cols);
    void normalise();
    void validate();

    QSpinBox* rows_ = nullptr;
    QSpinBox* cols_ = nullptr;
    QTableWidget* table_ = nullptr;
    QPushButton* normalise_ = nullptr;
    QLabel* status_ = nullptr;
    QString error_;
    bool updating_ = false;
};

} // namespace kl::gui
