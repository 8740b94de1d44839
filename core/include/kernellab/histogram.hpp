#pragma once
// Histogram of each channel of an image, plus luminance for colour images.
//
// Binning (the same for every backend; the rule is histogramBin in histogram_rule.hpp):
//   u8   -> 256 bins over [0, 256): bin = value. bins/range in the spec are ignored.
//   u16  -> `bins` bins over [lo, hi); default 256 bins over [0, 65536).
//   f32  -> `bins` bins over [lo, hi); default: the data's finite [min, max] (over
//           every channel and, when there is one, the luminance; a zero minimum is
//           +0), with hi nudged up by one float ulp so that max lands in the last bin;
//           [0, 1) when no value is finite.
//   A given lo / hi is used as the nearest float32 value (the precision cv::calcHist
//   takes ranges in, so every backend bins alike); it must be finite there, lo < hi.
//   bin = floor(v * a + b) with a = bins / (hi - lo), b = -lo * a in double (no fused
//   multiply-add), clamped to [0, bins); only lo <= v < hi is binned. Values outside
//   the range (including +-inf) and NaN are not binned; they are counted per entry.
//   Luminance (3 or 4 channels, BGR order, alpha ignored) is binned with the same
//   rule; see luminanceFixed / luminanceFloat.
// Counts are 64-bit.
#include "kernellab/cpu.hpp"
#include "kernellab/histogram_rule.hpp"

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

/// The float form of a u16 or f32 binning (histogramBinInRangeFloat). Its error against
/// histogramBinInRange, from a and b rounded to float and the one rounding of the fused
/// multiply-add, is below E = 2^-23 (max(|lo|, |hi|) * a + |b| + bins + 1), so it decides
/// wherever v * a + b lies more than E from an edge; its margin is negative (never used) when
/// E reaches 1/4 or a or b has no normal float form.
FloatBinning floatBinning(const HistogramBinning& binning);

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

/// Plain single-threaded loop, into `result` (its vectors reused).
void histogramReference(const cv::Mat& input, const HistogramSpec& spec, HistogramResult& result);
HistogramResult histogramReference(const cv::Mat& input, const HistogramSpec& spec);
/// What an expert OpenCV user writes, into `result` with `scratch` kept between calls: tiles of
/// about 2^15 pixels (fixed by the image, never by the thread count) under cv::parallel_for_,
/// each counted by a plain loop straight from the interleaved pixels into the task's 64-bit
/// counters (faster than cv::calcHist without IPP), with
/// histogramBin's rule: u8 values are their bins, u16 values look theirs up in a
/// table made by histogramBin, f32 values are binned by its rule in SIMD a chunk at a time (compiled
/// for AVX-512, AVX2 and baseline x86-64, picked at load time); the luminance by
/// luminanceFixed / luminanceFloat; the f32 auto range found on the same tiles, also in SIMD.
/// Exactly the reference's counts.
void histogramOpenCV(const cv::Mat& input, const HistogramSpec& spec, HistogramResult& result, CpuScratch& scratch);
HistogramResult histogramOpenCV(const cv::Mat& input, const HistogramSpec& spec);

} // namespace kl
