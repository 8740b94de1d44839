#include "npy.hpp"

#include "file_util.hpp"
#include "text.hpp"

#include <charconv>

namespace kl::detail {

const std::string& npyMagic()
{
    static const std::string magic("\x93NUMPY", 6);
    return magic;
}

NpyHeader readNpyHeader(const std::string& bytes, const std::string& path)
{
    if (bytes.size() < 10 || bytes.compare(0, npyMagic().size(), npyMagic()) != 0)
        throw readError(path, "not a NumPy .npy file (no \\x93NUMPY signature)");
    const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
    const int major = data[6];
    if (major < 1 || major > 3) throw readError(path, "unsupported .npy format version " + std::to_string(major));
    const size_t lengthSize = major == 1 ? 2 : 4;
    const size_t headerStart = 8 + lengthSize;
    if (bytes.size() < headerStart) throw readError(path, "the .npy header is truncated");
    size_t headerLength = 0;
    for (size_t i = 0; i < lengthSize; ++i) headerLength |= size_t(data[8 + i]) << (8 * i);
    if (headerLength > bytes.size() - headerStart) throw readError(path, "the .npy header is truncated");
    return {std::string_view(bytes).substr(headerStart, headerLength), headerStart + headerLength};
}

std::string_view npyHeaderValue(std::string_view header, std::string_view key, const std::string& path)
{
    size_t at = std::string_view::npos;
    for (const char quote : {'\'', '"'}) {
        const std::string quotedKey = quote + std::string(key) + quote;
        if ((at = header.find(quotedKey)) != std::string_view::npos) {
            at += quotedKey.size();
            break;
        }
    }
    if (at == std::string_view::npos) throw readError(path, "the .npy header has no '" + std::string(key) + "'");
    const size_t colon = header.find(':', at);
    const size_t start = header.find_first_not_of(" ", colon == std::string_view::npos ? at : colon + 1);
    if (colon == std::string_view::npos || start == std::string_view::npos)
        throw readError(path, "the .npy header is malformed near '" + std::string(key) + "'");
    const char first = header[start];
    if (first == '\'' || first == '"') return header.substr(start + 1, header.find(first, start + 1) - start - 1);
    const size_t end = first == '(' ? header.find(')', start) + 1 : header.find_first_of(",}", start);
    return trimmed(header.substr(start, end - start));
}

std::vector<uint64_t> npyShape(std::string_view tuple, const std::string& path)
{
    std::vector<uint64_t> dims;
    if (tuple.size() < 2 || tuple.front() != '(' || tuple.back() != ')')
        throw readError(path, "the .npy shape '" + std::string(tuple) + "' is malformed");
    for (std::string_view field : splitFields(tuple.substr(1, tuple.size() - 2))) {
        if (field.empty()) continue;  // "(N,)"
        uint64_t dim = 0;
        const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), dim);
        if (error != std::errc() || end != field.data() + field.size())
            throw readError(path, "the .npy shape '" + std::string(tuple) + "' is malformed");
        dims.push_back(dim);
    }
    return dims;
}

std::string npyPrefix(std::string_view descr, const std::vector<uint64_t>& shape)
{
    std::string dimensions;
    for (uint64_t dimension : shape) dimensions += (dimensions.empty() ? "" : ", ") + std::to_string(dimension);
    if (shape.size() == 1) dimensions += ',';  // Python's one-element tuple
    std::string header =
        "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" + dimensions + "), }";
    const size_t prefixSize = npyMagic().size() + 4;  // signature, version 1.0, 16-bit header length
    header.append(63 - (prefixSize + header.size()) % 64, ' ');
    header += '\n';

    std::string bytes = npyMagic() + '\x01' + '\x00';
    appendLittleEndian(bytes, header.size(), 2);
    return bytes + header;
}

void appendLittleEndian(std::string& out, uint64_t value, size_t size)
{
    for (size_t i = 0; i < size; ++i) out.push_back(char((value >> (8 * i)) & 0xFF));
}

} // namespace kl::detail
