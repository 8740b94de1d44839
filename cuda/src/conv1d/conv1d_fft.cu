// conv1d's fft variant: overlap-save with cuFFT. n-point R2C of overlapping window
// blocks (hop n - M + 1), product with the taps' spectrum, C2R, keep the last
// n - M + 1 samples of each block, scale by 1/n. n is a power of two >= 2M chosen
// by chooseFftShape's cost model. Blocks go through cuFFT `batch` at a time (a
// "unit"); the batch and the unit boundaries depend only on the signal length and
// the taps, and chunks are whole units, so results are bit-identical for any
// stream count. Plans (one R2C and one C2R per stream, as a plan is bound to one
// stream) are cached in Engine::Impl::fftPlans under (kind = cufftType << 8 |
// stream, n, batch).
#include "conv1d_variants.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace kl::gpu {
namespace {

constexpr int kThreads = 256;
constexpr size_t kMaxStrideBlocks = 1u << 16;  // grid-stride kernels: enough blocks to fill the device

/// blocks[b * n + j] = window[b * hop + j]: `total / n` overlapping blocks of n = 2^log2n samples.
__global__ void gatherBlocks(const float* __restrict__ window, float* __restrict__ blocks, int log2n, size_t hop,
                             size_t total)
{
    const size_t mask = (size_t(1) << log2n) - 1;
    for (size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += size_t(gridDim.x) * blockDim.x)
        blocks[e] = window[(e >> log2n) * hop + (e & mask)];
}

/// Each block's spectrum (`bins` values) times the taps' spectrum.
__global__ void multiplySpectra(cufftComplex* __restrict__ spectra, const cufftComplex* __restrict__ taps, size_t bins,
                                size_t total)
{
    for (size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += size_t(gridDim.x) * blockDim.x) {
        const cufftComplex s = spectra[e], h = taps[e % bins];
        spectra[e] = make_float2(s.x * h.x - s.y * h.y, s.x * h.y + s.y * h.x);
    }
}

/// out[b * hop + i] = blocks[b * n + skip + i] * scale for the `count` outputs: the samples of each
/// circular convolution that no wrap-around reached, with cuFFT's missing 1/n.
__global__ void scatterValid(const float* __restrict__ blocks, float* __restrict__ out, int log2n, size_t hop,
                             size_t skip, size_t count, float scale)
{
    for (size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x; e < count; e += size_t(gridDim.x) * blockDim.x) {
        const size_t b = e / hop;
        out[e] = blocks[(b << log2n) + skip + (e - b * hop)] * scale;
    }
}

unsigned strideBlocks(size_t total) { return unsigned(std::min((total + kThreads - 1) / kThreads, kMaxStrideBlocks)); }

// ---- the transform's shape and plans -------------------------------------

constexpr int kMinFftLog2 = 5;           // smaller transforms are all overhead
constexpr int kFftSizeCandidates = 4;    // the smallest allowed size and three doublings
constexpr double kFftPassCost = 8;       // gather + product + scatter, in radix-2 passes
/// Transforms up to 2^14 points run in one cuFFT kernel per direction on the H200; each doubling
/// beyond costs about 6 more radix-2 passes (an extra trip through memory).
constexpr int kFftOneKernelLog2 = 14;
constexpr double kFftExtraPassCost = 6;
// Transform samples per cuFFT call: 32 MB of real and 32 MB of spectrum scratch per stream; fewer,
// bigger calls measured faster up to this size.
constexpr size_t kUnitSamples = size_t(1) << 23;

int ceilLog2(size_t v)
{
    int l = 0;
    while ((size_t(1) << l) < v) ++l;
    return l;
}

/// n minimises the work per output, n (log2 n + kFftPassCost + extra passes) / (n - M + 1), over
/// powers of two from max(2M, 32) up, but not beyond the size that holds a whole channel's window in
/// one block.
FftShape chooseFftShape(size_t taps, size_t length)
{
    const int smallest = std::max(kMinFftLog2, ceilLog2(2 * taps));
    const int largest = std::max(smallest, std::min(smallest + kFftSizeCandidates - 1, ceilLog2(length + taps - 1)));
    FftShape shape;
    double bestCost = std::numeric_limits<double>::infinity();
    for (int l = smallest; l <= largest; ++l) {
        const double n = double(size_t(1) << l);
        const double passes = l + kFftPassCost + kFftExtraPassCost * std::max(0, l - kFftOneKernelLog2);
        const double cost = n * passes / (n - double(taps) + 1);
        if (cost < bestCost) {
            bestCost = cost;
            shape.log2n = l;
        }
    }
    shape.n = size_t(1) << shape.log2n;
    shape.bins = shape.n / 2 + 1;
    shape.hop = shape.n - taps + 1;
    // Units of about kUnitSamples, evenly sized so the last one of a channel wastes little.
    const size_t blocks = (length + shape.hop - 1) / shape.hop;
    const size_t perUnit = std::max<size_t>(1, kUnitSamples / shape.n);
    const size_t units = (blocks + perUnit - 1) / perUnit;
    shape.batch = int((blocks + units - 1) / units);
    return shape;
}

/// A cached plan: `batch` n-point R2C or C2R transforms, dense layout, bound to stream slot `slot`.
cufftHandle fftPlan(Engine::Impl& engine, cufftType type, int slot, const FftShape& shape, int batch)
{
    const auto key = std::make_tuple(int(type) << 8 | slot, static_cast<long long>(shape.n), batch);
    auto it = engine.fftPlans.find(key);
    if (it == engine.fftPlans.end()) {
        cufftHandle handle = 0;
        KL_CUFFT_TRY(cufftCreate(&handle));
        FftPlan plan(handle);
        int n = int(shape.n);
        size_t workBytes = 0;
        KL_CUFFT_TRY(cufftMakePlanMany(handle, 1, &n, nullptr, 1, 0, nullptr, 1, 0, type, batch, &workBytes));
        it = engine.fftPlans.emplace(key, std::move(plan)).first;
    }
    return it->second.get();
}

/// Once per run: per-stream scratch and plans, and the taps' spectrum.
void prepareFft(const std::vector<float>& taps, Conv1dRun& run, Engine::Impl& engine, int streams)
{
    const cudaStream_t s = engine.streams[0].get();
    const FftShape& shape = run.fft;
    const size_t blockSamples = size_t(shape.batch) * shape.n, blockBins = size_t(shape.batch) * shape.bins;
    run.blocks = static_cast<float*>(engine.cache.device("conv1d.fft.blocks", streams * blockSamples * sizeof(float)));
    run.spectra = static_cast<cufftComplex*>(
        engine.cache.device("conv1d.fft.spectra", streams * blockBins * sizeof(cufftComplex)));
    run.fftSlots.clear();
    for (int slot = 0; slot < streams; ++slot)
        run.fftSlots.push_back({engine.streams[size_t(slot)].get(),
                                fftPlan(engine, CUFFT_R2C, slot, shape, shape.batch),
                                fftPlan(engine, CUFFT_C2R, slot, shape, shape.batch)});
    // The taps' spectrum: h zero-padded to n, transformed once.
    auto* dTapBlock = static_cast<float*>(engine.cache.device("conv1d.fft.taps", shape.n * sizeof(float)));
    auto* dTapBins = static_cast<cufftComplex*>(
        engine.cache.device("conv1d.fft.tapSpectrum", shape.bins * sizeof(cufftComplex)));
    KL_CUDA_TRY(cudaMemsetAsync(dTapBlock, 0, shape.n * sizeof(float), s));
    KL_CUDA_TRY(cudaMemcpyAsync(dTapBlock, taps.data(), taps.size() * sizeof(float), cudaMemcpyHostToDevice, s));
    const cufftHandle tapPlan = fftPlan(engine, CUFFT_R2C, 0, shape, 1);
    KL_CUFFT_TRY(cufftSetStream(tapPlan, s));
    KL_CUFFT_TRY(cufftExecR2C(tapPlan, dTapBlock, dTapBins));
    run.tapSpectrum = dTapBins;
    engine.streams[0].synchronize();
}

/// Which of the run's streams `stream` is: the per-stream plans and scratch a chunk uses.
size_t streamSlot(const Conv1dRun& run, cudaStream_t stream)
{
    for (size_t i = 0; i < run.fftSlots.size(); ++i)
        if (run.fftSlots[i].stream == stream) return i;
    throw std::logic_error("conv1d: chunk stream is not one of the run's streams");
}

/// Per unit of the chunk's rows: gather the blocks, R2C, times the taps' spectrum, C2R, scatter.
void computeFft(const Conv1dRun& run, const Conv1dChunk& k, cudaStream_t stream)
{
    const FftShape& shape = run.fft;
    float* out = run.output(k);
    const size_t slot = streamSlot(run, stream);
    float* blocks = run.blocks + slot * shape.batch * shape.n;
    cufftComplex* spectra = run.spectra + slot * shape.batch * shape.bins;
    const Conv1dRun::FftSlot& plans = run.fftSlots[slot];
    KL_CUFFT_TRY(cufftSetStream(plans.forward, stream));
    KL_CUFFT_TRY(cufftSetStream(plans.inverse, stream));
    const size_t blockSamples = size_t(shape.batch) * shape.n, blockBins = size_t(shape.batch) * shape.bins;
    const float scale = 1.f / float(shape.n);
    for (int r = 0; r < k.rows; ++r) {
        for (size_t u = 0; u < k.count; u += shape.unitOutputs()) {
            const float* window = run.window(k) + size_t(r) * k.inPitch + u;
            const size_t count = std::min(shape.unitOutputs(), k.count - u);
            gatherBlocks<<<strideBlocks(blockSamples), kThreads, 0, stream>>>(window, blocks, shape.log2n, shape.hop,
                                                                               blockSamples);
            KL_CHECK_LAUNCH();
            KL_CUFFT_TRY(cufftExecR2C(plans.forward, blocks, spectra));
            multiplySpectra<<<strideBlocks(blockBins), kThreads, 0, stream>>>(spectra, run.tapSpectrum, shape.bins,
                                                                               blockBins);
            KL_CHECK_LAUNCH();
            KL_CUFFT_TRY(cufftExecC2R(plans.inverse, spectra, blocks));
            scatterValid<<<strideBlocks(count), kThreads, 0, stream>>>(blocks, out + size_t(r) * run.length + u,
                                                                       shape.log2n, shape.hop, run.taps - 1, count,
                                                                       scale);
            KL_CHECK_LAUNCH();
        }
    }
}

/// The transform for this run; chunks are whole units.
size_t layoutFft(Conv1dRun& run)
{
    run.fft = chooseFftShape(run.taps, run.length);
    return run.fft.unitOutputs();
}

} // namespace

Conv1dVariant fftConv1d()
{
    return {"fft", "overlap-save with cuFFT: cost nearly independent of the filter length", nullptr,
            {layoutFft, prepareFft, computeFft}};
}

} // namespace kl::gpu
