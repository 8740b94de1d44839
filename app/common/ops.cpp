#include "ops.hpp"

#include "kernellab/image.hpp"
#include "kernellab/transpose.hpp"

#include "names.hpp"

#include <opencv2/core.hpp>

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
    Agreement::Conv2dRule};

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
    Agreement::FloatRelative};

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
    Agreement::Identical};

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
    Agreement::Identical};

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
