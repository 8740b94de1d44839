#pragma once
// A signal: `channels` channels of `frames` float32 samples each, stored planar
// (channel c occupies data[c*frames, (c+1)*frames)), plus a sample rate in Hz.
#include <cstddef>
#include <string>
#include <vector>

namespace kl {

struct Signal {
    double sampleRate = 0.0;
    int channels = 0;
    size_t frames = 0;
    std::vector<float> data;

    Signal() = default;
    Signal(int channelCount, size_t frameCount, double rate);

    float* channel(int c) { return data.data() + size_t(c) * frames; }
    const float* channel(int c) const { return data.data() + size_t(c) * frames; }
    [[nodiscard]] bool empty() const { return frames == 0 || channels == 0; }
};

/// Throws kl::InvalidArgument unless the signal has >= 1 channel, >= 1 frame,
/// a positive sample rate and data.size() == channels * frames.
void validateSignal(const Signal& s, const std::string& what = "signal");

/// Gives `s` the shape channels x frames at `rate`, keeping its sample buffer's memory (its
/// contents are then undefined); checks with ensureMemoryAvailable when the buffer must grow.
void reshapeSignal(Signal& s, int channels, size_t frames, double rate, const std::string& what);

/// Planar -> interleaved (frame-major: f0c0 f0c1 ... f1c0 ...), into `interleaved` (reused).
void toInterleaved(const Signal& s, std::vector<float>& interleaved);
std::vector<float> toInterleaved(const Signal& s);
/// Interleaved (frames x channels) -> planar Signal.
Signal fromInterleaved(const float* interleaved, size_t frames, int channels, double sampleRate);

/// e.g. "108000 frames x1 @ 360 Hz (300.000 s)".
std::string describeSignal(const Signal& s);

} // namespace kl
