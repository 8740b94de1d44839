// 1D convolution on the GPU: exactly the function kl::conv1dReference computes
// (true convolution, numpy.convolve's full / same / valid slices, zeros outside
// the signal), per channel, float32.
//
// Layout. With M taps, output i of the mode's slice is full[offset + i] =
//   sum over t in [0, M) of r[t] * p[offset + i + t],   r[t] = h[M - 1 - t],
// where p is the channel with M - 1 zeros on each side. A chunk computing outputs
// [begin, end) of some channels reads their "window" p[offset + begin, offset +
// end + M - 1): its segment plus the (M - 1)-sample overlap, zero where it runs
// past the signal. Every variant sums the taps in ascending t, which is the
// reference's ascending signal index, so the direct variants differ from it
// only by fused multiply-adds (and naive and shared agree bit for bit).
//
// Variants (registry entries at the end of this file)
//   naive   one output per thread; taps and window read from global memory.
//   shared  a block computes 1024 outputs (4 consecutive per thread). The window
//           goes through shared memory one tap tile (1024 taps) at a time: the
//           block's segment plus that tile's slice of the (M - 1)-sample halo,
//           so any M runs in 12 KB of shared memory. Taps live in __constant__
//           memory when M <= 16384 (64 KB; all threads of a warp read the same
//           tap, the constant cache's broadcast case), else each tap tile is
//           staged in shared memory too. Per 4 taps a thread makes one float4
//           shared load (a sliding 8-sample register window), one float4 tap
//           load and 16 FMAs. Short filters (M <= 65) stream instead: a resident
//           grid of warps, each walking its own run of 128-output chunks, stages
//           a chunk plus a 64-sample halo in its slice of shared memory while the
//           next chunk's loads are in flight, with no block barrier
//           (conv1dWarpStream); the same sums in the same order.
//   fft     overlap-save with cuFFT: n-point R2C of overlapping window blocks
//           (hop n - M + 1), product with the taps' spectrum, C2R, keep the last
//           n - M + 1 samples of each block, scale by 1/n. n is a power of two
//           >= 2M chosen by chooseFftShape's cost model. Blocks go through cuFFT
//           `batch` at a time (a "unit"); the batch and the unit boundaries depend
//           only on the signal length and the taps, and chunks are whole units, so
//           results are bit-identical for any stream count. Plans (one R2C and
//           one C2R per stream, as a plan is bound to one stream) are cached in
//           Engine::Impl::fftPlans under (kind = cufftType << 8 | stream, n, batch).
//   auto    shared when M <= kAutoFftTaps, fft above (measured crossover, below).
//
// Chunks are rectangles of channels x output segments: all channels in one chunk
// for one stream; otherwise each channel split into equal segments (whole fft
// units for fft) so that there are at most as many chunks as the pipeline asks
// for. Each chunk uploads its own window, so the M - 1 overlap crosses the bus
// once per chunk (counted in bytesH2D). Set-up outside the timed stages
// (prepare, like plan creation): taps upload, the taps' spectrum, cuFFT plans,
// and zeroing the window buffers (uploads then write only signal samples).
//
// kernelBytes = (input + output + taps) samples * 4: each read or written once,
// the least any kernel must move. kernelFlops = 2 * M * output samples *
// channels for every variant; for fft that is the direct-equivalent count, so
// its GFLOP/s is the effective rate of the convolution it replaces.
#include "engine_internal.hpp"
#include "pipeline.hpp"
#include "variant_registry.hpp"

#include "kernellab/conv1d.hpp"
#include "kernellab/error.hpp"
#include "kernellab/image.hpp"

#include <cufft.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace kl::gpu {

namespace {

/// auto: shared up to here, fft above, where they cross on the H200 (docs/performance.md).
constexpr size_t kAutoFftTaps = 300;

constexpr int kThreads = 256;
constexpr int kPerThread = 4;
constexpr int kTile = kThreads * kPerThread;  // outputs per block of the shared kernel
constexpr int kTapTile = 1024;                // taps per shared-memory pass
constexpr size_t kConstantTaps = 16384;       // 64 KB, all the __constant__ space there is
constexpr unsigned kMaxGridY = 65535;
constexpr size_t kMaxStrideBlocks = 1u << 16;  // grid-stride kernels: enough blocks to fill the device
/// conv1dWarpStream's grid, in blocks per SM (about 5 are resident at once): the fastest measured.
constexpr int kStreamBlocksPerSm = 8;

__constant__ __align__(16) float c_taps[kConstantTaps];  // reversed taps for the shared kernel

/// One chunk for the direct kernels: `rows` channels of `count` outputs; row r reads its
/// window at in + r * inPitch (count + taps - 1 samples) and writes out + r * outPitch.
struct DirectArgs {
    const float* in;
    float* out;
    size_t inPitch, outPitch, count;
    int rows, taps;
};

__global__ void conv1dNaive(DirectArgs a, const float* __restrict__ reversedTaps)
{
    const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= a.count) return;
    for (int row = blockIdx.y; row < a.rows; row += gridDim.y) {
        const float* window = a.in + row * a.inPitch + i;
        float sum = 0.f;
        for (int t = 0; t < a.taps; ++t) sum = fmaf(reversedTaps[t], window[t], sum);
        a.out[row * a.outPitch + i] = sum;
    }
}

/// Taps t..t+3 (t a multiple of 4) and tap t of the tile starting at tap t0.
template <bool kConstant> __device__ __forceinline__ float4 tapGroup(const float* tile, int t0, int t)
{
    if constexpr (kConstant) return *reinterpret_cast<const float4*>(&c_taps[t0 + t]);
    else return *reinterpret_cast<const float4*>(&tile[t]);
}
template <bool kConstant> __device__ __forceinline__ float tapAt(const float* tile, int t0, int t)
{
    if constexpr (kConstant) return c_taps[t0 + t];
    else return tile[t];
}

/// Adds taps t0 .. t0 + count - 1 to the 4 outputs whose window starts at `own` (16-byte aligned,
/// own[t] pairs with tap t0 + t): per 4 taps one float4 window load, one float4 tap load, 16 FMAs,
/// in ascending tap order.
template <bool kConstant>
__device__ __forceinline__ void accumulateTaps(const float* own, const float* tapTile, int t0, int count, float& s0,
                                               float& s1, float& s2, float& s3)
{
    const float4* own4 = reinterpret_cast<const float4*>(own);
    float4 lo = own4[0];
    int t = 0;
    for (; t + 4 <= count; t += 4) {
        const float4 hi = own4[t / 4 + 1];
        const float4 w = tapGroup<kConstant>(tapTile, t0, t);
        s0 = fmaf(w.x, lo.x, s0); s1 = fmaf(w.x, lo.y, s1); s2 = fmaf(w.x, lo.z, s2); s3 = fmaf(w.x, lo.w, s3);
        s0 = fmaf(w.y, lo.y, s0); s1 = fmaf(w.y, lo.z, s1); s2 = fmaf(w.y, lo.w, s2); s3 = fmaf(w.y, hi.x, s3);
        s0 = fmaf(w.z, lo.z, s0); s1 = fmaf(w.z, lo.w, s1); s2 = fmaf(w.z, hi.x, s2); s3 = fmaf(w.z, hi.y, s3);
        s0 = fmaf(w.w, lo.w, s0); s1 = fmaf(w.w, hi.x, s1); s2 = fmaf(w.w, hi.y, s2); s3 = fmaf(w.w, hi.z, s3);
        lo = hi;
    }
    for (; t < count; ++t) {
        const float w = tapAt<kConstant>(tapTile, t0, t);
        s0 = fmaf(w, own[t], s0); s1 = fmaf(w, own[t + 1], s1); s2 = fmaf(w, own[t + 2], s2); s3 = fmaf(w, own[t + 3], s3);
    }
}

template <bool kConstant> __global__ void __launch_bounds__(kThreads)
conv1dShared(DirectArgs a, const float* __restrict__ reversedTaps)
{
    __shared__ __align__(16) float window[kTile + kTapTile];
    __shared__ __align__(16) float tapTile[kConstant ? 4 : kTapTile];
    const size_t base = size_t(blockIdx.x) * kTile;
    const size_t windowLength = a.count + a.taps - 1;
    // This thread's outputs are base + 4 * threadIdx.x + 0..3; for tap t they read window[4 * threadIdx.x + t + 0..3].
    const float* own = window + kPerThread * threadIdx.x;
    for (int row = blockIdx.y; row < a.rows; row += gridDim.y) {
        const float* in = a.in + row * a.inPitch;
        float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;
        for (int t0 = 0; t0 < a.taps; t0 += kTapTile) {
            const int tileTaps = min(kTapTile, a.taps - t0);
            __syncthreads();  // everyone is done with the previous tile
            for (int q = threadIdx.x; q < kTile + tileTaps; q += kThreads) {
                const size_t pos = base + t0 + q;
                window[q] = pos < windowLength ? in[pos] : 0.f;
            }
            if constexpr (!kConstant)
                for (int q = threadIdx.x; q < tileTaps; q += kThreads) tapTile[q] = reversedTaps[t0 + q];
            __syncthreads();
            accumulateTaps<kConstant>(own, tapTile, t0, tileTaps, s0, s1, s2, s3);
        }
        const float sums[kPerThread] = {s0, s1, s2, s3};
        const size_t first = base + kPerThread * threadIdx.x;
        float* out = a.out + row * a.outPitch;
#pragma unroll
        for (int r = 0; r < kPerThread; ++r)
            if (first + r < a.count) out[first + r] = sums[r];
    }
}

/// Outputs per warp-stream chunk (4 per lane) and the halo a chunk's window adds: short filters.
constexpr int kStreamChunk = 128;
constexpr int kStreamHalo = 64;
constexpr int kStreamMaxTaps = kStreamHalo + 1;

/// The shared variant for M <= kStreamMaxTaps. A warp owns a contiguous run of chunks (128 outputs
/// of one row) and needs no block barrier: per chunk each lane loads one float4 of its window (lanes
/// 0..15 one more of the halo) while the previous chunk is computed, stages them in the warp's
/// slice of shared memory, and computes 4 outputs as conv1dShared does (the same fmaf sequence).
__global__ void __launch_bounds__(kThreads) conv1dWarpStream(DirectArgs a)
{
    __shared__ __align__(16) float stage[kThreads / 32][kStreamChunk + kStreamHalo];
    const int lane = threadIdx.x % 32;
    float* staged = stage[threadIdx.x / 32];
    const size_t warps = size_t(gridDim.x) * kThreads / 32, warp = (size_t(blockIdx.x) * kThreads + threadIdx.x) / 32;
    const size_t chunksPerRow = (a.count + kStreamChunk - 1) / kStreamChunk, chunks = chunksPerRow * size_t(a.rows);
    const size_t perWarp = (chunks + warps - 1) / warps;
    const size_t first = warp * perWarp, last = min(chunks, first + perWarp);
    const size_t windowLength = a.count + a.taps - 1;

    // Window samples p..p+3 of a row: one vector load where the row is 16-byte aligned, zeros past its end.
    const auto load4 = [&](const float* in, bool aligned, size_t p) {
        if (aligned && p + 3 < windowLength) return __ldg(reinterpret_cast<const float4*>(in + p));
        float v[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) v[i] = p + i < windowLength ? __ldg(in + p + i) : 0.f;
        return make_float4(v[0], v[1], v[2], v[3]);
    };
    const auto loadChunk = [&](size_t chunk, float4& body, float4& halo) {
        const float* in = a.in + chunk / chunksPerRow * a.inPitch;
        const size_t start = chunk % chunksPerRow * kStreamChunk;
        const bool aligned = (reinterpret_cast<uintptr_t>(in) & 15) == 0;
        body = load4(in, aligned, start + 4 * lane);
        halo = lane < kStreamHalo / 4 ? load4(in, aligned, start + kStreamChunk + 4 * lane) : make_float4(0, 0, 0, 0);
    };

    float4 body{}, halo{};
    if (first < last) loadChunk(first, body, halo);
    for (size_t chunk = first; chunk < last; ++chunk) {
        float4 nextBody{}, nextHalo{};
        if (chunk + 1 < last) loadChunk(chunk + 1, nextBody, nextHalo);
        reinterpret_cast<float4*>(staged)[lane] = body;
        if (lane < kStreamHalo / 4) reinterpret_cast<float4*>(staged)[kStreamChunk / 4 + lane] = halo;
        __syncwarp();
        float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;
        accumulateTaps<true>(staged + 4 * lane, nullptr, 0, a.taps, s0, s1, s2, s3);
        __syncwarp();  // the next chunk overwrites the stage
        const size_t o = chunk % chunksPerRow * kStreamChunk + 4 * lane;
        float* out = a.out + chunk / chunksPerRow * a.outPitch + o;
        if (o + 3 < a.count && (reinterpret_cast<uintptr_t>(out) & 15) == 0) {
            *reinterpret_cast<float4*>(out) = make_float4(s0, s1, s2, s3);
        } else {
            const float sums[4] = {s0, s1, s2, s3};
#pragma unroll
            for (int i = 0; i < 4; ++i)
                if (o + i < a.count) out[i] = sums[i];
        }
        body = nextBody;
        halo = nextHalo;
    }
}

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

/// naive: one output per thread.
void launchNaive(const DirectArgs& a, const float* reversedTaps, unsigned, cudaStream_t s)
{
    const dim3 grid(unsigned((a.count + kThreads - 1) / kThreads), std::min(unsigned(a.rows), kMaxGridY));
    conv1dNaive<<<grid, kThreads, 0, s>>>(a, reversedTaps);
    KL_CHECK_LAUNCH();
}

/// shared: warp streams for short filters, else block tiles. `streamBlocks`: the resident grid
/// of conv1dWarpStream (blocks per SM x SMs).
void launchShared(const DirectArgs& a, const float* reversedTaps, unsigned streamBlocks, cudaStream_t s)
{
    if (a.taps <= kStreamMaxTaps) {
        const size_t chunks = (a.count + kStreamChunk - 1) / kStreamChunk * size_t(a.rows);
        const size_t warpsNeeded = (chunks + 3) / 4;  // at least 4 chunks per warp, for the prefetch to pay
        const unsigned blocks = unsigned(std::clamp<size_t>((warpsNeeded * 32 + kThreads - 1) / kThreads, 1, streamBlocks));
        conv1dWarpStream<<<blocks, kThreads, 0, s>>>(a);
    } else {
        const dim3 grid(unsigned((a.count + kTile - 1) / kTile), std::min(unsigned(a.rows), kMaxGridY));
        if (size_t(a.taps) <= kConstantTaps) conv1dShared<true><<<grid, kThreads, 0, s>>>(a, reversedTaps);
        else conv1dShared<false><<<grid, kThreads, 0, s>>>(a, reversedTaps);
    }
    KL_CHECK_LAUNCH();
}

// ---- fft geometry -----------------------------------------------------------

struct FftShape {
    int log2n = 0;
    size_t n = 0, bins = 0;  ///< transform size and its n / 2 + 1 spectrum bins
    size_t hop = 0;          ///< outputs per block, n - M + 1
    int batch = 1;           ///< blocks per cuFFT call (one unit)
    [[nodiscard]] size_t unitOutputs() const { return size_t(batch) * hop; }
};

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

// ---- chunks -----------------------------------------------------------------

struct Chunk {
    int row0 = 0, rows = 0;       ///< channels
    size_t begin = 0, count = 0;  ///< output samples of each of those channels
    size_t inPitch = 0;           ///< window samples per row: count rounded up to whole units, + M - 1
    size_t inOffset = 0;          ///< where the chunk's windows start in the window buffer
    [[nodiscard]] size_t windowSamples() const { return size_t(rows) * inPitch; }
};

/// At most `requested` chunks; segments are multiples of `granule` outputs (except at a channel's end).
std::vector<Chunk> planChunks(int channels, size_t length, size_t taps, size_t granule, int requested)
{
    std::vector<Chunk> chunks;
    auto add = [&](int row0, int rows, size_t begin, size_t count) {
        const size_t padded = (count + granule - 1) / granule * granule;
        const size_t offset = chunks.empty() ? 0 : chunks.back().inOffset + chunks.back().windowSamples();
        chunks.push_back({row0, rows, begin, count, padded + taps - 1, offset});
    };
    if (channels >= requested) {
        const int rowsPerChunk = (channels + requested - 1) / requested;
        for (int r = 0; r < channels; r += rowsPerChunk) add(r, std::min(rowsPerChunk, channels - r), 0, length);
    } else {
        const size_t granules = (length + granule - 1) / granule;
        const size_t perChannel = size_t(requested / channels);
        const size_t segment = (granules + perChannel - 1) / perChannel * granule;
        for (int r = 0; r < channels; ++r)
            for (size_t b = 0; b < length; b += segment) add(r, 1, b, std::min(segment, length - b));
    }
    return chunks;
}

/// `rows` rows of `width` bytes (a plain copy for one row: no pitch limit applies).
void copyRows(void* dst, size_t dstPitch, const void* src, size_t srcPitch, size_t width, int rows,
              cudaMemcpyKind kind, cudaStream_t stream)
{
    if (rows == 1) KL_CUDA_TRY(cudaMemcpyAsync(dst, src, width, kind, stream));
    else KL_CUDA_TRY(cudaMemcpy2DAsync(dst, dstPitch, src, srcPitch, width, size_t(rows), kind, stream));
}

/// Position of `stream` among the engine's streams: which per-stream plans and scratch a chunk uses.
int streamSlot(const Engine::Impl& engine, cudaStream_t stream)
{
    for (size_t i = 0; i < engine.streams.size(); ++i)
        if (engine.streams[i].get() == stream) return int(i);
    throw std::logic_error("conv1d: chunk stream is not one of the engine's streams");
}

/// What a conv1d variant is asked to run.
struct Conv1dProblem {
    size_t taps;
    const DeviceInfo& device;
};

/// A variant's launch: a direct kernel over a chunk's windows, or (null) the fft path.
struct Conv1dLaunch {
    void (*direct)(const DirectArgs& a, const float* reversedTaps, unsigned streamBlocks, cudaStream_t s) = nullptr;
    bool constantTaps = false;  ///< reads the taps from __constant__ memory where they fit
};

const VariantRegistry<Conv1dProblem, Conv1dLaunch>& conv1dVariants()
{
    using Variant = VariantDescriptor<Conv1dProblem, Conv1dLaunch>;
    static const VariantRegistry<Conv1dProblem, Conv1dLaunch> registry(
        "conv1d",
        {Variant{"naive", "one output per thread; taps and signal from global memory", nullptr, {launchNaive, false}},
         Variant{"shared", "signal tiles in shared memory, taps in constant memory; warp streams for short filters",
                 nullptr, {launchShared, true}},
         Variant{"fft", "overlap-save with cuFFT: cost nearly independent of the filter length", nullptr,
                 {nullptr, false}}},
        [](const Conv1dProblem& p) { return p.taps <= kAutoFftTaps ? "shared" : "fft"; });
    return registry;
}

} // namespace

std::vector<VariantInfo> conv1dVariantInfo() { return conv1dVariants().info(); }

std::string whyNotApplicable(const std::string& variant, const Signal& input, const Conv1DSpec& spec,
                             const DeviceInfo& device)
{
    validateConv1D(input, spec);
    return conv1dVariants().whyNot(variant, Conv1dProblem{spec.taps.size(), device});
}

GpuReport runConv1d(Engine::Impl& engine, const Signal& input, const Conv1DSpec& spec, const RunOptions& options,
                    Signal& output)
{
    validateConv1D(input, spec);
    const size_t frames = input.frames, taps = spec.taps.size();
    const int channels = input.channels;
    const size_t length = conv1dOutputLength(frames, taps, spec.mode);
    const size_t offset = conv1dOutputOffset(frames, taps, spec.mode);
    const auto& variant = conv1dVariants().resolve(options.variant, Conv1dProblem{taps, engine.info});
    const size_t outSamples = size_t(channels) * length;
    ensureMemoryAvailable(outSamples * sizeof(float), "conv1d output");
    Signal result(channels, length, input.sampleRate);

    Pipeline p;
    p.op = "conv1d";
    p.variant = variant.name;
    p.hostIn = input.data.data();
    p.hostInBytes = input.data.size() * sizeof(float);
    p.hostOut = result.data.data();
    p.hostOutBytes = outSamples * sizeof(float);
    p.kernelBytes = (uint64_t(input.data.size()) + outSamples + taps) * sizeof(float);
    p.kernelFlops = 2.0 * double(taps) * double(outSamples);

    const bool fft = variant.launch.direct == nullptr;
    const FftShape shape = fft ? chooseFftShape(taps, length) : FftShape{};
    std::vector<Chunk> chunks;
    float* dWindows = nullptr;
    float* dOut = nullptr;
    const float* dReversedTaps = nullptr;
    const unsigned streamBlocks = unsigned(kStreamBlocksPerSm * engine.properties.multiProcessorCount);
    // fft: the taps' spectrum, per-stream scratch, per-stream plans
    const cufftComplex* dTapSpectrum = nullptr;
    float* dBlocks = nullptr;
    cufftComplex* dSpectra = nullptr;
    std::vector<std::pair<cufftHandle, cufftHandle>> plans;  // forward, inverse per stream slot

    p.prepare = [&](int requested) {
        const cudaStream_t s = engine.streams[0].get();
        chunks = planChunks(channels, length, taps, fft ? shape.unitOutputs() : 1, requested);
        const size_t windowSamples = chunks.back().inOffset + chunks.back().windowSamples();
        dWindows = static_cast<float*>(engine.cache.device("conv1d.windows", windowSamples * sizeof(float)));
        dOut = static_cast<float*>(engine.cache.device("conv1d.out", outSamples * sizeof(float)));
        KL_CUDA_TRY(cudaMemsetAsync(dWindows, 0, windowSamples * sizeof(float), s));
        if (!fft) {
            const std::vector<float> reversed(spec.taps.rbegin(), spec.taps.rend());
            auto* dTaps = static_cast<float*>(engine.cache.device("conv1d.taps", taps * sizeof(float)));
            KL_CUDA_TRY(cudaMemcpyAsync(dTaps, reversed.data(), taps * sizeof(float), cudaMemcpyHostToDevice, s));
            if (variant.launch.constantTaps && taps <= kConstantTaps)
                KL_CUDA_TRY(cudaMemcpyToSymbolAsync(c_taps, reversed.data(), taps * sizeof(float), 0,
                                                    cudaMemcpyHostToDevice, s));
            dReversedTaps = dTaps;
            engine.streams[0].synchronize();  // `reversed` is pageable and about to go
            return int(chunks.size());
        }
        const int streamCount = options.endToEnd ? options.streams : 1;
        const int slots = std::min(streamCount, int(chunks.size()));
        const size_t blockSamples = size_t(shape.batch) * shape.n, blockBins = size_t(shape.batch) * shape.bins;
        dBlocks = static_cast<float*>(engine.cache.device("conv1d.fft.blocks", slots * blockSamples * sizeof(float)));
        dSpectra = static_cast<cufftComplex*>(
            engine.cache.device("conv1d.fft.spectra", slots * blockBins * sizeof(cufftComplex)));
        plans.clear();
        for (int slot = 0; slot < slots; ++slot)
            plans.emplace_back(fftPlan(engine, CUFFT_R2C, slot, shape, shape.batch),
                               fftPlan(engine, CUFFT_C2R, slot, shape, shape.batch));
        // The taps' spectrum: h zero-padded to n, transformed once.
        auto* dTapBlock = static_cast<float*>(engine.cache.device("conv1d.fft.taps", shape.n * sizeof(float)));
        auto* dTapBins = static_cast<cufftComplex*>(
            engine.cache.device("conv1d.fft.tapSpectrum", shape.bins * sizeof(cufftComplex)));
        KL_CUDA_TRY(cudaMemsetAsync(dTapBlock, 0, shape.n * sizeof(float), s));
        KL_CUDA_TRY(cudaMemcpyAsync(dTapBlock, spec.taps.data(), taps * sizeof(float), cudaMemcpyHostToDevice, s));
        const cufftHandle tapPlan = fftPlan(engine, CUFFT_R2C, 0, shape, 1);
        KL_CUFFT_TRY(cufftSetStream(tapPlan, s));
        KL_CUFFT_TRY(cufftExecR2C(tapPlan, dTapBlock, dTapBins));
        dTapSpectrum = dTapBins;
        engine.streams[0].synchronize();
        return int(chunks.size());
    };
    p.upload = [&](const ChunkContext& c) {
        const Chunk& k = chunks[size_t(c.chunk)];
        // Window sample q of each row is signal sample q + shift; only [0, frames) is copied, the rest stays zero.
        const long long shift = static_cast<long long>(offset + k.begin) - static_cast<long long>(taps - 1);
        const long long first = std::max(0LL, -shift);
        const long long last = std::min(static_cast<long long>(k.inPitch), static_cast<long long>(frames) - shift);
        if (last <= first) return size_t(0);
        const size_t width = size_t(last - first) * sizeof(float);
        const float* src = reinterpret_cast<const float*>(c.hostIn) + size_t(k.row0) * frames + size_t(shift + first);
        copyRows(dWindows + k.inOffset + first, k.inPitch * sizeof(float), src, frames * sizeof(float), width, k.rows,
                 cudaMemcpyHostToDevice, c.stream);
        return width * size_t(k.rows);
    };
    p.compute = [&](const ChunkContext& c) {
        const Chunk& k = chunks[size_t(c.chunk)];
        float* out = dOut + size_t(k.row0) * length + k.begin;
        if (!fft) {
            const DirectArgs a{dWindows + k.inOffset, out, k.inPitch, length, k.count, k.rows, int(taps)};
            variant.launch.direct(a, dReversedTaps, streamBlocks, c.stream);
            return;
        }
        const int slot = streamSlot(engine, c.stream);
        float* blocks = dBlocks + size_t(slot) * shape.batch * shape.n;
        cufftComplex* spectra = dSpectra + size_t(slot) * shape.batch * shape.bins;
        const auto [forward, inverse] = plans[size_t(slot)];
        KL_CUFFT_TRY(cufftSetStream(forward, c.stream));
        KL_CUFFT_TRY(cufftSetStream(inverse, c.stream));
        const size_t blockSamples = size_t(shape.batch) * shape.n, blockBins = size_t(shape.batch) * shape.bins;
        const float scale = 1.f / float(shape.n);
        for (int r = 0; r < k.rows; ++r) {
            for (size_t u = 0; u < k.count; u += shape.unitOutputs()) {
                const float* window = dWindows + k.inOffset + size_t(r) * k.inPitch + u;
                const size_t count = std::min(shape.unitOutputs(), k.count - u);
                gatherBlocks<<<strideBlocks(blockSamples), kThreads, 0, c.stream>>>(window, blocks, shape.log2n,
                                                                                     shape.hop, blockSamples);
                KL_CHECK_LAUNCH();
                KL_CUFFT_TRY(cufftExecR2C(forward, blocks, spectra));
                multiplySpectra<<<strideBlocks(blockBins), kThreads, 0, c.stream>>>(spectra, dTapSpectrum, shape.bins,
                                                                                     blockBins);
                KL_CHECK_LAUNCH();
                KL_CUFFT_TRY(cufftExecC2R(inverse, spectra, blocks));
                scatterValid<<<strideBlocks(count), kThreads, 0, c.stream>>>(
                    blocks, out + size_t(r) * length + u, shape.log2n, shape.hop, taps - 1, count, scale);
                KL_CHECK_LAUNCH();
            }
        }
    };
    p.download = [&](const ChunkContext& c) {
        const Chunk& k = chunks[size_t(c.chunk)];
        const size_t first = size_t(k.row0) * length + k.begin, width = k.count * sizeof(float);
        copyRows(c.hostOut + first * sizeof(float), length * sizeof(float), dOut + first, length * sizeof(float), width,
                 k.rows, cudaMemcpyDeviceToHost, c.stream);
        return width * size_t(k.rows);
    };
    GpuReport report = runPipeline(engine, p, options);
    output = std::move(result);
    return report;
}

} // namespace kl::gpu
