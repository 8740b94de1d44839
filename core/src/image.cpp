#include "kernellab/image.hpp"

#include "kernellab/error.hpp"
#include "text.hpp"

#include <opencv2/core.hpp>

#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace kl {

void validateImage(const cv::Mat& img, const std::string& what)
{
    if (img.empty()) throw InvalidArgument(what + ": the image is empty");
    if (img.dims != 2) throw InvalidArgument(what + ": " + std::to_string(img.dims) + "-D arrays are not images");
    const int depth = img.depth();
    if (depth != CV_8U && depth != CV_16U && depth != CV_32F)
        throw InvalidArgument(what + ": depth " + depthName(depth) + " is not supported (use u8, u16 or f32)");
    const int channels = img.channels();
    if (channels != 1 && channels != 3 && channels != 4)
        throw InvalidArgument(what + ": " + std::to_string(channels) +
                              " channels are not supported (use 1, 3 or 4)");
}

std::string depthName(int depth)
{
    switch (depth) {
    case CV_8U: return "u8";
    case CV_8S: return "s8";
    case CV_16U: return "u16";
    case CV_16S: return "s16";
    case CV_32S: return "s32";
    case CV_32F: return "f32";
    case CV_64F: return "f64";
    case CV_16F: return "f16";
    default: return "depth " + std::to_string(depth);
    }
}

int parseDepth(const std::string& name)
{
    if (name == "u8") return CV_8U;
    if (name == "u16") return CV_16U;
    if (name == "f32") return CV_32F;
    throw InvalidArgument("depth: '" + name + "' is not one of u8, u16, f32");
}

std::string describeImage(const cv::Mat& img)
{
    if (img.empty()) return "empty image";
    std::ostringstream out;
    out << img.cols << 'x' << img.rows << ' ' << depthName(img.depth()) << " x" << img.channels() << " ("
        << formatBytes(uint64_t(img.total()) * img.elemSize()) << ')';
    return out.str();
}

uint64_t availableMemoryBytes()
{
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    uint64_t value = 0;
    std::string unit;
    while (meminfo >> key >> value) {
        std::getline(meminfo, unit);
        if (key == "MemAvailable:") return value * 1024;  // the kernel reports kB
    }
    // No /proc (or a kernel before 3.14): free pages are a pessimistic stand-in.
    return uint64_t(sysconf(_SC_AVPHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
}

void ensureMemoryAvailable(uint64_t bytes, const std::string& what)
{
    const uint64_t available = availableMemoryBytes();
    if (bytes > available)
        throw OutOfMemory(what + ": needs about " + formatBytes(bytes) + " but only " + formatBytes(available) +
                          " of memory is available");
}

void createChecked(cv::Mat& m, int rows, int cols, int type, const std::string& what)
{
    if (m.rows == rows && m.cols == cols && m.type() == type) return;
    ensureMemoryAvailable(uint64_t(rows) * uint64_t(cols) * uint64_t(CV_ELEM_SIZE(type)), what);
    m.create(rows, cols, type);
}

std::string formatBytes(uint64_t bytes)
{
    static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) return std::to_string(bytes) + " B";
    double value = double(bytes) / 1024;
    size_t unit = 0;
    while (value >= 1024 && unit + 1 < std::size(units)) {
        value /= 1024;
        ++unit;
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
    return text;
}

uint64_t parseByteSize(const std::string& text, const std::string& field)
{
    std::string_view number = detail::trimmed(text);
    std::string suffix;  // the trailing letters, upper case
    while (!number.empty() && std::isalpha(static_cast<unsigned char>(number.back()))) {
        suffix.insert(suffix.begin(), char(std::toupper(static_cast<unsigned char>(number.back()))));
        number.remove_suffix(1);
    }
    // "64MiB", "64MB" and "64M" alike; "100B" and "100" are bytes.
    for (const std::string_view tail : {"IB", "B"})
        if (suffix.size() > tail.size() && std::string_view(suffix).substr(suffix.size() - tail.size()) == tail) {
            suffix.resize(suffix.size() - tail.size());
            break;
        }
    const bool bytesOnly = suffix.empty() || suffix == "B";
    const size_t power = suffix.size() == 1 ? std::string_view("KMGT").find(suffix[0]) + 1 : 0;  // 0: none of them
    const std::optional<double> value = detail::parseNumber(number);
    const double bytes = value ? *value * std::pow(1024.0, double(power)) : 0;
    if ((!bytesOnly && power == 0) || !(bytes >= 1) || !(bytes < 0x1p64) || (bytesOnly && bytes != std::floor(bytes)))
        throw InvalidArgument(field + ": '" + text + "' is not a size (bytes, or a number with K, M, G or T, e.g. 512M)");
    return uint64_t(bytes);
}

} // namespace kl
