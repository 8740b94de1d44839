#pragma once
// Signal files:
//   WAV / FLAC / OGG (libsndfile): any channel count, integer PCM normalised to [-1, 1].
//   CSV: optional header line, '#' comments, one column per channel, C locale;
//        sample rate from a "# rate=<Hz>" comment or the argument.
//   NumPy .npy: <f4, <f8, <i2 (and their big-endian forms, swapped); shape (N,) or (N, C); C order.
//   raw float32 (little-endian, interleaved): rate and channels given.
// Saves: WAV (32-bit float), CSV, .npy (<f4). Errors are kl::IoError naming the
// file and the reason; saves go through a temporary file and rename.
#include "kernellab/signal.hpp"

#include <string>
#include <vector>

namespace kl {

struct SignalLoadOptions {
    double sampleRate = 0.0;  ///< CSV without a rate comment, .npy, raw: required (> 0)
    int channels = 1;         ///< raw only
};

/// Picks the reader by extension (.wav .flac .ogg .csv .npy .f32/.raw).
Signal loadSignal(const std::string& path, const SignalLoadOptions& options = {});
/// Picks the writer by extension (.wav .csv .npy).
void saveSignal(const std::string& path, const Signal& signal);
/// Extensions loadSignal understands, lower-case with the dot.
const std::vector<std::string>& signalExtensions();

/// True when the extension names a signal format rather than an image.
bool isSignalFile(const std::string& path);

} // namespace kl
