// CSV signals (kl::loadSignal): header line, comments, the rate comment, ragged rows, numbers.
#include "fuzz_signal_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    klfuzz::loadSignalFile(data, size, ".csv");
    return 0;
}
