#pragma once
// What every reader harness shares: the fuzzer's bytes as a file the reader opens by name
// (the readers take paths, and pick the format by extension or content as they do for users),
// and the one rule of all harnesses: a reader may refuse any input with its documented error,
// and anything else it does (a crash, a hang, another exception, an invalid result) is a bug.
#include "kernellab/error.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace klfuzz {

/// Writes `size` bytes to a file of this process named with `extension` and returns its path.
inline std::string asFile(const uint8_t* data, size_t size, const std::string& extension)
{
    const char* tmp = std::getenv("TMPDIR");
    const std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/kernellab-fuzz-" +
                             std::to_string(::getpid()) + extension;
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (!file || (size > 0 && std::fwrite(data, 1, size, file) != size)) std::abort();
    std::fclose(file);
    return path;
}

/// Runs `read`; the documented refusals (kl::IoError, kl::OutOfMemory) end the input quietly.
template <typename Read> void expectReadOrRefusal(Read read)
{
    try {
        read();
    } catch (const kl::IoError&) {
    } catch (const kl::OutOfMemory&) {
    }
}

/// Aborts (a finding) unless `condition` holds; for checks on what a reader returned.
inline void require(bool condition, const char* what)
{
    if (!condition) {
        std::fprintf(stderr, "reader returned an invalid result: %s\n", what);
        std::abort();
    }
}

} // namespace klfuzz
