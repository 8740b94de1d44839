#pragma once
// Internal helpers shared by image_io.cpp and signal_io.cpp: user-facing I/O errors,
// up-front checks on input files, and saves that never leave a half-written file.
#include "kernellab/error.hpp"

#include <functional>
#include <string>

namespace kl::detail {

/// "cannot read '<path>': <reason>"
IoError readError(const std::string& path, const std::string& reason);
/// "cannot write '<path>': <reason>"
IoError writeError(const std::string& path, const std::string& reason);

/// Throws readError unless `path` is an existing, readable, non-empty regular file.
void requireReadableFile(const std::string& path);
/// The whole file, after requireReadableFile and a memory check.
std::string readWholeFile(const std::string& path);

/// Lower-case extension with the dot (".png"), or "" when there is none.
std::string lowerExtension(const std::string& path);

/// Calls `writeTemporary(temporaryPath)` on a fresh file in the directory of `path`
/// whose name keeps the extension of `path`, then renames it over `path`. When anything
/// throws, the temporary file is removed and `path` is left as it was.
void writeAtomically(const std::string& path,
                     const std::function<void(const std::string& temporaryPath)>& writeTemporary);
/// writeAtomically with `bytes` as the whole file.
void writeBytesAtomically(const std::string& path, const std::string& bytes);

} // namespace kl::detail
