#pragma once
// One signal format's harness: the fuzzer's bytes as a file with `extension` through
// kl::loadSignal, whose result must then be a valid signal.
#include "fuzz_support.hpp"
#include "kernellab/signal.hpp"
#include "kernellab/signal_io.hpp"

namespace klfuzz {

inline void loadSignalFile(const uint8_t* data, size_t size, const std::string& extension, int rawChannels = 1)
{
    const std::string path = asFile(data, size, extension);
    kl::SignalLoadOptions options;
    options.sampleRate = 8000;  // for the formats that store none
    options.channels = rawChannels;
    expectReadOrRefusal([&] { kl::validateSignal(kl::loadSignal(path, options), "loaded signal"); });
}

} // namespace klfuzz
