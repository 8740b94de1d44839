#pragma once
// The four image views (Input | CPU / GPU | Difference), each with a caption and the
// value under the cursor, zoomed and panned together.
#include "image_view.hpp"

#include <QWidget>

#include <array>

class QLabel;

namespace kl::gui {

class ImageGrid : public QWidget {
    Q_OBJECT
public:
    enum class Pane { Input, Cpu, Gpu, Difference };

    explicit ImageGrid(QWidget* parent = nullptr);

    [[nodiscard]] ImageView* view(Pane pane) const { return panes_[size_t(pane)].view; }
    void setCaption(Pane pane, const QString& caption);
    [[nodiscard]] QString caption(Pane pane) const;
    /// The "value under the cursor" line of a pane.
    [[nodiscard]] QString valueText(Pane pane) const;
    [[nodiscard]] ViewSync* sync() const { return sync_; }
    /// Shows every view's value at an image pixel (what hovering does).
    void showValuesAt(QPoint pixel);

private:
    struct PaneWidgets {
        QLabel* caption = nullptr;
        ImageView* view = nullptr;
        QLabel* value = nullptr;
    };
    std::array<PaneWidgets, 4> panes_;
    ViewSync* sync_ = nullptr;
};

} // namespace kl::gui
