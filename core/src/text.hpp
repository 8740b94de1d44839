#pragma once
// Text helpers internal to core: number formatting and name parsing for error messages,
// and the locale-independent field parsing the text readers (CSV, kernel files, .npy headers) share.
#include "kernellab/error.hpp"

#include <charconv>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

/// `text` without leading and trailing spaces, tabs and carriage returns.
inline std::string_view trimmed(std::string_view text)
{
    const size_t first = text.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) return {};
    return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

/// The whole of `text` (trimmed, an optional '+') as a number, in any locale: std::from_chars
/// always reads '.' as the decimal point. Empty for anything else, and for a value out of
/// double's range ("1e999"); "inf" and "nan" parse, so callers that need finite values check.
inline std::optional<double> parseNumber(std::string_view text)
{
    text = trimmed(text);
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
    return value;
}

/// The comma-separated fields of `line`, each trimmed (",," gives an empty field).
inline std::vector<std::string_view> splitFields(std::string_view line)
{
    std::vector<std::string_view> fields;
    size_t start = 0;
    while (true) {
        const size_t comma = line.find(',', start);
        fields.push_back(trimmed(line.substr(start, comma - start)));
        if (comma == std::string_view::npos) return fields;
        start = comma + 1;
    }
}

} // namespace kl::detail
