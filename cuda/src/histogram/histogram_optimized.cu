// histogram's optimized variant (the default) and tma.
// optimized:
//   Single-channel u8, and single-channel u16 with the default binning (256 bins, bin = high
//   byte): a persistent grid of 1024-thread blocks striding over 16-byte vectors, each thread
//   holding its next 4 vectors in registers while it counts, with 32-bit counters private to
//   each lane position: word (bin, lane) sits in bank `lane`, so a warp's 32 increments never
//   conflict or collide whatever the data (a constant image runs as fast as noise), and each
//   value costs a byte permute (PRMT: its byte and the lane's form its offset) and one shared
//   atomic. All warps of a block share the one column (256-byte rows, half used: 64 KB).
//   Where a block may have 128 KB of shared memory the column starts on a 64 KB boundary of
//   the shared window, so the permute forms the whole address (2 instructions a value); else
//   the atomic adds the column's base from a uniform register. At the end a block folds each
//   bin's 32 lane words, one global atomic per bin.
//   Every other format whose lane columns fit a block's shared memory (entries x (bins + 2)
//   x 128 bytes: 256 bins on 4 channels + luminance take 165 KB): the same lane-private
//   columns, one per entry (each channel, and luminance), over groups of whole pixels loaded
//   as 16-byte vectors; each value costs its bin (the shared binning rule) and one
//   conflict-free shared atomic.
//   Larger histograms: a persistent grid striding over groups of whole pixels loaded as
//   16-byte vectors, with one 32-bit sub-histogram per warp (or per few warps when the
//   histogram is large). A thread adds a run of equal bins with one atomic, and a warp whose
//   lanes all hold one bin adds the whole warp's count with one atomic, so a constant image
//   does not serialize on one counter.
// Where one histogram does not fit a block's shared memory it counts with global atomics.
// tma (sm_90+; one channel of u8, or u16 with the default binning): optimized's byte bins and
//   fold, but one block per SM whose extra warp streams the image in 16 KB chunks with bulk
//   copies (the Tensor Memory Accelerator) into a ring of 4 shared buffers, so every block
//   has its next chunks in flight while it counts. Its columns start on a 64 KB boundary of
//   the shared window too. Copying the image through shared memory costs bandwidth there
//   that the atomics need, so optimized, whose loads go straight to registers, is now the
//   faster (docs/performance.md, "Twenty-eighth step").
#include "histogram_device.cuh"
#include "../tma_ring.cuh"

#include "kernellab/image.hpp"

#include <algorithm>

namespace kl::gpu {
namespace {

/// A block of the persistent grid counts at most this many pixels (plus a few thousand).
constexpr size_t kMaxPixelsPerBlock = size_t(1) << 30;

/// Adds one entry's slots of a thread's pixel group to the warp's sub-histogram: one atomic for
/// the whole warp when every lane holds a single repeated slot, the same one (a flat area),
/// else one atomic per run of equal slots.
template <int G>
__device__ __forceinline__ void countGroup(const int (&slot)[G], bool valid, unsigned validLanes, unsigned* hist)
{
    bool single = true;
#pragma unroll
    for (int i = 1; i < G; ++i) single = single && slot[i] == slot[0];
    const int first = __shfl_sync(kFullMask, slot[0], 0);  // lane 0 is always valid
    if (__all_sync(kFullMask, !valid || (single && slot[0] == first))) {
        if (threadIdx.x % 32 == 0) atomicAdd(hist + first, unsigned(G * __popc(validLanes)));
        return;
    }
    if (!valid) return;
    unsigned run = 1;
#pragma unroll
    for (int i = 1; i < G; ++i) {
        if (slot[i] == slot[i - 1]) {
            ++run;
        } else {
            atomicAdd(hist + slot[i - 1], run);
            run = 1;
        }
    }
    atomicAdd(hist + slot[G - 1], run);
}

template <typename F>
__global__ void __launch_bounds__(kThreads)
    histogramWarpAtomics(const typename F::T* __restrict__ image, PixelSpan span, BinRule rule, int copies,
                       unsigned long long* __restrict__ counts)
{
    using T = typename F::T;
    constexpr int G = F::groupPixels;
    extern __shared__ unsigned hist[];
    const int stride = rule.stride(), slots = F::entries * stride;
    for (int i = threadIdx.x; i < copies * slots; i += kThreads) hist[i] = 0;
    __syncthreads();
    unsigned* own = hist + (threadIdx.x / 32) % copies * slots;

    const WholeUnits groups = wholeUnits(span, G);
    const auto* vectors = reinterpret_cast<const uint4*>(image);
    // Whole warps iterate together (lanes past the end idle) so that the votes see all 32 lanes.
    const size_t warpStart = groups.first + (size_t(blockIdx.x) * kWarps + threadIdx.x / 32) * 32;
    for (size_t base = warpStart; base < groups.last; base += size_t(gridDim.x) * kThreads) {
        const size_t group = base + threadIdx.x % 32;
        const bool valid = group < groups.last;
        uint4 raw[F::groupVectors] = {};
        if (valid) {
#pragma unroll
            for (int v = 0; v < F::groupVectors; ++v) raw[v] = __ldg(vectors + group * F::groupVectors + v);
        }
        const T* pixels = reinterpret_cast<const T*>(raw);
        int slot[F::entries][G];
#pragma unroll
        for (int i = 0; i < G; ++i)
            forEachEntry<F>(pixels + i * F::channels, rule, [&](int entry, int s) { slot[entry][i] = s; });
        const unsigned validLanes = __ballot_sync(kFullMask, valid);
#pragma unroll
        for (int e = 0; e < F::entries; ++e) countGroup<G>(slot[e], valid, validLanes, own + e * stride);
    }

    // The pixels before the first and after the last whole group (fewer than 2 * G <= 32): block 0.
    if (blockIdx.x == 0) {
        const size_t p = edgePixel(span, groups);
        if (p < span.last)
            forEachEntry<F>(image + p * F::channels, rule,
                            [&](int entry, int s) { atomicAdd(own + entry * stride + s, 1u); });
    }
    __syncthreads();
    addToGlobal(hist, slots, copies, counts);
}

// ---- 256 byte bins: lane-private 32-bit counters ---------------------------------------

constexpr int kLaneThreads = 512;  ///< tma's counting threads
constexpr int kByteBins = 256;
/// optimized's byte-bin blocks: one an SM where the columns sit on a 64 KB boundary.
constexpr int kByteBinThreads = 1024;
/// Block-wide steps a byte-bin thread has loaded ahead of the one it counts: 64 KB in flight an SM.
constexpr int kByteBinAhead = 4;
/// A 64 KB boundary of the shared window: columns there let the permute form the whole address.
constexpr uint32_t kColumnAlignment = 1u << 16;

/// The first 64 KB boundary of the shared window at or after shared-window address `address`.
__device__ __forceinline__ uint32_t columnBoundaryFrom(uint32_t address)
{
    return (address + kColumnAlignment - 1) & ~(kColumnAlignment - 1);
}

/// The byte-bin kernel's layout: a row of kByteBinRowBytes per bin, word (bin, lane) at byte
/// bin * 256 + lane * 4 for lane position `lane` of every warp of the block. Rows of 256 bytes
/// (the second half unused) make a value's offset its byte next to the lane's, so that one
/// byte permute forms it (countWord); from 128-byte rows ptxas rebuilt it in 4 instructions.
constexpr int kByteBinRowBytes = 256;
constexpr int kByteBinRowWords = kByteBinRowBytes / 4;
template <typename T> struct ByteBinPlan {
    static constexpr int valuesPerVector = 16 / int(sizeof(T));
    static constexpr size_t sharedWords = size_t(kByteBins) * kByteBinRowWords;
};
constexpr size_t kByteBinColumnBytes = ByteBinPlan<uint8_t>::sharedWords * sizeof(unsigned);
/// The columns with the room to start them on the first 64 KB boundary of wherever they are put.
constexpr size_t kByteBinColumnsOnBoundaryBytes = kByteBinColumnBytes + kColumnAlignment - 1;

/// Adds the lane words of `slots` counters (counter i's 32 words at columns + i * RowWords),
/// `entrySlots` per entry, into counts, whose entries are `countStride` apart: two threads per
/// counter, each summing 16 of its 32 lane words, starting at different words so that a warp's
/// reads hit 32 different banks.
template <int Threads, int RowWords = 32>
__device__ void foldColumns(const unsigned* columns, int slots, int entrySlots, int countStride, unsigned long long* counts)
{
    constexpr int kWordsEach = 16, kSlotsPerStep = Threads / 2;
    const int half = threadIdx.x % 2;
    // Whole steps for every thread, so that the shuffle sees both halves of each pair.
    for (int first = 0; first < slots; first += kSlotsPerStep) {
        const int slot = first + threadIdx.x / 2;
        unsigned sum = 0;
        if (slot < slots) {
            const unsigned* words = columns + slot * RowWords + half * kWordsEach;
#pragma unroll
            for (int k = 0; k < kWordsEach; ++k) sum += words[(k + slot) % kWordsEach];
        }
        sum += __shfl_down_sync(kFullMask, sum, 1);
        if (half == 0 && sum)
            atomicAdd(counts + slot / entrySlots * countStride + slot % entrySlots, (unsigned long long)sum);
    }
}

/// Where this thread's byte-bin counters are (ByteBinPlan): bin b's word at shared-window
/// address base + (laneBits | b << 8). laneBits holds the lane's offset (lane * 4) in its low
/// byte and nothing in byte 1; where the columns start on a 64 KB boundary it holds their
/// address too and base is 0.
struct ByteBinLane {
    uint32_t laneBits, base;

    /// This thread's lane for columns at shared-window address `columns`. On a 64 KB boundary
    /// laneBits carries their address, so that a value's counter address is the permute alone.
    __device__ __forceinline__ static ByteBinLane at(uint32_t columns, bool onBoundary)
    {
        const uint32_t laneOffset = threadIdx.x % 32 * 4;
        return onBoundary ? ByteBinLane{columns | laneOffset, 0} : ByteBinLane{laneOffset, columns};
    }

    __device__ uint32_t address(unsigned bin) const { return base + (laneBits | bin << 8); }
};

/// Adds 1 to the shared word at shared-window address `address`.
__device__ __forceinline__ void countAt(uint32_t address)
{
    asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(address) : "memory");
}

/// Counts the bins of the values in one word: every byte of u8, the high byte of u16. One
/// permute of the word and laneBits forms laneBits | byte << 8 (ByteBinLane::address).
template <typename T> __device__ __forceinline__ void countWord(unsigned word, const ByteBinLane& lane)
{
    static_assert(kByteBinRowBytes == 256, "the permute places the byte at bits 8-15");
#pragma unroll
    for (int byte = int(sizeof(T)) - 1; byte < 4; byte += int(sizeof(T)))
        countAt(lane.base + __byte_perm(word, lane.laneBits, 0x7604 + byte * 16));
}

/// Block 0 counts the values before the first and after the last whole vector (fewer than
/// 2 * valuesPerVector <= 32), one a thread.
template <typename T>
__device__ __forceinline__ void countEdgeValues(const T* image, const PixelSpan& span, const WholeUnits& whole,
                                                const BinRule& rule, const ByteBinLane& lane)
{
    if (blockIdx.x != 0) return;
    const size_t p = edgePixel(span, whole);
    if (p < span.last) countAt(lane.address(unsigned(slotOf(image[p], rule))));
}

template <typename T> __device__ __forceinline__ void countVector(const uint4& v, const ByteBinLane& lane)
{
    countWord<T>(v.x, lane);
    countWord<T>(v.y, lane);
    countWord<T>(v.z, lane);
    countWord<T>(v.w, lane);
}

/// optimized's byte bins: a persistent grid, each thread taking one 16-byte vector a block-wide
/// step and holding the vectors of its next kByteBinAhead steps in registers, so that every SM
/// keeps its loads in flight while it counts, without copying the image through shared memory
/// (which tma's ring does, and which costs shared-memory bandwidth beside the atomics). The first
/// loads leave before the columns are zeroed. OnBoundary: the columns start on a 64 KB boundary
/// of the shared window (the block asks for up to 64 KB - 1 more), so a value's counter address is
/// the permute alone; else at the window's start, with the base added in the atomic.
template <typename T, bool OnBoundary>
__global__ void __launch_bounds__(kByteBinThreads)
    histogramByteBins(const T* __restrict__ image, PixelSpan span, BinRule rule, unsigned long long* __restrict__ counts)
{
    using Plan = ByteBinPlan<T>;
    const WholeUnits whole = wholeUnits(span, Plan::valuesPerVector);
    const auto* vectors = reinterpret_cast<const uint4*>(image);
    const size_t stride = size_t(gridDim.x) * kByteBinThreads;
    size_t counted = whole.first + size_t(blockIdx.x) * kByteBinThreads + threadIdx.x, loaded = counted;
    const auto loadNext = [&](uint4& v) {
        v = loaded < whole.last ? __ldg(vectors + loaded) : make_uint4(0, 0, 0, 0);
        loaded += stride;
    };
    uint4 ahead[kByteBinAhead];
#pragma unroll
    for (int d = 0; d < kByteBinAhead; ++d) loadNext(ahead[d]);

    extern __shared__ uint4 shared[];
    const auto window = uint32_t(__cvta_generic_to_shared(shared));
    const uint32_t columnsAddress = OnBoundary ? columnBoundaryFrom(window) : window;
    uint4* columnVectors = shared + (columnsAddress - window) / 16;
    for (int i = threadIdx.x; i < int(Plan::sharedWords / 4); i += kByteBinThreads) columnVectors[i] = make_uint4(0, 0, 0, 0);
    __syncthreads();
    const ByteBinLane lane = ByteBinLane::at(columnsAddress, OnBoundary);

    while (counted < whole.last) {
#pragma unroll
        for (int d = 0; d < kByteBinAhead; ++d) {
            if (counted < whole.last) countVector<T>(ahead[d], lane);
            counted += stride;
            loadNext(ahead[d]);
        }
    }

    countEdgeValues(image, span, whole, rule, lane);
    __syncthreads();
    foldColumns<kByteBinThreads, kByteBinRowWords>(reinterpret_cast<const unsigned*>(columnVectors), kByteBins, kByteBins,
                                                  rule.stride(), counts);
}

// ---- tma: the byte bins fed by the Tensor Memory Accelerator (sm_90) ------------------------

/// tma's ring: chunks of kTmaChunkVectors 16-byte vectors (2 per compute thread) in kTmaStages
/// shared buffers, filled by one thread of a copying warp while kLaneThreads threads count.
constexpr int kTmaChunkVectors = 1024;
constexpr int kTmaStages = 4;
constexpr int kTmaThreads = kLaneThreads + 32;
constexpr size_t kTmaRingBytes = size_t(kTmaStages) * kTmaChunkVectors * 16 + 2 * kTmaStages * sizeof(uint64_t);
/// The ring, then the columns on the first 64 KB boundary of the shared window past it.
constexpr size_t kTmaSharedBytes = kTmaRingBytes + kByteBinColumnsOnBoundaryBytes;

/// histogramByteBins's counting and fold, but the vectors arrive by bulk copies into a ring of
/// shared buffers, so each block has its next chunks in flight while it counts (one block per SM).
/// The columns sit on a 64 KB boundary of the shared window, so a value's counter address is one
/// permute (ByteBinLane::at), not a permute and an add.
template <typename T>
__global__ void __launch_bounds__(kTmaThreads)
    histogramByteBinsTma(const T* __restrict__ image, PixelSpan span, BinRule rule, unsigned long long* __restrict__ counts)
{
#if __CUDA_ARCH__ >= 900
    using Plan = ByteBinPlan<T>;
    constexpr int P = Plan::valuesPerVector, perThread = kTmaChunkVectors / kLaneThreads;
    extern __shared__ uint4 shared[];
    uint4* buffers = shared;
    const TmaRing<kTmaStages> ring(reinterpret_cast<uint64_t*>(buffers + kTmaStages * kTmaChunkVectors));
    const auto ringAddress = uint32_t(__cvta_generic_to_shared(shared));
    const uint32_t columnsAddress = columnBoundaryFrom(ringAddress + uint32_t(kTmaRingBytes));
    auto* columnVectors = shared + (columnsAddress - ringAddress) / 16;
    unsigned* columns = reinterpret_cast<unsigned*>(columnVectors);
    for (int i = threadIdx.x; i < int(Plan::sharedWords / 4); i += kTmaThreads) columnVectors[i] = make_uint4(0, 0, 0, 0);
    if (threadIdx.x == 0) ring.init(kLaneThreads);
    __syncthreads();

    const WholeUnits whole = wholeUnits(span, P);
    const size_t vectors = whole.count();
    const size_t chunks = (vectors + kTmaChunkVectors - 1) / kTmaChunkVectors;
    const uint4* source = reinterpret_cast<const uint4*>(image) + whole.first;
    if (threadIdx.x >= kLaneThreads) {  // the copying warp
        if (threadIdx.x != kLaneThreads) return;
        int n = 0;
        for (size_t c = blockIdx.x; c < chunks; c += gridDim.x, ++n) {
            const size_t first = c * kTmaChunkVectors;
            const auto bytes = uint32_t(min(size_t(kTmaChunkVectors), vectors - first) * 16);
            uint64_t* full = ring.beginFill(n, bytes);
            cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global,
                                     buffers + ring.buffer(n) * kTmaChunkVectors, source + first, bytes, full);
        }
        return;
    }
    const ByteBinLane lane = ByteBinLane::at(columnsAddress, true);
    int n = 0;
    for (size_t c = blockIdx.x; c < chunks; c += gridDim.x, ++n) {
        const int inChunk = int(min(size_t(kTmaChunkVectors), vectors - c * kTmaChunkVectors));
        const uint4* buffer = buffers + ring.buffer(n) * kTmaChunkVectors;
        ring.waitFull(n);
        uint4 v[perThread];
#pragma unroll
        for (int u = 0; u < perThread; ++u) v[u] = buffer[threadIdx.x + u * kLaneThreads];
        ring.release(n);
#pragma unroll
        for (int u = 0; u < perThread; ++u)
            if (int(threadIdx.x) + u * kLaneThreads < inChunk) countVector<T>(v[u], lane);
    }

    countEdgeValues(image, span, whole, rule, lane);
    asm volatile("bar.sync 1, %0;" ::"n"(kLaneThreads) : "memory");  // the counting warps only
    foldColumns<kLaneThreads, kByteBinRowWords>(columns, kByteBins, kByteBins, rule.stride(), counts);
#endif
}

/// The lane-column kernel's blocks: its columns (up to 165 KB for 256 bins on 4 channels and
/// luminance) often let one block stay resident per SM, and 32 warps hide more latency than 16.
constexpr int kColumnThreads = 1024;
/// Pixel groups a thread loads before counting them: 64 or 96 bytes (<= 64 registers a thread).
template <typename F> constexpr int kColumnUnroll = F::groupVectors == 1 ? 4 : 2;

/// Counters a lane column holds per entry: u8's 256 (every value is a bin; a constant, so that
/// an entry's column is an immediate offset), else the binning's bins + 2.
template <typename F> __host__ __device__ __forceinline__ int columnSlots(const BinRule& rule)
{
    if constexpr (std::is_same<typename F::T, uint8_t>::value) return kByteBins;
    else return rule.stride();
}

/// Pixels of F into one lane-private column of columnSlots counters per entry:
/// histogramByteBins's scheme over groups of whole pixels (F::groupVectors vectors each).
template <typename F>
__global__ void __launch_bounds__(kColumnThreads)
    histogramLaneColumns(const typename F::T* __restrict__ image, PixelSpan span, BinRule rule,
                         unsigned long long* __restrict__ counts)
{
    using T = typename F::T;
    constexpr int G = F::groupPixels, V = F::groupVectors;
    const int entrySlots = columnSlots<F>(rule), slots = F::entries * entrySlots, columnWords = entrySlots * 32;
    extern __shared__ uint4 shared[];
    unsigned* columns = reinterpret_cast<unsigned*>(shared);
    for (int i = threadIdx.x; i < slots * 32 / 4; i += kColumnThreads) shared[i] = make_uint4(0, 0, 0, 0);
    __syncthreads();
    unsigned* lane = columns + threadIdx.x % 32;
    const auto count = [&](int entry, int slot) { atomicAdd(lane + entry * columnWords + slot * 32, 1u); };

    const WholeUnits groups = wholeUnits(span, G);
    const auto* vectors = reinterpret_cast<const uint4*>(image);
    constexpr size_t stride = size_t(kColumnThreads) * kColumnUnroll<F>;
    for (size_t start = groups.first + blockIdx.x * stride; start < groups.last; start += gridDim.x * stride) {
        const size_t first = start + threadIdx.x;
        uint4 raw[kColumnUnroll<F>][V] = {};
#pragma unroll
        for (int u = 0; u < kColumnUnroll<F>; ++u)
            if (first + u * kColumnThreads < groups.last)
#pragma unroll
                for (int v = 0; v < V; ++v) raw[u][v] = __ldg(vectors + (first + u * kColumnThreads) * V + v);
#pragma unroll
        for (int u = 0; u < kColumnUnroll<F>; ++u)
            if (first + u * kColumnThreads < groups.last) {
                const T* pixels = reinterpret_cast<const T*>(raw[u]);
#pragma unroll
                for (int i = 0; i < G; ++i) forEachEntry<F>(pixels + i * F::channels, rule, count);
            }
    }

    // The pixels before the first and after the last whole group (fewer than 2 * G <= 32): block 0.
    if (blockIdx.x == 0) {
        const size_t p = edgePixel(span, groups);
        if (p < span.last) forEachEntry<F>(image + p * F::channels, rule, count);
    }
    __syncthreads();
    foldColumns<kColumnThreads>(columns, slots, entrySlots, rule.stride(), counts);
}

// ---- launches and the plan ---------------------------------------------------------------

template <typename F>
void launchWarpAtomics(const LaunchPlan& plan, const void* image, PixelSpan span, const BinRule& rule,
                       unsigned long long* counts, cudaStream_t stream)
{
    const size_t pixels = span.last - span.first;
    const size_t groups = wholeUnits(span, F::groupPixels).count();
    // No more blocks than there is work for, and enough that none counts over kMaxPixelsPerBlock.
    const unsigned blocks = std::max({1u, std::min(blocksFor(groups, kThreads), unsigned(plan.residentBlocks)),
                                      blocksFor(pixels, kMaxPixelsPerBlock)});
    histogramWarpAtomics<F><<<blocks, kThreads, plan.sharedBytes, stream>>>(static_cast<const typename F::T*>(image),
                                                                            span, rule, plan.copies, counts);
    KL_CHECK_LAUNCH();
}

/// The lane-column kernels' persistent grid over a span's whole units (vectors or pixel groups),
/// taken `stride` per block-wide step: no more blocks than steps, and enough that no block's
/// 32-bit counters reach 2^32 (a step adds stride * unitPixels values to an entry).
unsigned laneGridBlocks(const WholeUnits& units, size_t stride, int residentBlocks)
{
    const size_t strides = (units.count() + stride - 1) / stride;
    const size_t maxStridesPerBlock = 0xffffffffu / (stride * units.unitPixels);
    return unsigned(std::max<size_t>({1, std::min<size_t>(strides, size_t(residentBlocks)),
                                      (strides + maxStridesPerBlock - 1) / maxStridesPerBlock}));
}

/// A lane-column kernel (`Kernel`, blocks of `Threads`) on its persistent grid: units of
/// `UnitPixels` values (or pixels), `Stride` units a block-wide step.
template <typename T, auto Kernel, int Threads, size_t UnitPixels, size_t Stride> struct LaneGrid {
    static void launch(const LaunchPlan& plan, const void* image, PixelSpan span, const BinRule& rule,
                       unsigned long long* counts, cudaStream_t stream)
    {
        const unsigned blocks = laneGridBlocks(wholeUnits(span, UnitPixels), Stride, plan.residentBlocks);
        Kernel<<<blocks, Threads, plan.sharedBytes, stream>>>(static_cast<const T*>(image), span, rule, counts);
        KL_CHECK_LAUNCH();
    }

    /// `sharedBytes` of columns (and buffers), as many blocks as stay resident, at most
    /// `perSmCap` an SM.
    static LaunchPlan plan(size_t sharedBytes, const cudaDeviceProp& device, int perSmCap = INT_MAX)
    {
        LaunchPlan plan;
        plan.launch = launch;
        plan.sharedBytes = sharedBytes;
        allowSharedMemory(Kernel, sharedBytes);
        plan.residentBlocks = residentBlocks(Kernel, Threads, sharedBytes, device.multiProcessorCount, perSmCap);
        return plan;
    }
};

template <typename T, bool OnBoundary>
using ByteBinGrid = LaneGrid<T, histogramByteBins<T, OnBoundary>, kByteBinThreads, ByteBinPlan<T>::valuesPerVector,
                             kByteBinThreads>;
template <typename T>
using TmaGrid = LaneGrid<T, histogramByteBinsTma<T>, kTmaThreads, ByteBinPlan<T>::valuesPerVector, kTmaChunkVectors>;
template <typename F>
using LaneColumnGrid = LaneGrid<typename F::T, histogramLaneColumns<F>, kColumnThreads, F::groupPixels,
                                size_t(kColumnThreads) * kColumnUnroll<F>>;

/// Formats the byte-bin kernel may count: single-channel u8 and u16 (u16 only with the
/// default binning, see optimizedPlan).
template <typename F>
constexpr bool kByteBinFormat = F::channels == 1 && F::entries == 1 &&
                                (std::is_same<typename F::T, uint8_t>::value || std::is_same<typename F::T, uint16_t>::value);

template <typename F>
LaunchPlan optimizedPlan(const HistogramProblem& problem, const BinRule& rule, const cudaDeviceProp& device)
{
    const size_t bytes = histogramBytes<F>(rule);
    if (bytes > device.sharedMemPerBlockOptin) return globalAtomicsHistogramPlan(problem, rule, device);
    if constexpr (kByteBinFormat<F>) {
        using T = typename F::T;
        if (sizeof(T) == 1 || rule.u16ByShift)
            return device.sharedMemPerBlockOptin >= kByteBinColumnsOnBoundaryBytes
                       ? ByteBinGrid<T, true>::plan(kByteBinColumnsOnBoundaryBytes, device)
                       : ByteBinGrid<T, false>::plan(kByteBinColumnBytes, device);
    }
    // A word per lane position for every counter.
    const size_t laneColumnBytes = size_t(F::entries) * size_t(columnSlots<F>(rule)) * 32 * sizeof(unsigned);
    if (laneColumnBytes <= device.sharedMemPerBlockOptin)
        return LaneColumnGrid<F>::plan(laneColumnBytes, device);
    LaunchPlan plan;
    // As many per-warp copies as fit in a quarter of an SM's shared memory, so that
    // several blocks stay resident to hide memory latency.
    plan.launch = launchWarpAtomics<F>;
    plan.copies = std::clamp(int(device.sharedMemPerMultiprocessor / 4 / bytes), 1, kWarps);
    plan.sharedBytes = size_t(plan.copies) * bytes;
    allowSharedMemory(histogramWarpAtomics<F>, plan.sharedBytes);
    plan.residentBlocks =
        residentBlocks(histogramWarpAtomics<F>, kThreads, plan.sharedBytes, device.multiProcessorCount);
    return plan;
}

/// tma's plan: one block per SM (the ring keeps its chunks in flight; fewer blocks fold fewer
/// columns into the global histogram).
LaunchPlan tmaPlan(const HistogramProblem& problem, const BinRule&, const cudaDeviceProp& device)
{
    return problem.depth == CV_8U ? TmaGrid<uint8_t>::plan(kTmaSharedBytes, device, 1)
                                  : TmaGrid<uint16_t>::plan(kTmaSharedBytes, device, 1);
}

std::string whyNotTma(const HistogramProblem& p)
{
    const DeviceInfo& d = p.device;
    if (p.channels == 1 && p.byteBins && d.deviceCodeArchitecture >= 900 && d.sharedMemoryPerBlockOptIn >= kTmaSharedBytes)
        return {};
    return "needs a single-channel u8 image, or u16 with the default 256 bins over [0, 65536), and a GPU of compute "
           "capability 9.0 or newer running device code built for 9.0 or newer, with " +
           std::to_string((kTmaSharedBytes + 1023) / 1024) + " KB of shared memory for a block; this is " +
           depthName(p.depth) + " x" + std::to_string(p.channels) +
           (p.depth == CV_16U && !p.byteBins ? " with other bins" : "") + ", " + describeCompute(d) + ", " +
           std::to_string(d.sharedMemoryPerBlockOptIn / 1024) + " KB";
}

} // namespace

HistogramVariant optimizedHistogram()
{
    return {"optimized", "lane-private counters (conflict-free whatever the data) where they fit shared memory, per-warp copies for larger histograms",
            nullptr, {KL_HISTOGRAM_PLAN(optimizedPlan)}};
}

HistogramVariant tmaHistogram()
{
    return {"tma", "optimized's lane-private byte bins, the image streamed by the Tensor Memory Accelerator into a ring of shared buffers (single-channel u8, u16 with the default bins; sm_90+)",
            whyNotTma, {tmaPlan}};
}

} // namespace kl::gpu
