#pragma once
// What the CLI's bench and sweep and the GUI's sweep share: the fixed op parameters they time,
// generated inputs, and single-backend runs checked against a CPU result.
#include "generators.hpp"
#include "session.hpp"

#include <atomic>

namespace kl::app {

/// The op parameters every bench/sweep row uses (recorded in the bench JSON so peers.py can match them).
struct BenchOpSettings {
    int kernelSize = 5;         ///< conv2d: gaussian kernelSize x kernelSize, border reflect101
    int taps = 127;             ///< conv1d: low-pass FIR, cut-off rate / 8, hamming window, mode same
    int channels = 1;           ///< of generated images and signals
    double signalRate = 48000;  ///< of generated signals
    /// of generated images: noise by default; constant is the histogram's worst case (one bin)
    ImagePattern imagePattern = ImagePattern::Noise;
};

/// A request for `op` with the bench parameters: an image of cols x rows in the settings' pattern
/// (conv2d, histogram, transpose) or a noise signal of `frames` (conv1d), seeded identically every
/// time. It measures no roofs.
RunRequest benchRequest(Op op, const BenchOpSettings& settings, int cols, int rows, int depth, size_t frames);

/// Runs `request` on `backend` alone (the request's CPU/GPU options apply). Throws kl::Cancelled
/// when `cancel` becomes true.
BackendResult runBackend(const RunRequest& request, Backend backend, const std::atomic<bool>* cancel);

/// Empty when `actual` agrees with `reference` within the op's tolerance, else what differs.
QString verify(const RunRequest& request, const BackendResult& actual, const BackendResult& reference);

} // namespace kl::app
