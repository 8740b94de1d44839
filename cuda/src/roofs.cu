// The device's fp32 FMA roof: every thread runs independent FMA chains on registers, enough
// warps per SM to hide the FMA latency, nothing read or written but one result per thread.
#include "engine_internal.hpp"

#include <vector>

namespace kl::gpu {

namespace {

constexpr int kChains = 8;  // independent FMAs in flight per thread
constexpr int kIterations = 4096;
constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 8;

__global__ void fmaChains(float* out, float a, float b)
{
    float x[kChains];
#pragma unroll
    for (int c = 0; c < kChains; ++c) x[c] = float(threadIdx.x + c);
    for (int i = 0; i < kIterations; ++i)
#pragma unroll
        for (int c = 0; c < kChains; ++c) x[c] = fmaf(x[c], a, b);
    float sum = 0;
#pragma unroll
    for (int c = 0; c < kChains; ++c) sum += x[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;  // keeps the chains alive
}

} // namespace

double measureFmaPeak(Engine::Impl& engine)
{
    engine.activate();
    const int blocks = kBlocksPerSm * engine.properties.multiProcessorCount;
    auto* out = static_cast<float*>(engine.cache.device("roof.fma", size_t(blocks) * kThreads * sizeof(float)));
    const cudaStream_t s = engine.ensureStreams(1)[0].get();
    Event start, stop;
    std::vector<double> ms;
    for (int i = 0; i < 7; ++i) {
        start.record(s);
        fmaChains<<<blocks, kThreads, 0, s>>>(out, 0.999f, 0.001f);
        KL_CHECK_LAUNCH();
        stop.record(s);
        stop.synchronize();
        if (i >= 2) ms.push_back(stop.millisecondsSince(start));  // the first two load the module and warm up
    }
    engine.cache.release("roof.fma");
    const double flops = 2.0 * kChains * kIterations * double(blocks) * kThreads;  // an FMA is 2 FLOPs
    return flops / (summarize(ms).medianMs * 1e6);
}

} // namespace kl::gpu
