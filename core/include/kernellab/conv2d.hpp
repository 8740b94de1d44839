#pragma once
// 2D convolution.
//
// Semantics (identical for every backend, CPU and GPU):
//   out(y, x, c) = sum_{i,j} K(i, j) * in(y + i - ay, x + j - ax, c)
// i.e. correlation, like cv::filter2D, with the anchor (ay, ax) = (rows/2, cols/2)
// at the kernel's centre. `flipKernel` rotates K by 180 degrees first, giving
// true convolution. Pixels outside the image follow `border` (border.hpp).
// Each channel is filtered independently. u8/u16 results are rounded to nearest,
// ties to even, and saturated (rounding.hpp); f32 in gives f32 out; floatOutput
// forces an f32 result (Sobel, Laplacian need the sign).
//
// The reference accumulates the sum s in double, converts it to float, then
// applies saturateRound. Backends that sum in another order or precision can round
// an s near a tie k + 0.5 the other way, so for integer outputs the tests accept a
// difference of 1 at a tie (see conv2dReferenceSumAt and acceptance.hpp).
#include "kernellab/border.hpp"
#include "kernellab/cpu.hpp"

#include <opencv2/core/mat.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kl {

constexpr int kMaxConv2DKernelSize = 63;

struct Conv2DSpec {
    cv::Mat kernel;  ///< CV_32F, 1 channel, rows and cols odd in [1, 63]
    BorderMode border = BorderMode::Reflect101;
    double borderValue = 0.0;  ///< used by BorderMode::Constant, in input units, all channels
    bool flipKernel = false;   ///< true: convolution rather than correlation
    bool floatOutput = false;  ///< true: the result is CV_32F whatever the input depth
};

/// Throws kl::InvalidArgument naming the bad field (kernel size, type, non-finite taps) or input.
void validateConv2D(const cv::Mat& input, const Conv2DSpec& spec);
/// The taps actually correlated with the image (flipped when spec.flipKernel).
cv::Mat effectiveKernel(const Conv2DSpec& spec);
/// CV_32F if spec.floatOutput, else the input's depth.
int conv2dOutputDepth(const cv::Mat& input, const Conv2DSpec& spec);

/// A rank-1 kernel K = column * row^T (column: rows taps, row: cols taps).
struct SeparableKernel {
    std::vector<float> column;
    std::vector<float> row;
};
/// The factors when `kernel` (any numeric single-channel matrix) is rank-1 to within
/// `relTolerance` of its largest tap; nullopt otherwise (and for an empty matrix).
/// Of the candidate splits (pivot row/column through the largest tap, or row/column
/// sums, the divisor on either side) the one reproducing the float taps most closely
/// is returned, so dyadic kernels (OpenCV's small Gaussian tables, Sobel) and 1xN /
/// Nx1 kernels split exactly. An all-zero kernel gives zero factors.
std::optional<SeparableKernel> separateKernel(const cv::Mat& kernel, double relTolerance = 1e-6);

/// A rank-1 kernel with non-negative dyadic taps in integer form:
/// K(i, j) = column[i] * row[j] / 2^fractionBits exactly.
struct IntegerSeparableKernel {
    std::vector<uint32_t> column;
    std::vector<uint32_t> row;
    int fractionBits = 0;
};
/// The integer form of `kernel` (CV_32F) with `fractionBits` bits below the point (the GPU's
/// integer variant uses 8): the column in its smallest integers, the row taking the scale. nullopt
/// when there is none: the kernel is not exactly rank-1, has a negative tap, or its taps are not
/// multiples of 2^-fractionBits once split (OpenCV's default 3x3 and 5x5 Gaussians are [1 2 1]/4
/// and [1 4 6 4 1]/16 per side, so 4 and 8 bits; the 7x7 table needs 12). Sums of such taps times
/// integers are exact in f32 and f64 while they stay below 2^24, so an integer filter built on it
/// rounds exactly as the reference does.
std::optional<IntegerSeparableKernel> integerSeparableKernel(const cv::Mat& kernel, int fractionBits);

/// Plain single-threaded loops (accumulating in double), mirroring the naive GPU kernel, into
/// `output` (reused when it already has the result's size and type).
void conv2dReference(const cv::Mat& input, const Conv2DSpec& spec, cv::Mat& output);
cv::Mat conv2dReference(const cv::Mat& input, const Conv2DSpec& spec);
/// conv2dReference's rows [rows.start, rows.end) into `output`, which already has the result's size and
/// type (else kl::InvalidArgument): the same loops over a band of rows, so that bands can run on threads
/// of their own. The tests' gold does (kltest::conv2dReferenceOnAllThreads); the reference backend stays
/// single-threaded.
void conv2dReferenceRows(const cv::Mat& input, const Conv2DSpec& spec, cv::Mat& output, cv::Range rows);
/// The reference's unrounded sum at output element (y, x, channel c), and sum |K(i,j) * in(...)|
/// in `magnitude` when given (what the acceptance rule needs where two results differ).
double conv2dReferenceSumAt(const cv::Mat& input, const Conv2DSpec& spec, int y, int x, int c,
                            double* magnitude = nullptr);
/// What an expert OpenCV user writes, into `output` (reused when it has the result's size and
/// type) with `scratch` kept between calls:
/// - cv::GaussianBlur on the whole image for its own kernels (the sigma-0 3, 5 and 7 tables) on
///   u8/u16 in and out: OpenCV's multi-threaded fixed point, exact sums rounded half up.
/// - Otherwise row strips (fixed by the kernel and image, never by the thread count) under
///   cv::parallel_for_, each cv::sepFilter2D when separateKernel splits the kernel (to within
///   1e-6 of its largest tap) or cv::filter2D, on a view of the whole image, so that every strip reads the
///   real pixels around it and the result does not depend on the strips (nor on the threads).
///   u8 is read directly and, where OpenCV's u8 path is exact for the kernel (every partial sum
///   fits float's 24 bits; a separable kernel's factors have at most 8 fractional bits, which
///   sepFilter2D's fixed point keeps), written directly; f32 results likewise. Other integer
///   results are filtered into per-thread f32 blocks and rounded by convertTo (ties to even,
///   saturated, as the reference), so that near ties round as in the f32 path.
///   Kernels that filter2D would run through its DFT on a whole image (50+ taps; 130+ for
///   u8 -> u8 and f32 -> f32) filter the whole image: on a view it takes its direct loop, whose
///   float sums of that many u16 terms stray beyond the acceptance rule.
/// - Wrap and a non-zero Constant border pad the image first (cv::copyMakeBorder into scratch;
///   through f32 when the constant is not a value of the input's depth).
/// Summing in float, OpenCV may round a near-tie result the other way from the reference (the
/// acceptance rule, acceptance.hpp). Non-finite f32 inputs: through the DFT a NaN/inf spreads
/// over the whole image; the reference only over the outputs whose window contains it.
void conv2dOpenCV(const cv::Mat& input, const Conv2DSpec& spec, cv::Mat& output, CpuScratch& scratch);
cv::Mat conv2dOpenCV(const cv::Mat& input, const Conv2DSpec& spec);

// ---- presets -------------------------------------------------------------

enum class Conv2DPreset {
    Box, Gaussian, Sharpen, SobelX, SobelY, ScharrX, ScharrY, Laplacian, Emboss, MotionBlur, Custom
};

struct Conv2DPresetParams {
    int width = 5, height = 5;  ///< box, gaussian (odd); motion blur uses `length`
    double sigma = 0.0;         ///< gaussian; <= 0 picks OpenCV's default for the size
    int length = 9;             ///< motion blur length in pixels (odd)
    double angleDegrees = 0.0;  ///< motion blur direction, counter-clockwise from +x
    cv::Mat custom;             ///< Custom: any numeric matrix, converted to CV_32F
    bool normalize = false;     ///< Custom: divide by the sum of taps (when non-zero)
};

/// The kernel for a preset; throws kl::InvalidArgument for bad parameters.
cv::Mat makeConv2DKernel(Conv2DPreset preset, const Conv2DPresetParams& params = {});
/// "box", "gaussian", "sharpen", "sobel-x", "sobel-y", "scharr-x", "scharr-y",
/// "laplacian", "emboss", "motion-blur", "custom".
std::string toString(Conv2DPreset preset);
Conv2DPreset parseConv2DPreset(const std::string& name);
std::vector<Conv2DPreset> allConv2DPresets();
/// Whether a preset's natural result needs floatOutput (signed derivative filters).
bool presetWantsFloatOutput(Conv2DPreset preset);

} // namespace kl
