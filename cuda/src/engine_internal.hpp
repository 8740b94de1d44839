#pragma once
// What the op implementations (conv2d/, conv1d/, histogram/, transpose/)
// share: the engine's device state, and the entry point each op provides.
#include "kernellab/gpu/engine.hpp"
#include "resources.hpp"
#include "staging.hpp"
#include "stream_gate.hpp"

#include <cuda_runtime.h>

#include <map>
#include <string>
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
    std::unique_ptr<StagingRing> staging;  ///< staged host memory (created on first use)
    /// The last end-to-end repetition captured as a graph; updated in place by the next capture
    /// of the same shape (cudaGraphExecUpdate), else instantiated anew.
    GraphExec pipelineGraph;
    std::string pipelineGraphShape;  ///< op, variant, sizes, chunks and streams it was captured for
    /// The pipeline's timing events and its untimed fork/join events, reused from run to run
    /// (a graph update may change node parameters, not which events a node records).
    std::vector<Event> pipelineTiming, pipelineOrder;
    double linkBothWaysGBs = 0;  ///< measured by Engine::linkBothWaysGBs on its first call
    double copyBandwidthGBs = 0, fmaPeakGFlops = 0;  ///< remembered by Engine::copyBandwidthGBs, fmaPeakGFlops
    /// cuFFT plans by (kind, size, batch), reused between runs (conv1d fft variant).
    std::map<std::tuple<int, long long, int>, FftPlan> fftPlans;

    /// Makes this engine's device current on the calling thread.
    void activate() const;
    /// At least `count` streams.
    const std::vector<Stream>& ensureStreams(int count);
};

/// The fp32 FMA rate of the device, GFLOP/s (an FMA counts 2), measured now (roofs.cu).
double measureFmaPeak(Engine::Impl& engine);

/// DeviceInfo::deviceCodeArchitecture for a GPU of compute capability major.minor (device_code.cu).
int deviceCodeArchitecture(int computeMajor, int computeMinor);
/// "compute capability 9.0, device code 7.5", for variants' reasons.
std::string describeCompute(const DeviceInfo& device);

/// Throws kl::InvalidArgument unless options are in range (streams 1..kMaxStreams, repetitions >= 1, warmup >= 0).
void validateRunOptions(const RunOptions& options);

GpuReport runConv2d(Engine::Impl& engine, const cv::Mat& input, const Conv2DSpec& spec, const RunOptions& options,
                    cv::Mat& output);
GpuReport runConv1d(Engine::Impl& engine, const Signal& input, const Conv1DSpec& spec, const RunOptions& options,
                    Signal& output);
GpuReport runHistogram(Engine::Impl& engine, const cv::Mat& input, const HistogramSpec& spec,
                       const RunOptions& options, HistogramResult& output);
GpuReport runTranspose(Engine::Impl& engine, const cv::Mat& input, const RunOptions& options, cv::Mat& output);
GpuReport runTransposeSignal(Engine::Impl& engine, const Signal& input, const RunOptions& options,
                             std::vector<float>& interleaved);

/// Each op's variant registry, as engine.cpp's variantInfo() lists it.
std::vector<VariantInfo> conv2dVariantInfo();
std::vector<VariantInfo> conv1dVariantInfo();
std::vector<VariantInfo> histogramVariantInfo();
std::vector<VariantInfo> transposeVariantInfo();

} // namespace kl::gpu
