#pragma once
// Border modes by name, and their OpenCV equivalents. The rule itself (BorderMode,
// borderIndex) is in border_rule.hpp, which kernels compiled at run time include too.
#include "kernellab/border_rule.hpp"

#include <string>
#include <vector>

namespace kl {

/// "constant", "replicate", "reflect", "reflect101", "wrap".
std::string toString(BorderMode mode);
/// Parses the names above; throws kl::InvalidArgument naming the bad value.
BorderMode parseBorderMode(const std::string& name);
/// Every mode, in the order above.
std::vector<BorderMode> allBorderModes();
/// The matching cv::BorderTypes value.
int toOpenCvBorder(BorderMode mode);

} // namespace kl
