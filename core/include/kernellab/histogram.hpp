#pragma once
// Histogram of each channel of an image, plus luminance for colour images.
//
// Binning (the same for every backend, see histogramBin below):
//   u8   -> 256 bins over [0, 256): bin = value. bins/range in the spec are ignored.
//   u16  -> `bins` bins over [lo, hi); default 256 bins over [0, 65536).
//   f32  -> `bins` bins over [lo, hi); default: the data's finite [min, max], with
//           hi nudged up by one float ulp so that max lands in the last bin.
//   bin = floor(v * a + b) with a = bins / (hi - lo), b = -lo * a in double,
//   clamped to [0, bins); only lo <= v < hi is binned. Values outside the range
//   and NaN are not binned; they are counted per channel.
//   Luminance (3 or 4 channels, BGR order) is binned with the same rule; see luminance().
// Counts are 64-bit.
#include "kernellab/host_device.hpp"

#include <opencv2/core/mat.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kl {

constexpr int kMaxHistogramBins = 1 << 16;

struct HistogramSpec {
    int bins = 256;                  ///< u16/f32 only; 1 .. 65536
    std::optional<double> lo, hi;    ///< u16/f32 only; both or neither; lo < hi, finite
    bool luminance = true;           ///< add a luminance histogram for 3/4-channel images
};

/// The bins and range actually used for an input (auto range resolved).
struct HistogramBinning {
    int bins = 256;
    double lo = 0, hi = 256;
    double scale = 1, offset = 0;  ///< a and b of the binning rule
};

struct HistogramResult {
    HistogramBinning binning;
    /// One vector of `bins` counts per image channel, then luminance when present.
    std::vector<std::vector<uint64_t>> counts;
    std::vector<uint64_t> outOfRange;  ///< per entry of `counts`
    std::vector<uint64_t> nanCount;    ///< per entry of `counts`
    bool hasLuminance = false;
    /// "B", "G", "R", "A", "Y" (or "0" for a single channel) per entry of `counts`.
    std::vector<std::string> labels;
};

/// Throws kl::InvalidArgument naming the bad field (bins, range) or input.
void validateHistogram(const cv::Mat& input, const HistogramSpec& spec);
/// Resolves defaults and the auto range for this input.
HistogramBinning resolveBinning(const cv::Mat& input, const HistogramSpec& spec);
/// Labels of result.counts for an image of `channels` channels.
std::vector<std::string> histogramLabels(int channels, bool withLuminance);

/// The bin of value v, or -1 when v is outside [lo, hi) or NaN.
KL_HD inline int histogramBin(double v, double lo, double hi, double scale, double offset, int bins)
{
    if (!(v >= lo && v < hi)) return -1;
    int bin = int(floor(v * scale + offset));
    return bin < 0 ? 0 : (bin >= bins ? bins - 1 : bin);
}

/// BT.601 luma in OpenCV's fixed point for integer depths:
/// (1868*B + 9617*G + 4899*R + 8192) >> 14 (exactly cv::cvtColor BGR2GRAY for u8).
KL_HD inline unsigned luminanceFixed(unsigned b, unsigned g, unsigned r)
{
    return (1868u * b + 9617u * g + 4899u * r + 8192u) >> 14;
}
/// For f32: 0.114*B + 0.587*G + 0.299*R, evaluated in float in this order.
KL_HD inline float luminanceFloat(float b, float g, float r)
{
    return 0.114f * b + 0.587f * g + 0.299f * r;
}

/// Plain single-threaded loop.
HistogramResult histogramReference(const cv::Mat& input, const HistogramSpec& spec);
/// cv::calcHist per channel (cv::cvtColor for luminance), NaN/out-of-range counted with cv::compare.
HistogramResult histogramOpenCV(const cv::Mat& input, const HistogramSpec& spec);

} // namespace kl
