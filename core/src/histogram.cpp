#include "kernellab/histogram.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"

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

/// The finite [min, max] over every channel (and the luminance when wanted) of an f32 image.
std::pair<float, float> finiteRange(const cv::Mat& input, bool withLuminance)
{
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    const auto include = [&](float v) {
        if (!std::isfinite(v)) return;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    };
    const int channels = input.channels();
    for (int y = 0; y < input.rows; ++y) {
        const float* row = input.ptr<float>(y);
        for (int x = 0; x < input.cols; ++x) {
            const float* pixel = row + size_t(x) * size_t(channels);
            for (int c = 0; c < channels; ++c) include(pixel[c]);
            if (withLuminance) include(luminanceFloat(pixel[0], pixel[1], pixel[2]));
        }
    }
    return {lo, hi};
}

HistogramResult emptyResult(const cv::Mat& input, const HistogramSpec& spec)
{
    HistogramResult result;
    result.binning = resolveBinning(input, spec);
    result.hasLuminance = hasLuminance(input, spec);
    result.labels = histogramLabels(input.channels(), result.hasLuminance);
    const size_t entries = result.labels.size();
    result.counts.assign(entries, std::vector<uint64_t>(size_t(result.binning.bins), 0));
    result.outOfRange.assign(entries, 0);
    result.nanCount.assign(entries, 0);
    return result;
}

/// The luminance plane for the OpenCV backend (see histogram.hpp for why f32 is computed here).
cv::Mat luminancePlane(const cv::Mat& input)
{
    cv::Mat luminance;
    if (input.depth() != CV_32F) {
        cv::cvtColor(input, luminance, input.channels() == 3 ? cv::COLOR_BGR2GRAY : cv::COLOR_BGRA2GRAY);
        return luminance;
    }
    luminance.create(input.size(), CV_32F);
    const size_t channels = size_t(input.channels());
    for (int y = 0; y < input.rows; ++y) {
        const float* pixel = input.ptr<float>(y);
        float* out = luminance.ptr<float>(y);
        for (int x = 0; x < input.cols; ++x, pixel += channels) out[x] = luminanceFloat(pixel[0], pixel[1], pixel[2]);
    }
    return luminance;
}

/// cv::calcHist keeps counts in int and returns them as float: exact up to 2^24, so
/// each plane is counted in tiles of at most this many pixels.
constexpr int kMaxTilePixels = 1 << 24;

/// Adds one plane's counts, NaN and out-of-range values to `entry` of `result`.
void countPlaneOpenCV(const cv::Mat& plane, HistogramResult& result, size_t entry)
{
    const HistogramBinning& b = result.binning;
    const float range[] = {float(b.lo), float(b.hi)};  // exact: the bounds are float values
    const float* ranges[] = {range};
    const int channel = 0;
    const bool mayHoldNan = plane.depth() == CV_32F;
    const int tileRows = std::max(1, kMaxTilePixels / plane.cols), tileCols = std::min(plane.cols, kMaxTilePixels);
    cv::Mat notNan, hist;
    for (int y = 0; y < plane.rows; y += tileRows) {
        for (int x = 0; x < plane.cols; x += tileCols) {
            const cv::Mat tile = plane(cv::Rect(x, y, std::min(tileCols, plane.cols - x), std::min(tileRows, plane.rows - y)));
            if (mayHoldNan) {
                // calcHist would put NaN (which passes its range test) into bin 0; mask it out.
                cv::compare(tile, tile, notNan, cv::CMP_EQ);
                result.nanCount[entry] += tile.total() - uint64_t(cv::countNonZero(notNan));
            }
            cv::Mat outside;
            cv::compare(tile, b.lo, outside, cv::CMP_LT);
            result.outOfRange[entry] += uint64_t(cv::countNonZero(outside));
            cv::compare(tile, b.hi, outside, cv::CMP_GE);
            result.outOfRange[entry] += uint64_t(cv::countNonZero(outside));

            cv::calcHist(&tile, 1, &channel, mayHoldNan ? notNan : cv::Mat(), hist, 1, &b.bins, ranges);
            std::vector<uint64_t>& counts = result.counts[entry];
            for (int bin = 0; bin < b.bins; ++bin) counts[size_t(bin)] += uint64_t(hist.at<float>(bin));
        }
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
            const auto [lo, hi] = finiteRange(input, hasLuminance(input, spec));
            const bool anyFinite = lo <= hi;
            b.lo = anyFinite ? lo : 0.0;
            b.hi = anyFinite ? std::nextafter(hi, std::numeric_limits<float>::infinity()) : 1.0;
        }
    }
    b.scale = b.bins / (b.hi - b.lo);
    b.offset = -b.lo * b.scale;
    return b;
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

HistogramResult histogramReference(const cv::Mat& input, const HistogramSpec& spec)
{
    HistogramResult result = emptyResult(input, spec);
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
    return result;
}

HistogramResult histogramOpenCV(const cv::Mat& input, const HistogramSpec& spec)
{
    HistogramResult result = emptyResult(input, spec);
    const uint64_t planeBytes = uint64_t(input.total()) * input.elemSize1();
    ensureMemoryAvailable(planeBytes * uint64_t(input.channels() + (result.hasLuminance ? 1 : 0)),
                          "histogram (OpenCV planes)");
    std::vector<cv::Mat> planes;
    cv::split(input, planes);
    if (result.hasLuminance) planes.push_back(luminancePlane(input));
    for (size_t entry = 0; entry < planes.size(); ++entry) countPlaneOpenCV(planes[entry], result, entry);
    return result;
}

} // namespace kl
