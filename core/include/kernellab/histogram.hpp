#pragma once
// Histogram of each channel of an image, plus luminance for colour images.
//
// Binning (the same for every backend, see histogramBin below):
//   u8   -> 256 bins over [0, 256): bin = value. bins/range in the spec are ignored.
//   u16  -> `bins` bins over [lo, hi); default 256 bins over [0, 65536).
//   f32  -> `bins` bins over [lo, hi); default: the data's finite [min, max] (over
//           every channel and, when there is one, the luminance), with hi nudged up
//           by one float ulp so that max lands in the last bin; [0, 1) when no value
//           is finite.
//   A given lo / hi is used as the nearest float32 value (the precision cv::calcHist
//   takes ranges in, so every backend bins alike); it must be finite there, lo < hi.
//   bin = floor(v * a + b) with a = bins / (hi - lo), b = -lo * a in double (no fused
//   multiply-add), clamped to [0, bins); only lo <= v < hi is binned. Values outside
//   the range (including +-inf) and NaN are not binned; they are counted per entry.
//   Luminance (3 or 4 channels, BGR order, alpha ignored) is binned with the same
//   rule; see luminanceFixed / luminanceFloat.
// Counts are 64-bit.
#include "kernellab/cpu.hpp"
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
#ifdef __CUDA_ARCH__
    int bin = int(floor(__dadd_rn(__dmul_rn(v, scale), offset)));  // no FMA contraction
#else
    int bin = int(floor(v * scale + offset));
#endif
    return bin < 0 ? 0 : (bin >= bins ? bins - 1 : bin);
}

/// BT.601 luma in OpenCV's fixed point for integer depths:
/// (3735*B + 19235*G + 9798*R + 16384) >> 15, exactly cv::cvtColor BGR2GRAY for u8 and
/// u16 in OpenCV 4.6 (its 15-bit coefficients; the 14-bit 1868/9617/4899 form that
/// older releases used differs on ~0.25% of u8 pixels). No overflow: the
/// coefficients sum to 2^15, so a u16 pixel stays below 2^31.
KL_HD inline unsigned luminanceFixed(unsigned b, unsigned g, unsigned r)
{
    return (3735u * b + 19235u * g + 9798u * r + 16384u) >> 15;
}
/// For f32: 0.114*B + 0.587*G + 0.299*R, evaluated in float in this order, without
/// fused multiply-add.
KL_HD inline float luminanceFloat(float b, float g, float r)
{
#ifdef __CUDA_ARCH__
    return __fadd_rn(__fadd_rn(__fmul_rn(0.114f, b), __fmul_rn(0.587f, g)), __fmul_rn(0.299f, r));
#else
    return 0.114f * b + 0.587f * g + 0.299f * r;
#endif
}

/// Plain single-threaded loop, into `result` (its vectors reused).
void histogramReference(const cv::Mat& input, const HistogramSpec& spec, HistogramResult& result);
HistogramResult histogramReference(const cv::Mat& input, const HistogramSpec& spec);
/// What an expert OpenCV user writes, into `result` with `scratch` kept between calls: tiles of
/// about 2^15 pixels (fixed by the image, never by the thread count) under cv::parallel_for_,
/// each counted by a plain loop straight from the interleaved pixels into the task's 64-bit
/// counters (faster than cv::calcHist without IPP), with
/// histogramBin's rule: u8 values are their bins, u16 values look theirs up in a
/// table made by histogramBin, f32 values call it; the luminance by luminanceFixed /
/// luminanceFloat; the f32 auto range found on the same tiles. Exactly the reference's counts.
void histogramOpenCV(const cv::Mat& input, const HistogramSpec& spec, HistogramResult& result, CpuScratch& scratch);
HistogramResult histogramOpenCV(const cv::Mat& input, const HistogramSpec& spec);

} // namespace kl
