#include "kernellab/conv2d.hpp"
#include "kernellab/error.hpp"

#include "text.hpp"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>

namespace kl {

namespace {

constexpr Conv2DPreset kAllPresets[] = {
    Conv2DPreset::Box,      Conv2DPreset::Gaussian,  Conv2DPreset::Sharpen, Conv2DPreset::SobelX,
    Conv2DPreset::SobelY,   Conv2DPreset::ScharrX,   Conv2DPreset::ScharrY, Conv2DPreset::Laplacian,
    Conv2DPreset::Emboss,   Conv2DPreset::MotionBlur, Conv2DPreset::Custom};

void requireOddSize(const char* field, int n)
{
    if (n < 1 || n % 2 == 0 || n > kMaxConv2DKernelSize)
        throw InvalidArgument(std::string(field) + ": " + std::to_string(n) + " must be odd, 1.." +
                              std::to_string(kMaxConv2DKernelSize));
}

cv::Mat kernel3x3(std::initializer_list<float> taps)
{
    return cv::Mat(std::vector<float>(taps), true).reshape(1, 3);
}

/// 1 in every pixel the segment of `length` pixels through the centre at `angleDegrees`
/// crosses (sampled every 1/8 pixel, nearest pixel), then normalised to sum 1.
cv::Mat motionBlurKernel(int length, double angleDegrees)
{
    const int centre = length / 2;
    const double radians = angleDegrees * CV_PI / 180.0;
    const double dx = std::cos(radians), dy = -std::sin(radians);  // image y points down
    cv::Mat k = cv::Mat::zeros(length, length, CV_32F);
    const int steps = 8 * (length - 1);
    for (int s = 0; s <= steps; ++s) {
        const double t = steps ? -centre + 2.0 * centre * s / steps : 0.0;
        const int x = int(std::lround(centre + t * dx)), y = int(std::lround(centre + t * dy));
        if (x >= 0 && x < length && y >= 0 && y < length) k.at<float>(y, x) = 1.f;
    }
    return k / cv::sum(k)[0];
}

cv::Mat customKernel(const Conv2DPresetParams& params)
{
    if (params.custom.empty()) throw InvalidArgument("custom kernel: empty; give a matrix of taps");
    if (params.custom.channels() != 1 || params.custom.dims != 2)
        throw InvalidArgument("custom kernel: needs 1 channel, got " + std::to_string(params.custom.channels()));
    requireOddSize("custom kernel width", params.custom.cols);
    requireOddSize("custom kernel height", params.custom.rows);
    cv::Mat k;
    params.custom.convertTo(k, CV_32F);
    if (!cv::checkRange(k)) throw InvalidArgument("custom kernel: every tap must be finite");
    if (params.normalize) {
        const double sum = cv::sum(k)[0];
        if (sum != 0) k /= sum;
    }
    return k;
}

} // namespace

cv::Mat makeConv2DKernel(Conv2DPreset preset, const Conv2DPresetParams& params)
{
    switch (preset) {
    case Conv2DPreset::Box:
        requireOddSize("box width", params.width);
        requireOddSize("box height", params.height);
        return cv::Mat(params.height, params.width, CV_32F, cv::Scalar(1.0 / (params.width * params.height)));
    case Conv2DPreset::Gaussian: {
        requireOddSize("gaussian width", params.width);
        requireOddSize("gaussian height", params.height);
        if (!std::isfinite(params.sigma))
            throw InvalidArgument("gaussian sigma: must be finite (<= 0 picks the default for the size)");
        const cv::Mat column = cv::getGaussianKernel(params.height, params.sigma, CV_64F);
        const cv::Mat row = cv::getGaussianKernel(params.width, params.sigma, CV_64F);
        cv::Mat k;
        cv::Mat(column * row.t()).convertTo(k, CV_32F);
        return k;
    }
    case Conv2DPreset::Sharpen: return kernel3x3({0, -1, 0, -1, 5, -1, 0, -1, 0});
    case Conv2DPreset::SobelX: return kernel3x3({-1, 0, 1, -2, 0, 2, -1, 0, 1});
    case Conv2DPreset::SobelY: return kernel3x3({-1, -2, -1, 0, 0, 0, 1, 2, 1});
    case Conv2DPreset::ScharrX: return kernel3x3({-3, 0, 3, -10, 0, 10, -3, 0, 3});
    case Conv2DPreset::ScharrY: return kernel3x3({-3, -10, -3, 0, 0, 0, 3, 10, 3});
    case Conv2DPreset::Laplacian: return kernel3x3({0, 1, 0, 1, -4, 1, 0, 1, 0});
    case Conv2DPreset::Emboss: return kernel3x3({-2, -1, 0, -1, 1, 1, 0, 1, 2});
    case Conv2DPreset::MotionBlur:
        requireOddSize("motion blur length", params.length);
        if (!std::isfinite(params.angleDegrees)) throw InvalidArgument("motion blur angle: must be finite");
        return motionBlurKernel(params.length, params.angleDegrees);
    case Conv2DPreset::Custom: return customKernel(params);
    }
    throw InvalidArgument("conv2d preset: invalid value " + std::to_string(int(preset)));
}

std::string toString(Conv2DPreset preset)
{
    switch (preset) {
    case Conv2DPreset::Box: return "box";
    case Conv2DPreset::Gaussian: return "gaussian";
    case Conv2DPreset::Sharpen: return "sharpen";
    case Conv2DPreset::SobelX: return "sobel-x";
    case Conv2DPreset::SobelY: return "sobel-y";
    case Conv2DPreset::ScharrX: return "scharr-x";
    case Conv2DPreset::ScharrY: return "scharr-y";
    case Conv2DPreset::Laplacian: return "laplacian";
    case Conv2DPreset::Emboss: return "emboss";
    case Conv2DPreset::MotionBlur: return "motion-blur";
    case Conv2DPreset::Custom: return "custom";
    }
    return "unknown";
}

Conv2DPreset parseConv2DPreset(const std::string& name)
{
    return detail::parseName(name, kAllPresets, "conv2d preset");
}

std::vector<Conv2DPreset> allConv2DPresets()
{
    return {std::begin(kAllPresets), std::end(kAllPresets)};
}

bool presetWantsFloatOutput(Conv2DPreset preset)
{
    switch (preset) {
    case Conv2DPreset::SobelX:
    case Conv2DPreset::SobelY:
    case Conv2DPreset::ScharrX:
    case Conv2DPreset::ScharrY:
    case Conv2DPreset::Laplacian: return true;
    default: return false;
    }
}

} // namespace kl
