#pragma once
// Signal files:
//   WAV / FLAC / OGG (libsndfile): any channel count, integer PCM normalised to [-1, 1].
//   CSV: optional header line (a first row with no number in it), '#' comments, one
//        column per channel, comma separated, C locale; sample rate from a
//        "# rate=<Hz>" comment or the argument.
//   NumPy .npy (format versions 1-3): <f4, <f8, <i2 (and their big-endian forms, swapped);
//        shape (N,) or (N, C); C order. i2 is scaled by 1/32768 like 16-bit PCM.
//   raw float32 (.f32/.raw, little-endian, interleaved): rate and channels given.
// Saves: WAV (32-bit float), CSV ("# rate=" comment, header ch1,ch2,..., values that read
// back exactly), .npy (<f4). Errors are kl::IoError naming the file and the reason
// (a CSV error also names the line); saves go through a temporary file and rename.
#include "kernellab/signal.hpp"

#include <string>
#include <vector>

namespace kl {

struct SignalLoadOptions {
    /// Used only where the file stores no rate: CSV without a rate comment, .npy, raw.
    /// There it is required (> 0), or loading fails with "sample rate unknown".
    double sampleRate = 0.0;
    int channels = 1;         ///< raw only
};

/// Picks the reader by extension (.wav .flac .ogg .csv .npy .f32/.raw). The result is
/// always valid: >= 1 channel, >= 1 frame, rate > 0.
Signal loadSignal(const std::string& path, const SignalLoadOptions& options = {});
/// Picks the writer by extension (.wav .csv .npy). WAV needs a whole-number rate.
void saveSignal(const std::string& path, const Signal& signal);
/// Extensions loadSignal understands, lower-case with the dot.
const std::vector<std::string>& signalExtensions();

/// True when the extension names a signal format rather than an image.
bool isSignalFile(const std::string& path);

} // namespace kl
