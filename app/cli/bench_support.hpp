#pragma once
// What bench and sweep share: the fixed op parameters they time, generated inputs, and
// single-backend runs checked against a CPU result.
#include "cli.hpp"
#include "generators.hpp"

#include <optional>

namespace kl::cli {

/// The op parameters every bench/sweep row uses (recorded in their JSON so peers.py can match them).
struct BenchOpSettings {
    int kernelSize = 5;         ///< conv2d: gaussian kernelSize x kernelSize, border reflect101
    int taps = 127;             ///< conv1d: low-pass FIR, cut-off rate / 8, hamming window, mode same
    int channels = 1;           ///< of generated images and signals
    double signalRate = 48000;  ///< of generated signals
    /// of generated images: noise by default; constant is the histogram's worst case (one bin)
    app::ImagePattern imagePattern = app::ImagePattern::Noise;
};
/// Adds --ksize, --taps, --channels and --pattern to a parser, and reads them back.
void addBenchOpOptions(QCommandLineParser& parser);
BenchOpSettings benchOpSettings(const QCommandLineParser& parser);
/// The settings as JSON ("conv2d": {...}, "conv1d": {...}, "histogram": {...}, "channels", "signal_rate",
/// "image_pattern", "seed").
QJsonObject toJson(const BenchOpSettings& settings);

/// A request for `op` with the bench parameters: an image of cols x rows in the settings' pattern
/// (conv2d, histogram, transpose) or a noise signal of `frames` (conv1d), seeded identically every
/// time.
app::RunRequest benchRequest(app::Op op, const BenchOpSettings& settings, int cols, int rows, int depth, size_t frames);

/// Runs `request` on `backend` alone (the request's CPU/GPU options apply; no copy-bandwidth
/// measurement). Throws kl::Cancelled on Ctrl-C.
app::BackendResult runBackend(const app::RunRequest& request, app::Backend backend);

/// Sets `options` for the one untimed end-to-end run that checks a GPU result before it is timed:
/// one stream, one repetition, no warm-up, host memory `memory`.
void setCheckingRun(gpu::RunOptions& options, gpu::HostMemory memory);

/// Empty when `actual` agrees with `reference` within the op's tolerance, else what differs.
QString verify(const app::RunRequest& request, const app::BackendResult& actual, const app::BackendResult& reference);

/// Whether the plain reference loops are cheap enough (elements x taps) to verify against.
bool referenceIsAffordable(const app::RunRequest& request);

} // namespace kl::cli
