#pragma once
// One image view (used for input, CPU, GPU and difference) and the controller that
// keeps the zoom and pan of several views in step.
#include "display_image.hpp"

#include <opencv2/core/mat.hpp>

#include <QGraphicsView>

#include <vector>

class QGraphicsPixmapItem;

namespace kl::gui {

class ImageView : public QGraphicsView {
    Q_OBJECT
public:
    explicit ImageView(QWidget* parent = nullptr);

    /// Shows `display`; `source` is kept for the true values under the cursor.
    void setImage(const cv::Mat& source, const DisplayImage& display);
    /// Shows `text` instead of an image (why there is no GPU output, for instance).
    void showMessage(const QString& text);

    /// Sets the zoom (1 = 100 %) and centres the view on a scene point.
    void showAt(double zoom, QPointF sceneCentre);
    [[nodiscard]] double zoom() const { return transform().m11(); }
    [[nodiscard]] QPointF sceneCentre() const;

    [[nodiscard]] const cv::Mat& source() const { return source_; }
    [[nodiscard]] const QString& message() const { return message_; }
    /// The true value at an image pixel ("133", or "B 12  G 40  R 200"); empty outside the image.
    [[nodiscard]] QString valueAt(QPoint pixel) const;

signals:
    /// The image pixel under the cursor; (-1, -1) when the cursor leaves the view.
    void pixelHovered(QPoint pixel);
    /// Zoom or pan changed by the user: the sync controller copies it to the other views.
    void viewChanged(kl::gui::ImageView* view);
    /// The user zoomed (wheel): the views stop following their size ("fit").
    void zoomedByUser();
    void resized();

protected:
    void wheelEvent(QWheelEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;
    void resizeEvent(QResizeEvent* event) override;
    void drawForeground(QPainter* painter, const QRectF& rect) override;

private:
    /// Pixels stay sharp squares when magnified, smooth when reduced.
    void updateSmoothing();
    QGraphicsPixmapItem* pixmap_ = nullptr;
    cv::Mat source_;
    QString message_;
};

/// Keeps the scale and the centre of every added view equal to those of the view last moved.
class ViewSync : public QObject {
    Q_OBJECT
public:
    explicit ViewSync(QObject* parent = nullptr);
    void add(ImageView* view);

    void zoomBy(double factor);
    void setScale(double scale);  ///< 1 = 100 %
    /// Scales so the first view's image fits its viewport, and keeps it fitted as the views
    /// are resized or given new images until the user zooms; the others follow.
    void fit();
    [[nodiscard]] double scale() const;

signals:
    void scaleChanged(double scale);

private:
    void follow(ImageView* leader);
    void fitNow();
    std::vector<ImageView*> views_;
    bool following_ = false;
    bool fitting_ = true;
};

} // namespace kl::gui
