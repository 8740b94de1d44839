#pragma once
// The acceptance rule: when two results of an op count as the same function, written once for
// the session, the GUI, the bench and the tests (README "How results are compared").
//
// Float results (conv2d f32, conv1d): max|a - r| <= tolerance * max|r|; a backend is within
// kFloatRelTolerance of the exact result (one that sums through single-precision FFTs, the GPU's
// cuFFT conv1d, within kFftRelTolerance), so two backends are within the sum of theirs.
// Integer results (conv2d u8/u16): equal, except by exactly 1 where the reference's unrounded
// f64 sum s lies at a tie k + 0.5, and then only as k or k + 1 (saturated). Both neighbours of a
// tie are equally near, so either is the documented function's value:
// - an exact tie (s == k + 0.5, as with dyadic taps): OpenCV's fixed-point paths
//   (cv::GaussianBlur, sepFilter2D's u8 smoothing) round it up, the reference and the GPU to
//   even. On uniform u8 noise a 3x3 Gaussian's sum is an exact tie at 1 pixel in 16 and a 5x5's
//   at 1 in 256; half of those differ (measured: 3.1% and 0.07% of a 5x7's elements).
// - a near tie (|s - (k + 0.5)| <= kTieRelTolerance * sum|K(i,j) * in| + kTieAbsTolerance): a
//   sum in float, in another order, may land on either side. On random data they are rare
//   (applyRandomInputNearTieBound, which the tests apply); on structured images they are not: a
//   two-valued chessboard under taps of n/36 lies at a tie in real arithmetic at 2.45% of its u16
//   pixels, which any float order rounds either way.
// Histograms and transposes: identical.
#include "kernellab/conv2d.hpp"

#include <opencv2/core/mat.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kl {

constexpr double kTieRelTolerance = 1e-6;
constexpr double kTieAbsTolerance = 1e-9;
/// One backend's f32 result against the exact one.
constexpr double kFloatRelTolerance = 1e-5;
/// Two backends' f32 results against each other (each within kFloatRelTolerance of the exact).
constexpr double kBackendsRelTolerance = 2 * kFloatRelTolerance;
/// One backend's f32 result through single-precision FFTs against the exact one: the transforms'
/// rounding reaches every output, so the bound is wider than a direct sum's.
constexpr double kFftRelTolerance = 1e-4;
/// An FFT backend's result against a direct backend's (each within its own tolerance of the exact).
constexpr double kFftBackendsRelTolerance = kFftRelTolerance + kFloatRelTolerance;
/// On random inputs few sums lie near a tie: at most 1 + elements / kRandomInputNearTieDivisorU8 of
/// a u8 result's elements (0.1%) may differ near ties, and 1 + elements /
/// kRandomInputNearTieDivisorU16 of a u16 result's (1%: full-range u16 sums in float are only good
/// to about 2^-8). Structured inputs may have many more, so the rule itself does not count them.
constexpr uint64_t kRandomInputNearTieDivisorU8 = 1000;
constexpr uint64_t kRandomInputNearTieDivisorU16 = 100;

/// The outcome of one acceptance check.
struct Verdict {
    std::string failure;      ///< empty when the rule holds, else the first reason
    uint64_t elements = 0;
    uint64_t exactTies = 0;   ///< integer results: differences at exact ties
    uint64_t nearTies = 0;    ///< integer results: differences near ties
    double relativeError = 0; ///< float results: max|a - r| / max|r|
    [[nodiscard]] bool passed() const { return failure.empty(); }
};

/// The float rule over two sequences of equal length; `where` prefixes the failure text.
void applyFloatRule(const std::vector<double>& actual, const std::vector<double>& reference, double tolerance,
                    Verdict& verdict, const std::string& where = {});
/// The elements of `image` as doubles, channel-interleaved in row-major order.
std::vector<double> elementsOf(const cv::Mat& image);

/// The conv2d rule for `actual` against `reference` (same size, type and channels), both results
/// of `input` under `spec`: f32 by applyFloatRule with `floatTolerance`; u8/u16 by the tie rule,
/// with the reference's sums (conv2dReferenceSumAt) computed only where the two differ.
Verdict acceptConv2D(const cv::Mat& actual, const cv::Mat& reference, const cv::Mat& input, const Conv2DSpec& spec,
                     double floatTolerance = kFloatRelTolerance);

/// For results of random inputs only: fails a passed `verdict` of a `depth` result (u8, u16) whose
/// differences near ties exceed the kRandomInputNearTieDivisor* bound.
void applyRandomInputNearTieBound(Verdict& verdict, int depth);

} // namespace kl
