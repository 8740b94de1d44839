#pragma once
// Synthetic test inputs ("generate test input" in the GUI, --generate in the CLI, and
// every bench/sweep input). Deterministic: the same arguments and seed give the same data.
#include "kernellab/signal.hpp"

#include <opencv2/core/mat.hpp>

#include <QString>

#include <cstddef>
#include <cstdint>

namespace kl::app {

/// noise: uniform over the depth's range (u8 0..255, u16 0..65535, f32 [0, 1));
/// gradient: channel 0 left->right, 1 top->bottom, 2 diagonal, 3 (alpha) full scale;
/// checker: 8 squares across the shorter side, 0 / full scale; constant: half scale.
enum class ImagePattern { Noise, Gradient, Checker, Constant };
/// noise: uniform [-1, 1); chirp: linear sweep 20 Hz -> 0.45 x rate, amplitude 0.5, each
/// channel a quarter period later; sines: 440, 1000 and 3000 Hz (those below Nyquist), 0.3 each.
enum class SignalPattern { Noise, Chirp, Sines };

QString toString(ImagePattern pattern);  // "noise", "gradient", "checker", "constant"
ImagePattern parseImagePattern(const QString& name);  // throws kl::InvalidArgument
QString toString(SignalPattern pattern);  // "noise", "chirp", "sines"
SignalPattern parseSignalPattern(const QString& name);

constexpr uint64_t kDefaultSeed = 20240601;

/// Throws kl::InvalidArgument for a bad size, depth or channel count and kl::OutOfMemory
/// when the image would not fit in the memory available.
cv::Mat generateImage(int rows, int cols, int depth, int channels, ImagePattern pattern,
                      uint64_t seed = kDefaultSeed);
Signal generateSignal(size_t frames, int channels, double rate, SignalPattern pattern,
                      uint64_t seed = kDefaultSeed);

/// A generated input as the CLI writes it:
///   image:<W>x<H>[:<depth>[:<channels>[:<pattern>]]]        e.g. image:4096x4096:u8:3:noise
///   signal:<frames>[:<channels>[:<rate>[:<pattern>]]]       e.g. signal:1000000:2:48000:chirp
/// Defaults: u8, 1 channel, noise; 1 channel, 48000 Hz, noise. Frames accept a K (x1024)
/// or M (x1048576) suffix.
struct GenerateSpec {
    bool image = true;
    int cols = 0, rows = 0, depth = 0, channels = 1;
    ImagePattern imagePattern = ImagePattern::Noise;
    size_t frames = 0;
    double rate = 48000;
    SignalPattern signalPattern = SignalPattern::Noise;
};
/// Throws kl::InvalidArgument naming the bad field and the accepted form.
GenerateSpec parseGenerateSpec(const QString& text);
/// The canonical text of a spec (parseGenerateSpec(toString(s)) == s).
QString toString(const GenerateSpec& spec);

/// Parses a count with an optional K/M suffix ("16M" = 16777216); throws kl::InvalidArgument naming `what`.
size_t parseCount(const QString& text, const QString& what);

} // namespace kl::app
