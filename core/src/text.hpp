#pragma once
// Number formatting and name parsing for error messages (internal to core).
#include "kernellab/error.hpp"

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

/// The value of `all` whose toString() is `name`; kl::InvalidArgument naming `field`
/// and listing the valid names otherwise.
template <typename Enum, size_t N> Enum parseName(const std::string& name, const Enum (&all)[N], const std::string& field)
{
    std::string known;
    for (Enum value : all) {
        if (toString(value) == name) return value;
        known += (known.empty() ? "" : ", ") + toString(value);
    }
    throw InvalidArgument(field + ": '" + name + "' is not one of " + known);
}

} // namespace kl::detail
