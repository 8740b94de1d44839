#include "kernellab/conv1d.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"

#include "text.hpp"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>

namespace kl {

void validateConv1D(const Signal& input, const Conv1DSpec& spec)
{
    validateSignal(input, "conv1d input");
    if (spec.taps.empty())
        throw InvalidArgument("conv1d taps: none given; need 1.." + std::to_string(kMaxConv1DTaps));
    if (spec.taps.size() > kMaxConv1DTaps)
        throw InvalidArgument("conv1d taps: " + std::to_string(spec.taps.size()) + " exceed the maximum of " +
                              std::to_string(kMaxConv1DTaps));
    for (size_t i = 0; i < spec.taps.size(); ++i)
        if (!std::isfinite(spec.taps[i])) {
            throw InvalidArgument("conv1d taps: tap " + std::to_string(i) + " is " + detail::formatNumber(spec.taps[i]) +
                                  "; every tap must be finite");
        }
    if (spec.mode != Conv1DMode::Full && spec.mode != Conv1DMode::Same && spec.mode != Conv1DMode::Valid)
        throw InvalidArgument("conv1d mode: invalid value " + std::to_string(int(spec.mode)));
}

size_t conv1dOutputLength(size_t signalLength, size_t taps, Conv1DMode mode)
{
    const size_t shorter = std::min(signalLength, taps), longer = std::max(signalLength, taps);
    switch (mode) {
    case Conv1DMode::Full: return signalLength + taps - 1;
    case Conv1DMode::Same: return longer;
    case Conv1DMode::Valid: return longer - shorter + 1;
    }
    return 0;
}

size_t conv1dOutputOffset(size_t signalLength, size_t taps, Conv1DMode mode)
{
    const size_t shorter = std::min(signalLength, taps);
    switch (mode) {
    case Conv1DMode::Full: return 0;
    case Conv1DMode::Same: return (shorter - 1) / 2;
    case Conv1DMode::Valid: return shorter - 1;
    }
    return 0;
}

std::string toString(Conv1DMode mode)
{
    switch (mode) {
    case Conv1DMode::Full: return "full";
    case Conv1DMode::Same: return "same";
    case Conv1DMode::Valid: return "valid";
    }
    return "unknown";
}

namespace {
constexpr Conv1DMode kAllModes[] = {Conv1DMode::Full, Conv1DMode::Same, Conv1DMode::Valid};
}

Conv1DMode parseConv1DMode(const std::string& name)
{
    return detail::parseName(name, kAllModes, "conv1d mode");
}

std::vector<Conv1DMode> allConv1DModes()
{
    return {std::begin(kAllModes), std::end(kAllModes)};
}

Signal conv1dReference(const Signal& input, const Conv1DSpec& spec)
{
    validateConv1D(input, spec);
    const size_t n = input.frames, m = spec.taps.size();
    const size_t length = conv1dOutputLength(n, m, spec.mode), offset = conv1dOutputOffset(n, m, spec.mode);
    ensureMemoryAvailable(uint64_t(length) * uint64_t(input.channels) * sizeof(float), "conv1d output");
    Signal output(input.channels, length, input.sampleRate);
    const float* h = spec.taps.data();
    for (int c = 0; c < input.channels; ++c) {
        const float* x = input.channel(c);
        float* y = output.channel(c);
        for (size_t i = 0; i < length; ++i) {
            // full[t] = sum over k of x[k] * h[t - k], with both indices in range.
            const size_t t = offset + i;
            const size_t first = t >= m - 1 ? t - (m - 1) : 0, last = std::min(t, n - 1);
            float sum = 0.f;
            for (size_t k = first; k <= last; ++k) sum += x[k] * h[t - k];
            y[i] = sum;
        }
    }
    return output;
}

Signal conv1dOpenCV(const Signal& input, const Conv1DSpec& spec)
{
    validateConv1D(input, spec);
    const size_t n = input.frames, m = spec.taps.size();
    const size_t length = conv1dOutputLength(n, m, spec.mode), offset = conv1dOutputOffset(n, m, spec.mode);
    // Convolution commutes, so the shorter of signal and taps is the filter kernel: a
    // million taps over a short signal then costs a short direct filter, not a huge DFT.
    // The longer one sits in a zero row with (shorter - 1) zeros on each side; correlating
    // that row with the reversed shorter one (anchor at its first element) puts full[t]
    // at column t.
    const size_t longer = std::max(n, m), shorter = std::min(n, m);
    const size_t paddedLength = longer + 2 * (shorter - 1);
    if (paddedLength > size_t(INT_MAX))
        throw InvalidArgument("conv1d input: " + std::to_string(n) + " frames with " + std::to_string(m) +
                              " taps exceed OpenCV's row length limit");
    ensureMemoryAvailable(uint64_t(paddedLength) * 2 * sizeof(float) +
                              uint64_t(length) * uint64_t(input.channels) * sizeof(float),
                          "conv1d (OpenCV)");
    Signal output(input.channels, length, input.sampleRate);
    cv::Mat padded = cv::Mat::zeros(1, int(paddedLength), CV_32F), reversed(1, int(shorter), CV_32F), filtered;
    for (int c = 0; c < input.channels; ++c) {
        const float* x = input.channel(c);
        const float* h = spec.taps.data();
        const float* longRow = n >= m ? x : h;
        const float* shortRow = n >= m ? h : x;
        std::copy_n(longRow, longer, padded.ptr<float>() + (shorter - 1));
        std::reverse_copy(shortRow, shortRow + shorter, reversed.ptr<float>());
        cv::filter2D(padded, filtered, CV_32F, reversed, cv::Point(0, 0), 0, cv::BORDER_CONSTANT);
        std::copy_n(filtered.ptr<float>() + offset, length, output.channel(c));
    }
    return output;
}

} // namespace kl
