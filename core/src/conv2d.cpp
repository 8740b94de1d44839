#include "kernellab/conv2d.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"
#include "kernellab/rounding.hpp"

#include "text.hpp"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

namespace kl {

namespace {

/// The one correlation loop of the reference: calls store(y, x, c, sum, magnitude)
/// for every output element; magnitude (sum of |term|) is only accumulated when asked.
template <typename In, bool WithMagnitudes, typename Store>
void correlate(const cv::Mat& input, const cv::Mat& kernel, BorderMode border, double borderValue, Store&& store)
{
    const int rows = input.rows, cols = input.cols, channels = input.channels();
    const int anchorY = kernel.rows / 2, anchorX = kernel.cols / 2;
    for (int y = 0; y < rows; ++y) {
        for (int x = 0; x < cols; ++x) {
            for (int c = 0; c < channels; ++c) {
                double sum = 0, magnitude = 0;
                for (int i = 0; i < kernel.rows; ++i) {
                    const int sy = borderIndex(y + i - anchorY, rows, border);
                    const In* source = sy < 0 ? nullptr : input.ptr<In>(sy);
                    const float* taps = kernel.ptr<float>(i);
                    for (int j = 0; j < kernel.cols; ++j) {
                        const int sx = borderIndex(x + j - anchorX, cols, border);
                        const double v = source && sx >= 0 ? double(source[sx * channels + c]) : borderValue;
                        const double term = double(taps[j]) * v;
                        sum += term;
                        if constexpr (WithMagnitudes) magnitude += std::fabs(term);
                    }
                }
                store(y, x, c, sum, magnitude);
            }
        }
    }
}

uint64_t elementCount(const cv::Mat& img)
{
    return uint64_t(img.total()) * uint64_t(img.channels());
}

} // namespace

void validateConv2D(const cv::Mat& input, const Conv2DSpec& spec)
{
    validateImage(input, "conv2d input");
    const cv::Mat& k = spec.kernel;
    if (k.empty())
        throw InvalidArgument("conv2d kernel: empty; it needs an odd size in each dimension, 1.." +
                              std::to_string(kMaxConv2DKernelSize));
    if (k.dims != 2 || k.type() != CV_32FC1)
        throw InvalidArgument("conv2d kernel: type must be f32 with 1 channel, got " + depthName(k.depth()) +
                              " x" + std::to_string(k.channels()));
    const auto validSize = [](int n) { return n % 2 == 1 && n <= kMaxConv2DKernelSize; };
    if (!validSize(k.rows) || !validSize(k.cols))
        throw InvalidArgument("conv2d kernel: size " + std::to_string(k.cols) + "x" + std::to_string(k.rows) +
                              " (width x height) must be odd in each dimension, 1.." +
                              std::to_string(kMaxConv2DKernelSize));
    for (int i = 0; i < k.rows; ++i)
        for (int j = 0; j < k.cols; ++j)
            if (!std::isfinite(k.at<float>(i, j)))
                throw InvalidArgument("conv2d kernel: tap (row " + std::to_string(i) + ", col " + std::to_string(j) +
                                      ") is " + detail::formatNumber(k.at<float>(i, j)) + "; every tap must be finite");
    if (spec.border == BorderMode::Constant && !std::isfinite(spec.borderValue))
        throw InvalidArgument("conv2d borderValue: " + detail::formatNumber(spec.borderValue) + " must be finite");
    toOpenCvBorder(spec.border);  // rejects a border value outside the enum
}

cv::Mat effectiveKernel(const Conv2DSpec& spec)
{
    if (!spec.flipKernel) return spec.kernel;
    cv::Mat flipped;
    cv::flip(spec.kernel, flipped, -1);
    return flipped;
}

int conv2dOutputDepth(const cv::Mat& input, const Conv2DSpec& spec)
{
    return spec.floatOutput ? CV_32F : input.depth();
}

std::optional<SeparableKernel> separateKernel(const cv::Mat& kernel, double relTolerance)
{
    if (kernel.empty() || kernel.dims != 2 || kernel.channels() != 1) return std::nullopt;
    cv::Mat k;
    kernel.convertTo(k, CV_64F);
    const int rows = k.rows, cols = k.cols;

    double largest = 0;
    cv::Point pivot;
    cv::minMaxLoc(cv::abs(k), nullptr, &largest, nullptr, &pivot);
    if (largest == 0) return SeparableKernel{std::vector<float>(size_t(rows), 0.f), std::vector<float>(size_t(cols), 0.f)};

    cv::Mat rowSums, columnSums;  // rows x 1 and 1 x cols
    cv::reduce(k, rowSums, 1, cv::REDUCE_SUM, CV_64F);
    cv::reduce(k, columnSums, 0, cv::REDUCE_SUM, CV_64F);
    const double total = cv::sum(k)[0];

    // A rank-1 K = a b^T is rebuilt from any column (a * b_j) and row (a_i * b) of it, or from
    // its row and column sums; the divisor (a pivot tap, or the total) goes to either side.
    struct Candidate {
        cv::Mat column, row;  // column: rows x 1, row: 1 x cols
        double divisor;
        bool divideColumn;
    };
    std::vector<Candidate> candidates = {{k.col(pivot.x), k.row(pivot.y), k.at<double>(pivot), false},
                                         {k.col(pivot.x), k.row(pivot.y), k.at<double>(pivot), true}};
    if (total != 0) {
        candidates.push_back({rowSums, columnSums, total, false});
        candidates.push_back({rowSums, columnSums, total, true});
    }

    std::optional<SeparableKernel> best;
    double bestResidual = std::numeric_limits<double>::infinity();
    for (const Candidate& candidate : candidates) {
        SeparableKernel factors{std::vector<float>(size_t(rows)), std::vector<float>(size_t(cols))};
        for (int i = 0; i < rows; ++i)
            factors.column[size_t(i)] = float(candidate.column.at<double>(i) /
                                              (candidate.divideColumn ? candidate.divisor : 1.0));
        for (int j = 0; j < cols; ++j)
            factors.row[size_t(j)] = float(candidate.row.at<double>(j) /
                                           (candidate.divideColumn ? 1.0 : candidate.divisor));
        double residual = 0;
        for (int i = 0; i < rows; ++i)
            for (int j = 0; j < cols; ++j)
                residual = std::max(residual, std::fabs(k.at<double>(i, j) - double(factors.column[size_t(i)]) *
                                                                                  double(factors.row[size_t(j)])));
        if (residual < bestResidual) {
            bestResidual = residual;
            best = std::move(factors);
        }
    }
    if (!(bestResidual <= relTolerance * largest)) return std::nullopt;
    return best;
}

std::optional<IntegerSeparableKernel> integerSeparableKernel(const cv::Mat& kernel, int fractionBits)
{
    if (kernel.empty() || kernel.dims != 2 || kernel.type() != CV_32FC1) return std::nullopt;
    const auto scaled = [&](int i, int j) { return std::ldexp(double(kernel.at<float>(i, j)), fractionBits); };
    double largest = 0;
    cv::Point pivot;
    cv::minMaxLoc(cv::abs(kernel), nullptr, &largest, nullptr, &pivot);
    if (largest == 0)
        return IntegerSeparableKernel{std::vector<uint32_t>(size_t(kernel.rows), 0),
                                      std::vector<uint32_t>(size_t(kernel.cols), 0), fractionBits};

    // A rank-1 K = a b^T has the pivot's column as a multiple of a: its taps, made the smallest
    // integers of the same ratios, are the column; the pivot's row over the pivot's column tap
    // is then the row.
    constexpr double kLimit = double(std::numeric_limits<uint32_t>::max());
    std::vector<double> column(size_t(kernel.rows));
    for (int i = 0; i < kernel.rows; ++i) column[size_t(i)] = scaled(i, pivot.x);
    for (;;) {
        if (std::any_of(column.begin(), column.end(), [&](double t) { return std::fabs(t) > kLimit; }))
            return std::nullopt;
        if (std::all_of(column.begin(), column.end(), [](double t) { return t == std::floor(t); })) break;
        for (double& t : column) t *= 2;
    }
    uint64_t divisor = 0;
    for (double t : column) divisor = std::gcd(divisor, uint64_t(std::fabs(t)));
    const double sign = column[size_t(pivot.y)] < 0 ? -1.0 : 1.0;
    IntegerSeparableKernel result{{}, {}, fractionBits};
    for (double t : column) {
        const double a = sign * t / double(divisor);  // at most kLimit: |t| is
        if (a < 0) return std::nullopt;
        result.column.push_back(uint32_t(a));
    }
    const double pivotTap = double(result.column[size_t(pivot.y)]);
    for (int j = 0; j < kernel.cols; ++j) {
        const double b = scaled(pivot.y, j) / pivotTap;
        if (b < 0 || b > kLimit || b != std::floor(b)) return std::nullopt;
        result.row.push_back(uint32_t(b));
    }
    for (int i = 0; i < kernel.rows; ++i)
        for (int j = 0; j < kernel.cols; ++j)
            if (double(result.column[size_t(i)]) * double(result.row[size_t(j)]) != scaled(i, j)) return std::nullopt;
    return result;
}

cv::Mat conv2dReference(const cv::Mat& input, const Conv2DSpec& spec)
{
    validateConv2D(input, spec);
    const int outDepth = conv2dOutputDepth(input, spec);
    const int channels = input.channels();
    ensureMemoryAvailable(elementCount(input) * CV_ELEM_SIZE1(outDepth), "conv2d output");
    cv::Mat output(input.size(), CV_MAKETYPE(outDepth, channels));
    const cv::Mat kernel = effectiveKernel(spec);
    visitDepth(input.depth(), "conv2d", [&](auto inTag) {
        using In = decltype(inTag);
        visitDepth(outDepth, "conv2d", [&](auto outTag) {
            using Out = decltype(outTag);
            correlate<In, false>(input, kernel, spec.border, spec.borderValue,
                                 [&](int y, int x, int c, double sum, double) {
                                     output.ptr<Out>(y)[x * channels + c] = saturateRound<Out>(float(sum));
                                 });
        });
    });
    return output;
}

cv::Mat conv2dReferenceSums(const cv::Mat& input, const Conv2DSpec& spec, cv::Mat* magnitudes)
{
    validateConv2D(input, spec);
    const int channels = input.channels();
    ensureMemoryAvailable(elementCount(input) * sizeof(double) * (magnitudes ? 2 : 1), "conv2d sums");
    cv::Mat sums(input.size(), CV_MAKETYPE(CV_64F, channels));
    if (magnitudes) magnitudes->create(input.size(), CV_MAKETYPE(CV_64F, channels));
    const cv::Mat kernel = effectiveKernel(spec);
    visitDepth(input.depth(), "conv2d", [&](auto inTag) {
        using In = decltype(inTag);
        const auto storeSum = [&](int y, int x, int c, double sum, double) {
            sums.ptr<double>(y)[x * channels + c] = sum;
        };
        if (!magnitudes) {
            correlate<In, false>(input, kernel, spec.border, spec.borderValue, storeSum);
            return;
        }
        correlate<In, true>(input, kernel, spec.border, spec.borderValue,
                            [&](int y, int x, int c, double sum, double magnitude) {
                                storeSum(y, x, c, sum, magnitude);
                                magnitudes->ptr<double>(y)[x * channels + c] = magnitude;
                            });
    });
    return sums;
}

cv::Mat conv2dOpenCV(const cv::Mat& input, const Conv2DSpec& spec)
{
    validateConv2D(input, spec);
    const int outDepth = conv2dOutputDepth(input, spec);
    const cv::Mat kernel = effectiveKernel(spec);
    const int padY = kernel.rows / 2, padX = kernel.cols / 2;
    const uint64_t paddedElements =
        uint64_t(input.rows + 2 * padY) * uint64_t(input.cols + 2 * padX) * uint64_t(input.channels());
    // f32 source (padded or not), the f32 result, and the output.
    ensureMemoryAvailable(2 * paddedElements * sizeof(float) + elementCount(input) * CV_ELEM_SIZE1(outDepth),
                          "conv2d (OpenCV, f32 working copies)");

    cv::Mat source = input;
    if (input.depth() != CV_32F) input.convertTo(source, CV_32F);
    int border = toOpenCvBorder(spec.border);
    const bool pad = spec.border == BorderMode::Wrap || (spec.border == BorderMode::Constant && spec.borderValue != 0);
    if (pad) {
        cv::Mat padded;
        cv::copyMakeBorder(source, padded, padY, padY, padX, padX, border, cv::Scalar::all(spec.borderValue));
        source = padded;
        border = cv::BORDER_CONSTANT;  // only the cropped-away rim sees it
    }

    cv::Mat asFloat;
    if (const auto factors = separateKernel(kernel, 0.0))
        cv::sepFilter2D(source, asFloat, CV_32F, factors->row, factors->column, cv::Point(-1, -1), 0, border);
    else
        cv::filter2D(source, asFloat, CV_32F, kernel, cv::Point(-1, -1), 0, border);
    if (pad) asFloat = asFloat(cv::Rect(padX, padY, input.cols, input.rows)).clone();

    if (outDepth == CV_32F) return asFloat;
    // convertTo rounds ties-to-even and saturates, as saturateRound does, but cvRound is
    // undefined for infinities (huge taps), so clamp to the depth's range first.
    const double hi = outDepth == CV_8U ? OutputLimits<uint8_t>::hi : OutputLimits<uint16_t>::hi;
    cv::min(asFloat, hi, asFloat);
    cv::max(asFloat, 0.0, asFloat);
    cv::Mat output;
    asFloat.convertTo(output, outDepth);
    return output;
}

} // namespace kl
