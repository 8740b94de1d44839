#include "kernellab/kernel_io.hpp"

#include "file_util.hpp"
#include "npy.hpp"
#include "text.hpp"
#include "kernellab/signal_io.hpp"

#include <cmath>

namespace kl {

namespace {

using detail::readError;

std::vector<float> parseTextRow(std::string_view line, const std::string& path, size_t lineNumber)
{
    std::vector<float> row;
    size_t at = 0;
    while (true) {
        at = line.find_first_not_of(",; \t\r\f\v", at);
        if (at == std::string_view::npos) return row;
        const size_t end = std::min(line.find_first_of(",; \t\r\f\v", at), line.size());
        const std::string_view field = line.substr(at, end - at);
        const std::optional<double> value = detail::parseNumber(field);
        const std::string where = "line " + std::to_string(lineNumber) + ": '" + std::string(field) + "'";
        if (!value) throw readError(path, where + " is not a number");
        if (!std::isfinite(float(*value))) throw readError(path, where + " is not a finite float");
        row.push_back(float(*value));
        at = end;
    }
}

cv::Mat loadTextKernel(const std::string& path)
{
    const std::string text = detail::readWholeFile(path);
    std::vector<std::vector<float>> rows;
    size_t lineNumber = 0;
    for (size_t start = 0; start < text.size();) {
        const size_t end = std::min(text.find('\n', start), text.size());
        std::string_view line = std::string_view(text).substr(start, end - start);
        start = end + 1;
        ++lineNumber;
        line = line.substr(0, line.find('#'));
        std::vector<float> row = parseTextRow(line, path, lineNumber);
        if (row.empty()) continue;
        if (!rows.empty() && row.size() != rows.front().size())
            throw readError(path, "line " + std::to_string(lineNumber) + " has " + std::to_string(row.size())
                                      + " numbers, the first row " + std::to_string(rows.front().size()));
        rows.push_back(std::move(row));
    }
    if (rows.empty()) throw readError(path, "no numbers in the file");
    cv::Mat kernel(int(rows.size()), int(rows.front().size()), CV_32F);
    for (int r = 0; r < kernel.rows; ++r) std::copy(rows[size_t(r)].begin(), rows[size_t(r)].end(), kernel.ptr<float>(r));
    return kernel;
}

// The data goes through the signal reader (a (rows, cols) array loads as cols channels of rows
// frames); the header is checked here to refuse integer arrays, which the signal reader would
// scale to [-1, 1), and to lay a 1-D array out as a row.
cv::Mat loadNpyKernel(const std::string& path)
{
    const std::string bytes = detail::readWholeFile(path);
    const std::string_view header = detail::readNpyHeader(bytes, path).text;
    const std::string_view descr = detail::npyHeaderValue(header, "descr", path);
    if (descr.size() >= 2 && (descr[1] == 'i' || descr[1] == 'u'))
        throw readError(path, "integer .npy kernels are not supported; save the taps as float32 or float64");
    const size_t dimensions = detail::npyShape(detail::npyHeaderValue(header, "shape", path), path).size();
    SignalLoadOptions options;
    options.sampleRate = 1.0;  // unused: the signal reader insists on a rate
    const Signal columns = loadSignal(path, options);
    cv::Mat kernel(int(columns.frames), columns.channels, CV_32F);
    for (int c = 0; c < columns.channels; ++c)
        for (int r = 0; r < kernel.rows; ++r) {
            const float tap = columns.channel(c)[r];
            if (!std::isfinite(tap))
                throw readError(path, "element (" + std::to_string(r) + ", " + std::to_string(c) + ") is not finite");
            kernel.at<float>(r, c) = tap;
        }
    return dimensions == 1 ? kernel.reshape(1, 1) : kernel;
}

} // namespace

cv::Mat loadKernelFile(const std::string& path)
{
    detail::requireReadableFile(path);
    return detail::lowerExtension(path) == ".npy" ? loadNpyKernel(path) : loadTextKernel(path);
}

} // namespace kl
