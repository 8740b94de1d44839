// Histogram on the GPU: exactly kl::histogramReference (the same bins, out-of-range
// and NaN counts, 64-bit totals) for every depth, channel count and binning.
//
// Variants (the steps of the classic privatized-histogram tutorial; their registry entries,
// each a launch plan, are at the end of this file):
//   global-atomics  one thread per pixel, one 64-bit atomicAdd into the global
//                   histogram per value: every thread of the GPU contends for the
//                   same few hundred counters.
//   shared          each block counts a fixed span of pixels into its own 32-bit
//                   histogram in shared memory and adds it to the global one at the end.
//   optimized       the default. Single-channel u8, and single-channel u16 with the
//                   default binning (256 bins, bin = high byte): a grid of a few blocks
//                   per SM striding over 16-byte vectors (4 per thread in flight), with
//                   32-bit counters private to each lane position: word (bin, lane) sits
//                   in bank `lane`, so a warp's 32 increments never conflict or collide
//                   whatever the data (a constant image runs as fast as noise), and each
//                   value costs a byte extract (PRMT), an address (LEA) and one shared
//                   atomic. All warps of a block share the one column (32 KB). At the end
//                   a block folds each bin's 32 lane words, one global atomic per bin.
//                   Other formats: a persistent grid striding over groups of whole
//                   pixels loaded as 16-byte vectors, with one 32-bit sub-histogram
//                   per warp (or per few warps when the histogram is large). A thread adds
//                   a run of equal bins with one atomic, and a warp whose lanes all hold
//                   one bin adds the whole warp's count with one atomic, so a constant
//                   image does not serialize on one counter.
// When one histogram does not fit in a block's shared memory (many bins times entries,
// e.g. 65536 bins), shared and optimized count with global atomics instead.
//
// Exactness: the kernels bin with the shared kl::histogramBin and compute luminance with
// kl::luminanceFixed / kl::luminanceFloat, which round on the device exactly as on the CPU.
// Two integer shortcuts are provably identical to histogramBin:
//   u8: 256 bins over [0, 256), scale 1, offset 0, so histogramBin(v) == v;
//   u16 with the default 256 bins over [0, 65536): scale 2^-8 makes v * scale exact and
//   the offset is 0, so histogramBin(v) == floor(v / 256) == v >> 8.
// Counters: each entry (the channels, then luminance) has bins + 2 of them: the bins,
// then out-of-range, then NaN. Per-block 32-bit counters cannot overflow: a block counts
// at most 2^30 + a few thousand pixels (see launchHistogram; a byte-bin block, below 2^32
// values: ByteBinPlan::maxStridesPerBlock).
// Bytes per run: the input, read once (the histogram itself is negligible).
#include "engine_internal.hpp"
#include "pipeline.hpp"
#include "variant_registry.hpp"

#include "kernellab/histogram.hpp"

#include <opencv2/core.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <type_traits>

namespace kl::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kSpecialSlots = 2;  // out-of-range, NaN
/// A block of the persistent grid counts at most this many pixels (plus a few thousand).
constexpr size_t kMaxPixelsPerBlock = size_t(1) << 30;

/// The resolved binning as the kernels use it.
struct BinRule {
    double lo, hi, scale, offset;
    int bins;
    bool u16ByShift;  ///< the default u16 binning, where histogramBin(v) == v >> 8
    __host__ __device__ int stride() const { return bins + kSpecialSlots; }
};

/// The counter of value v within its entry: its bin, or bins (out of range), or bins + 1 (NaN).
__device__ __forceinline__ int slotOf(uint8_t v, const BinRule&) { return v; }
__device__ __forceinline__ int slotOf(uint16_t v, const BinRule& r)
{
    if (r.u16ByShift) return v >> 8;
    const int bin = histogramBin(v, r.lo, r.hi, r.scale, r.offset, r.bins);
    return bin >= 0 ? bin : r.bins;  // integers are never NaN
}
__device__ __forceinline__ int slotOf(float v, const BinRule& r)
{
    const int bin = histogramBin(v, r.lo, r.hi, r.scale, r.offset, r.bins);
    return bin >= 0 ? bin : (isnan(v) ? r.bins + 1 : r.bins);
}

/// Luminance as a value of the pixel's type: exact, luminanceFixed of u8 (u16) values fits u8 (u16).
template <typename T> __device__ __forceinline__ T luminanceOf(const T* bgr)
{
    if constexpr (std::is_same<T, float>::value) return luminanceFloat(bgr[0], bgr[1], bgr[2]);
    else return T(luminanceFixed(bgr[0], bgr[1], bgr[2]));
}

/// A pixel format: element type, channels, and whether a luminance entry follows the channels.
template <typename Element, int Channels, bool Luminance> struct Format {
    using T = Element;
    static constexpr int channels = Channels;
    static constexpr int entries = Channels + (Luminance ? 1 : 0);
    static constexpr int pixelBytes = Channels * int(sizeof(T));
    /// The fewest whole pixels that fill whole 16-byte vectors: 1..16 pixels in 1 or 3 vectors.
    static constexpr int groupBytes = std::lcm(pixelBytes, 16);
    static constexpr int groupPixels = groupBytes / pixelBytes;
    static constexpr int groupVectors = groupBytes / 16;
};

/// Calls add(entry, slot) for every entry of one pixel.
template <typename F, typename Add>
__device__ __forceinline__ void forEachEntry(const typename F::T* pixel, const BinRule& rule, Add&& add)
{
#pragma unroll
    for (int c = 0; c < F::channels; ++c) add(c, slotOf(pixel[c], rule));
    if constexpr (F::entries > F::channels) add(F::channels, slotOf(luminanceOf(pixel), rule));
}

/// Pixels [first, last) of the image, counted from its start (which cudaMalloc aligns to 256 bytes).
struct PixelSpan {
    size_t first, last;
};

/// Adds a block's `copies` sub-histograms of `slots` counters each into the global histogram.
__device__ void addToGlobal(const unsigned* hist, int slots, int copies, unsigned long long* counts)
{
    for (int i = threadIdx.x; i < slots; i += blockDim.x) {
        unsigned long long sum = 0;
        for (int c = 0; c < copies; ++c) sum += hist[c * slots + i];
        if (sum) atomicAdd(counts + i, sum);
    }
}

template <typename F>
__global__ void __launch_bounds__(kThreads)
    histogramGlobalAtomics(const typename F::T* __restrict__ image, PixelSpan span, BinRule rule,
                           unsigned long long* __restrict__ counts)
{
    const size_t p = span.first + size_t(blockIdx.x) * kThreads + threadIdx.x;
    if (p >= span.last) return;
    const int stride = rule.stride();
    forEachEntry<F>(image + p * F::channels, rule,
                    [&](int entry, int slot) { atomicAdd(counts + entry * stride + slot, 1ull); });
}

template <typename F>
__global__ void __launch_bounds__(kThreads)
    histogramShared(const typename F::T* __restrict__ image, PixelSpan span, BinRule rule, size_t pixelsPerBlock,
                    unsigned long long* __restrict__ counts)
{
    extern __shared__ unsigned hist[];
    const int stride = rule.stride(), slots = F::entries * stride;
    for (int i = threadIdx.x; i < slots; i += kThreads) hist[i] = 0;
    __syncthreads();
    const size_t begin = span.first + blockIdx.x * pixelsPerBlock;
    const size_t end = span.last - begin < pixelsPerBlock ? span.last : begin + pixelsPerBlock;
    for (size_t p = begin + threadIdx.x; p < end; p += kThreads)
        forEachEntry<F>(image + p * F::channels, rule,
                        [&](int entry, int slot) { atomicAdd(hist + entry * stride + slot, 1u); });
    __syncthreads();
    addToGlobal(hist, slots, 1, counts);
}

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

    // Whole groups are 16-byte aligned: they are counted from the image's start.
    const size_t groupFirst = (span.first + G - 1) / G, groupLast = span.last / G;
    const auto* vectors = reinterpret_cast<const uint4*>(image);
    // Whole warps iterate together (lanes past the end idle) so that the votes see all 32 lanes.
    const size_t warpStart = groupFirst + (size_t(blockIdx.x) * kWarps + threadIdx.x / 32) * 32;
    for (size_t base = warpStart; base < groupLast; base += size_t(gridDim.x) * kThreads) {
        const size_t group = base + threadIdx.x % 32;
        const bool valid = group < groupLast;
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
        const size_t headEnd = span.last < groupFirst * G ? span.last : groupFirst * G;
        const size_t tailBegin = groupLast * G > headEnd ? groupLast * G : headEnd;
        const size_t head = headEnd - span.first, t = threadIdx.x;
        const size_t p = t < head ? span.first + t : tailBegin + (t - head);
        if (p < span.last)
            forEachEntry<F>(image + p * F::channels, rule,
                            [&](int entry, int s) { atomicAdd(own + entry * stride + s, 1u); });
    }
    __syncthreads();
    addToGlobal(hist, slots, copies, counts);
}

// ---- optimized, 256 byte bins: lane-private 32-bit counters ---------------------------

constexpr int kLaneThreads = 512;
constexpr int kByteBins = 256;
constexpr int kLaneUnroll = 4;  ///< vectors a thread loads before counting them

/// The byte-bin kernel's layout: one column of kByteBins x 32 words, word (bin, lane) for lane
/// position `lane` of every warp of the block.
template <typename T> struct ByteBinPlan {
    static constexpr int valuesPerVector = 16 / int(sizeof(T));
    /// Block-wide strides of kLaneUnroll vectors per thread a block may take: its counters hold
    /// below 2^32 values.
    static constexpr size_t maxStridesPerBlock = 0xffffffffu / (size_t(kLaneThreads) * kLaneUnroll * valuesPerVector);
    static constexpr size_t sharedWords = size_t(kByteBins) * 32;
};

/// Counts the bins of the values in one word: every byte of u8, the high byte of u16.
template <typename T> __device__ __forceinline__ void countWord(unsigned word, unsigned* column)
{
#pragma unroll
    for (int byte = int(sizeof(T)) - 1; byte < 4; byte += int(sizeof(T)))
        atomicAdd(column + __byte_perm(word, 0, 0x4440 + byte) * 32, 1u);
}

template <typename T>
__global__ void __launch_bounds__(kLaneThreads)
    histogramByteBins(const T* __restrict__ image, PixelSpan span, BinRule rule, unsigned long long* __restrict__ counts)
{
    using Plan = ByteBinPlan<T>;
    constexpr int P = Plan::valuesPerVector;
    extern __shared__ uint4 shared[];
    unsigned* columns = reinterpret_cast<unsigned*>(shared);
    for (int i = threadIdx.x; i < int(Plan::sharedWords / 4); i += kLaneThreads) shared[i] = make_uint4(0, 0, 0, 0);
    __syncthreads();
    unsigned* column = columns + threadIdx.x % 32;

    // Whole vectors are 16-byte aligned: they are counted from the image's start.
    const size_t vectorFirst = (span.first + P - 1) / P, vectorLast = span.last / P;
    const auto* vectors = reinterpret_cast<const uint4*>(image);
    constexpr size_t stride = size_t(kLaneThreads) * kLaneUnroll;
    for (size_t start = vectorFirst + blockIdx.x * stride; start < vectorLast; start += gridDim.x * stride) {
        const size_t first = start + threadIdx.x;
        uint4 v[kLaneUnroll] = {};
#pragma unroll
        for (int u = 0; u < kLaneUnroll; ++u)
            if (first + u * kLaneThreads < vectorLast) v[u] = __ldg(vectors + first + u * kLaneThreads);
#pragma unroll
        for (int u = 0; u < kLaneUnroll; ++u)
            if (first + u * kLaneThreads < vectorLast) {
                countWord<T>(v[u].x, column);
                countWord<T>(v[u].y, column);
                countWord<T>(v[u].z, column);
                countWord<T>(v[u].w, column);
            }
    }

    // The values before the first and after the last whole vector (fewer than 2 * P <= 32): block 0.
    if (blockIdx.x == 0) {
        const size_t headEnd = span.last < vectorFirst * P ? span.last : vectorFirst * P;
        const size_t tailBegin = vectorLast * P > headEnd ? vectorLast * P : headEnd;
        const size_t head = headEnd - span.first, t = threadIdx.x;
        const size_t p = t < head ? span.first + t : tailBegin + (t - head);
        if (p < span.last) atomicAdd(column + slotOf(image[p], rule) * 32, 1u);
    }
    __syncthreads();

    // Fold: two threads per bin, each summing 16 of its 32 lane words, starting at different
    // words so that a warp's reads hit 32 different banks.
    static_assert(kLaneThreads == 2 * kByteBins, "the fold gives each bin two threads");
    constexpr int kWordsEach = 32 * kByteBins / kLaneThreads;
    const int bin = threadIdx.x / 2, half = threadIdx.x % 2;
    unsigned sum = 0;
#pragma unroll
    for (int k = 0; k < kWordsEach; ++k) sum += columns[bin * 32 + half * kWordsEach + (k + bin) % kWordsEach];
    sum += __shfl_down_sync(kFullMask, sum, 1);
    if (half == 0 && sum) atomicAdd(counts + bin, (unsigned long long)sum);
}

enum class HistogramKernel { GlobalAtomics, Shared, WarpAtomics, ByteBins };

template <typename Kernel> void allowSharedMemory(Kernel kernel, size_t bytes)
{
    KL_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

/// The kernel a run launches and its shared-memory layout.
struct LaunchPlan {
    HistogramKernel kernel = HistogramKernel::GlobalAtomics;
    size_t sharedBytes = 0;
    size_t pixelsPerBlock = 0;  ///< shared
    int copies = 1;             ///< warp atomics: sub-histograms per block
    int residentBlocks = 1;     ///< warp atomics, byte bins: the persistent grid
};

/// Formats the byte-bin kernel may count: single-channel u8 and u16 (u16 only with the
/// default binning, see optimizedPlan).
template <typename F>
constexpr bool kByteBinFormat = F::channels == 1 && F::entries == 1 &&
                                (std::is_same<typename F::T, uint8_t>::value || std::is_same<typename F::T, uint16_t>::value);

template <typename T> int planByteBins(const cudaDeviceProp& device, size_t& sharedBytes)
{
    sharedBytes = ByteBinPlan<T>::sharedWords * sizeof(unsigned);
    allowSharedMemory(histogramByteBins<T>, sharedBytes);
    int perSm = 0;
    KL_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, histogramByteBins<T>, kLaneThreads, sharedBytes));
    return std::max(1, perSm) * device.multiProcessorCount;
}

/// A variant's launch, decided once per run so that no runtime query sits between a chunk's
/// timing events. Where one histogram does not fit a block's shared memory, shared and
/// optimized count with global atomics.
template <typename F> LaunchPlan globalAtomicsPlan(const BinRule&, const cudaDeviceProp&) { return {}; }

template <typename F> size_t histogramBytes(const BinRule& rule)
{
    return size_t(F::entries) * size_t(rule.stride()) * sizeof(unsigned);
}

template <typename F> LaunchPlan sharedPlan(const BinRule& rule, const cudaDeviceProp& device)
{
    LaunchPlan plan;
    if (histogramBytes<F>(rule) > device.sharedMemPerBlockOptin) return plan;
    plan.kernel = HistogramKernel::Shared;
    plan.sharedBytes = histogramBytes<F>(rule);
    // At least 8 pixels per counter the block has to zero and merge.
    plan.pixelsPerBlock = std::max<size_t>(16 * kThreads, 8 * (plan.sharedBytes / sizeof(unsigned)));
    allowSharedMemory(histogramShared<F>, plan.sharedBytes);
    return plan;
}

template <typename F> LaunchPlan optimizedPlan(const BinRule& rule, const cudaDeviceProp& device)
{
    LaunchPlan plan;
    const size_t bytes = histogramBytes<F>(rule);
    if (bytes > device.sharedMemPerBlockOptin) return plan;
    if constexpr (kByteBinFormat<F>) {
        if (sizeof(typename F::T) == 1 || rule.u16ByShift) {
            plan.kernel = HistogramKernel::ByteBins;
            plan.residentBlocks = planByteBins<typename F::T>(device, plan.sharedBytes);
            return plan;
        }
    }
    // As many per-warp copies as fit in a quarter of an SM's shared memory, so that
    // several blocks stay resident to hide memory latency.
    plan.kernel = HistogramKernel::WarpAtomics;
    plan.copies = std::clamp(int(device.sharedMemPerMultiprocessor / 4 / bytes), 1, kWarps);
    plan.sharedBytes = size_t(plan.copies) * bytes;
    allowSharedMemory(histogramWarpAtomics<F>, plan.sharedBytes);
    int perSm = 0;
    KL_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, histogramWarpAtomics<F>, kThreads,
                                                              plan.sharedBytes));
    plan.residentBlocks = std::max(1, perSm) * device.multiProcessorCount;
    return plan;
}

template <typename F>
void launchHistogram(const LaunchPlan& plan, const typename F::T* image, PixelSpan span, const BinRule& rule,
                     unsigned long long* counts, cudaStream_t stream)
{
    const size_t pixels = span.last - span.first;
    if (pixels == 0) return;
    auto blocksFor = [](size_t work, size_t perBlock) { return unsigned((work + perBlock - 1) / perBlock); };
    switch (plan.kernel) {
    case HistogramKernel::GlobalAtomics:
        histogramGlobalAtomics<F><<<blocksFor(pixels, kThreads), kThreads, 0, stream>>>(image, span, rule, counts);
        break;
    case HistogramKernel::Shared:
        histogramShared<F><<<blocksFor(pixels, plan.pixelsPerBlock), kThreads, plan.sharedBytes, stream>>>(
            image, span, rule, plan.pixelsPerBlock, counts);
        break;
    case HistogramKernel::WarpAtomics: {
        constexpr size_t G = F::groupPixels;
        const size_t groups = std::max(span.last / G, (span.first + G - 1) / G) - (span.first + G - 1) / G;
        // No more blocks than there is work for, and enough that none counts over kMaxPixelsPerBlock.
        const unsigned blocks = std::max({1u, std::min(blocksFor(groups, kThreads), unsigned(plan.residentBlocks)),
                                          blocksFor(pixels, kMaxPixelsPerBlock)});
        histogramWarpAtomics<F><<<blocks, kThreads, plan.sharedBytes, stream>>>(image, span, rule, plan.copies,
                                                                                counts);
        break;
    }
    case HistogramKernel::ByteBins:
        if constexpr (kByteBinFormat<F>) {
            using T = typename F::T;
            using Plan = ByteBinPlan<T>;
            constexpr size_t P = Plan::valuesPerVector, stride = size_t(kLaneThreads) * kLaneUnroll;
            const size_t vectorFirst = (span.first + P - 1) / P;
            const size_t vectors = std::max(span.last / P, vectorFirst) - vectorFirst;
            const size_t strides = (vectors + stride - 1) / stride;
            // No more blocks than strides, and enough that no block takes more than its counters hold.
            const unsigned blocks = unsigned(std::max<size_t>({1, std::min<size_t>(strides, size_t(plan.residentBlocks)),
                                                               (strides + Plan::maxStridesPerBlock - 1) / Plan::maxStridesPerBlock}));
            histogramByteBins<T><<<blocks, kLaneThreads, plan.sharedBytes, stream>>>(image, span, rule, counts);
        }
        break;
    }
    KL_CHECK_LAUNCH();
}

/// Calls f with the Format of an image (validated: u8/u16/f32, 1/3/4 channels).
template <typename Fn> void withFormat(int depth, int channels, bool luminance, Fn&& f)
{
    const auto byChannels = [&](auto element) {
        using T = decltype(element);
        switch (channels) {
        case 1: f(Format<T, 1, false>{}); break;
        case 3: luminance ? f(Format<T, 3, true>{}) : f(Format<T, 3, false>{}); break;
        default: luminance ? f(Format<T, 4, true>{}) : f(Format<T, 4, false>{}); break;
        }
    };
    switch (depth) {
    case CV_8U: byChannels(uint8_t{}); break;
    case CV_16U: byChannels(uint16_t{}); break;
    default: byChannels(float{}); break;
    }
}

/// What a histogram variant is asked to run, and the image's format.
struct HistogramProblem {
    int depth, channels;
    bool luminance;
    const DeviceInfo& device;
};

/// A variant's launch: its plan for the problem's format (the kernels then follow the plan).
struct HistogramLaunch {
    LaunchPlan (*plan)(const HistogramProblem& problem, const BinRule& rule, const cudaDeviceProp& device) = nullptr;
};

/// HistogramLaunch::plan from a plan template over the image's Format.
#define KL_HISTOGRAM_PLAN(planTemplate)                                                                    \
    [](const HistogramProblem& p, const BinRule& rule, const cudaDeviceProp& device) {                   \
        LaunchPlan plan;                                                                                 \
        withFormat(p.depth, p.channels, p.luminance,                                                     \
                   [&](auto format) { plan = planTemplate<decltype(format)>(rule, device); });           \
        return plan;                                                                                     \
    }

const VariantRegistry<HistogramProblem, HistogramLaunch>& histogramVariants()
{
    using Variant = VariantDescriptor<HistogramProblem, HistogramLaunch>;
    static const VariantRegistry<HistogramProblem, HistogramLaunch> registry(
        "histogram",
        {Variant{"global-atomics", "one 64-bit atomicAdd per value into the global histogram", nullptr,
                 {KL_HISTOGRAM_PLAN(globalAtomicsPlan)}},
         Variant{"shared", "a 32-bit histogram per block in shared memory, merged into the global one at the end",
                 nullptr, {KL_HISTOGRAM_PLAN(sharedPlan)}},
         Variant{"optimized",
                 "lane-private counters for u8 (conflict-free whatever the data), per-warp copies for other formats",
                 nullptr, {KL_HISTOGRAM_PLAN(optimizedPlan)}}},
        [](const HistogramProblem&) { return "optimized"; });
    return registry;
}

#undef KL_HISTOGRAM_PLAN

} // namespace

std::vector<VariantInfo> histogramVariantInfo() { return histogramVariants().info(); }

std::string whyNotApplicable(const std::string& variant, const cv::Mat& input, const HistogramSpec& spec,
                             const DeviceInfo& device)
{
    resolveBinning(input, spec);  // validates
    const HistogramProblem problem{input.depth(), input.channels(), spec.luminance && input.channels() >= 3, device};
    return histogramVariants().whyNot(variant, problem);
}

GpuReport runHistogram(Engine::Impl& engine, const cv::Mat& input, const HistogramSpec& spec,
                       const RunOptions& options, HistogramResult& output)
{
    const HistogramBinning binning = resolveBinning(input, spec);  // validates input and spec
    const cv::Mat src = input.isContinuous() ? input : input.clone();
    const int rows = src.rows, channels = src.channels(), depth = src.depth();
    const bool luminance = spec.luminance && channels >= 3;
    const auto& variant =
        histogramVariants().resolve(options.variant, HistogramProblem{depth, channels, luminance, engine.info});
    const BinRule rule{binning.lo, binning.hi, binning.scale, binning.offset, binning.bins,
                       depth == CV_16U && binning.bins == 256 && binning.lo == 0 && binning.hi == 65536 &&
                           binning.scale == 1.0 / 256 && binning.offset == 0};
    const size_t stride = size_t(rule.stride()), slotCount = size_t(channels + (luminance ? 1 : 0)) * stride;
    const size_t countBytes = slotCount * sizeof(unsigned long long);
    const size_t rowBytes = src.cols * src.elemSize(), bytes = rows * rowBytes;
    std::vector<uint64_t> slots(slotCount);

    Pipeline p;
    p.op = "histogram";
    p.variant = variant.name;
    p.hostIn = src.data;
    p.hostInBytes = bytes;
    p.hostOut = slots.data();
    p.hostOutBytes = countBytes;
    p.kernelBytes = bytes;

    std::byte* dIn = nullptr;
    unsigned long long* dCounts = nullptr;
    LaunchPlan plan;
    RowStrips strip(rows);  // every strip's kernel adds into the one device histogram

    p.prepare = [&](int requested) {
        dIn = static_cast<std::byte*>(engine.cache.device("histogram.in", bytes));
        dCounts = static_cast<unsigned long long*>(engine.cache.device("histogram.counts", countBytes));
        plan = variant.launch.plan(HistogramProblem{depth, channels, luminance, engine.info}, rule, engine.properties);
        return strip.split(requested);
    };
    p.resetOutput = [&](cudaStream_t s) { KL_CUDA_TRY(cudaMemsetAsync(dCounts, 0, countBytes, s)); };
    p.upload = [&](const ChunkContext& c) { return uploadRows(c, strip, dIn, rowBytes); };
    p.compute = [&](const ChunkContext& c) {
        const auto [r0, r1] = strip(c.chunk);
        const PixelSpan span{size_t(r0) * src.cols, size_t(r1) * src.cols};
        withFormat(depth, channels, luminance, [&](auto format) {
            using F = decltype(format);
            launchHistogram<F>(plan, reinterpret_cast<const typename F::T*>(dIn), span, rule, dCounts, c.stream);
        });
    };
    p.downloadAfterAll = [&](const ChunkContext& c) {
        KL_CUDA_TRY(cudaMemcpyAsync(c.hostOut, dCounts, countBytes, cudaMemcpyDeviceToHost, c.stream));
        return countBytes;
    };
    GpuReport report = runPipeline(engine, p, options);

    HistogramResult result;
    result.binning = binning;
    result.hasLuminance = luminance;
    result.labels = histogramLabels(channels, luminance);
    for (size_t e = 0; e < slotCount / stride; ++e) {
        const auto entry = slots.begin() + std::ptrdiff_t(e * stride);
        result.counts.emplace_back(entry, entry + binning.bins);
        result.outOfRange.push_back(entry[binning.bins]);
        result.nanCount.push_back(entry[binning.bins + 1]);
    }
    output = std::move(result);
    return report;
}

} // namespace kl::gpu
