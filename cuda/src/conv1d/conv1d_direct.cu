// conv1d's direct variants: each output summed from its window, taps in ascending t
// (conv1d.cpp has the layout), so naive and shared agree bit for bit.
//   naive   one output per thread; taps and window read from global memory.
//   shared  a block of 128 threads (measured faster than 256: docs/performance.md)
//           computes 1024 outputs, 8 consecutive per thread. The window
//           goes through shared memory one tap tile (1024 taps) at a time: the
//           block's segment plus that tile's slice of the (M - 1)-sample halo,
//           so any M runs in 16 KB of shared memory (the window padded by 4
//           floats every 8 samples: threads 8 samples apart would otherwise
//           load from half the banks). Taps live in __constant__
//           memory when M <= 16384 (64 KB; all threads of a warp read the same
//           tap, the constant cache's broadcast case), else each tap tile is
//           staged in shared memory too. Per 8 taps a thread makes two float4
//           shared loads (a sliding 16-sample register window), two float4 tap
//           loads and 64 FMAs. Short filters (M <= 65) stream instead: a resident
//           grid of warps, each walking its own run of 128-output chunks, stages
//           a chunk plus a 64-sample halo in its slice of shared memory while the
//           next chunk's loads are in flight, with no block barrier
//           (conv1dWarpStream); the same sums in the same order.
#include "conv1d_variants.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace kl::gpu {
namespace {

constexpr int kThreads = 256;      // blocks of the naive kernel and the warp streams
constexpr int kTileThreads = 128;  // blocks of the shared kernel's tiles
constexpr int kPerThread = 8;      // outputs a thread of the shared kernel sums
constexpr int kTile = kTileThreads * kPerThread;  // outputs per block of the shared kernel
constexpr int kTapTile = 1024;                    // taps per shared-memory pass
constexpr int kStageLoads = (kTile + kTapTile) / (4 * kTileThreads);  // float4 loads a thread stages per pass
static_assert((kTile + kTapTile) % (4 * kTileThreads) == 0, "a pass's window is whole float4s per thread");
constexpr size_t kConstantTaps = 16384;       // 64 KB, all the __constant__ space there is
constexpr unsigned kMaxGridY = 65535;
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

/// Where sample q of a window lies in shared memory. Padded: 4 floats after every 8 samples, so
/// that the float4 loads of 8 threads 8 samples apart cover 32 distinct banks.
template <bool Padded> __host__ __device__ constexpr int windowIndex(int q) { return Padded ? q + (q >> 3 << 2) : q; }

/// Adds taps t0 .. t0 + count - 1 to the R consecutive outputs whose window starts at sample
/// `first` of `window` (sample first + t pairs with tap t0 + t; first a multiple of 4, of 8 where
/// Padded), in ascending tap order: per 8 taps two float4 window loads (a sliding
/// window of R + 8 samples in registers), two float4 tap loads and 8R FMAs; then a group of 4 and
/// up to 3 single taps from the same registers.
template <int R, bool kConstant, bool Padded>
__device__ __forceinline__ void accumulateTaps(const float* window, int first, const float* tapTile, int t0, int count,
                                               float (&s)[R])
{
    static_assert(R % 4 == 0 && (!Padded || R % 8 == 0), "whole float4s of outputs, 8-sample blocks when padded");
    const auto load4 = [](float* to, const float* from) {
        const float4 v = *reinterpret_cast<const float4*>(from);
        to[0] = v.x, to[1] = v.y, to[2] = v.z, to[3] = v.w;
    };
    const auto addTaps = [&](const float4 taps, const float* w) {
        const float tap[4] = {taps.x, taps.y, taps.z, taps.w};
#pragma unroll
        for (int k = 0; k < 4; ++k)
#pragma unroll
            for (int r = 0; r < R; ++r) s[r] = fmaf(tap[k], w[r + k], s[r]);
    };
    float w[R + 8];
#pragma unroll
    for (int g = 0; g < R / 4; ++g) load4(w + 4 * g, window + windowIndex<Padded>(first + 4 * g));
    // Samples first + t + R on: 8 of them take windowIndex(8) floats.
    const float* next = window + windowIndex<Padded>(first + R);
    int t = 0;
#pragma unroll 2
    for (; t + 8 <= count; t += 8, next += windowIndex<Padded>(8)) {
        load4(w + R, next);
        load4(w + R + 4, next + 4);
        addTaps(tapGroup<kConstant>(tapTile, t0, t), w);
        addTaps(tapGroup<kConstant>(tapTile, t0, t + 4), w + 4);
#pragma unroll
        for (int i = 0; i < R; ++i) w[i] = w[i + 8];
    }
    if (t + 4 <= count) {
        load4(w + R, next);
        addTaps(tapGroup<kConstant>(tapTile, t0, t), w);
#pragma unroll
        for (int i = 0; i < R; ++i) w[i] = w[i + 4];
        t += 4;
    }
    // 0 to 3 taps left: they reach samples first + t + R + 1 at most.
    const int left = count - t;
#pragma unroll
    for (int i = 0; i < 2; ++i)
        if (i < left - 1) w[R + i] = window[windowIndex<Padded>(first + t + R + i)];
#pragma unroll
    for (int k = 0; k < 3; ++k)
        if (k < left) {
            const float tap = tapAt<kConstant>(tapTile, t0, t + k);
#pragma unroll
            for (int r = 0; r < R; ++r) s[r] = fmaf(tap, w[r + k], s[r]);
        }
}

/// Window samples p..p+3 of a row (`length` samples): one vector load where the row is 16-byte
/// aligned and p a multiple of 4, zeros past its end.
__device__ __forceinline__ float4 loadSamples4(const float* in, size_t length, bool aligned, size_t p)
{
    if (aligned && p + 3 < length) return __ldg(reinterpret_cast<const float4*>(in + p));
    float v[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = p + i < length ? __ldg(in + p + i) : 0.f;
    return make_float4(v[0], v[1], v[2], v[3]);
}

template <bool kConstant> __global__ void __launch_bounds__(kTileThreads)
conv1dShared(DirectArgs a, const float* __restrict__ reversedTaps)
{
    __shared__ __align__(16) float window[windowIndex<true>(kTile + kTapTile)];
    __shared__ __align__(16) float tapTile[kConstant ? 4 : kTapTile];
    const size_t base = size_t(blockIdx.x) * kTile;
    const size_t windowLength = a.count + a.taps - 1;
    // This thread's outputs are base + own + r; for tap t they read window sample own + t + r.
    const int own = kPerThread * threadIdx.x;
    for (int row = blockIdx.y; row < a.rows; row += gridDim.y) {
        const float* in = a.in + row * a.inPitch;
        const bool aligned = (reinterpret_cast<uintptr_t>(in) & 15) == 0;  // base and t0 are multiples of 4
        float sums[kPerThread] = {};
        for (int t0 = 0; t0 < a.taps; t0 += kTapTile) {
            const int tileTaps = min(kTapTile, a.taps - t0);
            __syncthreads();  // everyone is done with the previous tile
            // All of a thread's loads are issued before its first store, so that they are in flight together.
            const int groups = (kTile + tileTaps + 3) / 4;
            float4 staged[kStageLoads];
#pragma unroll
            for (int i = 0; i < kStageLoads; ++i)
                if (const int g = threadIdx.x + i * kTileThreads; g < groups)
                    staged[i] = loadSamples4(in, windowLength, aligned, base + t0 + 4 * g);
#pragma unroll
            for (int i = 0; i < kStageLoads; ++i)
                if (const int g = threadIdx.x + i * kTileThreads; g < groups)
                    *reinterpret_cast<float4*>(&window[windowIndex<true>(4 * g)]) = staged[i];
            if constexpr (!kConstant)
                for (int q = threadIdx.x; q < tileTaps; q += kTileThreads) tapTile[q] = reversedTaps[t0 + q];
            __syncthreads();
            accumulateTaps<kPerThread, kConstant, true>(window, own, tapTile, t0, tileTaps, sums);
        }
        const size_t first = base + own;
        float* out = a.out + row * a.outPitch + first;
        if (first + kPerThread <= a.count && (reinterpret_cast<uintptr_t>(out) & 15) == 0) {
#pragma unroll
            for (int g = 0; g < kPerThread / 4; ++g)
                reinterpret_cast<float4*>(out)[g] = make_float4(sums[4 * g], sums[4 * g + 1], sums[4 * g + 2], sums[4 * g + 3]);
        } else {
#pragma unroll
            for (int r = 0; r < kPerThread; ++r)
                if (first + r < a.count) out[r] = sums[r];
        }
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

    const auto loadChunk = [&](size_t chunk, float4& body, float4& halo) {
        const float* in = a.in + chunk / chunksPerRow * a.inPitch;
        const size_t start = chunk % chunksPerRow * kStreamChunk;
        const bool aligned = (reinterpret_cast<uintptr_t>(in) & 15) == 0;
        body = loadSamples4(in, windowLength, aligned, start + 4 * lane);
        halo = lane < kStreamHalo / 4 ? loadSamples4(in, windowLength, aligned, start + kStreamChunk + 4 * lane)
                                      : make_float4(0, 0, 0, 0);
    };

    float4 body{}, halo{};
    if (first < last) loadChunk(first, body, halo);
    for (size_t chunk = first; chunk < last; ++chunk) {
        float4 nextBody{}, nextHalo{};
        if (chunk + 1 < last) loadChunk(chunk + 1, nextBody, nextHalo);
        reinterpret_cast<float4*>(staged)[lane] = body;
        if (lane < kStreamHalo / 4) reinterpret_cast<float4*>(staged)[kStreamChunk / 4 + lane] = halo;
        __syncwarp();
        float sums[4] = {};
        accumulateTaps<4, true, false>(staged, 4 * lane, nullptr, 0, a.taps, sums);
        __syncwarp();  // the next chunk overwrites the stage
        const size_t o = chunk % chunksPerRow * kStreamChunk + 4 * lane;
        float* out = a.out + chunk / chunksPerRow * a.outPitch + o;
        if (o + 3 < a.count && (reinterpret_cast<uintptr_t>(out) & 15) == 0) {
            *reinterpret_cast<float4*>(out) = make_float4(sums[0], sums[1], sums[2], sums[3]);
        } else {
#pragma unroll
            for (int i = 0; i < 4; ++i)
                if (o + i < a.count) out[i] = sums[i];
        }
        body = nextBody;
        halo = nextHalo;
    }
}

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
        if (size_t(a.taps) <= kConstantTaps) conv1dShared<true><<<grid, kTileThreads, 0, s>>>(a, reversedTaps);
        else conv1dShared<false><<<grid, kTileThreads, 0, s>>>(a, reversedTaps);
    }
    KL_CHECK_LAUNCH();
}

/// The chunk's windows and outputs as the kernels take them.
DirectArgs directArgs(const Conv1dRun& run, const Conv1dChunk& k)
{
    return {run.window(k), run.output(k), k.inPitch, run.length, k.count, k.rows, int(run.taps)};
}

void computeNaive(const Conv1dRun& run, const Conv1dChunk& chunk, cudaStream_t s)
{
    launchNaive(directArgs(run, chunk), run.reversedTaps, run.streamBlocks, s);
}

void computeShared(const Conv1dRun& run, const Conv1dChunk& chunk, cudaStream_t s)
{
    launchShared(directArgs(run, chunk), run.reversedTaps, run.streamBlocks, s);
}

/// The reversed taps into global memory, and for kConstantTaps into c_taps too where they fit.
template <bool kConstant>
void prepareDirect(const std::vector<float>& taps, Conv1dRun& run, Engine::Impl& engine, int)
{
    const cudaStream_t s = engine.streams[0].get();
    const std::vector<float> reversed(taps.rbegin(), taps.rend());
    auto* dTaps = static_cast<float*>(engine.cache.device("conv1d.taps", taps.size() * sizeof(float)));
    KL_CUDA_TRY(cudaMemcpyAsync(dTaps, reversed.data(), taps.size() * sizeof(float), cudaMemcpyHostToDevice, s));
    if (kConstant && taps.size() <= kConstantTaps)
        KL_CUDA_TRY(cudaMemcpyToSymbolAsync(c_taps, reversed.data(), taps.size() * sizeof(float), 0,
                                            cudaMemcpyHostToDevice, s));
    run.reversedTaps = dTaps;
    run.streamBlocks = unsigned(kStreamBlocksPerSm * engine.properties.multiProcessorCount);
    engine.streams[0].synchronize();  // `reversed` is pageable and about to go
}

} // namespace

Conv1dVariant naiveConv1d()
{
    return {"naive", "one output per thread; taps and signal from global memory", nullptr,
            {nullptr, prepareDirect<false>, computeNaive}};
}

Conv1dVariant sharedConv1d()
{
    return {"shared", "signal tiles in shared memory, taps in constant memory; warp streams for short filters",
            nullptr, {nullptr, prepareDirect<true>, computeShared, true}};
}

} // namespace kl::gpu
