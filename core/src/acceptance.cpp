#include "kernellab/acceptance.hpp"

#include "kernellab/image.hpp"

#include "text.hpp"

#include <opencv2/core.hpp>

#include <cmath>

namespace kl {

namespace {

/// (row, col, channel) of element i of a `cols`-column, `channels`-channel image, for messages.
std::string position(size_t i, int cols, int channels)
{
    const size_t pixel = i / size_t(channels);
    return "(" + std::to_string(pixel / size_t(cols)) + ", " + std::to_string(pixel % size_t(cols)) + ", " +
           std::to_string(i % size_t(channels)) + ")";
}

std::string shapeProblem(const cv::Mat& actual, const cv::Mat& reference)
{
    if (actual.size() == reference.size() && actual.type() == reference.type()) return {};
    return "shape " + describeImage(actual) + " differs from the reference's " + describeImage(reference);
}

} // namespace

std::vector<double> elementsOf(const cv::Mat& image)
{
    cv::Mat asDouble;
    image.convertTo(asDouble, CV_MAKETYPE(CV_64F, image.channels()));
    const auto* first = asDouble.ptr<double>();
    return {first, first + asDouble.total() * size_t(asDouble.channels())};
}

void applyFloatRule(const std::vector<double>& actual, const std::vector<double>& reference, double tolerance,
                    Verdict& verdict, const std::string& where)
{
    double largestDifference = 0, largestReference = 0;
    for (size_t i = 0; i < reference.size(); ++i) {
        const double a = actual[i], r = reference[i];
        const double difference = a == r ? 0.0 : std::fabs(a - r);  // NaN against a number: fails below
        largestDifference = std::isnan(difference) ? INFINITY : std::max(largestDifference, difference);
        largestReference = std::max(largestReference, std::fabs(r));
    }
    verdict.elements += reference.size();
    const double relative = largestDifference == 0 ? 0.0 : largestDifference / largestReference;
    verdict.relativeError = std::max(verdict.relativeError, relative);
    if (verdict.passed() && !(largestDifference <= tolerance * largestReference))
        verdict.failure = where + "max |a - ref| = " + detail::formatNumber(largestDifference) + " exceeds " +
                          detail::formatNumber(tolerance) + " * max |ref| = " + detail::formatNumber(largestReference);
}

Verdict acceptConv2D(const cv::Mat& actual, const cv::Mat& reference, const cv::Mat& input, const Conv2DSpec& spec,
                     double floatTolerance)
{
    Verdict verdict;
    verdict.failure = shapeProblem(actual, reference);
    if (!verdict.passed()) return verdict;
    verdict.elements = uint64_t(actual.total()) * uint64_t(actual.channels());
    if (reference.depth() == CV_32F) {
        verdict.elements = 0;
        applyFloatRule(elementsOf(actual), elementsOf(reference), floatTolerance, verdict);
        return verdict;
    }
    const double largest = reference.depth() == CV_8U ? 255.0 : 65535.0;
    const int channels = actual.channels();
    cv::Mat differs;
    cv::compare(actual.reshape(1), reference.reshape(1), differs, cv::CMP_NE);
    std::vector<cv::Point> where;
    cv::findNonZero(differs, where);
    for (const cv::Point& p : where) {
        const int y = p.y, x = p.x / channels, c = p.x % channels;
        const double a = actual.depth() == CV_8U ? actual.ptr<uint8_t>(y)[p.x] : actual.ptr<uint16_t>(y)[p.x];
        const double r = reference.depth() == CV_8U ? reference.ptr<uint8_t>(y)[p.x] : reference.ptr<uint16_t>(y)[p.x];
        double magnitude = 0;
        const double s = conv2dReferenceSumAt(input, spec, y, x, c, &magnitude);
        const double tie = std::floor(s) + 0.5;
        const double below = std::clamp(std::floor(s), 0.0, largest), above = std::clamp(std::floor(s) + 1, 0.0, largest);
        const bool neighbours = (a == below || a == above) && (r == below || r == above);
        const bool exactTie = s == tie;
        if (std::fabs(a - r) != 1 || !neighbours ||
            (!exactTie && std::fabs(s - tie) > kTieRelTolerance * magnitude + kTieAbsTolerance)) {
            verdict.failure = "element " + position(size_t(y) * size_t(actual.cols * channels) + size_t(p.x),
                                                    actual.cols, channels) +
                              " is " + detail::formatNumber(a) + ", the reference " + detail::formatNumber(r) +
                              "; the unrounded sum " + detail::formatNumber(s, 17) + " is not a tie between them";
            return verdict;
        }
        ++(exactTie ? verdict.exactTies : verdict.nearTies);
    }
    return verdict;
}

void applyRandomInputNearTieBound(Verdict& verdict, int depth)
{
    const bool u16 = depth == CV_16U;
    const uint64_t allowed = 1 + verdict.elements / (u16 ? kRandomInputNearTieDivisorU16 : kRandomInputNearTieDivisorU8);
    if (verdict.passed() && verdict.nearTies > allowed)
        verdict.failure = std::to_string(verdict.nearTies) + " of " + std::to_string(verdict.elements) +
                          " elements differ near ties; on random inputs at most 1 + " + (u16 ? "1%" : "0.1%") +
                          " should";
}

} // namespace kl
