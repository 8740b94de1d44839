#pragma once
// NumPy .npy files (internal to core): the signature, the prefix a writer puts before the
// data, and the little-endian stores the format's '<' types need.
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

/// Appends the low `size` bytes of `value`, least significant first.
void appendLittleEndian(std::string& out, uint64_t value, size_t size);

} // namespace kl::detail
