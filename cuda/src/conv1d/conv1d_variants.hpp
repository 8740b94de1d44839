#pragma once
// What conv1d's host side (conv1d.cpp: validation, chunk planning, the registry and auto
// choice, the chunked run) and its variant families (one .cu each, owning their kernels and
// constant memory) share: the problem a variant is asked to run, one run's chunks and device
// buffers, and the descriptors each family registers. Host code only: no kernels here.
#include "../engine_internal.hpp"
#include "../variant_registry.hpp"

#include <cufft.h>

#include <cstddef>
#include <vector>

namespace kl::gpu {

/// What a conv1d variant is asked to run.
struct Conv1dProblem {
    size_t taps;
    const DeviceInfo& device;
};

/// A rectangle of channels x output samples, and where its windows lie (see conv1d.cpp).
struct Conv1dChunk {
    int row0 = 0, rows = 0;       ///< channels
    size_t begin = 0, count = 0;  ///< output samples of each of those channels
    size_t inPitch = 0;           ///< window samples per row: count rounded up to whole units, + M - 1
    size_t inOffset = 0;          ///< where the chunk's windows start in the window buffer
    [[nodiscard]] size_t windowSamples() const { return size_t(rows) * inPitch; }
};

/// The fft variant's transform: n = 2^log2n points, blocks of `hop` outputs, `batch` blocks per
/// cuFFT call (one unit).
struct FftShape {
    int log2n = 0;
    size_t n = 0, bins = 0;  ///< transform size and its n / 2 + 1 spectrum bins
    size_t hop = 0;          ///< outputs per block, n - M + 1
    int batch = 1;           ///< blocks per cuFFT call (one unit)
    [[nodiscard]] size_t unitOutputs() const { return size_t(batch) * hop; }
};

/// One run's chunks and device buffers.
struct Conv1dRun {
    size_t taps = 0;    ///< M
    size_t length = 0;  ///< output samples per channel (the mode's slice)
    std::vector<Conv1dChunk> chunks;
    float* windows = nullptr;  ///< every chunk's windows (zero where they run past the signal)
    float* out = nullptr;      ///< channels x length

    /// naive, shared: the reversed taps in global memory, and conv1dWarpStream's resident grid.
    const float* reversedTaps = nullptr;
    unsigned streamBlocks = 0;

    /// fft: the transform, the taps' spectrum, and per stream a chunk runs on its scratch and
    /// plans (a plan is bound to one stream).
    struct FftSlot {
        cudaStream_t stream;
        cufftHandle forward, inverse;
    };
    FftShape fft;
    const cufftComplex* tapSpectrum = nullptr;
    float* blocks = nullptr;
    cufftComplex* spectra = nullptr;
    std::vector<FftSlot> fftSlots;

    [[nodiscard]] const float* window(const Conv1dChunk& k) const { return windows + k.inOffset; }
    [[nodiscard]] float* output(const Conv1dChunk& k) const { return out + size_t(k.row0) * length + k.begin; }
};

/// What the host side calls to run a variant.
struct Conv1dLaunch {
    /// Before the chunks are planned: what chunking depends on, into `run` (taps and length set;
    /// fft: its transform). Returns the outputs chunk segments come in multiples of. nullptr: 1.
    size_t (*layout)(Conv1dRun& run) = nullptr;
    /// Once per run, after the chunks are planned and the windows zeroed, on engine.streams[0]:
    /// the taps into place and per-stream state; chunks run on the first `streams` streams.
    void (*prepare)(const std::vector<float>& taps, Conv1dRun& run, Engine::Impl& engine, int streams) = nullptr;
    /// One chunk's kernels on `stream`.
    void (*compute)(const Conv1dRun& run, const Conv1dChunk& chunk, cudaStream_t stream) = nullptr;
    /// Whether it reads taps from __constant__ memory (one copy per device: runs hold a lock).
    bool constantTaps = false;
};

using Conv1dVariant = VariantDescriptor<Conv1dProblem, Conv1dLaunch>;

// The families, each defined in its own .cu beside its kernels.
Conv1dVariant naiveConv1d();   // conv1d_direct.cu
Conv1dVariant sharedConv1d();  // conv1d_direct.cu
Conv1dVariant fftConv1d();     // conv1d_fft.cu

} // namespace kl::gpu
