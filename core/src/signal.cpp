#include "kernellab/signal.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"

#include "text.hpp"

#include <cmath>
#include <cstdio>

namespace kl {

Signal::Signal(int channelCount, size_t frameCount, double rate)
    : sampleRate(rate), channels(channelCount), frames(frameCount),
      data(size_t(channelCount > 0 ? channelCount : 0) * frameCount)
{
}

void validateSignal(const Signal& s, const std::string& what)
{
    if (s.channels < 1)
        throw InvalidArgument(what + ": " + std::to_string(s.channels) + " channels; a signal needs at least 1");
    if (s.frames < 1) throw InvalidArgument(what + ": the signal has no samples");
    if (!(std::isfinite(s.sampleRate) && s.sampleRate > 0)) {
        throw InvalidArgument(what + ": sample rate " + detail::formatNumber(s.sampleRate) + " Hz must be positive");
    }
    if (s.data.size() != size_t(s.channels) * s.frames)
        throw InvalidArgument(what + ": holds " + std::to_string(s.data.size()) + " samples, expected " +
                              std::to_string(s.channels) + " channels x " + std::to_string(s.frames) + " frames");
}

void reshapeSignal(Signal& s, int channels, size_t frames, double rate, const std::string& what)
{
    const size_t samples = size_t(channels) * frames;
    if (samples > s.data.capacity()) ensureMemoryAvailable(uint64_t(samples) * sizeof(float), what);
    s.data.resize(samples);
    s.channels = channels;
    s.frames = frames;
    s.sampleRate = rate;
}

void toInterleaved(const Signal& s, std::vector<float>& interleaved)
{
    interleaved.resize(s.data.size());
    for (int c = 0; c < s.channels; ++c) {
        const float* planar = s.channel(c);
        for (size_t f = 0; f < s.frames; ++f) interleaved[f * size_t(s.channels) + size_t(c)] = planar[f];
    }
}

std::vector<float> toInterleaved(const Signal& s)
{
    std::vector<float> interleaved;
    toInterleaved(s, interleaved);
    return interleaved;
}

Signal fromInterleaved(const float* interleaved, size_t frames, int channels, double sampleRate)
{
    Signal s(channels, frames, sampleRate);
    for (int c = 0; c < channels; ++c) {
        float* planar = s.channel(c);
        for (size_t f = 0; f < frames; ++f) planar[f] = interleaved[f * size_t(channels) + size_t(c)];
    }
    return s;
}

std::string describeSignal(const Signal& s)
{
    char text[128];
    const double seconds = s.sampleRate > 0 ? double(s.frames) / s.sampleRate : 0.0;
    std::snprintf(text, sizeof text, "%zu frames x%d @ %g Hz (%.3f s)", s.frames, s.channels, s.sampleRate, seconds);
    return text;
}

} // namespace kl
