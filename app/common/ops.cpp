#include "ops.hpp"

#include "kernellab/image.hpp"
#include "kernellab/transpose.hpp"

#include "names.hpp"

#include <opencv2/core.hpp>

#include <QJsonArray>

#include <limits>

namespace kl::app {

namespace {

/// The op's input kind, or an error naming what the op needs.
void requireInputKind(const RunRequest& r, bool wantImage)
{
    const QString op = toString(r.op);
    if (wantImage && r.image.empty())
        fail(op + ": needs an image input" + (r.signal.empty() ? QString() : ", but '" + r.inputName + "' is a signal"));
    if (!wantImage && r.signal.empty())
        fail(op + ": needs a signal input" + (r.image.empty() ? QString() : ", but '" + r.inputName + "' is an image"));
}

/// Planar -> interleaved with the OpenCV transpose: the planar samples are a channels x frames matrix.
void interleaveOpenCV(const Signal& s, std::vector<float>& interleaved)
{
    if (s.frames > size_t(std::numeric_limits<int>::max()))
        throw InvalidArgument("transpose: cv::transpose handles at most 2^31-1 frames");
    interleaved.resize(s.data.size());
    const cv::Mat planar(s.channels, int(s.frames), CV_32F, const_cast<float*>(s.data.data()));
    cv::Mat out(int(s.frames), s.channels, CV_32F, interleaved.data());
    transposeOpenCV(planar, out);
}

/// conv1d taps are listed in the report up to this count (a 1M-tap kernel would drown it).
constexpr size_t kMaxListedTaps = 1024;

QJsonArray matrixJson(const cv::Mat& kernel)
{
    QJsonArray rows;
    for (int y = 0; y < kernel.rows; ++y) {
        QJsonArray row;
        for (int x = 0; x < kernel.cols; ++x) row.append(double(kernel.at<float>(y, x)));
        rows.append(row);
    }
    return rows;
}

const OpDescriptor kConv2d{
    Op::Conv2D,
    "conv2d",
    [](const RunRequest& r) {
        requireInputKind(r, true);
        validateConv2D(r.image, r.conv2d);
    },
    [](const RunRequest& r, bool reference, BackendResult& out, CpuScratch& scratch) {
        if (reference) conv2dReference(r.image, r.conv2d, out.image);
        else conv2dOpenCV(r.image, r.conv2d, out.image, scratch);
    },
    [](const RunRequest& r, const gpu::RunOptions& options, gpu::Engine& engine, BackendResult& out) {
        return engine.conv2d(r.image, r.conv2d, options, out.image);
    },
    [](const RunRequest& r, const std::string& variant, const gpu::DeviceInfo& device) {
        return gpu::whyNotApplicable(variant, r.image, r.conv2d, device);
    },
    Agreement::Conv2dRule,
    [](const RunRequest&) { return OutputKind::Image; },
    [](const RunRequest& r) { return conv2dOutputDepth(r.image, r.conv2d); },
    [](const RunResult& result) {
        const RunRequest& r = result.request;
        return QJsonObject{
            {QStringLiteral("kernel_width"), r.conv2d.kernel.cols},
            {QStringLiteral("kernel_height"), r.conv2d.kernel.rows},
            {QStringLiteral("kernel"), matrixJson(r.conv2d.kernel)},
            {QStringLiteral("separable"), separateKernel(r.conv2d.kernel).has_value()},
            {QStringLiteral("border"), QString::fromStdString(toString(r.conv2d.border))},
            {QStringLiteral("border_value"), r.conv2d.borderValue},
            {QStringLiteral("flip"), r.conv2d.flipKernel},
            {QStringLiteral("float_output"), r.conv2d.floatOutput},
            {QStringLiteral("output_depth"), QString::fromStdString(depthName(conv2dOutputDepth(r.image, r.conv2d)))}};
    }};

const OpDescriptor kConv1d{
    Op::Conv1D,
    "conv1d",
    [](const RunRequest& r) {
        requireInputKind(r, false);
        validateConv1D(r.signal, r.conv1d);
    },
    [](const RunRequest& r, bool reference, BackendResult& out, CpuScratch& scratch) {
        if (reference) conv1dReference(r.signal, r.conv1d, out.signal);
        else conv1dOpenCV(r.signal, r.conv1d, out.signal, scratch);
    },
    [](const RunRequest& r, const gpu::RunOptions& options, gpu::Engine& engine, BackendResult& out) {
        return engine.conv1d(r.signal, r.conv1d, options, out.signal);
    },
    [](const RunRequest& r, const std::string& variant, const gpu::DeviceInfo& device) {
        return gpu::whyNotApplicable(variant, r.signal, r.conv1d, device);
    },
    Agreement::FloatRelative,
    [](const RunRequest&) { return OutputKind::Signal; },
    [](const RunRequest&) { return -1; },
    [](const RunResult& result) {
        const RunRequest& r = result.request;
        QJsonObject spec{{QStringLiteral("taps_count"), double(r.conv1d.taps.size())},
                         {QStringLiteral("mode"), QString::fromStdString(toString(r.conv1d.mode))},
                         {QStringLiteral("output_frames"),
                          double(conv1dOutputLength(r.signal.frames, r.conv1d.taps.size(), r.conv1d.mode))}};
        if (r.conv1d.taps.size() <= kMaxListedTaps) {
            QJsonArray taps;
            for (float t : r.conv1d.taps) taps.append(double(t));
            spec[QStringLiteral("taps")] = taps;
        }
        return spec;
    }};

const OpDescriptor kHistogram{
    Op::Histogram,
    "histogram",
    [](const RunRequest& r) {
        requireInputKind(r, true);
        validateHistogram(r.image, r.histogram);
    },
    [](const RunRequest& r, bool reference, BackendResult& out, CpuScratch& scratch) {
        if (!out.histogram) out.histogram.emplace();
        if (reference) histogramReference(r.image, r.histogram, *out.histogram);
        else histogramOpenCV(r.image, r.histogram, *out.histogram, scratch);
    },
    [](const RunRequest& r, const gpu::RunOptions& options, gpu::Engine& engine, BackendResult& out) {
        HistogramResult histogram;
        gpu::GpuReport report = engine.histogram(r.image, r.histogram, options, histogram);
        out.histogram = std::move(histogram);
        return report;
    },
    [](const RunRequest& r, const std::string& variant, const gpu::DeviceInfo& device) {
        return gpu::whyNotApplicable(variant, r.image, r.histogram, device);
    },
    Agreement::Identical,
    [](const RunRequest&) { return OutputKind::Histogram; },
    [](const RunRequest&) { return -1; },
    [](const RunResult& result) {
        const RunRequest& r = result.request;
        QJsonObject spec{{QStringLiteral("bins"), r.histogram.bins},
                         {QStringLiteral("range"), r.histogram.lo && r.histogram.hi
                                                       ? QJsonValue(QJsonArray{*r.histogram.lo, *r.histogram.hi})
                                                       : QJsonValue(QJsonValue::Null)},
                         {QStringLiteral("luminance"), r.histogram.luminance}};
        // The binning and labels as a backend resolved them (the range may come from the data).
        for (const BackendResult& b : result.results)
            if (b.histogram) {
                const HistogramBinning& used = b.histogram->binning;
                spec[QStringLiteral("binning")] = QJsonObject{{QStringLiteral("bins"), used.bins},
                                                              {QStringLiteral("lo"), used.lo},
                                                              {QStringLiteral("hi"), used.hi}};
                QJsonArray labels;
                for (const std::string& l : b.histogram->labels) labels.append(QString::fromStdString(l));
                spec[QStringLiteral("labels")] = labels;
                break;
            }
        return spec;
    }};

// Transpose takes an image, or a signal (planar to interleaved).
const OpDescriptor kTranspose{
    Op::Transpose,
    "transpose",
    [](const RunRequest& r) {
        if (!r.image.empty()) validateImage(r.image, "transpose input");
        else validateSignal(r.signal, "transpose input");
    },
    [](const RunRequest& r, bool reference, BackendResult& out, CpuScratch&) {
        if (!r.image.empty()) {
            if (reference) transposeReference(r.image, out.image);
            else transposeOpenCV(r.image, out.image);
        } else if (reference) {
            toInterleaved(r.signal, out.interleaved);
        } else {
            interleaveOpenCV(r.signal, out.interleaved);
        }
    },
    [](const RunRequest& r, const gpu::RunOptions& options, gpu::Engine& engine, BackendResult& out) {
        return r.image.empty() ? engine.transposeSignal(r.signal, options, out.interleaved)
                               : engine.transpose(r.image, options, out.image);
    },
    [](const RunRequest& r, const std::string& variant, const gpu::DeviceInfo& device) {
        return r.image.empty() ? gpu::whyNotApplicable(variant, r.signal, device)
                               : gpu::whyNotApplicable(variant, r.image, device);
    },
    Agreement::Identical,
    [](const RunRequest& r) { return r.image.empty() ? OutputKind::Signal : OutputKind::Image; },
    [](const RunRequest& r) { return r.image.empty() ? -1 : r.image.depth(); },
    [](const RunResult& result) {
        return QJsonObject{{QStringLiteral("layout"), result.request.image.empty()
                                                          ? QStringLiteral("planar to interleaved")
                                                          : QStringLiteral("rows to columns")}};
    }};

} // namespace

const std::vector<const OpDescriptor*>& opDescriptors()
{
    static const std::vector<const OpDescriptor*> all = {&kConv2d, &kConv1d, &kHistogram, &kTranspose};
    return all;
}

const OpDescriptor& describe(Op op)
{
    for (const OpDescriptor* d : opDescriptors())
        if (d->op == op) return *d;
    throw InvalidArgument("op: " + std::to_string(int(op)) + " has no descriptor");
}

} // namespace kl::app
