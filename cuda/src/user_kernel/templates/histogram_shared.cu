// kernellab: block 32x8 tile 128x64
// Privatized: each block counts its tile (KL_TILE_X x KL_TILE_Y pixels, 32 per thread) into
// its own histogram in shared memory, where atomics are cheap and contention stays inside
// the block, then adds each non-zero count to global memory once. Where the run has more
// entries or bins than the shared histogram holds, it counts in global memory instead.
#include <kernellab.cuh>

constexpr int kMaxEntries = 5;  // 4 channels + luminance
constexpr int kMaxBins = 256;
constexpr int kSlots = kMaxBins + 2;  // the bins, then out of range, then NaN

__device__ int slotOf(const kl::HistogramArgs& a, double v)
{
    const int bin = kl::bin(a, v);
    return bin >= 0 ? bin : (v != v ? a.bins + 1 : a.bins);
}

__device__ unsigned long long* globalCounter(const kl::HistogramArgs& a, int entry, int slot)
{
    if (slot < a.bins) return &a.counts[entry * a.bins + slot];
    return slot == a.bins ? &a.outOfRange[entry] : &a.nanCount[entry];
}

__global__ void histogram_shared(kl::HistogramArgs a)
{
    __shared__ unsigned int counts[kMaxEntries * kSlots];
    const bool privatized = a.entries <= kMaxEntries && a.bins <= kMaxBins;
    const int thread = threadIdx.y * blockDim.x + threadIdx.x;
    const int threads = blockDim.x * blockDim.y;
    for (int i = thread; i < kMaxEntries * kSlots; i += threads) counts[i] = 0;
    __syncthreads();

    const int x0 = blockIdx.x * KL_TILE_X, y0 = blockIdx.y * KL_TILE_Y;
    const int x1 = min(x0 + KL_TILE_X, a.cols), y1 = min(y0 + KL_TILE_Y, a.rows);
    for (int y = y0 + threadIdx.y; y < y1; y += blockDim.y) {
        for (int x = x0 + threadIdx.x; x < x1; x += blockDim.x) {
            const kl::In* pixel = a.in + y * a.pitch + x * a.channels;
            for (int entry = 0; entry < a.entries; ++entry) {
                const double v = entry < a.channels ? double(pixel[entry]) : kl::luminance(pixel);
                const int slot = slotOf(a, v);
                if (privatized) atomicAdd(&counts[entry * kSlots + slot], 1u);
                else atomicAdd(globalCounter(a, entry, slot), 1ull);
            }
        }
    }
    __syncthreads();

    if (!privatized) return;
    for (int i = thread; i < a.entries * kSlots; i += threads) {
        const int entry = i / kSlots, slot = i % kSlots;
        if (counts[i] != 0 && slot < a.bins + 2) atomicAdd(globalCounter(a, entry, slot), counts[i]);
    }
}
