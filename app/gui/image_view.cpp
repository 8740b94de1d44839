#include "image_view.hpp"

#include <QGraphicsPixmapItem>
#include <QGraphicsScene>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QWheelEvent>

#include <cmath>

namespace kl::gui {
namespace {

constexpr double kMinScale = 1.0 / 64;
constexpr double kMaxScale = 64;

template <typename T> QString channelValue(T v)
{
    if constexpr (std::is_floating_point_v<T>) return QString::number(double(v), 'g', 6);
    else return QString::number(v);
}

template <typename T> QString pixelValue(const cv::Mat& m, QPoint p)
{
    const T* px = m.ptr<T>(p.y()) + size_t(p.x()) * size_t(m.channels());
    if (m.channels() == 1) return channelValue(px[0]);
    static const char* const names[] = {"B", "G", "R", "A"};
    QStringList parts;
    for (int c = 0; c < m.channels(); ++c) parts << QStringLiteral("%1 %2").arg(QLatin1String(names[c]), channelValue(px[c]));
    return parts.join(QStringLiteral("  "));
}

} // namespace

ImageView::ImageView(QWidget* parent)
    : QGraphicsView(parent)
{
    setScene(new QGraphicsScene(this));
    pixmap_ = scene()->addPixmap({});
    setDragMode(ScrollHandDrag);
    // Panning is by dragging; hidden scroll bars keep the four views the same size.
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setTransformationAnchor(AnchorUnderMouse);
    setResizeAnchor(AnchorViewCenter);
    setMouseTracking(true);
    setAcceptDrops(false);  // a dropped file goes to the window, which opens it
    setBackgroundBrush(palette().dark());
    setMinimumSize(120, 90);
}

void ImageView::setImage(const cv::Mat& source, const DisplayImage& display)
{
    source_ = source;
    message_.clear();
    // The worker prepared an RGB32 image; handed over as an rvalue it becomes the pixmap's
    // buffer without a copy or conversion on this thread.
    pixmap_->setPixmap(QPixmap::fromImage(QImage(display.image)));
    scene()->setSceneRect(pixmap_->boundingRect());
    viewport()->update();
    emit resized();  // a new size of image is refitted like a new size of view
}

void ImageView::showMessage(const QString& text)
{
    source_ = cv::Mat();
    message_ = text;
    pixmap_->setPixmap({});
    viewport()->update();
}

QString ImageView::valueAt(QPoint pixel) const
{
    if (source_.empty() || pixel.x() < 0 || pixel.y() < 0 || pixel.x() >= source_.cols || pixel.y() >= source_.rows)
        return {};
    switch (source_.depth()) {
    case CV_8U: return pixelValue<uint8_t>(source_, pixel);
    case CV_16U: return pixelValue<uint16_t>(source_, pixel);
    default: return pixelValue<float>(source_, pixel);
    }
}

void ImageView::wheelEvent(QWheelEvent* event)
{
    const double factor = std::pow(1.25, event->angleDelta().y() / 120.0);
    const double target = std::clamp(transform().m11() * factor, kMinScale, kMaxScale);
    scale(target / zoom(), target / zoom());
    updateSmoothing();
    emit zoomedByUser();
    emit viewChanged(this);
    event->accept();
}

void ImageView::showAt(double zoom, QPointF sceneCentre)
{
    setTransform(QTransform::fromScale(zoom, zoom));
    centerOn(sceneCentre);
    updateSmoothing();
}

QPointF ImageView::sceneCentre() const
{
    return mapToScene(viewport()->rect().center());
}

void ImageView::updateSmoothing()
{
    pixmap_->setTransformationMode(zoom() < 1 ? Qt::SmoothTransformation : Qt::FastTransformation);
}

void ImageView::mouseMoveEvent(QMouseEvent* event)
{
    const QPointF scenePos = mapToScene(event->position().toPoint());
    emit pixelHovered(QPoint(int(std::floor(scenePos.x())), int(std::floor(scenePos.y()))));
    QGraphicsView::mouseMoveEvent(event);
}

void ImageView::leaveEvent(QEvent* event)
{
    emit pixelHovered(QPoint(-1, -1));
    QGraphicsView::leaveEvent(event);
}

void ImageView::scrollContentsBy(int dx, int dy)
{
    QGraphicsView::scrollContentsBy(dx, dy);
    emit viewChanged(this);
}

void ImageView::resizeEvent(QResizeEvent* event)
{
    QGraphicsView::resizeEvent(event);
    emit resized();
}

void ImageView::drawForeground(QPainter* painter, const QRectF& rect)
{
    QGraphicsView::drawForeground(painter, rect);
    if (message_.isEmpty()) return;
    // In viewport coordinates, so the text keeps its size whatever the zoom.
    painter->save();
    painter->resetTransform();
    painter->setPen(palette().color(QPalette::BrightText));
    const QRect box = viewport()->rect().adjusted(12, 12, -12, -12);
    painter->drawText(box, Qt::AlignCenter | Qt::TextWordWrap, message_);
    painter->restore();
}

ViewSync::ViewSync(QObject* parent)
    : QObject(parent)
{
}

void ViewSync::add(ImageView* view)
{
    views_.push_back(view);
    connect(view, &ImageView::viewChanged, this, &ViewSync::follow);
    connect(view, &ImageView::zoomedByUser, this, [this] { fitting_ = false; });
    connect(view, &ImageView::resized, this, [this] {
        if (fitting_) fitNow();
        else follow(views_.front());
    });
}

double ViewSync::scale() const
{
    return views_.empty() ? 1.0 : views_.front()->zoom();
}

void ViewSync::zoomBy(double factor)
{
    setScale(scale() * factor);
}

void ViewSync::setScale(double scale)
{
    fitting_ = false;
    if (views_.empty()) return;
    ImageView* leader = views_.front();
    leader->showAt(std::clamp(scale, kMinScale, kMaxScale), leader->sceneCentre());
    follow(leader);
}

void ViewSync::fit()
{
    fitting_ = true;
    fitNow();
}

void ViewSync::fitNow()
{
    if (views_.empty()) return;
    ImageView* leader = views_.front();
    const QRectF image = leader->sceneRect();
    if (image.isEmpty()) return;
    const QSize room = leader->viewport()->size();
    leader->showAt(std::clamp(std::min(room.width() / image.width(), room.height() / image.height()), kMinScale, kMaxScale),
                   image.center());
    follow(leader);
}

void ViewSync::follow(ImageView* leader)
{
    if (following_) return;
    following_ = true;
    for (ImageView* view : views_)
        if (view != leader) view->showAt(leader->zoom(), leader->sceneCentre());
    following_ = false;
    emit scaleChanged(leader->zoom());
}

} // namespace kl::gui
