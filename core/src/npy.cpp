#include "npy.hpp"

namespace kl::detail {

const std::string& npyMagic()
{
    static const std::string magic("\x93NUMPY", 6);
    return magic;
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
