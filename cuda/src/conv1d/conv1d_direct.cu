// conv1d's direct variants: each output summed from its window, taps in ascending t
// (conv1d.cpp has the layout), so naive and shared agree bit for bit.
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
#include "conv1d_variants.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace kl::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kPerThread = 4;
constexpr int kTile = kThreads * kPerThread;  // outputs per block of the shared kernel
constexpr int kTapTile = 1024;                // taps per shared-memory pass
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
