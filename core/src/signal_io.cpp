#include "kernellab/signal_io.hpp"

#include "file_util.hpp"
#include "npy.hpp"
#include "text.hpp"
#include "kernellab/image.hpp"

#include <sndfile.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>

namespace kl {

namespace {

using detail::readError;
using detail::writeError;
using detail::parseNumber;
using detail::splitFields;
using detail::trimmed;

template <typename Number>
void appendNumber(std::string& out, Number value)
{
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);  // shortest exact form
    out.append(buffer, result.ptr);
}

// ---- binary samples (.npy, raw) -------------------------------------------------------

// The size tells the kind: 2 bytes int16, 4 float32, 8 float64.
struct SampleType {
    std::string_view npyDescr;
    size_t size;
    bool bigEndian;
};

constexpr SampleType rawFloat32{"<f4", 4, false};
constexpr SampleType npySampleTypes[] = {
    rawFloat32, {"<f8", 8, false}, {"<i2", 2, false}, {">f4", 4, true}, {">f8", 8, true}, {">i2", 2, true},
};

uint64_t loadUnsigned(const unsigned char* bytes, size_t size, bool bigEndian)
{
    uint64_t value = 0;
    for (size_t i = 0; i < size; ++i) value |= uint64_t(bytes[bigEndian ? size - 1 - i : i]) << (8 * i);
    return value;
}

float decodeSample(const unsigned char* bytes, const SampleType& type)
{
    const uint64_t bits = loadUnsigned(bytes, type.size, type.bigEndian);
    switch (type.size) {
    case 2: return float(int16_t(uint16_t(bits))) / 32768.f;  // the scale libsndfile uses for 16-bit PCM
    case 4: {
        float value;
        const uint32_t narrow = uint32_t(bits);
        std::memcpy(&value, &narrow, sizeof value);
        return value;
    }
    default: {
        double value;
        std::memcpy(&value, &bits, sizeof value);
        return float(value);
    }
    }
}

std::vector<float> decodeSamples(const std::string& bytes, size_t offset, size_t count, const SampleType& type)
{
    std::vector<float> samples(count);
    const auto* data = reinterpret_cast<const unsigned char*>(bytes.data()) + offset;
    for (size_t i = 0; i < count; ++i) samples[i] = decodeSample(data + i * type.size, type);
    return samples;
}

// ---- libsndfile: WAV, FLAC, OGG ---------------------------------------------------------

using SoundFile = std::unique_ptr<SNDFILE, int (*)(SNDFILE*)>;

Signal loadWithSndfile(const std::string& path, const SignalLoadOptions&)
{
    SF_INFO info{};
    SoundFile file(sf_open(path.c_str(), SFM_READ, &info), sf_close);
    if (!file) throw readError(path, std::string("not a readable audio file: ") + sf_strerror(nullptr));
    if (info.frames <= 0) throw readError(path, "the file holds no audio frames (0 samples)");
    const size_t frames = size_t(info.frames);
    const size_t channels = size_t(info.channels);
    ensureMemoryAvailable(2 * frames * channels * sizeof(float), "loading '" + path + "'");
    // Read in blocks, so memory follows the samples actually decoded: a header (FLAC's STREAMINFO)
    // may claim billions of frames in a file of a few bytes.
    const sf_count_t blockFrames = sf_count_t(std::max<size_t>(1, (size_t(1) << 20) / channels));
    std::vector<float> block(size_t(blockFrames) * channels);
    std::vector<float> interleaved;
    sf_count_t read = 0;
    while (read < info.frames) {
        // sf_readf_float scales integer PCM to [-1, 1].
        const sf_count_t got = sf_readf_float(file.get(), block.data(), std::min(blockFrames, info.frames - read));
        if (got <= 0) break;
        interleaved.insert(interleaved.end(), block.begin(), block.begin() + std::ptrdiff_t(size_t(got) * channels));
        read += got;
    }
    if (read != info.frames)
        throw readError(path, "the audio data ends early (" + std::to_string(read) + " of "
                                  + std::to_string(info.frames) + " frames)");
    return fromInterleaved(interleaved.data(), frames, info.channels, info.samplerate);
}

void saveWav(const std::string& path, const Signal& signal)
{
    if (signal.sampleRate != std::floor(signal.sampleRate) || signal.sampleRate > std::numeric_limits<int>::max()) {
        std::string rate;
        appendNumber(rate, signal.sampleRate);
        throw writeError(path, "WAV stores whole-number sample rates, not " + rate + " Hz; use .csv");
    }
    const std::vector<float> interleaved = toInterleaved(signal);
    detail::writeAtomically(path, [&](const std::string& temporaryPath) {
        SF_INFO info{};
        info.samplerate = int(signal.sampleRate);
        info.channels = signal.channels;
        info.format = SF_FORMAT_WAV | SF_FORMAT_FLOAT;
        SoundFile file(sf_open(temporaryPath.c_str(), SFM_WRITE, &info), sf_close);
        if (!file) throw writeError(path, sf_strerror(nullptr));
        if (sf_writef_float(file.get(), interleaved.data(), sf_count_t(signal.frames)) != sf_count_t(signal.frames))
            throw writeError(path, sf_strerror(file.get()));
        if (sf_close(file.release()) != 0) throw writeError(path, "closing the WAV file failed");
    });
}

// ---- CSV -----------------------------------------------------------------------------------

// "# rate=<Hz>" (spaces allowed around '=', an optional "Hz" after the number).
std::optional<double> rateComment(std::string_view comment, size_t lineNumber, const std::string& path)
{
    comment = trimmed(comment.substr(1));
    if (comment.substr(0, 4) != "rate") return std::nullopt;
    comment = trimmed(comment.substr(4));
    if (comment.empty() || comment.front() != '=') return std::nullopt;
    comment = trimmed(comment.substr(1));
    if (comment.size() >= 2 && comment.substr(comment.size() - 2) == "Hz") comment.remove_suffix(2);
    const std::optional<double> rate = parseNumber(comment);
    if (!rate || !(*rate > 0) || !std::isfinite(*rate))
        throw readError(path, "line " + std::to_string(lineNumber) + ": the rate comment needs a positive number of Hz");
    return rate;
}

Signal loadCsv(const std::string& path, const SignalLoadOptions&)
{
    const std::string text = detail::readWholeFile(path);
    double rate = 0;
    std::vector<float> interleaved;
    size_t columns = 0;
    size_t rows = 0;
    size_t lineNumber = 0;
    bool headerAllowed = true;
    for (size_t start = 0; start < text.size();) {
        const size_t end = std::min(text.find('\n', start), text.size());
        const std::string_view line = trimmed(std::string_view(text).substr(start, end - start));
        start = end + 1;
        ++lineNumber;
        if (line.empty()) continue;
        if (line.front() == '#') {
            if (const std::optional<double> commentRate = rateComment(line, lineNumber, path)) rate = *commentRate;
            continue;
        }
        const std::vector<std::string_view> fields = splitFields(line);
        const std::string where = "line " + std::to_string(lineNumber);
        if (columns == 0) columns = fields.size();
        if (fields.size() != columns)
            throw readError(path, where + " has " + std::to_string(fields.size()) + " columns, expected "
                                      + std::to_string(columns));
        // The first row is a header when none of its fields is a number.
        const bool isHeader = headerAllowed && std::none_of(fields.begin(), fields.end(), [](std::string_view f) {
            return parseNumber(f).has_value();
        });
        headerAllowed = false;
        if (isHeader) continue;
        for (size_t column = 0; column < columns; ++column) {
            const std::optional<double> value = parseNumber(fields[column]);
            if (!value || !std::isfinite(float(*value)))
                throw readError(path, where + ", column " + std::to_string(column + 1) + ": '"
                                          + std::string(fields[column]) + "' is not a finite number");
            interleaved.push_back(float(*value));
        }
        ++rows;
    }
    if (rows == 0) throw readError(path, "it has no data rows");
    return fromInterleaved(interleaved.data(), rows, int(columns), rate);
}

void saveCsv(const std::string& path, const Signal& signal)
{
    std::string text = "# rate=";
    appendNumber(text, signal.sampleRate);
    text += "\n";
    for (int c = 0; c < signal.channels; ++c) text += (c ? ",ch" : "ch") + std::to_string(c + 1);
    text += "\n";
    for (size_t frame = 0; frame < signal.frames; ++frame) {
        for (int c = 0; c < signal.channels; ++c) {
            if (c) text += ',';
            appendNumber(text, signal.channel(c)[frame]);
        }
        text += '\n';
    }
    detail::writeBytesAtomically(path, text);
}

// ---- NumPy .npy -------------------------------------------------------------------------

Signal loadNpy(const std::string& path, const SignalLoadOptions&)
{
    const std::string bytes = detail::readWholeFile(path);
    const auto [header, dataStart] = detail::readNpyHeader(bytes, path);
    const std::string_view descr = detail::npyHeaderValue(header, "descr", path);
    const auto type = std::find_if(std::begin(npySampleTypes), std::end(npySampleTypes),
                                   [&](const SampleType& t) { return t.npyDescr == descr; });
    if (type == std::end(npySampleTypes))
        throw readError(path, "unsupported .npy dtype '" + std::string(descr)
                                  + "' (supported: <f4 <f8 <i2 and big-endian >f4 >f8 >i2)");
    if (detail::npyHeaderValue(header, "fortran_order", path) != "False")
        throw readError(path, "Fortran-order .npy arrays are not supported; save a C-order array "
                              "(numpy.ascontiguousarray)");
    const std::string_view shapeText = detail::npyHeaderValue(header, "shape", path);
    const std::vector<uint64_t> shape = detail::npyShape(shapeText, path);
    if (shape.empty() || shape.size() > 2)
        throw readError(path, "the .npy shape " + std::string(shapeText) + " is not (frames,) or (frames, channels)");
    const uint64_t frames = shape[0];
    const uint64_t channels = shape.size() == 2 ? shape[1] : 1;
    if (frames == 0 || channels == 0)
        throw readError(path, "the .npy array " + std::string(shapeText) + " holds no samples");
    if (channels > uint64_t(std::numeric_limits<int>::max()))
        throw readError(path, "the .npy shape " + std::string(shapeText) + " has too many channels");

    const uint64_t available = bytes.size() - dataStart;
    const uint64_t largest = std::numeric_limits<uint64_t>::max();
    const bool overflows = channels > largest / type->size || frames > largest / (channels * type->size);
    const uint64_t needed = overflows ? 0 : frames * channels * type->size;
    if (overflows || needed != available)
        throw readError(path, "the data is " + std::to_string(available) + " bytes, but shape " + std::string(shapeText)
                                  + " of " + std::string(descr) + " needs "
                                  + (overflows ? "more than 2^64" : std::to_string(needed)) + " bytes");
    const std::vector<float> interleaved = decodeSamples(bytes, dataStart, size_t(frames * channels), *type);
    return fromInterleaved(interleaved.data(), size_t(frames), int(channels), 0.0);
}

void saveNpy(const std::string& path, const Signal& signal)
{
    std::vector<uint64_t> shape = {signal.frames};
    if (signal.channels > 1) shape.push_back(uint64_t(signal.channels));
    std::string bytes = detail::npyPrefix("<f4", shape);
    bytes.reserve(bytes.size() + signal.data.size() * 4);
    for (float sample : toInterleaved(signal)) {
        uint32_t bits;
        std::memcpy(&bits, &sample, sizeof bits);
        detail::appendLittleEndian(bytes, bits, 4);
    }
    detail::writeBytesAtomically(path, bytes);
}

// ---- raw float32 --------------------------------------------------------------------------

Signal loadRaw(const std::string& path, const SignalLoadOptions& options)
{
    if (options.channels < 1) throw readError(path, "raw files need a channel count of at least 1");
    const std::string bytes = detail::readWholeFile(path);
    const size_t frameSize = rawFloat32.size * size_t(options.channels);
    if (bytes.size() % frameSize != 0)
        throw readError(path, "its " + std::to_string(bytes.size()) + " bytes are not a whole number of frames of "
                                  + std::to_string(options.channels) + " float32 samples");
    const size_t frames = bytes.size() / frameSize;
    const std::vector<float> interleaved = decodeSamples(bytes, 0, frames * size_t(options.channels), rawFloat32);
    return fromInterleaved(interleaved.data(), frames, options.channels, 0.0);
}

// ---- dispatch --------------------------------------------------------------------------------

struct SignalFormat {
    std::string extension;
    Signal (*load)(const std::string&, const SignalLoadOptions&);
    void (*save)(const std::string&, const Signal&);  // null: read only
    std::string_view missingRate;                      // why the file may carry no rate
};

const std::vector<SignalFormat>& signalFormats()
{
    static const std::vector<SignalFormat> formats = {
        {".wav", loadWithSndfile, saveWav, "the file declares none"},
        {".flac", loadWithSndfile, nullptr, "the file declares none"},
        {".ogg", loadWithSndfile, nullptr, "the file declares none"},
        {".csv", loadCsv, saveCsv, "no '# rate=<Hz>' comment in the file"},
        {".npy", loadNpy, saveNpy, ".npy files store none"},
        {".f32", loadRaw, nullptr, "raw files store none"},
        {".raw", loadRaw, nullptr, "raw files store none"},
    };
    return formats;
}

const SignalFormat* signalFormatFor(const std::string& path)
{
    const std::string extension = detail::lowerExtension(path);
    const auto format = std::find_if(signalFormats().begin(), signalFormats().end(),
                                     [&](const SignalFormat& f) { return f.extension == extension; });
    return format == signalFormats().end() ? nullptr : &*format;
}

std::string extensionList(bool writableOnly)
{
    std::string list;
    for (const SignalFormat& format : signalFormats())
        if (format.save || !writableOnly) list += (list.empty() ? "" : " ") + format.extension;
    return list;
}

} // namespace

Signal loadSignal(const std::string& path, const SignalLoadOptions& options)
{
    detail::requireReadableFile(path);
    const SignalFormat* format = signalFormatFor(path);
    if (!format)
        throw readError(path, "unknown signal extension '" + detail::lowerExtension(path) + "' (use one of "
                                  + extensionList(false) + ")");
    Signal signal = format->load(path, options);
    if (!(signal.sampleRate > 0)) {
        if (!(options.sampleRate > 0) || !std::isfinite(options.sampleRate))
            throw readError(path, "sample rate unknown (" + std::string(format->missingRate) + "): pass --rate <Hz>");
        signal.sampleRate = options.sampleRate;
    }
    return signal;
}

void saveSignal(const std::string& path, const Signal& signal)
{
    validateSignal(signal, "signal to save as '" + path + "'");
    const SignalFormat* format = signalFormatFor(path);
    if (!format || !format->save)
        throw writeError(path, "signals can be saved as " + extensionList(true) + ", not '"
                                   + detail::lowerExtension(path) + "'");
    format->save(path, signal);
}

const std::vector<std::string>& signalExtensions()
{
    static const std::vector<std::string> extensions = [] {
        std::vector<std::string> all;
        for (const SignalFormat& format : signalFormats()) all.push_back(format.extension);
        return all;
    }();
    return extensions;
}

bool isSignalFile(const std::string& path)
{
    return signalFormatFor(path) != nullptr;
}

} // namespace kl
