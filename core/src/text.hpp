#pragma once
// Number formatting for error messages (internal to core).
#include <cstdio>
#include <string>

namespace kl::detail {

/// `v` in %g form with the given significant digits ("0.5", "1e+30", "nan").
inline std::string formatNumber(double v, int significantDigits = 6)
{
    char text[40];
    std::snprintf(text, sizeof text, "%.*g", significantDigits, v);
    return text;
}

} // namespace kl::detail
