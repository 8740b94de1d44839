#include "kernellab/histogram.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"

#include "parallel.hpp"
#include "pixel_block.hpp"
#include "simd_clones.hpp"

#include "text.hpp"

#include <opencv2/core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace kl {

namespace {

bool hasLuminance(const cv::Mat& input, const HistogramSpec& spec)
{
    return spec.luminance && input.channels() >= 3;
}

/// Luminance of one pixel under the rule for its depth, as the value to bin.
template <typename T> double luminanceOf(const T* pixel)
{
    if constexpr (std::is_integral<T>::value)
        return double(luminanceFixed(pixel[0], pixel[1], pixel[2]));
    else
        return double(luminanceFloat(pixel[0], pixel[1], pixel[2]));
}

/// f32 pixels are ranged, binned and counted a chunk at a time, so that a chunk's values and
/// slots stay in L1.
constexpr int kChunkPixels = 512;
/// The entries (histograms) a pixel feeds at most: four channels and the luminance.
constexpr int kMaxEntries = 5;

/// The values of `pixels` f32 pixels in entry order: the pixels themselves, or, with the luminance,
/// each pixel's channels followed by its luminance, written to `buffer`.
const float* entryValues(const float* pixel, int pixels, int channels, bool withLuminance, float* buffer)
{
    if (!withLuminance) return pixel;
    float* out = buffer;
    for (int x = 0; x < pixels; ++x, pixel += channels) {
        for (int c = 0; c < channels; ++c) *out++ = pixel[c];
        *out++ = luminanceFloat(pixel[0], pixel[1], pixel[2]);
    }
    return buffer;
}

/// Widens [lo, hi] to take in the finite values among values[0, count) (NaN and inf left out).
KL_SIMD_CLONES void widenToFinite(const float* values, int count, float& lo, float& hi)
{
    constexpr float kInfinity = std::numeric_limits<float>::infinity();
    // Lane-wise minima and maxima, which vectorise where one running pair would not.
    constexpr int kLanes = 16;
    float lows[kLanes], highs[kLanes];
    std::fill_n(lows, kLanes, lo);
    std::fill_n(highs, kLanes, hi);
    const auto include = [&](int lane, float v) {
        const bool finite = std::fabs(v) <= std::numeric_limits<float>::max();
        const float low = finite ? v : kInfinity, high = finite ? v : -kInfinity;
        lows[lane] = low < lows[lane] ? low : lows[lane];
        highs[lane] = high > highs[lane] ? high : highs[lane];
    };
    int i = 0;
    for (; i + kLanes <= count; i += kLanes)
        for (int lane = 0; lane < kLanes; ++lane) include(lane, values[i + lane]);
    for (int lane = 0; i < count; ++i, ++lane) include(lane, values[i]);
    lo = *std::min_element(lows, lows + kLanes);
    hi = *std::max_element(highs, highs + kLanes);
}

/// The finite [min, max] over every channel (and the luminance when wanted) of rows [first, last)
/// of an f32 image; lo > hi when none is finite.
std::pair<float, float> finiteRange(const cv::Mat& input, bool withLuminance, int first, int last)
{
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    float values[kChunkPixels * kMaxEntries];
    const int channels = input.channels();
    for (int y = first; y < last; ++y) {
        const float* row = input.ptr<float>(y);
        if (!withLuminance) {
            widenToFinite(row, input.cols * channels, lo, hi);
            continue;
        }
        for (int x = 0; x < input.cols; x += kChunkPixels) {
            const int pixels = std::min(kChunkPixels, input.cols - x);
            widenToFinite(entryValues(row + size_t(x) * size_t(channels), pixels, channels, true, values),
                          pixels * (channels + 1), lo, hi);
        }
    }
    return {lo, hi};
}

/// slots[i] = the counter slot of values[i]: its bin, `bins` outside [lo, hi), `bins + 1` NaN.
KL_SIMD_CLONES void slotsOf(const float* values, int count, const HistogramBinning& binning, int32_t* slots)
{
    // An f32 binning's lo and hi are float values (histogram.hpp), so the range test is made in
    // float, twice as many lanes as in double.
    const float lo = float(binning.lo), hi = float(binning.hi);
    const double scale = binning.scale, offset = binning.offset;
    const int bins = binning.bins;
    for (int i = 0; i < count; ++i) {
        const float v = values[i];
        const bool inRange = (v >= lo) & (v < hi);
        // A value outside the range is binned as lo, so that every lane converts a finite number.
        const int bin = histogramBinInRange(inRange ? v : lo, scale, offset, bins);
        const int outside = v != v ? bins + 1 : bins;
        slots[i] = inRange ? bin : outside;
    }
}

/// The binning for `input`; an f32 input without a given range takes `range()`'s finite [min, max].
template <typename FiniteRange>
HistogramBinning binningWith(const cv::Mat& input, const HistogramSpec& spec, FiniteRange&& range)
{
    validateHistogram(input, spec);
    HistogramBinning b;  // u8: 256 bins over [0, 256)
    if (input.depth() != CV_8U) {
        b.bins = spec.bins;
        if (spec.lo) {
            // volatile: GCC 12 at -O2/-O3 vectorises this pair of double->float->double
            // round trips and drops the narrowing, leaving lo and hi unrounded.
            const volatile float lo = float(*spec.lo), hi = float(*spec.hi);
            b.lo = lo;
            b.hi = hi;
        } else if (input.depth() == CV_16U) {
            b.lo = 0;
            b.hi = 65536;
        } else {
            const auto [lo, hi] = range();
            const bool anyFinite = lo <= hi;
            // + 0: a zero minimum is +0 whichever zero was seen first, so that the binning does
            // not depend on the order tasks and vector lanes met the values.
            b.lo = anyFinite ? lo + 0.0f : 0.0;
            b.hi = anyFinite ? std::nextafter(hi, std::numeric_limits<float>::infinity()) : 1.0;
        }
    }
    b.scale = b.bins / (b.hi - b.lo);
    b.offset = -b.lo * b.scale;
    return b;
}

/// Clears `result` for `input` with `binning`, keeping its vectors' memory.
void resetResult(const cv::Mat& input, const HistogramSpec& spec, const HistogramBinning& binning, HistogramResult& result)
{
    result.binning = binning;
    result.hasLuminance = hasLuminance(input, spec);
    result.labels = histogramLabels(input.channels(), result.hasLuminance);
    const size_t entries = result.labels.size();
    result.counts.resize(entries);
    for (std::vector<uint64_t>& counts : result.counts) counts.assign(size_t(binning.bins), 0);
    result.outOfRange.assign(entries, 0);
    result.nanCount.assign(entries, 0);
}

/// Pixels per tile of the OpenCV backend: enough to keep the loop's overhead small, few enough
/// that a 512 x 512 sample image still spreads over eight threads (a task's counters are summed
/// once per call, not per tile).
constexpr int kTilePixels = 1 << 15;

/// The counters of one task: for each of `copies` copies, one row of `slots` 64-bit counters per
/// entry. Slot `bins` counts values outside the range, slot `bins + 1` NaN.
struct CounterTable {
    uint64_t* counters;
    int entries, slots;
    uint64_t* row(int copy, int entry) const { return counters + (size_t(copy) * size_t(entries) + size_t(entry)) * size_t(slots); }
};

/// A tile of the image: its pixels, size and channels.
struct Tile {
    detail::PixelBlock pixels;
    int rows, cols, channels;
    template <typename T> const T* row(int y) const { return reinterpret_cast<const T*>(pixels.row(y)); }
};

/// Copies of the counters for images of `channels` channels: consecutive pixels go to alternate
/// copies, so that a run of one value (a flat region, a constant image) does not wait on one
/// counter's last increment. A colour pixel already feeds three to five counters.
constexpr int counterCopies(int channels)
{
    return channels == 1 ? 4 : 2;
}

/// Counts `pixels` pixels from `pixel` on into `table`: each of a pixel's `Channels` values (an
/// image's channels, or an f32 chunk's slots, one per entry) by slotOf(value), then, for integer
/// colour images, the luminance.
template <typename T, int Channels, bool Luminance, typename SlotOf>
void countPixels(const T* pixel, int pixels, const SlotOf& slotOf, const CounterTable& table)
{
    constexpr int copies = counterCopies(Channels);
    const auto count = [&](const T* pixel, int copy) {
        for (int c = 0; c < Channels; ++c) ++table.row(copy, c)[slotOf(pixel[c])];
        if constexpr (Luminance) ++table.row(copy, Channels)[slotOf(T(luminanceFixed(pixel[0], pixel[1], pixel[2])))];
    };
    int x = 0;
    for (; x + copies <= pixels; x += copies)
        for (int copy = 0; copy < copies; ++copy, pixel += Channels) count(pixel, copy);
    for (; x < pixels; ++x, pixel += Channels) count(pixel, 0);
}

/// Counts the pixels of an integer `tile` into `table`.
template <typename T, int Channels, bool Luminance, typename SlotOf>
void countIntegerTile(const Tile& tile, const SlotOf& slotOf, const CounterTable& table)
{
    for (int y = 0; y < tile.rows; ++y) countPixels<T, Channels, Luminance>(tile.row<T>(y), tile.cols, slotOf, table);
}

/// countIntegerTile for the channel count and luminance of `tile`.
template <typename T, typename SlotOf>
void countIntegerTileOf(const Tile& tile, bool withLuminance, const SlotOf& slotOf, const CounterTable& table)
{
    switch (tile.channels * 2 + int(withLuminance)) {
    case 2: countIntegerTile<T, 1, false>(tile, slotOf, table); break;
    case 6: countIntegerTile<T, 3, false>(tile, slotOf, table); break;
    case 7: countIntegerTile<T, 3, true>(tile, slotOf, table); break;
    case 8: countIntegerTile<T, 4, false>(tile, slotOf, table); break;
    default: countIntegerTile<T, 4, true>(tile, slotOf, table);
    }
}

/// Counts the pixels of an f32 `tile` into `table`, whose `Entries` entries are the tile's channels
/// and, when wanted, the luminance: a chunk's slots in vectors (slotsOf), then counted one by one.
template <int Entries>
void countFloatTile(const Tile& tile, bool withLuminance, const HistogramBinning& binning, const CounterTable& table)
{
    float values[kChunkPixels * kMaxEntries];
    int32_t slots[kChunkPixels * kMaxEntries];
    const int channels = tile.channels;
    const auto chunk = [&](int y, int x) { return reinterpret_cast<const char*>(tile.row<float>(y) + size_t(x) * size_t(channels)); };
    for (int y = 0; y < tile.rows; ++y)
        for (int x = 0; x < tile.cols; x += kChunkPixels) {
            const int pixels = std::min(kChunkPixels, tile.cols - x);
            slotsOf(entryValues(reinterpret_cast<const float*>(chunk(y, x)), pixels, channels, withLuminance, values),
                    pixels * Entries, binning, slots);
            // The next chunk is fetched while this one is counted, which reads no image memory.
            const bool rowGoesOn = x + pixels < tile.cols;
            const char* next = rowGoesOn ? chunk(y, x + pixels) : y + 1 < tile.rows ? chunk(y + 1, 0) : nullptr;
            const int nextPixels = std::min(kChunkPixels, rowGoesOn ? tile.cols - x - pixels : tile.cols);
            for (size_t offset = 0; next && offset < size_t(nextPixels) * size_t(channels) * sizeof(float); offset += 64)
                __builtin_prefetch(next + offset);
            countPixels<int32_t, Entries, false>(slots, pixels, [](int32_t slot) { return slot; }, table);
        }
}

/// countFloatTile for the entries of `table`.
void countFloatTileOf(const Tile& tile, bool withLuminance, const HistogramBinning& binning, const CounterTable& table)
{
    switch (table.entries) {
    case 1: countFloatTile<1>(tile, withLuminance, binning, table); break;
    case 3: countFloatTile<3>(tile, withLuminance, binning, table); break;
    case 4: countFloatTile<4>(tile, withLuminance, binning, table); break;
    default: countFloatTile<5>(tile, withLuminance, binning, table);
    }
}

} // namespace

void validateHistogram(const cv::Mat& input, const HistogramSpec& spec)
{
    validateImage(input, "histogram input");
    if (input.depth() == CV_8U) return;  // 256 bins over [0, 256): the spec's bins and range do not apply
    if (spec.bins < 1 || spec.bins > kMaxHistogramBins)
        throw InvalidArgument("histogram bins: " + std::to_string(spec.bins) + " must be in 1.." +
                              std::to_string(kMaxHistogramBins));
    if (spec.lo.has_value() != spec.hi.has_value())
        throw InvalidArgument("histogram range: give both lo and hi, or neither (auto range)");
    if (!spec.lo) return;
    for (const auto& [name, value] : {std::pair{"lo", *spec.lo}, std::pair{"hi", *spec.hi}})
        if (!std::isfinite(float(value)))
            throw InvalidArgument(std::string("histogram range: ") + name + " " + detail::formatNumber(value, 9) +
                                  " must be a finite float32 value");
    if (!(float(*spec.lo) < float(*spec.hi)))
        throw InvalidArgument("histogram range: lo " + detail::formatNumber(*spec.lo, 9) + " must be below hi " + detail::formatNumber(*spec.hi, 9) +
                              " (compared as float32)");
}

HistogramBinning resolveBinning(const cv::Mat& input, const HistogramSpec& spec)
{
    return binningWith(input, spec, [&] { return finiteRange(input, hasLuminance(input, spec), 0, input.rows); });
}

FloatBinning floatBinning(const HistogramBinning& b)
{
    const auto normalOrZero = [](double x) {
        return x == 0 || (std::fabs(x) >= std::numeric_limits<float>::min() && std::fabs(x) < std::numeric_limits<float>::max());
    };
    const double error = std::ldexp(std::max(std::fabs(b.lo), std::fabs(b.hi)) * b.scale + std::fabs(b.offset) + b.bins + 1, -23);
    const bool usable = normalOrZero(b.scale) && normalOrZero(b.offset) && error < 0.25;
    // Rounded down, so that the float margin never exceeds 1/2 - E.
    float margin = float(0.5 - error);
    if (double(margin) > 0.5 - error) margin = std::nextafter(margin, 0.0f);
    return {float(b.lo), float(b.hi), float(b.scale), float(b.offset), float(b.bins - 0.5), usable ? margin : -1.0f};
}

std::vector<std::string> histogramLabels(int channels, bool withLuminance)
{
    std::vector<std::string> labels;
    if (channels == 1) {
        labels = {"0"};
    } else {
        static const char* const names[] = {"B", "G", "R", "A"};
        for (int c = 0; c < channels && c < 4; ++c) labels.emplace_back(names[c]);
        if (withLuminance) labels.emplace_back("Y");
    }
    return labels;
}

void histogramReference(const cv::Mat& input, const HistogramSpec& spec, HistogramResult& result)
{
    resetResult(input, spec, resolveBinning(input, spec), result);
    const HistogramBinning& b = result.binning;
    const int channels = input.channels();
    const auto add = [&](size_t entry, double v) {
        const int bin = histogramBin(v, b.lo, b.hi, b.scale, b.offset, b.bins);
        if (bin >= 0)
            ++result.counts[entry][size_t(bin)];
        else if (std::isnan(v))
            ++result.nanCount[entry];
        else
            ++result.outOfRange[entry];
    };
    visitDepth(input.depth(), "histogram", [&](auto tag) {
        using T = decltype(tag);
        for (int y = 0; y < input.rows; ++y) {
            const T* row = input.ptr<T>(y);
            for (int x = 0; x < input.cols; ++x) {
                const T* pixel = row + size_t(x) * size_t(channels);
                for (int c = 0; c < channels; ++c) add(size_t(c), double(pixel[c]));
                if (result.hasLuminance) add(size_t(channels), luminanceOf(pixel));
            }
        }
    });
}

HistogramResult histogramReference(const cv::Mat& input, const HistogramSpec& spec)
{
    HistogramResult result;
    histogramReference(input, spec, result);
    return result;
}

void histogramOpenCV(const cv::Mat& input, const HistogramSpec& spec, HistogramResult& result, CpuScratch& scratch)
{
    validateHistogram(input, spec);
    // Tiles of whole rows (or of one row's columns, for rows wider than a tile).
    const int tileCols = std::min(input.cols, kTilePixels);
    const int tileRows = std::max(1, std::min(kTilePixels / tileCols, input.rows));
    const int rowTiles = (input.rows + tileRows - 1) / tileRows, colTiles = (input.cols + tileCols - 1) / tileCols;
    const int tiles = rowTiles * colTiles;
    const int tasks = detail::pieceTasks(tiles);
    const bool withLuminance = hasLuminance(input, spec);

    const HistogramBinning binning = binningWith(input, spec, [&] {
        std::vector<std::pair<float, float>> ranges(size_t(tasks), {INFINITY, -INFINITY});
        detail::forEachPiece(rowTiles, [&](int task, int rowTile) {
            const int first = rowTile * tileRows;
            const auto [lo, hi] = finiteRange(input, withLuminance, first, std::min(input.rows, first + tileRows));
            auto& [taskLo, taskHi] = ranges[size_t(task)];
            taskLo = std::min(taskLo, lo);
            taskHi = std::max(taskHi, hi);
        });
        std::pair<float, float> all{INFINITY, -INFINITY};
        for (const auto& [lo, hi] : ranges) all = {std::min(all.first, lo), std::max(all.second, hi)};
        return all;
    });
    resetResult(input, spec, binning, result);
    const int entries = int(result.counts.size()), bins = binning.bins, slots = bins + 2;
    const int outOfRangeSlot = bins;

    // A plain counting loop into 64-bit counters (never overflowing, so a task keeps one table
    // for all its tiles), faster than cv::calcHist without IPP (docs/performance.md).
    // [0] u16's slot of every value; [1 + task] the task's counters.
    const int copies = counterCopies(input.channels());
    cv::Mat* buffers = scratch.buffers(0, 1 + size_t(tasks));
    std::vector<CounterTable> tables(static_cast<size_t>(tasks));
    for (int task = 0; task < tasks; ++task) {
        cv::Mat& counters = buffers[1 + task];
        createChecked(counters, copies * entries, slots * int(sizeof(uint64_t)), CV_8U, "histogram (OpenCV counters)");
        tables[size_t(task)] = {reinterpret_cast<uint64_t*>(counters.data), entries, slots};
    }
    cv::Mat& u16Slots = buffers[0];
    if (input.depth() == CV_16U) {
        createChecked(u16Slots, 1, 1 << 16, CV_32S, "histogram (OpenCV u16 slots)");
        int* slotOfValue = u16Slots.ptr<int>();
        for (int v = 0; v < 1 << 16; ++v) {
            const int bin = histogramBin(v, binning.lo, binning.hi, binning.scale, binning.offset, bins);
            slotOfValue[v] = bin >= 0 ? bin : outOfRangeSlot;
        }
    }
    // Each task clears its counters in the counting region itself (one wake-up of the threads).
    const auto clearCounters = [&](int task) {
        const cv::Mat& counters = buffers[1 + task];
        std::memset(counters.data, 0, counters.total());
    };
    detail::forEachPiece(tiles, clearCounters, [&](int task, int tile) {
        const int y = tile / colTiles * tileRows, x = tile % colTiles * tileCols;
        const Tile pixels{{input.ptr(y) + size_t(x) * input.elemSize(), input.step}, std::min(tileRows, input.rows - y),
                          std::min(tileCols, input.cols - x), input.channels()};
        const CounterTable& table = tables[size_t(task)];
        switch (input.depth()) {
        case CV_8U: countIntegerTileOf<uint8_t>(pixels, withLuminance, [](uint8_t v) { return v; }, table); break;
        case CV_16U: {
            const int* slotOfValue = u16Slots.ptr<int>();
            countIntegerTileOf<uint16_t>(pixels, withLuminance, [slotOfValue](uint16_t v) { return slotOfValue[v]; }, table);
            break;
        }
        default: countFloatTileOf(pixels, withLuminance, binning, table);
        }
    });

    // The tasks' counters summed, in pieces of slots over all entries: a single piece, summed on
    // this thread, for the default 256 bins.
    constexpr int kSlotsPerPiece = 4096;
    const int allSlots = entries * slots;
    detail::forEachPiece((allSlots + kSlotsPerPiece - 1) / kSlotsPerPiece, [&](int, int piece) {
        const int last = std::min(allSlots, (piece + 1) * kSlotsPerPiece);
        for (int index = piece * kSlotsPerPiece; index < last; ++index) {
            const int entry = index / slots, slot = index % slots;
            uint64_t total = 0;
            for (int task = 0; task < tasks; ++task)
                for (int copy = 0; copy < copies; ++copy) total += tables[size_t(task)].row(copy, entry)[slot];
            if (slot < bins) result.counts[size_t(entry)][size_t(slot)] = total;
            else if (slot == outOfRangeSlot) result.outOfRange[size_t(entry)] = total;
            else result.nanCount[size_t(entry)] = total;
        }
    });
}

HistogramResult histogramOpenCV(const cv::Mat& input, const HistogramSpec& spec)
{
    HistogramResult result;
    CpuScratch scratch;
    histogramOpenCV(input, spec, result, scratch);
    return result;
}

} // namespace kl
