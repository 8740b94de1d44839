#pragma once
// "Generate test input…": a synthetic image or signal (generators.hpp).
#include "generators.hpp"

#include <QDialog>

class QComboBox;
class QDoubleSpinBox;
class QRadioButton;
class QSpinBox;
class QStackedWidget;

namespace kl::gui {

class GenerateDialog : public QDialog {
    Q_OBJECT
public:
    explicit GenerateDialog(QWidget* parent = nullptr);
    [[nodiscard]] app::GenerateSpec spec() const;

private:
    QRadioButton* image_ = nullptr;
    QStackedWidget* pages_ = nullptr;
    QSpinBox* width_ = nullptr;
    QSpinBox* height_ = nullptr;
    QComboBox* depth_ = nullptr;
    QComboBox* channels_ = nullptr;
    QComboBox* imagePattern_ = nullptr;
    QSpinBox* frames_ = nullptr;
    QSpinBox* signalChannels_ = nullptr;
    QDoubleSpinBox* rate_ = nullptr;
    QComboBox* signalPattern_ = nullptr;
};

} // namespace kl::gui
