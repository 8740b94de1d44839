#include "kernellab/conv2d.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"
#include "kernellab/rounding.hpp"

#include "parallel.hpp"

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

/// The reference's sum at one output element, and sum |term| when `magnitude` is given.
template <typename In>
double correlateAt(const cv::Mat& input, const cv::Mat& kernel, BorderMode border, double borderValue, int y, int x,
                   int c, double* magnitude)
{
    const int rows = input.rows, cols = input.cols, channels = input.channels();
    const int anchorY = kernel.rows / 2, anchorX = kernel.cols / 2;
    double sum = 0, absolute = 0;
    for (int i = 0; i < kernel.rows; ++i) {
        const int sy = borderIndex(y + i - anchorY, rows, border);
        const In* source = sy < 0 ? nullptr : input.ptr<In>(sy);
        const float* taps = kernel.ptr<float>(i);
        for (int j = 0; j < kernel.cols; ++j) {
            const int sx = borderIndex(x + j - anchorX, cols, border);
            const double v = source && sx >= 0 ? double(source[sx * channels + c]) : borderValue;
            const double term = double(taps[j]) * v;
            sum += term;
            if (magnitude) absolute += std::fabs(term);
        }
    }
    if (magnitude) *magnitude = absolute;
    return sum;
}

/// The one correlation loop of the reference: calls store(y, x, c, sum) for every output element of
/// the rows `rows`.
template <typename In, typename Store>
void correlate(const cv::Mat& input, const cv::Mat& kernel, BorderMode border, double borderValue, cv::Range rows,
               Store&& store)
{
    for (int y = rows.start; y < rows.end; ++y)
        for (int x = 0; x < input.cols; ++x)
            for (int c = 0; c < input.channels(); ++c)
                store(y, x, c, correlateAt<In>(input, kernel, border, borderValue, y, x, c, nullptr));
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

namespace {

/// The reference's rows `rows` into `output`, once the input, spec, output and rows are checked.
void referenceRows(const cv::Mat& input, const Conv2DSpec& spec, cv::Mat& output, cv::Range rows)
{
    const int channels = input.channels();
    const cv::Mat kernel = effectiveKernel(spec);
    visitDepth(input.depth(), "conv2d", [&](auto inTag) {
        using In = decltype(inTag);
        visitDepth(output.depth(), "conv2d", [&](auto outTag) {
            using Out = decltype(outTag);
            correlate<In>(input, kernel, spec.border, spec.borderValue, rows, [&](int y, int x, int c, double sum) {
                output.ptr<Out>(y)[x * channels + c] = saturateRound<Out>(float(sum));
            });
        });
    });
}

} // namespace

void conv2dReference(const cv::Mat& input, const Conv2DSpec& spec, cv::Mat& output)
{
    validateConv2D(input, spec);
    createChecked(output, input.rows, input.cols, CV_MAKETYPE(conv2dOutputDepth(input, spec), input.channels()),
                  "conv2d output");
    referenceRows(input, spec, output, cv::Range(0, input.rows));
}

void conv2dReferenceRows(const cv::Mat& input, const Conv2DSpec& spec, cv::Mat& output, cv::Range rows)
{
    validateConv2D(input, spec);
    const int outDepth = conv2dOutputDepth(input, spec), channels = input.channels();
    if (output.rows != input.rows || output.cols != input.cols || output.type() != CV_MAKETYPE(outDepth, channels))
        throw InvalidArgument("conv2d output: " + describeImage(output) + " is not the result's " +
                              std::to_string(input.cols) + "x" + std::to_string(input.rows) + " " +
                              depthName(outDepth) + " x" + std::to_string(channels));
    if (rows.start < 0 || rows.start > rows.end || rows.end > input.rows)
        throw InvalidArgument("conv2d rows: [" + std::to_string(rows.start) + ", " + std::to_string(rows.end) +
                              ") is not inside the image's " + std::to_string(input.rows) + " rows");
    referenceRows(input, spec, output, rows);
}

cv::Mat conv2dReference(const cv::Mat& input, const Conv2DSpec& spec)
{
    cv::Mat output;
    conv2dReference(input, spec, output);
    return output;
}

double conv2dReferenceSumAt(const cv::Mat& input, const Conv2DSpec& spec, int y, int x, int c, double* magnitude)
{
    const cv::Mat kernel = effectiveKernel(spec);
    double sum = 0;
    visitDepth(input.depth(), "conv2d", [&](auto inTag) {
        sum = correlateAt<decltype(inTag)>(input, kernel, spec.border, spec.borderValue, y, x, c, magnitude);
    });
    return sum;
}

namespace {

/// Output rows per strip of the OpenCV backend. Each strip filters kernel.rows - 1 halo rows
/// again, so strips grow with the kernel to keep that under a quarter of the work.
int stripRows(int kernelRows)
{
    return std::max(32, 4 * (kernelRows - 1));
}

/// The fewest fractional bits that hold every tap exactly; kMoreBits when 16 do not.
constexpr int kMoreBits = 17;
int fractionBits(const float* taps, size_t count)
{
    for (int bits = 0; bits < kMoreBits; ++bits)
        if (std::all_of(taps, taps + count, [&](float t) {
                const double scaled = std::ldexp(double(t), bits);
                return scaled == std::floor(scaled);
            }))
            return bits;
    return kMoreBits;
}

double absoluteSum(const float* taps, size_t count)
{
    double sum = 0;
    for (size_t i = 0; i < count; ++i) sum += std::fabs(double(taps[i]));
    return sum;
}

/// Whether OpenCV's own u8 paths compute this kernel exactly: every partial sum of taps times
/// u8 values fits float's 24 bits (so float sums are exact), and a separable kernel's factors
/// multiply to its taps exactly with at most 8 fractional bits each (sepFilter2D's fixed point
/// keeps 8). Then its results equal the reference but for exact ties. Otherwise its float sums,
/// in another order than the f32 path's, round near ties either way, too often on structured
/// images (a chessboard) for the acceptance rule; so such kernels, and u16, take the f32 blocks.
bool exactOnU8(const cv::Mat& kernel, const std::optional<SeparableKernel>& factors)
{
    constexpr double kExactFloat = double(1 << 24);
    if (!factors) {
        const int bits = fractionBits(kernel.ptr<float>(), kernel.total());
        return bits < kMoreBits &&
               absoluteSum(kernel.ptr<float>(), kernel.total()) * 255 * std::ldexp(1.0, bits) < kExactFloat;
    }
    const int rowBits = fractionBits(factors->row.data(), factors->row.size());
    const int columnBits = fractionBits(factors->column.data(), factors->column.size());
    for (int i = 0; i < kernel.rows; ++i)
        for (int j = 0; j < kernel.cols; ++j)
            if (factors->column[size_t(i)] * factors->row[size_t(j)] != kernel.at<float>(i, j)) return false;
    return rowBits <= 8 && columnBits <= 8 &&
           absoluteSum(factors->row.data(), factors->row.size()) *
                   absoluteSum(factors->column.data(), factors->column.size()) * 255 *
                   std::ldexp(1.0, rowBits + columnBits) <
               kExactFloat;
}

/// Whether `kernel` is the one cv::GaussianBlur uses for its size with sigma 0 (the fixed
/// 3, 5 and 7 tap tables, whose taps have 8 fractional bits: its fixed-point path is exact).
bool isOpenCvGaussianTable(const cv::Mat& kernel)
{
    if (kernel.rows > 7 || kernel.cols > 7) return false;
    const cv::Mat column = cv::getGaussianKernel(kernel.rows, 0, CV_32F);
    const cv::Mat row = cv::getGaussianKernel(kernel.cols, 0, CV_32F);
    const cv::Mat table = column * row.t();  // products of dyadic taps: exact
    return cv::countNonZero(table != kernel) == 0;
}

/// Whether cv::filter2D filters a whole image with this kernel through its DFT (OpenCV 4.6:
/// 130+ taps for u8 -> u8 and f32 -> f32 on SSE3 hosts, else 50+). It never does on a view.
bool opencvFiltersByDft(const cv::Mat& kernel, int sourceDepth, int resultDepth)
{
    const bool fastDirect = cv::checkHardwareSupport(CV_CPU_SSE3) && sourceDepth == resultDepth &&
                            (sourceDepth == CV_8U || sourceDepth == CV_32F);
    return kernel.total() >= (fastDirect ? 130u : 50u);
}

} // namespace

void conv2dOpenCV(const cv::Mat& input, const Conv2DSpec& spec, cv::Mat& output, CpuScratch& scratch)
{
    validateConv2D(input, spec);
    const int inDepth = input.depth(), outDepth = conv2dOutputDepth(input, spec), channels = input.channels();
    const cv::Mat kernel = effectiveKernel(spec);
    // Rank-1 to within 1e-6 of the largest tap, as the GPU's separable variant takes it: the
    // product of the factors then differs from a tap by far less than the acceptance rule allows
    // (a Gaussian's float taps are rarely an exact product).
    const std::optional<SeparableKernel> factors = separateKernel(kernel);
    createChecked(output, input.rows, input.cols, CV_MAKETYPE(outDepth, channels), "conv2d output");
    int border = toOpenCvBorder(spec.border);
    // filter2D has no wrap mode and pads constants with 0: those borders are padded first.
    const bool pad = spec.border == BorderMode::Wrap || (spec.border == BorderMode::Constant && spec.borderValue != 0);
    const bool valueFitsDepth = inDepth == CV_32F || spec.border != BorderMode::Constant ||
                                isImageValue(spec.borderValue, inDepth == CV_8U ? 255.0 : 65535.0);

    // cv::GaussianBlur for its own kernels: whole-image, multi-threaded fixed point (exact sums,
    // ties rounded up: the acceptance rule's exact ties).
    if (!pad && !input.isSubmatrix() && inDepth != CV_32F && outDepth == inDepth && isOpenCvGaussianTable(kernel)) {
        cv::GaussianBlur(input, output, kernel.size(), 0, 0, border);
        return;
    }

    // The image the strips are views of: filters on a view read the real pixels around it.
    cv::Mat source = input;
    const bool floatSource = !valueFitsDepth;  // a padding value the depth cannot hold
    // A copy when the input is itself a view: the pixels around it are not its image's.
    if (floatSource || (input.isSubmatrix() && !pad)) {
        createChecked(scratch.buffer(0), input.rows, input.cols, CV_MAKETYPE(floatSource ? CV_32F : inDepth, channels),
                      "conv2d (OpenCV, working copy)");
        input.convertTo(scratch.buffer(0), scratch.buffer(0).type());
        source = scratch.buffer(0);
    }
    const int padY = kernel.rows / 2, padX = kernel.cols / 2;
    if (pad) {
        createChecked(scratch.buffer(1), input.rows + 2 * padY, input.cols + 2 * padX, source.type(),
                      "conv2d (OpenCV, padded copy)");
        cv::copyMakeBorder(source, scratch.buffer(1), padY, padY, padX, padX, border, cv::Scalar::all(spec.borderValue));
        source = scratch.buffer(1)(cv::Rect(padX, padY, input.cols, input.rows));
        border = cv::BORDER_CONSTANT;  // never reached: the padding holds every neighbour
    }

    // Integer results are filtered in f32 and rounded by convertTo (ties to even, saturated, as
    // the reference) unless OpenCV's own u8 path is exact for the kernel; else straight into the output.
    const bool floatBlocks = outDepth != CV_32F && !(source.depth() == CV_8U && exactOnU8(kernel, factors));
    const int resultDepth = floatBlocks ? CV_32F : outDepth;
    const auto finish = [&](const cv::Mat& filtered, cv::Mat out) {
        if (floatBlocks) {
            // convertTo leaves the saturation of infinity undefined (huge taps): clamp first.
            cv::min(filtered, outDepth == CV_8U ? 255.0 : 65535.0, filtered);
            cv::max(filtered, 0.0, filtered);
            filtered.convertTo(out, outDepth);
        } else if (filtered.data != out.data) {
            filtered.copyTo(out);
        }
    };

    // A view takes filter2D's direct loop, whose float sums of that many u16 terms stray beyond
    // the acceptance rule; the DFT's do not. So such kernels filter the whole (padded) image.
    if (!factors && opencvFiltersByDft(kernel, source.depth(), resultDepth)) {
        const cv::Mat whole = pad ? scratch.buffer(1) : source;
        cv::Mat& result = pad || floatBlocks ? scratch.buffer(2) : output;
        cv::filter2D(whole, result, resultDepth, kernel, cv::Point(-1, -1), 0, border);
        finish(pad ? result(cv::Rect(padX, padY, input.cols, input.rows)) : result, output);
        return;
    }

    const int rowsPerStrip = stripRows(kernel.rows);
    const int strips = (input.rows + rowsPerStrip - 1) / rowsPerStrip;
    const int tasks = detail::pieceTasks(strips);
    cv::Mat* blocks = floatBlocks ? scratch.buffers(2, size_t(tasks)) : nullptr;
    for (int task = 0; floatBlocks && task < tasks; ++task)
        createChecked(blocks[task], rowsPerStrip, input.cols, CV_MAKETYPE(CV_32F, channels), "conv2d (OpenCV, f32 blocks)");
    detail::forEachPiece(strips, [&](int task, int strip) {
        const cv::Range rows(strip * rowsPerStrip, std::min(input.rows, (strip + 1) * rowsPerStrip));
        const cv::Mat in = source.rowRange(rows);
        cv::Mat out = output.rowRange(rows);
        cv::Mat filtered = out;
        if (floatBlocks) filtered = blocks[task].rowRange(0, rows.size());
        if (factors)
            cv::sepFilter2D(in, filtered, resultDepth, factors->row, factors->column, cv::Point(-1, -1), 0, border);
        else
            cv::filter2D(in, filtered, resultDepth, kernel, cv::Point(-1, -1), 0, border);
        finish(filtered, out);
    });
}

cv::Mat conv2dOpenCV(const cv::Mat& input, const Conv2DSpec& spec)
{
    cv::Mat output;
    CpuScratch scratch;
    conv2dOpenCV(input, spec, output, scratch);
    return output;
}

} // namespace kl
