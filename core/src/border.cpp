#include "kernellab/border.hpp"

#include "kernellab/error.hpp"

#include "text.hpp"

#include <opencv2/core/base.hpp>

namespace kl {

namespace {
constexpr BorderMode kAllModes[] = {BorderMode::Constant, BorderMode::Replicate, BorderMode::Reflect,
                                    BorderMode::Reflect101, BorderMode::Wrap};
}

std::string toString(BorderMode mode)
{
    switch (mode) {
    case BorderMode::Constant: return "constant";
    case BorderMode::Replicate: return "replicate";
    case BorderMode::Reflect: return "reflect";
    case BorderMode::Reflect101: return "reflect101";
    case BorderMode::Wrap: return "wrap";
    }
    return "unknown";
}

BorderMode parseBorderMode(const std::string& name)
{
    return detail::parseName(name, kAllModes, "border");
}

std::vector<BorderMode> allBorderModes()
{
    return {std::begin(kAllModes), std::end(kAllModes)};
}

int toOpenCvBorder(BorderMode mode)
{
    switch (mode) {
    case BorderMode::Constant: return cv::BORDER_CONSTANT;
    case BorderMode::Replicate: return cv::BORDER_REPLICATE;
    case BorderMode::Reflect: return cv::BORDER_REFLECT;
    case BorderMode::Reflect101: return cv::BORDER_REFLECT_101;
    case BorderMode::Wrap: return cv::BORDER_WRAP;
    }
    throw InvalidArgument("border: invalid mode " + std::to_string(int(mode)));
}

} // namespace kl
