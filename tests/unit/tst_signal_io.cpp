// Signal files: WAV/CSV/.npy round trips, FLAC/OGG written with libsndfile, .npy of every
// dtype written byte by byte, raw float32, the sample signals, and bad input giving a
// kl::IoError that names the file.
#include "kernellab/error.hpp"
#include "kernellab/signal_io.hpp"
#include "test_support.hpp"

#include <sndfile.h>

#include <QtTest>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

namespace fs = std::filesystem;

namespace {

// Creates the bad input at the given path.
using MakeInput = std::function<void(const std::string& path)>;

using kltest::expectIoError;
using kltest::readFile;
using kltest::writeFile;

bool sameSignal(const kl::Signal& a, const kl::Signal& b, float tolerance)
{
    if (a.channels != b.channels || a.frames != b.frames || a.sampleRate != b.sampleRate) return false;
    for (size_t i = 0; i < a.data.size(); ++i)
        if (!(std::fabs(a.data[i] - b.data[i]) <= tolerance)) return false;
    return true;
}

kl::Signal sine(size_t frames, int channels, double rate)
{
    kl::Signal s(channels, frames, rate);
    for (int c = 0; c < channels; ++c)
        for (size_t f = 0; f < frames; ++f)
            s.channel(c)[f] = float(0.5 * std::sin(2 * M_PI * 440.0 * (c + 1) * double(f) / rate));
    return s;
}

// Writes with libsndfile directly, so FLAC/OGG loading is checked against an independent writer.
void writeWithSndfile(const std::string& path, const kl::Signal& signal, int format)
{
    SF_INFO info{};
    info.samplerate = int(signal.sampleRate);
    info.channels = signal.channels;
    info.format = format;
    SNDFILE* file = sf_open(path.c_str(), SFM_WRITE, &info);
    QVERIFY2(file, sf_strerror(nullptr));
    const std::vector<float> interleaved = kl::toInterleaved(signal);
    QCOMPARE(sf_writef_float(file, interleaved.data(), sf_count_t(signal.frames)), sf_count_t(signal.frames));
    QCOMPARE(sf_close(file), 0);
}

// ---- .npy written by hand ----------------------------------------------------------------

std::string encodeSample(double value, const std::string& descr)
{
    const size_t size = std::stoul(descr.substr(2));
    uint64_t bits = 0;
    if (descr[1] == 'i') {
        bits = uint16_t(int16_t(value));
    } else if (size == 4) {
        const float narrow = float(value);
        uint32_t word;
        std::memcpy(&word, &narrow, sizeof word);
        bits = word;
    } else {
        std::memcpy(&bits, &value, sizeof bits);
    }
    std::string bytes;
    for (size_t i = 0; i < size; ++i) bytes.push_back(char((bits >> (8 * i)) & 0xFF));
    if (descr[0] == '>') std::reverse(bytes.begin(), bytes.end());
    return bytes;
}

std::string npyFile(const std::string& descr, const std::string& shape, const std::vector<double>& values,
                    int version = 1, const std::string& fortranOrder = "False")
{
    std::string header = "{'descr': '" + descr + "', 'fortran_order': " + fortranOrder + ", 'shape': " + shape + ", }";
    header += '\n';
    std::string file = std::string("\x93NUMPY", 6) + char(version) + '\0';
    const size_t lengthBytes = version == 1 ? 2 : 4;
    for (size_t i = 0; i < lengthBytes; ++i) file.push_back(char((header.size() >> (8 * i)) & 0xFF));
    file += header;
    for (double value : values) file += encodeSample(value, descr);
    return file;
}

} // namespace

class TestSignalIo : public QObject {
    Q_OBJECT

private slots:
    void wavRoundTripIsExact_data();
    void wavRoundTripIsExact();
    void flacAndOggLoad_data();
    void flacAndOggLoad();
    void csvRoundTripIsExact_data();
    void csvRoundTripIsExact();
    void csvVariantsLoad_data();
    void csvVariantsLoad();
    void npyRoundTripIsExact_data();
    void npyRoundTripIsExact();
    void npyEveryDtypeLoads_data();
    void npyEveryDtypeLoads();
    void rawFloat32Loads();
    void sampleSignalsLoad_data();
    void sampleSignalsLoad();
    void sampleEcgCsvMatchesNpy();
    void badInputThrowsIoError_data();
    void badInputThrowsIoError();
    void failedSaveLeavesNoFile_data();
    void failedSaveLeavesNoFile();
    void extensionsAreRecognised();
    void claimedFramesAreNotAllocated();
};

void TestSignalIo::wavRoundTripIsExact_data()
{
    QTest::addColumn<int>("channels");
    QTest::addColumn<double>("rate");
    QTest::newRow("mono 8 kHz") << 1 << 8000.0;
    QTest::newRow("stereo 44.1 kHz") << 2 << 44100.0;
    QTest::newRow("5 channels 48 kHz") << 5 << 48000.0;
}

void TestSignalIo::wavRoundTripIsExact()
{
    QFETCH(int, channels);
    QFETCH(double, rate);
    const kl::Signal original = kltest::randomSignal(1001, channels, rate, 11);
    const std::string path = kltest::tempDir() + "/sound.wav";
    kl::saveSignal(path, original);
    const kl::Signal loaded = kl::loadSignal(path);
    QVERIFY2(sameSignal(loaded, original, 0.f), kltest::msg(kl::describeSignal(loaded)));
}

void TestSignalIo::flacAndOggLoad_data()
{
    QTest::addColumn<QString>("extension");
    QTest::addColumn<int>("format");
    QTest::addColumn<float>("tolerance");
    QTest::newRow("flac 16-bit") << ".flac" << int(SF_FORMAT_FLAC | SF_FORMAT_PCM_16) << 1.f / 32768;
    QTest::newRow("ogg vorbis") << ".ogg" << int(SF_FORMAT_OGG | SF_FORMAT_VORBIS) << 0.05f;
}

void TestSignalIo::flacAndOggLoad()
{
    QFETCH(QString, extension);
    QFETCH(int, format);
    QFETCH(float, tolerance);
    const kl::Signal original = sine(4800, 2, 48000);
    const std::string path = kltest::tempDir() + "/sound" + extension.toStdString();
    writeWithSndfile(path, original, format);
    if (QTest::currentTestFailed()) return;
    const kl::Signal loaded = kl::loadSignal(path);
    QVERIFY2(sameSignal(loaded, original, tolerance), kltest::msg(kl::describeSignal(loaded)));
}

void TestSignalIo::csvRoundTripIsExact_data()
{
    QTest::addColumn<int>("channels");
    QTest::newRow("mono") << 1;
    QTest::newRow("3 channels") << 3;
}

void TestSignalIo::csvRoundTripIsExact()
{
    QFETCH(int, channels);
    kl::Signal original = kltest::randomSignal(257, channels, 360.5, 5);
    original.data[0] = 1e-30f;  // tiny and large values need the exponent form
    original.data[1] = -12345.678f;
    const std::string path = kltest::tempDir() + "/table.csv";
    kl::saveSignal(path, original);
    QVERIFY(readFile(path).rfind("# rate=360.5\nch1", 0) == 0);
    QVERIFY2(sameSignal(kl::loadSignal(path), original, 0.f), "CSV values must survive a round trip exactly");
}

void TestSignalIo::csvVariantsLoad_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<double>("optionRate");
    QTest::addColumn<double>("rate");
    QTest::addColumn<int>("channels");
    QTest::addColumn<QVector<float>>("interleaved");
    QTest::newRow("rate comment, no header") << "# rate=100\n1\n-2.5\n3e-1\n" << 0.0 << 100.0 << 1
                                             << QVector<float>{1.f, -2.5f, 0.3f};
    QTest::newRow("header, comments, CRLF, spaces, Hz")
        << "# recorded on the bench\r\nleft, right\r\n# rate = 8000 Hz\r\n 0.5 , -0.25\r\n\r\n+1e-3,2\r\n" << 0.0
        << 8000.0 << 2 << QVector<float>{0.5f, -0.25f, 1e-3f, 2.f};
    QTest::newRow("no rate comment: the option") << "a,b,c\n1,2,3\n" << 250.0 << 250.0 << 3
                                                 << QVector<float>{1.f, 2.f, 3.f};
    QTest::newRow("the file's rate wins") << "#rate=44100\n7\n" << 250.0 << 44100.0 << 1 << QVector<float>{7.f};
}

void TestSignalIo::csvVariantsLoad()
{
    QFETCH(QString, text);
    QFETCH(double, optionRate);
    QFETCH(double, rate);
    QFETCH(int, channels);
    QFETCH(QVector<float>, interleaved);
    const std::string path = kltest::tempDir() + "/variant.csv";
    writeFile(path, text.toStdString());
    kl::SignalLoadOptions options;
    options.sampleRate = optionRate;
    const kl::Signal loaded = kl::loadSignal(path, options);
    QCOMPARE(loaded.sampleRate, rate);
    QCOMPARE(loaded.channels, channels);
    QCOMPARE(kl::toInterleaved(loaded), std::vector<float>(interleaved.begin(), interleaved.end()));
}

void TestSignalIo::npyRoundTripIsExact_data()
{
    QTest::addColumn<int>("channels");
    QTest::addColumn<QString>("shape");
    QTest::newRow("mono") << 1 << "(300,)";
    QTest::newRow("stereo") << 2 << "(300, 2)";
}

void TestSignalIo::npyRoundTripIsExact()
{
    QFETCH(int, channels);
    QFETCH(QString, shape);
    const kl::Signal original = kltest::randomSignal(300, channels, 1000, 3);
    const std::string path = kltest::tempDir() + "/array.npy";
    kl::saveSignal(path, original);

    const std::string bytes = readFile(path);
    const size_t dataStart = 10 + (uint8_t(bytes[8]) | uint8_t(bytes[9]) << 8);
    QCOMPARE(dataStart % 64, size_t(0));
    QCOMPARE(bytes.size(), dataStart + original.data.size() * 4);
    const std::string header = bytes.substr(10, dataStart - 10);
    QVERIFY2(header.find("'descr': '<f4'") != std::string::npos, header.c_str());
    QVERIFY2(header.find("'shape': " + shape.toStdString()) != std::string::npos, header.c_str());

    kl::SignalLoadOptions options;
    options.sampleRate = 1000;
    QVERIFY(sameSignal(kl::loadSignal(path, options), original, 0.f));
}

void TestSignalIo::npyEveryDtypeLoads_data()
{
    QTest::addColumn<QString>("descr");
    QTest::addColumn<int>("version");
    QTest::addColumn<int>("channels");
    const std::vector<std::string> descrs = {"<f4", "<f8", "<i2", ">f4", ">f8", ">i2"};
    for (const std::string& descr : descrs)
        for (int version : {1, 2})
            for (int channels : {1, 2}) {
                const std::string name = descr + " v" + std::to_string(version) + " x" + std::to_string(channels);
                QTest::newRow(name.c_str()) << QString::fromStdString(descr) << version << channels;
            }
}

void TestSignalIo::npyEveryDtypeLoads()
{
    QFETCH(QString, descr);
    QFETCH(int, version);
    QFETCH(int, channels);
    const bool integer = descr.contains('i');
    const std::vector<double> values = integer ? std::vector<double>{-32768, 0, 16384, 32767, -1, 2}
                                               : std::vector<double>{0.5, -0.25, 1.0, -1.0, 0.125, 3.0};
    const std::string shape = channels == 1 ? "(6,)" : "(3, 2)";
    const std::string path = kltest::tempDir() + "/typed.npy";
    writeFile(path, npyFile(descr.toStdString(), shape, values, version));
    kl::SignalLoadOptions options;
    options.sampleRate = 360;
    const kl::Signal loaded = kl::loadSignal(path, options);
    QCOMPARE(loaded.channels, channels);
    QCOMPARE(loaded.frames, size_t(6 / channels));
    QCOMPARE(loaded.sampleRate, 360.0);
    std::vector<float> expected;
    for (double value : values) expected.push_back(float(integer ? value / 32768 : value));
    QCOMPARE(kl::toInterleaved(loaded), expected);
}

void TestSignalIo::rawFloat32Loads()
{
    const kl::Signal original = kltest::randomSignal(100, 3, 2000, 9);
    const std::vector<float> interleaved = kl::toInterleaved(original);
    std::string bytes;
    for (float sample : interleaved) bytes += encodeSample(sample, "<f4");
    const std::string directory = kltest::tempDir();
    for (const char* name : {"/samples.f32", "/samples.raw"}) {
        writeFile(directory + name, bytes);
        kl::SignalLoadOptions options;
        options.sampleRate = 2000;
        options.channels = 3;
        QVERIFY(sameSignal(kl::loadSignal(directory + name, options), original, 0.f));
        options.channels = 7;  // 1200 bytes are not whole frames of 7 samples
        expectIoError([&] { kl::loadSignal(directory + name, options); }, name + 1, "whole number of frames");
    }
    expectIoError([&] { kl::loadSignal(directory + "/samples.f32"); }, "samples.f32", "sample rate unknown");
}

void TestSignalIo::sampleSignalsLoad_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<double>("optionRate");
    QTest::addColumn<qulonglong>("frames");
    QTest::addColumn<int>("channels");
    QTest::addColumn<double>("rate");
    QTest::newRow("speech wav") << "speech_22k.wav" << 0.0 << 151781ull << 1 << 22050.0;
    QTest::newRow("chirp stereo wav") << "chirp_noise_48k_stereo.wav" << 0.0 << 192000ull << 2 << 48000.0;
    QTest::newRow("ecg csv") << "ecg_mitbih208_360hz.csv" << 0.0 << 108000ull << 1 << 360.0;
    QTest::newRow("ecg npy") << "ecg_mitbih208_360hz.npy" << 360.0 << 108000ull << 1 << 360.0;
}

void TestSignalIo::sampleSignalsLoad()
{
    QFETCH(QString, file);
    QFETCH(double, optionRate);
    QFETCH(qulonglong, frames);
    QFETCH(int, channels);
    QFETCH(double, rate);
    kl::SignalLoadOptions options;
    options.sampleRate = optionRate;
    const kl::Signal loaded = kl::loadSignal(kltest::samplePath(file.toStdString()), options);
    QCOMPARE(loaded.frames, size_t(frames));
    QCOMPARE(loaded.channels, channels);
    QCOMPARE(loaded.sampleRate, rate);
    const auto [low, high] = std::minmax_element(loaded.data.begin(), loaded.data.end());
    QVERIFY2(*low < *high && *low >= -5.f && *high <= 5.f, "samples should vary within a plausible range");
}

void TestSignalIo::sampleEcgCsvMatchesNpy()
{
    kl::SignalLoadOptions options;
    options.sampleRate = 360;
    const kl::Signal fromNpy = kl::loadSignal(kltest::samplePath("ecg_mitbih208_360hz.npy"), options);
    const kl::Signal fromCsv = kl::loadSignal(kltest::samplePath("ecg_mitbih208_360hz.csv"));
    QVERIFY(sameSignal(fromCsv, fromNpy, 1e-6f));
}

void TestSignalIo::badInputThrowsIoError_data()
{
    QTest::addColumn<QString>("fileName");
    QTest::addColumn<QString>("reason");
    QTest::addColumn<MakeInput>("make");
    const auto containing = [](const std::string& bytes) -> MakeInput {
        return [=](const std::string& path) { writeFile(path, bytes); };
    };
    const std::vector<double> six(6, 0.5);
    QTest::newRow("missing") << "missing.wav" << "no such file" << MakeInput([](const std::string&) {});
    QTest::newRow("zero bytes") << "empty.wav" << "empty" << containing("");
    QTest::newRow("directory") << "folder.wav" << "directory"
                               << MakeInput([](const std::string& p) { fs::create_directory(p); });
    QTest::newRow("unknown extension") << "signal.xyz" << "unknown signal extension '.xyz'" << containing("1\n");
    QTest::newRow("png renamed .wav") << "picture.wav" << "not a readable audio file" << MakeInput([](const std::string& p) {
        fs::copy_file(kltest::samplePath("camera.png"), p);
    });
    QTest::newRow("wav with 0 frames") << "silence.wav" << "no audio frames" << MakeInput([](const std::string& p) {
        SF_INFO info{};
        info.samplerate = 8000;
        info.channels = 1;
        info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
        sf_close(sf_open(p.c_str(), SFM_WRITE, &info));
    });
    QTest::newRow("csv with text") << "text.csv" << "line 3, column 1: 'abc' is not a finite number"
                                   << containing("1\n2\nabc\n");
    QTest::newRow("csv header and a bad value") << "mixed.csv" << "line 1, column 1: 'x'" << containing("x,1\n");
    QTest::newRow("csv ragged") << "ragged.csv" << "line 4 has 1 columns, expected 2"
                                << containing("# rate=5\na,b\n1,2\n3\n");
    QTest::newRow("csv nan") << "nan.csv" << "line 2, column 2: 'nan'" << containing("1,2\n3,nan\n");
    QTest::newRow("csv inf") << "inf.csv" << "line 1, column 1: 'inf' is not a finite number" << containing("inf\n");
    QTest::newRow("csv overflow") << "big.csv" << "line 2, column 1: '1e999' is not a finite number"
                                  << containing("1\n1e999\n");
    QTest::newRow("csv beyond float") << "float.csv" << "line 1, column 1: '1e39' is not a finite number"
                                      << containing("1e39\n");
    QTest::newRow("csv header only") << "header.csv" << "no data rows" << containing("a,b\n");
    QTest::newRow("csv bad rate comment") << "rate.csv" << "line 1: the rate comment" << containing("# rate=fast\n1\n");
    QTest::newRow("csv without rate") << "norate.csv" << "sample rate unknown (no '# rate=<Hz>' comment"
                                      << containing("1\n2\n");
    QTest::newRow("npy without rate") << "norate.npy" << "sample rate unknown (.npy files store none): pass --rate"
                                      << containing(npyFile("<f4", "(6,)", six));
    QTest::newRow("npy fortran order") << "fortran.npy" << "Fortran-order"
                                       << containing(npyFile("<f4", "(3, 2)", six, 1, "True"));
    QTest::newRow("npy int32") << "int32.npy" << "unsupported .npy dtype '<i4'" << containing(npyFile("<i4", "(6,)", six));
    QTest::newRow("npy 3-d") << "cube.npy" << "is not (frames,) or (frames, channels)"
                             << containing(npyFile("<f4", "(1, 2, 3)", six));
    QTest::newRow("npy empty") << "empty.npy" << "holds no samples" << containing(npyFile("<f4", "(0,)", {}));
    QTest::newRow("npy truncated") << "short.npy" << "needs 28 bytes" << containing(npyFile("<f4", "(7,)", six));
    QTest::newRow("npy version 9") << "future.npy" << "unsupported .npy format version 9"
                                   << containing(npyFile("<f4", "(6,)", six, 9));
    QTest::newRow("not npy") << "text.npy" << "not a NumPy .npy file" << containing("just some text\n");
}

void TestSignalIo::badInputThrowsIoError()
{
    QFETCH(QString, fileName);
    QFETCH(QString, reason);
    QFETCH(MakeInput, make);
    const std::string path = kltest::tempDir() + "/" + fileName.toStdString();
    make(path);
    kl::SignalLoadOptions options;
    if (!reason.contains("sample rate")) options.sampleRate = 1000;  // so that only the defect is reported
    expectIoError([&] { kl::loadSignal(path, options); }, fileName.toStdString(), reason.toStdString());
}

void TestSignalIo::failedSaveLeavesNoFile_data()
{
    QTest::addColumn<QString>("fileName");
    QTest::addColumn<double>("rate");
    QTest::addColumn<QString>("reason");
    QTest::newRow("flac is read-only") << "out.flac" << 8000.0 << "signals can be saved as .wav .csv .npy";
    QTest::newRow("fractional rate in wav") << "out.wav" << 8000.5 << "whole-number sample rates";
    QTest::newRow("missing directory") << "missing/out.wav" << 8000.0 << "cannot create";
    QTest::newRow("read-only directory") << "read-only/out.csv" << 8000.0 << "cannot create";
}

void TestSignalIo::failedSaveLeavesNoFile()
{
    QFETCH(QString, fileName);
    QFETCH(double, rate);
    QFETCH(QString, reason);
    std::string directory = kltest::tempDir();
    std::string path = directory + "/" + fileName.toStdString();
    if (fileName.startsWith("read-only")) {
        directory = fs::path(path).parent_path().string();
        fs::create_directory(directory);
        ::chmod(directory.c_str(), 0555);
        if (::geteuid() == 0) {  // root ignores permissions; nobody creates files in /proc
            directory = "/proc";
            path = "/proc/out.csv";
        }
    }
    const std::string baseName = fs::path(path).filename().string();
    expectIoError([&] { kl::saveSignal(path, kltest::randomSignal(10, 2, rate, 1)); }, baseName, reason.toStdString());
    QVERIFY(!fs::exists(path));
    if (fs::exists(directory) && directory != "/proc")
        for (const auto& entry : fs::directory_iterator(directory))
            QVERIFY2(entry.path().filename().string().find(".tmp-") == std::string::npos, "temporary file left");
}

// A 54-byte FLAC whose STREAMINFO claims about two billion frames (found by fuzz_audio; the
// file is tests/fuzz/regressions/audio/flac-claims-two-billion-frames): refused as truncated,
// or as too large where memory is short, without ever allocating what the header claims.
void TestSignalIo::claimedFramesAreNotAllocated()
{
    static const unsigned char flac[] = {
        0x66, 0x4c, 0x61, 0x43, 0x00, 0x00, 0x00, 0x22, 0x10, 0x00, 0x10, 0x00, 0x00, 0x02, 0x49, 0x00, 0x02, 0x49,
        0x01, 0xf4, 0x02, 0xf0, 0x3e, 0x00, 0xff, 0xff, 0x02, 0x02, 0xc9, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x75,
        0xab, 0x9e, 0x43, 0xe8, 0x1a, 0xcd, 0x02, 0x00, 0x00, 0x00, 0x09, 0x00, 0x49, 0x46, 0x46, 0xb4, 0x01};
    const std::string path = kltest::tempDir() + "/claims.flac";
    writeFile(path, std::string(reinterpret_cast<const char*>(flac), sizeof flac));
    rusage before{};
    getrusage(RUSAGE_SELF, &before);
    try {
        kl::loadSignal(path);
        QFAIL("a truncated FLAC loaded");
    } catch (const kl::IoError& e) {
        QVERIFY2(std::string(e.what()).find("ends early") != std::string::npos, e.what());
    } catch (const kl::OutOfMemory&) {
    }
    rusage after{};
    getrusage(RUSAGE_SELF, &after);
    QVERIFY2(after.ru_maxrss - before.ru_maxrss < 256 * 1024, qPrintable(QString::number(after.ru_maxrss)));  // KiB
}

void TestSignalIo::extensionsAreRecognised()
{
    for (const char* file : {"a.wav", "b.FLAC", "c.ogg", "d.csv", "e.npy", "f.f32", "g.raw"})
        QVERIFY2(kl::isSignalFile(file), file);
    for (const char* file : {"a.png", "b.tif", "noextension"}) QVERIFY2(!kl::isSignalFile(file), file);
    QCOMPARE(kl::signalExtensions().size(), size_t(7));
}

QTEST_GUILESS_MAIN(TestSignalIo)
#include "tst_signal_io.moc"
