#include "generate_dialog.hpp"

#include "kernellab/image.hpp"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QRadioButton>
#include <QSpinBox>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <limits>

namespace kl::gui {

GenerateDialog::GenerateDialog(QWidget* parent)
    : QDialog(parent)
{
    setWindowTitle(tr("Generate test input"));
    auto* layout = new QVBoxLayout(this);
    auto* kinds = new QHBoxLayout;
    image_ = new QRadioButton(tr("Image"));
    auto* signal = new QRadioButton(tr("Signal"));
    image_->setChecked(true);
    kinds->addWidget(image_);
    kinds->addWidget(signal);
    kinds->addStretch(1);
    layout->addLayout(kinds);

    auto* imagePage = new QWidget;
    auto* imageForm = new QFormLayout(imagePage);
    width_ = new QSpinBox;
    height_ = new QSpinBox;
    for (QSpinBox* s : {width_, height_}) {
        s->setRange(1, 65536);
        s->setValue(1024);
    }
    depth_ = new QComboBox;
    depth_->addItems({QStringLiteral("u8"), QStringLiteral("u16"), QStringLiteral("f32")});
    channels_ = new QComboBox;
    channels_->addItems({QStringLiteral("1"), QStringLiteral("3"), QStringLiteral("4")});
    imagePattern_ = new QComboBox;
    for (app::ImagePattern p : {app::ImagePattern::Noise, app::ImagePattern::Gradient, app::ImagePattern::Checker,
                                app::ImagePattern::Constant})
        imagePattern_->addItem(app::toString(p));
    imageForm->addRow(tr("Width"), width_);
    imageForm->addRow(tr("Height"), height_);
    imageForm->addRow(tr("Depth"), depth_);
    imageForm->addRow(tr("Channels"), channels_);
    imageForm->addRow(tr("Pattern"), imagePattern_);

    auto* signalPage = new QWidget;
    auto* signalForm = new QFormLayout(signalPage);
    frames_ = new QSpinBox;
    frames_->setRange(1, std::numeric_limits<int>::max());
    frames_->setValue(1 << 20);
    signalChannels_ = new QSpinBox;
    signalChannels_->setRange(1, 64);
    rate_ = new QDoubleSpinBox;
    rate_->setRange(1, 1e9);
    rate_->setDecimals(1);
    rate_->setValue(48000);
    rate_->setSuffix(tr(" Hz"));
    signalPattern_ = new QComboBox;
    for (app::SignalPattern p : {app::SignalPattern::Noise, app::SignalPattern::Chirp, app::SignalPattern::Sines})
        signalPattern_->addItem(app::toString(p));
    signalForm->addRow(tr("Samples"), frames_);
    signalForm->addRow(tr("Channels"), signalChannels_);
    signalForm->addRow(tr("Sample rate"), rate_);
    signalForm->addRow(tr("Pattern"), signalPattern_);

    pages_ = new QStackedWidget;
    pages_->addWidget(imagePage);
    pages_->addWidget(signalPage);
    layout->addWidget(pages_);
    connect(image_, &QRadioButton::toggled, this, [this](bool image) { pages_->setCurrentIndex(image ? 0 : 1); });

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
}

app::GenerateSpec GenerateDialog::spec() const
{
    app::GenerateSpec spec;
    spec.image = image_->isChecked();
    spec.cols = width_->value();
    spec.rows = height_->value();
    spec.depth = parseDepth(depth_->currentText().toStdString());
    spec.channels = channels_->currentText().toInt();
    spec.imagePattern = app::parseImagePattern(imagePattern_->currentText());
    spec.frames = size_t(frames_->value());
    if (!spec.image) spec.channels = signalChannels_->value();
    spec.rate = rate_->value();
    spec.signalPattern = app::parseSignalPattern(signalPattern_->currentText());
    return spec;
}

} // namespace kl::gui
