#include "kernellab/metrics.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"

#include <opencv2/core.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kl {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// |a - b| with the NaN rule of metrics.hpp.
double elementDifference(double a, double b)
{
    if (a == b) return 0.0;
    const bool aIsNan = std::isnan(a), bIsNan = std::isnan(b);
    if (aIsNan && bIsNan) return 0.0;
    if (aIsNan || bIsNan) return kInfinity;
    return std::fabs(a - b);
}

class Accumulator {
public:
    void add(double actual, double reference)
    {
        const double diff = elementDifference(actual, reference);
        if (diff > 0 && differing_++ == 0) {
            firstIndex_ = elements_;
            firstActual_ = actual;
            firstReference_ = reference;
        }
        ++elements_;
        maxAbs_ = std::max(maxAbs_, diff);
        sumAbs_ += diff;
        sumSquares_ += diff * diff;
        const double magnitude = std::isnan(reference) ? 0.0 : std::fabs(reference);
        maxReference_ = std::max(maxReference_, magnitude);
        if (diff > 0) maxRel_ = std::max(maxRel_, diff / std::max(magnitude, 1e-30));
    }

    /// `peak` <= 0 means "the largest |reference|" (float data).
    Comparison result(double peak) const
    {
        Comparison c;
        c.elements = elements_;
        c.differing = differing_;
        c.firstDiffering = firstIndex_;
        c.firstActual = firstActual_;
        c.firstReference = firstReference_;
        c.maxAbsError = maxAbs_;
        c.meanAbsError = elements_ ? sumAbs_ / double(elements_) : 0.0;
        c.maxRelError = maxRel_;
        c.normRelError = maxAbs_ == 0 ? 0.0 : (maxReference_ > 0 ? maxAbs_ / maxReference_ : kInfinity);
        if (peak <= 0) peak = maxReference_;
        const double meanSquare = elements_ ? sumSquares_ / double(elements_) : 0.0;
        c.psnr = meanSquare == 0 ? kInfinity : 10.0 * std::log10(peak * peak / meanSquare);
        return c;
    }

private:
    uint64_t elements_ = 0, differing_ = 0, firstIndex_ = 0;
    double firstActual_ = 0, firstReference_ = 0;
    double maxAbs_ = 0, sumAbs_ = 0, sumSquares_ = 0, maxRel_ = 0, maxReference_ = 0;
};

template <typename T> void accumulateRows(const cv::Mat& a, const cv::Mat& b, Accumulator& acc)
{
    const int width = a.cols * a.channels();
    for (int y = 0; y < a.rows; ++y) {
        const T* pa = a.ptr<T>(y);
        const T* pb = b.ptr<T>(y);
        for (int i = 0; i < width; ++i) acc.add(double(pa[i]), double(pb[i]));
    }
}

bool sameShape(const cv::Mat& a, const cv::Mat& b)
{
    return a.dims == 2 && b.dims == 2 && a.size() == b.size() && a.type() == b.type();
}

} // namespace

Comparison compare(const cv::Mat& actual, const cv::Mat& reference)
{
    if (!sameShape(actual, reference)) {
        Comparison c;
        c.shapeMatches = false;
        return c;
    }
    Accumulator acc;
    double peak = 0;
    visitDepth(reference.depth(), "compare", [&](auto tag) {
        using T = decltype(tag);
        accumulateRows<T>(actual, reference, acc);
        if constexpr (!std::is_floating_point<T>::value) peak = double(std::numeric_limits<T>::max());
    });
    return acc.result(peak);
}

Comparison compare(const Signal& actual, const Signal& reference)
{
    if (actual.channels != reference.channels || actual.frames != reference.frames ||
        actual.data.size() != reference.data.size()) {
        Comparison c;
        c.shapeMatches = false;
        return c;
    }
    Accumulator acc;
    for (size_t i = 0; i < reference.data.size(); ++i) acc.add(actual.data[i], reference.data[i]);
    return acc.result(0.0);
}

cv::Mat absDifference(const cv::Mat& a, const cv::Mat& b)
{
    if (!sameShape(a, b))
        throw InvalidArgument("difference: " + describeImage(a) + " and " + describeImage(b) +
                              " do not have the same size and type");
    cv::Mat diff(a.size(), CV_32F);
    const int channels = a.channels();
    visitDepth(a.depth(), "difference", [&](auto tag) {
        using T = decltype(tag);
        for (int y = 0; y < a.rows; ++y) {
            const T* pa = a.ptr<T>(y);
            const T* pb = b.ptr<T>(y);
            float* out = diff.ptr<float>(y);
            for (int x = 0; x < a.cols; ++x) {
                double largest = 0;
                for (int c = 0; c < channels; ++c) {
                    const size_t i = size_t(x) * size_t(channels) + size_t(c);
                    largest = std::max(largest, elementDifference(double(pa[i]), double(pb[i])));
                }
                out[x] = float(largest);
            }
        }
    });
    return diff;
}

} // namespace kl
