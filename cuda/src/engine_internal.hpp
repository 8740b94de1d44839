#pragma once
// What the op implementations (conv2d.cu, conv1d.cu, histogram.cu, transpose.cu)
// share: the engine's device state, and the entry point each op provides.
#include "kernellab/gpu/engine.hpp"
#include "resources.hpp"
#include "stream_gate.hpp"

#include <cuda_runtime.h>

#include <map>
#include <tuple>
#include <vector>

namespace kl::gpu {

struct Engine::Impl {
    int deviceIndex = 0;
    DeviceInfo info;
    cudaDeviceProp properties{};
    BufferCache cache;
    std::vector<Stream> streams;  ///< created on first use, up to kMaxStreams
    std::unique_ptr<StreamGate> gate;  ///< kernel-only timing (created on first use)
    /// cuFFT plans by (kind, size, batch), reused between runs (conv1d fft variant).
    std::map<std::tuple<int, long long, int>, FftPlan> fftPlans;

    /// Makes this engine's device current on the calling thread.
    void activate() const;
    /// At least `count` streams.
    const std::vector<Stream>& ensureStreams(int count);
};

/// Picks the variant: "auto" resolves through `pickAuto`; other names must be in `known`
/// (kl::InvalidArgument listing the valid names otherwise).
std::string resolveVariant(const std::string& op, const std::string& requested,
                           const std::vector<std::string>& known, const std::string& autoChoice);

/// Throws kl::InvalidArgument unless options are in range (streams 1..16, repetitions >= 1, warmup >= 0).
void validateRunOptions(const RunOptions& options);

GpuReport runConv2d(Engine::Impl& engine, const cv::Mat& input, const Conv2DSpec& spec, const RunOptions& options,
                    cv::Mat& output);
bool conv2dApplies(const Engine::Impl& engine, const std::string& variant, const cv::Mat& input, const Conv2DSpec& spec);
GpuReport runConv1d(Engine::Impl& engine, const Signal& input, const Conv1DSpec& spec, const RunOptions& options,
                    Signal& output);
GpuReport runHistogram(Engine::Impl& engine, const cv::Mat& input, const HistogramSpec& spec,
                       const RunOptions& options, HistogramResult& output);
GpuReport runTranspose(Engine::Impl& engine, const cv::Mat& input, const RunOptions& options, cv::Mat& output);
GpuReport runTransposeSignal(Engine::Impl& engine, const Signal& input, const RunOptions& options,
                             std::vector<float>& interleaved);

/// The variant names per op (engine.cpp's variants() reads these).
extern const std::vector<std::string> kConv2dVariants;     // naive, constant, shared, separable
extern const std::vector<std::string> kConv1dVariants;     // naive, shared, fft
extern const std::vector<std::string> kHistogramVariants;  // global-atomics, shared, optimized
extern const std::vector<std::string> kTransposeVariants;  // naive, tiled, tiled-padded, optimized

} // namespace kl::gpu
