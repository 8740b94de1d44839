// WAV, FLAC and OGG through libsndfile (kl::loadSignal): the first byte picks the extension.
#include "fuzz_signal_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1) return 0;
    static const char* const extensions[] = {".wav", ".flac", ".ogg"};
    klfuzz::loadSignalFile(data + 1, size - 1, extensions[data[0] % 3]);
    return 0;
}
