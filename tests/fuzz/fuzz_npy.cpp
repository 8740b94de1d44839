// NumPy .npy signals (kl::loadSignal): signature, version, header dict, dtype, shape, data size.
#include "fuzz_signal_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    klfuzz::loadSignalFile(data, size, ".npy");
    return 0;
}
