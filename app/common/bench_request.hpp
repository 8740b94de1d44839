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

/// The class a request's work is judged in, whatever the variant that runs it executes (bench
/// --matrix): memory-bound, held to the device copy, are conv2d kernels up to 5x5, rank-1 kernels up to
/// 15 taps a side, conv1d up to 15 taps, histogram and transpose; the larger kernels are compute-bound,
/// held to the fp32 FMA peak. The nearer of the two roofs alone would flatter the separable and fft
/// variants, whose FLOPs count as the direct form's.
enum class WorkClass { Memory, Compute };
constexpr int kMemoryBoundKernelSide = 5;  ///< any conv2d kernel up to this size is memory-bound
constexpr int kMemoryBoundTaps = 15;       ///< and rank-1 kernels up to this side, and conv1d up to these taps
WorkClass workClass(const RunRequest& request);
/// The rule workClass applies, in words, for reports.
QString workClassRule();

/// Runs `request` on `backend` alone (the request's CPU/GPU options apply). Throws kl::Cancelled
/// when `cancel` becomes true.
BackendResult runBackend(const RunRequest& request, Backend backend, const std::atomic<bool>* cancel);

/// Empty when `actual` agrees with `reference` within the op's tolerance, else what differs.
QString verify(const RunRequest& request, const BackendResult& actual, const BackendResult& reference);

} // namespace kl::app
