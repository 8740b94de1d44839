#include "kernellab/histogram.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"

#include "parallel.hpp"

#include "text.hpp"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
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

/// The finite [min, max] over every channel (and the luminance when wanted) of rows [first, last)
/// of an f32 image; lo > hi when none is finite.
std::pair<float, float> finiteRange(const cv::Mat& input, bool withLuminance, int first, int last)
{
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    const auto include = [&](float v) {
        if (!std::isfinite(v)) return;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    };
    const int channels = input.channels();
    for (int y = first; y < last; ++y) {
        const float* row = input.ptr<float>(y);
        for (int x = 0; x < input.cols; ++x) {
            const float* pixel = row + size_t(x) * size_t(channels);
            for (int c = 0; c < channels; ++c) include(pixel[c]);
            if (withLuminance) include(luminanceFloat(pixel[0], pixel[1], pixel[2]));
        }
    }
    return {lo, hi};
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
            b.lo = anyFinite ? lo : 0.0;
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

/// Pixels per strip of the OpenCV backend: strips stay in the cache between the passes over
/// them (channels, NaN mask, luminance), and cv::calcHist counts in float, exact to 2^24.
constexpr int kStripPixels = 1 << 18;

/// The luminance of `strip` (a view of the input) into `plane` (a view of the same size).
void luminanceOf(const cv::Mat& strip, cv::Mat& plane)
{
    if (strip.depth() != CV_32F) {
        cv::cvtColor(strip, plane, strip.channels() == 3 ? cv::COLOR_BGR2GRAY : cv::COLOR_BGRA2GRAY);
        return;
    }
    const size_t channels = size_t(strip.channels());
    for (int y = 0; y < strip.rows; ++y) {
        const float* pixel = strip.ptr<float>(y);
        float* out = plane.ptr<float>(y);
        for (int x = 0; x < strip.cols; ++x, pixel += channels) out[x] = luminanceFloat(pixel[0], pixel[1], pixel[2]);
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
    const bool isFloat = input.depth() == CV_32F;
    const int channels = input.channels();
    // Tiles of whole rows (or of one row's columns, for rows wider than a tile).
    const int tileCols = std::min(input.cols, kStripPixels);
    const int tileRows = std::max(1, std::min(kStripPixels / tileCols, input.rows));
    const int rowTiles = (input.rows + tileRows - 1) / tileRows, colTiles = (input.cols + tileCols - 1) / tileCols;
    const int tiles = rowTiles * colTiles;
    const int tasks = detail::pieceTasks(tiles);
    const auto tileOf = [&](int tile) {
        const int y = tile / colTiles * tileRows, x = tile % colTiles * tileCols;
        return cv::Rect(x, y, std::min(tileCols, input.cols - x), std::min(tileRows, input.rows - y));
    };
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
    const int entries = int(result.counts.size()), bins = binning.bins;
    const float range[] = {float(binning.lo), float(binning.hi)};  // exact: the bounds are float values
    const float* ranges[] = {range};

    // Per task: [0] a plane (one channel or the luminance), [1] the NaN mask, [2] calcHist's
    // counts, [3] the task's sums: one row per entry, bins + 1 columns (the last counts NaN).
    cv::Mat* slots = scratch.buffers(0, 4 * size_t(tasks));
    const auto slot = [&](int task, int which) -> cv::Mat& { return slots[4 * task + which]; };
    for (int task = 0; task < tasks; ++task) {
        createChecked(slot(task, 0), tileRows, tileCols, input.depth(), "histogram (OpenCV planes)");
        createChecked(slot(task, 1), tileRows, tileCols, CV_8U, "histogram (OpenCV NaN masks)");
        slot(task, 3).create(entries, bins + 1, CV_64F);
        slot(task, 3).setTo(0);
    }

    detail::forEachPiece(tiles, [&](int task, int tile) {
        const cv::Rect area = tileOf(tile);
        const cv::Mat pixels = input(area);
        cv::Mat plane = slot(task, 0)(cv::Rect(0, 0, area.width, area.height));
        cv::Mat mask = slot(task, 1)(cv::Rect(0, 0, area.width, area.height));
        cv::Mat& sums = slot(task, 3);
        for (int entry = 0; entry < entries; ++entry) {
            // calcHist reads one channel of interleaved pixels itself; f32 needs the channel
            // alone for its NaN mask (calcHist would bin NaN, which passes its range test).
            const bool ownPlane = entry == channels || (isFloat && channels > 1);
            if (entry == channels) luminanceOf(pixels, plane);
            else if (ownPlane) cv::extractChannel(pixels, plane, entry);
            const cv::Mat& source = ownPlane ? plane : pixels;
            const int channel = ownPlane ? 0 : entry;
            if (isFloat) {
                cv::compare(source, source, mask, cv::CMP_EQ);
                sums.at<double>(entry, bins) += double(source.total() - size_t(cv::countNonZero(mask)));
            }
            cv::Mat& hist = slot(task, 2);
            cv::calcHist(&source, 1, &channel, isFloat ? mask : cv::Mat(), hist, 1, &bins, ranges);
            cv::Mat binSums = sums.row(entry).colRange(0, bins);
            cv::add(binSums, hist.reshape(1, 1), binSums, cv::noArray(), CV_64F);
        }
    });

    const uint64_t pixels = uint64_t(input.total());
    for (int entry = 0; entry < entries; ++entry) {
        std::vector<uint64_t>& counts = result.counts[size_t(entry)];
        for (int task = 0; task < tasks; ++task) {
            const double* sums = slot(task, 3).ptr<double>(entry);
            for (int bin = 0; bin < bins; ++bin) counts[size_t(bin)] += uint64_t(sums[bin]);
            result.nanCount[size_t(entry)] += uint64_t(sums[bins]);
        }
        uint64_t binned = 0;
        for (uint64_t count : counts) binned += count;
        // What is neither binned nor NaN lies outside [lo, hi).
        result.outOfRange[size_t(entry)] = pixels - binned - result.nanCount[size_t(entry)];
    }
}

HistogramResult histogramOpenCV(const cv::Mat& input, const HistogramSpec& spec)
{
    HistogramResult result;
    CpuScratch scratch;
    histogramOpenCV(input, spec, result, scratch);
    return result;
}

} // namespace kl
