#include "generators.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"

#include "names.hpp"

#include <opencv2/core.hpp>

#include <QStringList>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kl::app {

namespace {

/// Full scale of a depth: what "white" means for the patterns.
double fullScale(int depth)
{
    switch (depth) {
    case CV_8U: return 255.0;
    case CV_16U: return 65535.0;
    default: return 1.0;
    }
}

int parsePositiveInt(const QString& text, const QString& what)
{
    bool ok = false;
    const int value = text.toInt(&ok);
    if (!ok || value < 1) fail(what + ": '" + text + "' is not a positive whole number");
    return value;
}

/// One plane of the gradient pattern, 0..1: 0 left->right, 1 top->bottom, 2 diagonal, 3 flat.
cv::Mat gradientPlane(int rows, int cols, int channel)
{
    cv::Mat plane(rows, cols, CV_64F);
    const double dx = cols > 1 ? 1.0 / (cols - 1) : 0.0, dy = rows > 1 ? 1.0 / (rows - 1) : 0.0;
    for (int y = 0; y < rows; ++y) {
        auto* row = plane.ptr<double>(y);
        for (int x = 0; x < cols; ++x) {
            switch (channel) {
            case 0: row[x] = x * dx; break;
            case 1: row[x] = y * dy; break;
            case 2: row[x] = 0.5 * (x * dx + y * dy); break;
            default: row[x] = 1.0; break;
            }
        }
    }
    return plane;
}

} // namespace

QString toString(ImagePattern pattern)
{
    switch (pattern) {
    case ImagePattern::Noise: return QStringLiteral("noise");
    case ImagePattern::Gradient: return QStringLiteral("gradient");
    case ImagePattern::Checker: return QStringLiteral("checker");
    case ImagePattern::Constant: return QStringLiteral("constant");
    }
    return {};
}

ImagePattern parseImagePattern(const QString& name)
{
    const ImagePattern all[] = {ImagePattern::Noise, ImagePattern::Gradient, ImagePattern::Checker, ImagePattern::Constant};
    return parseName<ImagePattern>(name, all, QStringLiteral("image pattern"));
}

QString toString(SignalPattern pattern)
{
    switch (pattern) {
    case SignalPattern::Noise: return QStringLiteral("noise");
    case SignalPattern::Chirp: return QStringLiteral("chirp");
    case SignalPattern::Sines: return QStringLiteral("sines");
    }
    return {};
}

SignalPattern parseSignalPattern(const QString& name)
{
    const SignalPattern all[] = {SignalPattern::Noise, SignalPattern::Chirp, SignalPattern::Sines};
    return parseName<SignalPattern>(name, all, QStringLiteral("signal pattern"));
}

cv::Mat generateImage(int rows, int cols, int depth, int channels, ImagePattern pattern, uint64_t seed)
{
    if (rows < 1 || cols < 1)
        fail(QStringLiteral("generated image: %1x%2 is not a valid size").arg(cols).arg(rows));
    if (channels != 1 && channels != 3 && channels != 4)
        fail(QStringLiteral("generated image: %1 channels are not supported (use 1, 3 or 4)").arg(channels));
    parseDepth(depthName(depth));  // throws for anything but u8/u16/f32
    const uint64_t bytes = uint64_t(rows) * uint64_t(cols) * uint64_t(channels) * CV_ELEM_SIZE1(depth);
    ensureMemoryAvailable(bytes, "generated image " + std::to_string(cols) + "x" + std::to_string(rows));

    const double scale = fullScale(depth);
    cv::Mat image(rows, cols, CV_MAKETYPE(depth, channels));
    switch (pattern) {
    case ImagePattern::Noise: {
        cv::RNG rng(seed);
        // Integer upper bounds are exclusive: 256 gives every value 0..255.
        rng.fill(image, cv::RNG::UNIFORM, 0.0, depth == CV_32F ? 1.0 : scale + 1.0);
        break;
    }
    case ImagePattern::Gradient: {
        std::vector<cv::Mat> planes;
        for (int c = 0; c < channels; ++c) {
            cv::Mat plane;
            gradientPlane(rows, cols, channels == 1 ? 2 : c).convertTo(plane, depth, scale);
            planes.push_back(plane);
        }
        cv::merge(planes, image);
        break;
    }
    case ImagePattern::Checker: {
        const int square = std::max(1, std::min(rows, cols) / 8);
        image.setTo(cv::Scalar::all(0));
        for (int y = 0; y < rows; ++y)
            for (int x = (y / square) % 2 ? 0 : square; x < cols; x += 2 * square)
                image(cv::Rect(x, y, std::min(square, cols - x), 1)).setTo(cv::Scalar::all(scale));
        break;
    }
    case ImagePattern::Constant:
        image.setTo(cv::Scalar::all(depth == CV_32F ? 0.5 : std::ceil(scale / 2)));
        break;
    }
    return image;
}

Signal generateSignal(size_t frames, int channels, double rate, SignalPattern pattern, uint64_t seed)
{
    if (frames < 1) fail("generated signal: needs at least 1 frame");
    if (channels < 1) fail(QStringLiteral("generated signal: %1 channels; needs at least 1").arg(channels));
    if (!(rate > 0) || !std::isfinite(rate))
        fail(QStringLiteral("generated signal: rate %1 Hz must be positive").arg(rate));
    if (frames > std::numeric_limits<size_t>::max() / sizeof(float) / size_t(channels))
        fail("generated signal: too many samples");
    ensureMemoryAvailable(uint64_t(frames) * uint64_t(channels) * sizeof(float),
                          "generated signal of " + std::to_string(frames) + " frames");

    Signal signal(channels, frames, rate);
    switch (pattern) {
    case SignalPattern::Noise: {
        cv::RNG rng(seed);
        // cv::Mat sizes are int: fill in blocks so that any length works.
        constexpr size_t block = size_t(1) << 24;
        for (size_t done = 0; done < signal.data.size(); done += block) {
            cv::Mat samples(1, int(std::min(block, signal.data.size() - done)), CV_32F, signal.data.data() + done);
            rng.fill(samples, cv::RNG::UNIFORM, -1.0, 1.0);
        }
        break;
    }
    case SignalPattern::Chirp: {
        const double f0 = 20.0, f1 = 0.45 * rate, duration = double(frames) / rate;
        const double sweep = (f1 - f0) / duration;
        for (int c = 0; c < channels; ++c) {
            float* out = signal.channel(c);
            for (size_t n = 0; n < frames; ++n) {
                const double t = double(n) / rate;
                const double phase = 2 * CV_PI * (f0 * t + 0.5 * sweep * t * t) + c * CV_PI / 2;
                out[n] = float(0.5 * std::sin(phase));
            }
        }
        break;
    }
    case SignalPattern::Sines:
        for (int c = 0; c < channels; ++c) {
            float* out = signal.channel(c);
            for (size_t n = 0; n < frames; ++n) {
                const double t = double(n) / rate;
                double v = 0;
                for (double f : {440.0, 1000.0, 3000.0})
                    if (f < rate / 2) v += 0.3 * std::sin(2 * CV_PI * f * t);
                out[n] = float(v);
            }
        }
        break;
    }
    return signal;
}

size_t parseCount(const QString& text, const QString& what)
{
    QString digits = text.trimmed();
    size_t multiplier = 1;
    if (digits.endsWith('K', Qt::CaseInsensitive)) multiplier = size_t(1) << 10;
    else if (digits.endsWith('M', Qt::CaseInsensitive)) multiplier = size_t(1) << 20;
    if (multiplier != 1) digits.chop(1);
    bool ok = false;
    const qulonglong value = digits.toULongLong(&ok);
    if (!ok || value == 0 || value > std::numeric_limits<size_t>::max() / multiplier)
        fail(what + ": '" + text + "' is not a positive count (digits, optionally with a K or M suffix)");
    return size_t(value) * multiplier;
}

GenerateSpec parseGenerateSpec(const QString& text)
{
    const QStringList parts = text.split(':');
    GenerateSpec spec;
    const QString imageForm = QStringLiteral("image:<W>x<H>[:u8|u16|f32[:1|3|4[:noise|gradient|checker|constant]]]");
    const QString signalForm = QStringLiteral("signal:<frames>[:<channels>[:<rate Hz>[:noise|chirp|sines]]]");
    const bool fieldCountOk = parts.size() >= 2 && parts.size() <= 5;
    if (fieldCountOk && parts[0] == QLatin1String("image")) {
        spec.image = true;
        const QStringList size = parts[1].split('x');
        if (size.size() != 2) fail("generate: '" + parts[1] + "' is not <W>x<H>; the form is " + imageForm);
        spec.cols = parsePositiveInt(size[0], QStringLiteral("generate width"));
        spec.rows = parsePositiveInt(size[1], QStringLiteral("generate height"));
        spec.depth = parts.size() > 2 ? parseDepth(parts[2].toStdString()) : CV_8U;
        spec.channels = parts.size() > 3 ? parsePositiveInt(parts[3], QStringLiteral("generate channels")) : 1;
        if (spec.channels != 1 && spec.channels != 3 && spec.channels != 4)
            fail("generate channels: " + parts[3] + " is not 1, 3 or 4");
        if (parts.size() > 4) spec.imagePattern = parseImagePattern(parts[4]);
        return spec;
    }
    if (fieldCountOk && parts[0] == QLatin1String("signal")) {
        spec.image = false;
        spec.frames = parseCount(parts[1], QStringLiteral("generate frames"));
        spec.channels = parts.size() > 2 ? parsePositiveInt(parts[2], QStringLiteral("generate channels")) : 1;
        if (parts.size() > 3) {
            bool ok = false;
            spec.rate = parts[3].toDouble(&ok);
            if (!ok || !(spec.rate > 0) || !std::isfinite(spec.rate))
                fail("generate rate: '" + parts[3] + "' is not a positive number of Hz");
        }
        if (parts.size() > 4) spec.signalPattern = parseSignalPattern(parts[4]);
        return spec;
    }
    fail("generate: '" + text + "' is neither " + imageForm + " nor " + signalForm);
}

QString toString(const GenerateSpec& spec)
{
    if (spec.image)
        return QStringLiteral("image:%1x%2:%3:%4:%5")
            .arg(spec.cols)
            .arg(spec.rows)
            .arg(QString::fromStdString(depthName(spec.depth)))
            .arg(spec.channels)
            .arg(toString(spec.imagePattern));
    return QStringLiteral("signal:%1:%2:%3:%4")
        .arg(spec.frames)
        .arg(spec.channels)
        .arg(spec.rate, 0, 'g', 10)
        .arg(toString(spec.signalPattern));
}

} // namespace kl::app
