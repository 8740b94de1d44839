#include "operation_panel.hpp"

#include "kernel_editor.hpp"

#include "kernellab/error.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QStandardItemModel>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSpinBox>
#include <QTabWidget>
#include <QVBoxLayout>

#include <numeric>

namespace kl::gui {
namespace {

/// conv1d taps listed in the read-only taps field; longer designs show only their length.
constexpr size_t kMaxShownTaps = 4096;

QString text(bool flag)
{
    return flag ? QStringLiteral("true") : QStringLiteral("false");
}

QString number(double v)
{
    return QString::number(v, 'g', 10);
}

QDoubleSpinBox* doubleSpin(double lo, double hi, double value, int decimals, const QString& suffix = {})
{
    auto* spin = new QDoubleSpinBox;
    spin->setRange(lo, hi);
    spin->setDecimals(decimals);
    spin->setValue(value);
    spin->setSuffix(suffix);
    return spin;
}

/// A combo box listing `values` by their toString() names, `current` selected.
template <typename Values> QComboBox* nameCombo(const Values& values, const QString& current)
{
    auto* combo = new QComboBox;
    for (const auto& value : values) combo->addItem(QString::fromStdString(toString(value)));
    combo->setCurrentText(current);
    return combo;
}

QSpinBox* intSpin(int lo, int hi, int value, int step = 1)
{
    auto* spin = new QSpinBox;
    spin->setRange(lo, hi);
    spin->setSingleStep(step);
    spin->setValue(value);
    return spin;
}

/// "0.25, 0.5 0.25" -> taps; throws kl::InvalidArgument naming the bad entry.
std::vector<float> parseTaps(const QString& text)
{
    static const QRegularExpression separators(QStringLiteral("[,;\\s]+"));
    std::vector<float> taps;
    for (const QString& field : text.split(separators, Qt::SkipEmptyParts)) {
        bool ok = false;
        const double v = field.toDouble(&ok);
        if (!ok) throw InvalidArgument(QObject::tr("taps: '%1' is not a number").arg(field).toStdString());
        taps.push_back(float(v));
    }
    if (taps.empty()) throw InvalidArgument(QObject::tr("taps: type at least one tap").toStdString());
    return taps;
}

/// Which conv2d fields apply to a preset (the others are hidden and not passed on).
struct Conv2DFields {
    bool size, sigma, motion, borderValue;
};
Conv2DFields conv2dFields(const QString& preset, const QString& border)
{
    return {preset == QLatin1String("box") || preset == QLatin1String("gaussian"), preset == QLatin1String("gaussian"),
            preset == QLatin1String("motion-blur"), border == QLatin1String("constant")};
}

struct Conv1DFields {
    bool taps, sigma, cutoff, band, window, custom;
};
Conv1DFields conv1dFields(const QString& preset)
{
    const bool custom = preset == QLatin1String("custom");
    const bool lowOrHigh = preset == QLatin1String("low-pass") || preset == QLatin1String("high-pass");
    const bool band = preset == QLatin1String("band-pass");
    return {!custom && preset != QLatin1String("derivative"), preset == QLatin1String("gaussian"), lowOrHigh, band,
            lowOrHigh || band, custom};
}

} // namespace

OperationPanel::OperationPanel(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    tabs_ = new QTabWidget;
    tabs_->addTab(buildConv2DPage(), tr("Conv 2D"));
    tabs_->addTab(buildConv1DPage(), tr("Conv 1D"));
    tabs_->addTab(buildHistogramPage(), tr("Histogram"));
    auto* transposeNote = new QLabel(tr("Transpose swaps rows and columns of an image (all channels of a pixel move "
                                        "together), or turns a planar signal into an interleaved one. It has no "
                                        "parameters: it is a pure memory-bandwidth test."));
    transposeNote->setWordWrap(true);
    transposeNote->setAlignment(Qt::AlignTop);
    tabs_->addTab(transposeNote, tr("Transpose"));
    layout->addWidget(tabs_, 1);

    auto* gpuForm = new QFormLayout;
    variant_ = new QComboBox;
    variant_->setToolTip(tr("GPU kernel variant; auto lets the engine choose"));
    compareVariants_ = new QCheckBox(tr("Compare all variants"));
    compareVariants_->setToolTip(tr("Also run every other GPU variant and show one bar per variant"));
    gpuForm->addRow(tr("GPU variant"), variant_);
    gpuForm->addRow(QString(), compareVariants_);
    layout->addLayout(gpuForm);

    connect(tabs_, &QTabWidget::currentChanged, this, [this] {
        updateVariants();
        emit changed();
    });
    connect(variant_, &QComboBox::activated, this, &OperationPanel::changed);
    connect(compareVariants_, &QCheckBox::toggled, this, &OperationPanel::changed);
    updateVariants();
    updateVisibleRows();
    connect(this, &OperationPanel::changed, this, &OperationPanel::showPresetKernel);
    showPresetKernel();
}

QWidget* OperationPanel::buildConv2DPage()
{
    auto* page = new QWidget;
    form2d_ = new QFormLayout(page);
    preset2d_ = nameCombo(allConv2DPresets(), QStringLiteral("gaussian"));
    width_ = intSpin(1, kMaxConv2DKernelSize, 5, 2);
    height_ = intSpin(1, kMaxConv2DKernelSize, 5, 2);
    sizeRow_ = new QWidget;
    auto* sizeLayout = new QHBoxLayout(sizeRow_);
    sizeLayout->setContentsMargins(0, 0, 0, 0);
    sizeLayout->addWidget(width_);
    sizeLayout->addWidget(new QLabel(QStringLiteral("×")));
    sizeLayout->addWidget(height_);
    sizeLayout->addStretch(1);
    sigma2d_ = doubleSpin(0, 100, 0, 2, tr(" px"));
    sigma2d_->setSpecialValueText(tr("auto"));
    length_ = intSpin(1, kMaxConv2DKernelSize, 9, 2);
    angle_ = doubleSpin(-360, 360, 0, 1, QStringLiteral("°"));
    border_ = nameCombo(allBorderModes(), QStringLiteral("reflect101"));
    borderValue_ = doubleSpin(-1e9, 1e9, 0, 3);
    flip_ = new QCheckBox(tr("Flip kernel (true convolution)"));
    outputDepth_ = new QComboBox;
    outputDepth_->addItem(tr("same as input"));
    outputDepth_->addItem(tr("f32"));
    outputDepth_->setToolTip(tr("f32 keeps signed and fractional results (derivative filters need it)"));
    kernel2d_ = new KernelEditor;

    form2d_->addRow(tr("Preset"), preset2d_);
    form2d_->addRow(tr("Size (W × H)"), sizeRow_);
    form2d_->addRow(tr("Sigma"), sigma2d_);
    form2d_->addRow(tr("Length"), length_);
    form2d_->addRow(tr("Angle"), angle_);
    form2d_->addRow(tr("Border"), border_);
    form2d_->addRow(tr("Border value"), borderValue_);
    form2d_->addRow(QString(), flip_);
    form2d_->addRow(tr("Output depth"), outputDepth_);
    form2d_->addRow(kernel2d_);

    connect(preset2d_, &QComboBox::currentTextChanged, this, [this](const QString& name) {
        if (name != QLatin1String("custom"))
            outputDepth_->setCurrentIndex(presetWantsFloatOutput(parseConv2DPreset(name.toStdString())) ? 1 : 0);
        updateVisibleRows();
        emit changed();
    });
    connect(kernel2d_, &KernelEditor::edited, this, [this] {
        // Typing over a preset's taps makes the kernel custom.
        const QSignalBlocker block(preset2d_);
        preset2d_->setCurrentText(QStringLiteral("custom"));
        updateVisibleRows();
        emit changed();
    });
    connect(border_, &QComboBox::currentTextChanged, this, &OperationPanel::updateVisibleRows);
    for (QSpinBox* s : {width_, height_, length_}) connect(s, &QSpinBox::valueChanged, this, &OperationPanel::changed);
    for (QDoubleSpinBox* s : {sigma2d_, angle_, borderValue_})
        connect(s, &QDoubleSpinBox::valueChanged, this, &OperationPanel::changed);
    connect(border_, &QComboBox::currentIndexChanged, this, &OperationPanel::changed);
    connect(flip_, &QCheckBox::toggled, this, &OperationPanel::changed);
    connect(outputDepth_, &QComboBox::currentIndexChanged, this, &OperationPanel::changed);
    return page;
}

QWidget* OperationPanel::buildConv1DPage()
{
    auto* page = new QWidget;
    form1d_ = new QFormLayout(page);
    preset1d_ = nameCombo(allConv1DPresets(), QStringLiteral("gaussian"));
    taps_ = intSpin(1, int(kMaxConv1DTaps), 31);
    sigma1d_ = doubleSpin(0, 1e6, 0, 2, tr(" samples"));
    sigma1d_->setSpecialValueText(tr("auto (taps / 6)"));
    cutoff_ = doubleSpin(0, 1e9, 1000, 1, tr(" Hz"));
    low_ = doubleSpin(0, 1e9, 300, 1, tr(" Hz"));
    high_ = doubleSpin(0, 1e9, 3000, 1, tr(" Hz"));
    window_ = nameCombo(allWindows(), QStringLiteral("hamming"));
    mode_ = nameCombo(allConv1DModes(), QStringLiteral("same"));
    customTaps_ = new QLineEdit;
    customTaps_->setPlaceholderText(tr("taps, e.g. 0.25, 0.5, 0.25"));
    normalize1d_ = new QCheckBox(tr("Normalise"));
    normalize1d_->setToolTip(tr("Divide the taps by their sum"));
    tapsInfo_ = new QLabel;
    tapsInfo_->setWordWrap(true);

    form1d_->addRow(tr("Preset"), preset1d_);
    form1d_->addRow(tr("Taps"), taps_);
    form1d_->addRow(tr("Sigma"), sigma1d_);
    form1d_->addRow(tr("Cut-off"), cutoff_);
    form1d_->addRow(tr("Low edge"), low_);
    form1d_->addRow(tr("High edge"), high_);
    form1d_->addRow(tr("Window"), window_);
    form1d_->addRow(tr("Output"), mode_);
    form1d_->addRow(tr("Kernel"), customTaps_);
    form1d_->addRow(QString(), normalize1d_);
    form1d_->addRow(tapsInfo_);

    connect(preset1d_, &QComboBox::currentTextChanged, this, [this] {
        updateVisibleRows();
        emit changed();
    });
    connect(taps_, &QSpinBox::valueChanged, this, &OperationPanel::changed);
    for (QDoubleSpinBox* s : {sigma1d_, cutoff_, low_, high_})
        connect(s, &QDoubleSpinBox::valueChanged, this, &OperationPanel::changed);
    connect(window_, &QComboBox::currentIndexChanged, this, &OperationPanel::changed);
    connect(mode_, &QComboBox::currentIndexChanged, this, &OperationPanel::changed);
    connect(customTaps_, &QLineEdit::textEdited, this, &OperationPanel::changed);
    connect(normalize1d_, &QCheckBox::toggled, this, &OperationPanel::changed);
    return page;
}

QWidget* OperationPanel::buildHistogramPage()
{
    auto* page = new QWidget;
    auto* form = new QFormLayout(page);
    bins_ = intSpin(1, kMaxHistogramBins, 256);
    bins_->setToolTip(tr("For u16 and f32 images; u8 images always use 256 bins"));
    autoRange_ = new QCheckBox(tr("Automatic"));
    autoRange_->setToolTip(tr("u16: the full range 0..65536; f32: the data's finite min..max"));
    autoRange_->setChecked(true);
    rangeLo_ = doubleSpin(-1e12, 1e12, 0, 4);
    rangeHi_ = doubleSpin(-1e12, 1e12, 1, 4);
    luminance_ = new QCheckBox(tr("Luminance (colour images)"));
    luminance_->setChecked(true);
    form->addRow(tr("Bins"), bins_);
    form->addRow(tr("Range"), autoRange_);
    form->addRow(tr("From"), rangeLo_);
    form->addRow(tr("To (excluded)"), rangeHi_);
    form->addRow(QString(), luminance_);
    connect(autoRange_, &QCheckBox::toggled, this, [this](bool automatic) {
        rangeLo_->setEnabled(!automatic);
        rangeHi_->setEnabled(!automatic);
        emit changed();
    });
    rangeLo_->setEnabled(false);
    rangeHi_->setEnabled(false);
    connect(bins_, &QSpinBox::valueChanged, this, &OperationPanel::changed);
    for (QDoubleSpinBox* s : {rangeLo_, rangeHi_}) connect(s, &QDoubleSpinBox::valueChanged, this, &OperationPanel::changed);
    connect(luminance_, &QCheckBox::toggled, this, &OperationPanel::changed);
    return page;
}

app::Op OperationPanel::op() const
{
    return app::allOps().at(size_t(tabs_->currentIndex()));
}

void OperationPanel::setOp(app::Op op)
{
    tabs_->setCurrentIndex(int(op));
}

void OperationPanel::setInput(bool isSignal, double sampleRate)
{
    sampleRate_ = sampleRate;
    tabs_->setTabEnabled(int(app::Op::Conv2D), !isSignal);
    tabs_->setTabEnabled(int(app::Op::Histogram), !isSignal);
    tabs_->setTabEnabled(int(app::Op::Conv1D), isSignal);
    if (!tabs_->isTabEnabled(tabs_->currentIndex())) setOp(isSignal ? app::Op::Conv1D : app::Op::Conv2D);
    if (isSignal && sampleRate > 0) {
        const double nyquist = sampleRate / 2;
        // Filter edges that the new rate cannot represent move to sensible fractions of it.
        const QSignalBlocker blockCutoff(cutoff_), blockLow(low_), blockHigh(high_);
        if (cutoff_->value() >= nyquist) cutoff_->setValue(sampleRate / 8);
        if (high_->value() >= nyquist || low_->value() >= high_->value()) {
            low_->setValue(sampleRate / 16);
            high_->setValue(sampleRate / 4);
        }
    }
    showPresetKernel();
}

bool OperationPanel::setPreset(const QString& name)
{
    QComboBox* presets = op() == app::Op::Conv2D ? preset2d_ : (op() == app::Op::Conv1D ? preset1d_ : nullptr);
    if (!presets || presets->findText(name) < 0) return false;
    presets->setCurrentText(name);
    return true;
}

QString OperationPanel::conv2dPreset() const
{
    return preset2d_->currentText();
}

QString OperationPanel::conv1dPreset() const
{
    return preset1d_->currentText();
}

bool OperationPanel::compareVariants() const
{
    return compareVariants_->isChecked();
}

void OperationPanel::setCompareVariants(bool on)
{
    compareVariants_->setChecked(on);
}

void OperationPanel::updateVariants()
{
    const QString current = variant_->currentText();
    variant_->clear();
    variant_->addItem(QStringLiteral("auto"));
    variant_->setItemData(0, tr("the engine picks the fastest variant that applies"), Qt::ToolTipRole);
    for (const gpu::VariantInfo& v : app::gpuVariantInfo(op())) {
        variant_->addItem(QString::fromStdString(v.name));
        variant_->setItemData(variant_->count() - 1, QString::fromStdString(v.description), Qt::ToolTipRole);
    }
    if (!customVariant_.isEmpty()) {
        variant_->addItem(customVariant_);
        variant_->setItemData(variant_->count() - 1, tr("your kernel, from the Kernel source dock"), Qt::ToolTipRole);
    }
    variant_->setCurrentIndex(std::max(0, variant_->findText(current)));
}

bool OperationPanel::setVariant(const QString& name)
{
    const int index = variant_->findText(name);
    if (index < 0) return false;
    variant_->setCurrentIndex(index);
    emit changed();
    return true;
}

void OperationPanel::setCustomVariant(const QString& variant)
{
    if (variant == customVariant_) return;
    customVariant_ = variant;
    updateVariants();
}

void OperationPanel::showVariantApplicability(const app::RunRequest& request, const gpu::DeviceInfo& device)
{
    if (request.op != op()) return;
    auto* model = qobject_cast<QStandardItemModel*>(variant_->model());
    for (const gpu::VariantInfo& v : app::gpuVariantInfo(request)) {
        const int index = variant_->findText(QString::fromStdString(v.name));
        if (index < 0) continue;  // a user kernel the panel does not offer (yet)
        QStandardItem* item = model->item(index);
        const QString reason = app::whyNotApplicable(request, item->text(), device);
        item->setEnabled(reason.isEmpty());
        item->setToolTip(reason.isEmpty() ? QString::fromStdString(v.description) : tr("Not for this input: %1").arg(reason));
    }
}

void OperationPanel::updateVisibleRows()
{
    const Conv2DFields f2 = conv2dFields(conv2dPreset(), border_->currentText());
    form2d_->setRowVisible(sizeRow_, f2.size);
    form2d_->setRowVisible(sigma2d_, f2.sigma);
    form2d_->setRowVisible(length_, f2.motion);
    form2d_->setRowVisible(angle_, f2.motion);
    form2d_->setRowVisible(borderValue_, f2.borderValue);

    const Conv1DFields f1 = conv1dFields(conv1dPreset());
    form1d_->setRowVisible(taps_, f1.taps);
    form1d_->setRowVisible(sigma1d_, f1.sigma);
    form1d_->setRowVisible(cutoff_, f1.cutoff);
    form1d_->setRowVisible(low_, f1.band);
    form1d_->setRowVisible(high_, f1.band);
    form1d_->setRowVisible(window_, f1.window);
    form1d_->setRowVisible(normalize1d_, f1.custom);
    customTaps_->setReadOnly(!f1.custom);
}

app::ParameterMap OperationPanel::parameters() const
{
    app::ParameterMap p;
    p[QStringLiteral("op")] = app::toString(op());
    p[QStringLiteral("variant")] = variant_->currentText();
    switch (op()) {
    case app::Op::Conv2D: {
        const QString preset = conv2dPreset();
        const Conv2DFields fields = conv2dFields(preset, border_->currentText());
        // A custom kernel comes from the editor (applyCustomKernel), not from a preset.
        if (preset != QLatin1String("custom")) p[QStringLiteral("preset")] = preset;
        if (fields.size) p[QStringLiteral("size")] = QStringLiteral("%1x%2").arg(width_->value()).arg(height_->value());
        if (fields.sigma) p[QStringLiteral("sigma")] = number(sigma2d_->value());
        if (fields.motion) {
            p[QStringLiteral("length")] = QString::number(length_->value());
            p[QStringLiteral("angle")] = number(angle_->value());
        }
        p[QStringLiteral("border")] = border_->currentText();
        if (fields.borderValue) p[QStringLiteral("border-value")] = number(borderValue_->value());
        p[QStringLiteral("flip")] = text(flip_->isChecked());
        p[QStringLiteral("float-output")] = text(outputDepth_->currentIndex() == 1);
        break;
    }
    case app::Op::Conv1D: {
        const QString preset = conv1dPreset();
        const Conv1DFields fields = conv1dFields(preset);
        if (!fields.custom) p[QStringLiteral("preset")] = preset;
        if (fields.taps) p[QStringLiteral("taps")] = QString::number(taps_->value());
        if (fields.sigma) p[QStringLiteral("sigma")] = number(sigma1d_->value());
        if (fields.cutoff) p[QStringLiteral("cutoff")] = number(cutoff_->value());
        if (fields.band) {
            p[QStringLiteral("low")] = number(low_->value());
            p[QStringLiteral("high")] = number(high_->value());
        }
        if (fields.window) p[QStringLiteral("window")] = window_->currentText();
        p[QStringLiteral("mode")] = mode_->currentText();
        break;
    }
    case app::Op::Histogram:
        p[QStringLiteral("bins")] = QString::number(bins_->value());
        if (!autoRange_->isChecked())
            p[QStringLiteral("range")] = number(rangeLo_->value()) + QLatin1Char(',') + number(rangeHi_->value());
        if (!luminance_->isChecked()) p[QStringLiteral("no-luminance")] = text(true);
        break;
    case app::Op::Transpose: break;
    }
    return p;
}

void OperationPanel::applyCustomKernel(app::RunRequest& request) const
{
    if (op() == app::Op::Conv2D && conv2dPreset() == QLatin1String("custom")) {
        Conv2DPresetParams params;
        params.custom = kernel2d_->kernel();
        if (params.custom.empty()) throw InvalidArgument(kernel2d_->error().toStdString());
        request.conv2d.kernel = makeConv2DKernel(Conv2DPreset::Custom, params);
        request.conv2d.floatOutput = outputDepth_->currentIndex() == 1;
        request.opParameters[QStringLiteral("preset")] = QStringLiteral("custom");
    } else if (op() == app::Op::Conv1D && conv1dPreset() == QLatin1String("custom")) {
        Conv1DPresetParams params;
        params.custom = parseTaps(customTaps_->text());
        params.normalize = normalize1d_->isChecked();
        request.conv1d.taps = makeConv1DKernel(Conv1DPreset::Custom, params);
        request.opParameters[QStringLiteral("preset")] = QStringLiteral("custom");
        request.opParameters[QStringLiteral("normalize")] = params.normalize;
    }
}

void OperationPanel::showPresetKernel()
{
    app::RunRequest preview;
    preview.signal = Signal(1, 0, sampleRate_);
    try {
        app::configureRequest(preview, parameters());
        applyCustomKernel(preview);
    } catch (const InvalidArgument&) {
        return;  // a run reports the bad parameter; the last good kernel stays on show
    }
    if (op() == app::Op::Conv2D && conv2dPreset() != QLatin1String("custom")) {
        kernel2d_->setKernel(preview.conv2d.kernel);
    } else if (op() == app::Op::Conv1D) {
        const std::vector<float>& taps = preview.conv1d.taps;
        if (conv1dPreset() != QLatin1String("custom")) {
            QStringList shown;
            for (size_t i = 0; i < std::min(taps.size(), kMaxShownTaps); ++i)
                shown << QString::number(double(taps[i]), 'g', 7);
            customTaps_->setText(taps.size() <= kMaxShownTaps ? shown.join(QStringLiteral(", ")) : QString());
            customTaps_->setCursorPosition(0);
        }
        tapsInfo_->setText(tr("%n tap(s), sum %1", nullptr, int(taps.size()))
                               .arg(std::accumulate(taps.begin(), taps.end(), 0.0), 0, 'g', 6));
    }
}

} // namespace kl::gui
