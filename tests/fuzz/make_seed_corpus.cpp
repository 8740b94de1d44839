// Writes the seed corpus in tests/fuzz/corpus/: small valid files of every format each harness
// reads, made by the project's own writers (and libsndfile for FLAC and OGG, which KernelLab only
// reads), with the selector byte a harness expects in front. Usage: make_seed_corpus DIR
#include "kernellab/error.hpp"
#include "kernellab/image_io.hpp"
#include "kernellab/signal.hpp"
#include "kernellab/signal_io.hpp"

#include <opencv2/core.hpp>
#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::string readBytes(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

void writeSeed(const fs::path& path, const std::string& bytes)
{
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
}

kl::Signal chirp(size_t frames, int channels)
{
    kl::Signal s(channels, frames, 8000);
    for (int c = 0; c < channels; ++c)
        for (size_t i = 0; i < frames; ++i) s.channel(c)[i] = float(std::sin(0.001 * double(i * i) + c));
    return s;
}

void writeWithSndfile(const fs::path& path, int format, const kl::Signal& signal)
{
    SF_INFO info{};
    info.samplerate = int(signal.sampleRate);
    info.channels = signal.channels;
    info.format = format;
    SNDFILE* file = sf_open(path.c_str(), SFM_WRITE, &info);
    if (!file) throw std::runtime_error(std::string("libsndfile: ") + sf_strerror(nullptr));
    const std::vector<float> interleaved = kl::toInterleaved(signal);
    sf_writef_float(file, interleaved.data(), sf_count_t(signal.frames));
    sf_close(file);
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_seed_corpus DIR\n");
        return 2;
    }
    const fs::path out = argv[1];
    const fs::path scratch = fs::temp_directory_path() / "kernellab-seed-corpus";
    fs::create_directories(scratch);
    cv::RNG rng(7);

    // image: selector byte = index of the extension in kl::imageExtensions().
    const std::vector<std::string>& extensions = kl::imageExtensions();
    for (size_t e = 0; e < extensions.size(); ++e)
        for (int depth : {CV_8U, CV_16U, CV_32F})
            for (int channels : {1, 3, 4}) {
                cv::Mat image(5, 7, CV_MAKETYPE(depth, channels));
                rng.fill(image, cv::RNG::UNIFORM, 0, depth == CV_32F ? 1 : 200);
                const fs::path file = scratch / ("seed" + extensions[e]);
                try {
                    kl::saveImage(file.string(), image);
                } catch (const kl::IoError&) {
                    continue;  // a format that cannot store this depth and channel count
                }
                const std::string name = extensions[e].substr(1) + "_" + std::to_string(CV_ELEM_SIZE1(depth) * 8)
                                         + "x" + std::to_string(channels);
                writeSeed(out / "image" / name, std::string(1, char(e)) + readBytes(file));
            }

    // audio: selector 0 .wav, 1 .flac, 2 .ogg (fuzz_audio.cpp).
    kl::saveSignal((scratch / "seed.wav").string(), chirp(300, 2));
    writeSeed(out / "audio" / "wav_float_2ch", std::string(1, '\0') + readBytes(scratch / "seed.wav"));
    writeWithSndfile(scratch / "pcm16.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_16, chirp(200, 1));
    writeSeed(out / "audio" / "wav_pcm16_1ch", std::string(1, '\0') + readBytes(scratch / "pcm16.wav"));
    writeWithSndfile(scratch / "seed.flac", SF_FORMAT_FLAC | SF_FORMAT_PCM_16, chirp(300, 2));
    writeSeed(out / "audio" / "flac_2ch", std::string(1, '\1') + readBytes(scratch / "seed.flac"));
    writeWithSndfile(scratch / "seed.ogg", SF_FORMAT_OGG | SF_FORMAT_VORBIS, chirp(2000, 1));
    writeSeed(out / "audio" / "ogg_1ch", std::string(1, '\2') + readBytes(scratch / "seed.ogg"));

    // csv, npy: the writers' own files, and hand-written variants of what users write.
    kl::saveSignal((scratch / "seed.csv").string(), chirp(20, 3));
    writeSeed(out / "csv" / "written_3ch", readBytes(scratch / "seed.csv"));
    writeSeed(out / "csv" / "header_comments", "# rate = 360 Hz\ntime,value\n# note\n0.5, -1\n1e-3,+2.5\n\n3,4\n");
    writeSeed(out / "csv" / "one_column", "1\n2\n3.25\n-4e2\n");
    for (int channels : {1, 2}) {
        kl::saveSignal((scratch / "seed.npy").string(), chirp(16, channels));
        writeSeed(out / "npy" / ("f4_" + std::to_string(channels) + "ch"), readBytes(scratch / "seed.npy"));
    }
    const cv::Mat f32 = cv::Mat::ones(4, 3, CV_32F);
    kl::saveImageNpy((scratch / "matrix.npy").string(), f32);
    writeSeed(out / "npy" / "f4_4x3", readBytes(scratch / "matrix.npy"));

    // raw: selector = channels (fuzz_raw.cpp), then float32 samples.
    const std::vector<float> samples = kl::toInterleaved(chirp(12, 2));
    const std::string rawBytes(reinterpret_cast<const char*>(samples.data()), samples.size() * sizeof(float));
    writeSeed(out / "raw" / "f32_2ch", std::string(1, '\2') + rawBytes);
    writeSeed(out / "raw" / "f32_1ch", std::string(1, '\1') + rawBytes);

    // kernel_file: selector 0 text, 1 .npy (fuzz_kernel_file.cpp).
    writeSeed(out / "kernel_file" / "text_3x5", std::string(1, '\0') + "# a 3x5 blur\n1, 2, 3, 2, 1\n2 4 6 4 2\n1;2;3;2;1\n");
    writeSeed(out / "kernel_file" / "text_row", std::string(1, '\0') + "-1 0 1e0 # taps\n");
    writeSeed(out / "kernel_file" / "npy_4x3", std::string(1, '\1') + readBytes(scratch / "matrix.npy"));
    writeSeed(out / "kernel_file" / "npy_row", std::string(1, '\1') + readBytes(scratch / "seed.npy"));

    fs::remove_all(scratch);
    return 0;
}
