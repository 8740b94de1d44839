// Raw float32 signals (kl::loadSignal): the first byte gives the channel count (1-8, and 0,
// which must be refused), the rest is the file.
#include "fuzz_signal_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1) return 0;
    klfuzz::loadSignalFile(data + 1, size - 1, ".f32", data[0] % 9);
    return 0;
}
