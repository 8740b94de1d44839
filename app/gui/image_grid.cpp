#include "image_grid.hpp"

#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace kl::gui {

ImageGrid::ImageGrid(QWidget* parent)
    : QWidget(parent)
    , sync_(new ViewSync(this))
{
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(2, 2, 2, 2);
    grid->setSpacing(4);
    const char* const titles[] = {QT_TR_NOOP("Input"), QT_TR_NOOP("CPU"), QT_TR_NOOP("GPU"), QT_TR_NOOP("Difference")};
    for (size_t i = 0; i < panes_.size(); ++i) {
        PaneWidgets& pane = panes_[i];
        auto* box = new QWidget;
        auto* column = new QVBoxLayout(box);
        column->setContentsMargins(0, 0, 0, 0);
        column->setSpacing(2);
        pane.caption = new QLabel(tr(titles[i]));
        pane.caption->setTextInteractionFlags(Qt::TextSelectableByMouse);
        pane.caption->setStyleSheet(QStringLiteral("font-weight: bold"));
        // Long captions are clipped rather than widening the grid (the tooltip has all of it).
        pane.caption->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
        pane.view = new ImageView;
        pane.value = new QLabel(QStringLiteral(" "));
        pane.value->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
        pane.value->setTextInteractionFlags(Qt::TextSelectableByMouse);
        column->addWidget(pane.caption);
        column->addWidget(pane.view, 1);
        column->addWidget(pane.value);
        grid->addWidget(box, int(i / 2), int(i % 2));
        sync_->add(pane.view);
        connect(pane.view, &ImageView::pixelHovered, this, &ImageGrid::showValuesAt);
    }
}

void ImageGrid::setCaption(Pane pane, const QString& caption)
{
    panes_[size_t(pane)].caption->setText(caption);
    panes_[size_t(pane)].caption->setToolTip(caption);
}

QString ImageGrid::caption(Pane pane) const
{
    return panes_[size_t(pane)].caption->text();
}

QString ImageGrid::valueText(Pane pane) const
{
    return panes_[size_t(pane)].value->text();
}

void ImageGrid::showValuesAt(QPoint pixel)
{
    for (PaneWidgets& pane : panes_) {
        const QString value = pane.view->valueAt(pixel);
        pane.value->setText(value.isEmpty() ? QStringLiteral(" ")
                                            : QStringLiteral("(%1, %2)  %3").arg(pixel.x()).arg(pixel.y()).arg(value));
    }
}

} // namespace kl::gui
