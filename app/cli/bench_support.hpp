#pragma once
// What bench and sweep add to app/common's bench requests (bench_request.hpp, shared with the
// GUI's sweep): their options, the settings' JSON, and runs that stop on Ctrl-C.
#include "bench_request.hpp"
#include "cli.hpp"

namespace kl::cli {

// Named here as the commands have always called them.
using app::BenchOpSettings;
using app::benchRequest;
using app::verify;

/// Adds --ksize, --taps, --channels and --pattern to a parser, and reads them back.
void addBenchOpOptions(QCommandLineParser& parser);
BenchOpSettings benchOpSettings(const QCommandLineParser& parser);
/// The settings as JSON ("conv2d": {...}, "conv1d": {...}, "histogram": {...}, "channels", "signal_rate",
/// "image_pattern", "seed").
QJsonObject toJson(const BenchOpSettings& settings);

/// app::runBackend, stopped by Ctrl-C (throws kl::Cancelled).
app::BackendResult runBackend(const app::RunRequest& request, app::Backend backend);

/// Sets `options` for the one untimed end-to-end run that checks a GPU result before it is timed:
/// one stream, one repetition, no warm-up, host memory `memory`.
void setCheckingRun(gpu::RunOptions& options, gpu::HostMemory memory);

/// Whether the plain reference loops are cheap enough (elements x taps) to verify against.
bool referenceIsAffordable(const app::RunRequest& request);

} // namespace kl::cli
