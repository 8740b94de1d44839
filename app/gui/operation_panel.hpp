#pragma once
// The operation and its parameters (Conv 2D | Conv 1D | Histogram | Transpose), the GPU
// variant, and "compare all variants". It produces op_config's parameter map, so the GUI
// and the CLI turn the same parameters into the same request.
#include "op_config.hpp"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTabWidget;

namespace kl::gui {

class KernelEditor;

class OperationPanel : public QWidget {
    Q_OBJECT
public:
    explicit OperationPanel(QWidget* parent = nullptr);

    [[nodiscard]] app::Op op() const;
    void setOp(app::Op op);
    /// Offers the ops that take this input (conv1d: signals; conv2d, histogram: images;
    /// transpose: both) and fits the filter frequencies to a signal's sample rate.
    void setInput(bool isSignal, double sampleRate);
    /// Selects a preset of the current op by name ("gaussian"); false when it has none of that name.
    bool setPreset(const QString& name);

    /// The op's parameters as op_config names them (op, preset, size, border, ..., variant).
    [[nodiscard]] app::ParameterMap parameters() const;
    /// Puts a custom kernel typed here into the request (op_config reads custom kernels from
    /// files only); throws kl::InvalidArgument when the typed taps are not valid.
    void applyCustomKernel(app::RunRequest& request) const;

    [[nodiscard]] bool compareVariants() const;
    void setCompareVariants(bool on);
    /// Disables the GPU variants that cannot run `request` on `device`, each with the reason as its
    /// tooltip (the others keep their descriptions).
    void showVariantApplicability(const app::RunRequest& request, const gpu::DeviceInfo& device);
    /// Offers a user kernel's variant ("custom:<name>", Kernel source dock) after the built-in ones;
    /// empty: none.
    void setCustomVariant(const QString& variant);
    /// Selects a GPU variant the combo offers; false when it offers none of that name.
    bool setVariant(const QString& name);
    [[nodiscard]] KernelEditor* kernelEditor() const { return kernel2d_; }

signals:
    /// Any parameter changed (the window re-runs after a short pause).
    void changed();

private:
    QWidget* buildConv2DPage();
    QWidget* buildConv1DPage();
    QWidget* buildHistogramPage();
    void updateVisibleRows();
    /// Shows the kernel the current preset gives, configured as a run would be (op_config).
    void showPresetKernel();
    void updateVariants();
    [[nodiscard]] QString conv2dPreset() const;
    [[nodiscard]] QString conv1dPreset() const;

    QTabWidget* tabs_ = nullptr;
    double sampleRate_ = 0;  ///< of the signal input (conv1d filter designs need it)
    // Conv 2D
    QFormLayout* form2d_ = nullptr;
    QComboBox* preset2d_ = nullptr;
    QSpinBox* width_ = nullptr;
    QSpinBox* height_ = nullptr;
    QWidget* sizeRow_ = nullptr;
    QDoubleSpinBox* sigma2d_ = nullptr;
    QSpinBox* length_ = nullptr;
    QDoubleSpinBox* angle_ = nullptr;
    QComboBox* border_ = nullptr;
    QDoubleSpinBox* borderValue_ = nullptr;
    QCheckBox* flip_ = nullptr;
    QComboBox* outputDepth_ = nullptr;
    KernelEditor* kernel2d_ = nullptr;
    // Conv 1D
    QFormLayout* form1d_ = nullptr;
    QComboBox* preset1d_ = nullptr;
    QSpinBox* taps_ = nullptr;
    QDoubleSpinBox* sigma1d_ = nullptr;
    QDoubleSpinBox* cutoff_ = nullptr;
    QDoubleSpinBox* low_ = nullptr;
    QDoubleSpinBox* high_ = nullptr;
    QComboBox* window_ = nullptr;
    QComboBox* mode_ = nullptr;
    QLineEdit* customTaps_ = nullptr;
    QCheckBox* normalize1d_ = nullptr;
    QLabel* tapsInfo_ = nullptr;
    // Histogram
    QSpinBox* bins_ = nullptr;
    QCheckBox* autoRange_ = nullptr;
    QDoubleSpinBox* rangeLo_ = nullptr;
    QDoubleSpinBox* rangeHi_ = nullptr;
    QCheckBox* luminance_ = nullptr;
    // GPU
    QComboBox* variant_ = nullptr;
    QString customVariant_;
    QCheckBox* compareVariants_ = nullptr;
};

} // namespace kl::gui
