#pragma once
// NumPy .npy files (internal to core): the signature, the header a reader checks and a writer
// puts before the data, and the little-endian stores the format's '<' types need.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kl::detail {

/// The signature every .npy file starts with.
const std::string& npyMagic();

/// The bytes of an .npy file (format 1.0) before its data: signature, version, header length and
/// the header for a C-order array of `shape` elements of NumPy type `descr` ("<f4", "|u1" ...),
/// padded with spaces so that the data starts 64-byte aligned, as NumPy writes it.
std::string npyPrefix(std::string_view descr, const std::vector<uint64_t>& shape);

/// The header of the .npy file whose bytes are `bytes` (signature, version 1-3 and length
/// checked; kl::IoError naming `path` otherwise) and where its data starts.
struct NpyHeader {
    std::string_view text;  ///< the Python dict literal, a view into `bytes`
    size_t dataStart = 0;
};
NpyHeader readNpyHeader(const std::string& bytes, const std::string& path);

/// The value of `key` in the header's dict literal: a quoted string (without the quotes), a
/// tuple (with its parentheses) or a bare word. kl::IoError naming `path` when it is missing.
std::string_view npyHeaderValue(std::string_view header, std::string_view key, const std::string& path);
/// The dimensions of a shape tuple such as "(3,)" or "(480, 640)".
std::vector<uint64_t> npyShape(std::string_view tuple, const std::string& path);

/// Appends the low `size` bytes of `value`, least significant first.
void appendLittleEndian(std::string& out, uint64_t value, size_t size);

} // namespace kl::detail
