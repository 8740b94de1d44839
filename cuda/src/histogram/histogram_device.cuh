#pragma once
// What every histogram kernel family shares: launch shapes, pixel formats, binning on the
// device, the merge into the global histogram, and the host-side dispatch from an image's
// depth and channels to a Format. Each family's .cu includes it.
#include "histogram_variants.hpp"
#include "../launch_limits.hpp"

#include <opencv2/core.hpp>

#include <cstdint>
#include <numeric>
#include <type_traits>

namespace kl::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullMask = 0xffffffffu;

/// The counter of value v within its entry: its bin, or bins (out of range), or bins + 1 (NaN).
__device__ __forceinline__ int slotOf(uint8_t v, const BinRule&) { return v; }
/// u16 and f32: lo and hi are float values (histogram.hpp), so the range test in float is
/// histogramBin's, and the bin is histogramBinInRange's through its float form.
__device__ __forceinline__ int slotOf(float v, const BinRule& r)
{
    const FloatBinning& f = r.fast;
    if (v >= f.lo && v < f.hi) return histogramBinInRangeFloat(v, f, r.scale, r.offset, r.bins);
    return isnan(v) ? r.bins + 1 : r.bins;
}
__device__ __forceinline__ int slotOf(uint16_t v, const BinRule& r)
{
    return r.u16ByShift ? v >> 8 : slotOf(float(v), r);  // exact in float
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

/// The whole units of a span: 16-byte vectors, or groups of whole pixels that fill whole vectors,
/// `unitPixels` values or pixels each and counted from the image's start (which is 16-byte
/// aligned), so unit u covers [u * unitPixels, (u + 1) * unitPixels). None when the span lies
/// inside one unit.
struct WholeUnits {
    size_t first, last;
    size_t unitPixels;
    __host__ __device__ size_t count() const { return last - first; }
};

__host__ __device__ inline WholeUnits wholeUnits(const PixelSpan& span, size_t unitPixels)
{
    const size_t first = (span.first + unitPixels - 1) / unitPixels, last = span.last / unitPixels;
    return {first, last > first ? last : first, unitPixels};
}

/// The pixel thread threadIdx.x of block 0 counts besides the whole units: the pixels of span
/// before the first and after the last whole unit, fewer than 2 * units.unitPixels <= 32;
/// span.last for none.
__device__ __forceinline__ size_t edgePixel(const PixelSpan& span, const WholeUnits& units)
{
    const size_t headEnd = span.last < units.first * units.unitPixels ? span.last : units.first * units.unitPixels;
    const size_t tailBegin = units.last * units.unitPixels > headEnd ? units.last * units.unitPixels : headEnd;
    const size_t head = headEnd - span.first, t = threadIdx.x;
    const size_t p = t < head ? span.first + t : tailBegin + (t - head);
    return p < span.last ? p : span.last;
}

/// Adds a block's `copies` sub-histograms of `slots` counters each into the global histogram.
__device__ void addToGlobal(const unsigned* hist, int slots, int copies, unsigned long long* counts)
{
    for (int i = threadIdx.x; i < slots; i += blockDim.x) {
        unsigned long long sum = 0;
        for (int c = 0; c < copies; ++c) sum += hist[c * slots + i];
        if (sum) atomicAdd(counts + i, sum);
    }
}

/// One histogram of format F in 32-bit counters: every entry's slots.
template <typename F> size_t histogramBytes(const BinRule& rule)
{
    return size_t(F::entries) * size_t(rule.stride()) * sizeof(unsigned);
}

inline unsigned blocksFor(size_t work, size_t perBlock) { return unsigned((work + perBlock - 1) / perBlock); }

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

} // namespace
} // namespace kl::gpu

/// HistogramLaunch::plan from a plan template over the image's Format, called as
/// planTemplate<F>(problem, rule, device).
#define KL_HISTOGRAM_PLAN(planTemplate)                                                                    \
    [](const HistogramProblem& p, const BinRule& rule, const cudaDeviceProp& device) {                   \
        LaunchPlan plan;                                                                                 \
        withFormat(p.depth, p.channels, p.luminance,                                                     \
                   [&](auto format) { plan = planTemplate<decltype(format)>(p, rule, device); });        \
        return plan;                                                                                     \
    }
