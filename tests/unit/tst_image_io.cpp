// Image files: lossless round trips per format and depth, JPEG within a tolerance, the
// sample images, every kind of bad input giving a kl::IoError that names the file, and
// images saved as NumPy arrays.
#include "kernellab/error.hpp"
#include "kernellab/image.hpp"
#include "kernellab/image_io.hpp"
#include "kernellab/signal_io.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <QtTest>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
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

std::vector<std::string> directoryEntries(const std::string& directory)
{
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(directory)) names.push_back(entry.path().filename().string());
    return names;
}

void appendBigEndian32(std::string& out, uint32_t value)
{
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(char((value >> shift) & 0xFF));
}

void appendLittleEndian(std::string& out, uint32_t value, int bytes)
{
    for (int i = 0; i < bytes; ++i) out.push_back(char((value >> (8 * i)) & 0xFF));
}

uint32_t crc32(const std::string& bytes)
{
    uint32_t crc = 0xFFFFFFFFu;
    for (const char byte : bytes) {
        crc ^= uint8_t(byte);
        for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

void appendPngChunk(std::string& png, const std::string& type, const std::string& data)
{
    appendBigEndian32(png, uint32_t(data.size()));
    png += type + data;
    appendBigEndian32(png, crc32(type + data));
}

// A well-formed PNG header (valid CRCs) declaring an RGB image of the given size.
std::string pngDeclaring(uint32_t width, uint32_t height)
{
    std::string header;
    appendBigEndian32(header, width);
    appendBigEndian32(header, height);
    header += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit RGB, deflate, no filter, no interlace
    std::string png("\x89PNG\r\n\x1a\n", 8);
    appendPngChunk(png, "IHDR", header);
    appendPngChunk(png, "IDAT", std::string("\x78\x9c\x03\x00\x00\x00\x00\x01", 8));
    appendPngChunk(png, "IEND", "");
    return png;
}

// A BMP header declaring a 24-bit image of the given size, followed by a few bytes.
std::string bmpDeclaring(uint32_t width, uint32_t height)
{
    std::string bmp = "BM";
    appendLittleEndian(bmp, 54 + 16, 4);
    appendLittleEndian(bmp, 0, 4);
    appendLittleEndian(bmp, 54, 4);  // pixel data offset
    appendLittleEndian(bmp, 40, 4);  // BITMAPINFOHEADER
    appendLittleEndian(bmp, width, 4);
    appendLittleEndian(bmp, height, 4);
    appendLittleEndian(bmp, 1, 2);   // planes
    appendLittleEndian(bmp, 24, 2);  // bits per pixel
    bmp.append(24, '\0');            // no compression, default sizes and palette
    bmp.append(16, '\0');
    return bmp;
}

// Smooth content, which is what JPEG is made for (noise would need a huge tolerance).
cv::Mat smoothImage(int rows, int cols, int channels)
{
    cv::Mat image(rows, cols, CV_MAKETYPE(CV_8U, channels));
    for (int y = 0; y < rows; ++y)
        for (int x = 0; x < cols; ++x)
            for (int c = 0; c < channels; ++c)
                image.ptr<uint8_t>(y)[x * channels + c] =
                    cv::saturate_cast<uint8_t>(128 + 90 * std::sin(x / 9.0 + c) * std::cos(y / 13.0 - c));
    return image;
}

bool exactlyEqual(const cv::Mat& a, const cv::Mat& b)
{
    return a.type() == b.type() && a.size() == b.size() && cv::norm(a, b, cv::NORM_INF) == 0;
}

} // namespace

class TestImageIo : public QObject {
    Q_OBJECT

private slots:
    void losslessRoundTrip_data();
    void losslessRoundTrip();
    void jpegRoundTripIsClose_data();
    void jpegRoundTripIsClose();
    void otherDepthsLoadAsF32_data();
    void otherDepthsLoadAsF32();
    void sampleImagesLoad_data();
    void sampleImagesLoad();
    void badInputThrowsIoError_data();
    void badInputThrowsIoError();
    void saveRefusesWhatTheFormatCannotStore_data();
    void saveRefusesWhatTheFormatCannotStore();
    void failedSaveLeavesNoFile_data();
    void failedSaveLeavesNoFile();
    void saveReplacesExistingFileAndLeavesNoTemporary();
    void extensionsListEverySavableFormat();
    void npyHoldsTheImageInCOrder_data();
    void npyHoldsTheImageInCOrder();
    void npyOfOneChannelF32ReadsAsASignal();
};

void TestImageIo::losslessRoundTrip_data()
{
    QTest::addColumn<QString>("extension");
    QTest::addColumn<int>("depth");
    QTest::addColumn<int>("channels");
    const auto add = [](const char* extension, int depth, std::initializer_list<int> channelCounts) {
        for (int channels : channelCounts) {
            const std::string name = std::string(extension + 1) + " " + kl::depthName(depth) + " x" + std::to_string(channels);
            QTest::newRow(name.c_str()) << QString(extension) << depth << channels;
        }
    };
    add(".png", CV_8U, {1, 3, 4});
    add(".png", CV_16U, {1, 3, 4});
    add(".tif", CV_8U, {1, 3, 4});
    add(".tiff", CV_16U, {1, 3, 4});
    add(".tif", CV_32F, {1, 3, 4});
    add(".exr", CV_32F, {1, 3, 4});
    add(".bmp", CV_8U, {1, 3});
    add(".pgm", CV_8U, {1});
    add(".pgm", CV_16U, {1});
    add(".ppm", CV_8U, {3});
    add(".ppm", CV_16U, {3});
    add(".pnm", CV_8U, {1, 3});
}

void TestImageIo::losslessRoundTrip()
{
    QFETCH(QString, extension);
    QFETCH(int, depth);
    QFETCH(int, channels);
    if (extension == ".exr" && !cv::haveImageWriter("x.exr"))
        QSKIP("this OpenCV build has no OpenEXR support");
    const cv::Mat original = kltest::randomImage(37, 53, depth, channels, 7);
    const std::string path = kltest::tempDir() + "/image" + extension.toStdString();
    kl::saveImage(path, original);
    const cv::Mat loaded = kl::loadImage(path);
    QVERIFY2(exactlyEqual(loaded, original), kltest::msg("loaded " + kl::describeImage(loaded)));
}

void TestImageIo::jpegRoundTripIsClose_data()
{
    QTest::addColumn<QString>("extension");
    QTest::addColumn<int>("channels");
    QTest::newRow("jpg gray") << ".jpg" << 1;
    QTest::newRow("jpeg colour") << ".jpeg" << 3;
}

void TestImageIo::jpegRoundTripIsClose()
{
    QFETCH(QString, extension);
    QFETCH(int, channels);
    const cv::Mat original = smoothImage(64, 96, channels);
    const std::string path = kltest::tempDir() + "/photo" + extension.toStdString();
    kl::saveImage(path, original);
    const cv::Mat loaded = kl::loadImage(path);
    QCOMPARE(loaded.type(), original.type());
    QCOMPARE(loaded.rows, original.rows);
    QCOMPARE(loaded.cols, original.cols);
    const double meanError = cv::norm(loaded, original, cv::NORM_L1) / double(original.total() * size_t(channels));
    QVERIFY2(meanError < 1.5, kltest::msg("mean error " + std::to_string(meanError)));
    QVERIFY(cv::norm(loaded, original, cv::NORM_INF) <= 12);
}

void TestImageIo::otherDepthsLoadAsF32_data()
{
    QTest::addColumn<int>("depth");
    QTest::newRow("s16") << int(CV_16S);
    QTest::newRow("s32") << int(CV_32S);
    QTest::newRow("f64") << int(CV_64F);
}

void TestImageIo::otherDepthsLoadAsF32()
{
    QFETCH(int, depth);
    cv::Mat original(5, 6, CV_MAKETYPE(depth, 1));
    cv::randu(original, -1000, 1000);
    const std::string path = kltest::tempDir() + "/other.tif";
    QVERIFY(cv::imwrite(path, original));
    const cv::Mat loaded = kl::loadImage(path);
    QCOMPARE(loaded.type(), CV_32FC1);
    cv::Mat expected;
    original.convertTo(expected, CV_32F);
    QVERIFY(exactlyEqual(loaded, expected));
}

void TestImageIo::sampleImagesLoad_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("cols");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("type");
    QTest::newRow("camera") << "camera.png" << 512 << 512 << int(CV_8UC1);
    QTest::newRow("astronaut") << "astronaut.png" << 512 << 512 << int(CV_8UC3);
    QTest::newRow("coffee") << "coffee.png" << 600 << 400 << int(CV_8UC3);
    QTest::newRow("hubble jpeg") << "hubble_deep_field.jpg" << 1000 << 872 << int(CV_8UC3);
    QTest::newRow("chessboard u16 tiff") << "chessboard_GRAY_U16.tif" << 200 << 200 << int(CV_16UC1);
}

void TestImageIo::sampleImagesLoad()
{
    QFETCH(QString, file);
    QFETCH(int, cols);
    QFETCH(int, rows);
    QFETCH(int, type);
    const cv::Mat image = kl::loadImage(kltest::samplePath(file.toStdString()));
    QCOMPARE(image.cols, cols);
    QCOMPARE(image.rows, rows);
    QCOMPARE(image.type(), type);
    double low = 0, high = 0;
    cv::minMaxLoc(image.reshape(1), &low, &high);
    QVERIFY2(high > low, "a sample image should not be flat");
}

void TestImageIo::badInputThrowsIoError_data()
{
    QTest::addColumn<QString>("fileName");
    QTest::addColumn<QString>("reason");
    QTest::addColumn<MakeInput>("make");
    const auto truncatedCopy = [](const char* extension, double keep) -> MakeInput {
        return [=](const std::string& path) {
            const std::string whole = path + ".whole" + extension;
            kl::saveImage(whole, kltest::randomImage(64, 64, CV_8U, 3, 3));
            const std::string bytes = readFile(whole);
            writeFile(path, bytes.substr(0, size_t(double(bytes.size()) * keep)));
        };
    };
    QTest::newRow("missing") << "missing.png" << "no such file" << MakeInput([](const std::string&) {});
    QTest::newRow("zero bytes") << "empty.png" << "empty" << MakeInput([](const std::string& p) { writeFile(p, ""); });
    QTest::newRow("directory") << "folder.png" << "directory" << MakeInput([](const std::string& p) { fs::create_directory(p); });
    QTest::newRow("text renamed .png") << "notes.png" << "not an image"
                                       << MakeInput([](const std::string& p) { writeFile(p, "just some text\n"); });
    QTest::newRow("wav renamed .png") << "speech.png" << "not an image" << MakeInput([](const std::string& p) {
        fs::copy_file(kltest::samplePath("speech_22k.wav"), p);
    });
    QTest::newRow("truncated png") << "cut.png" << "truncated" << truncatedCopy(".png", 0.5);
    QTest::newRow("png without its end") << "end.png" << "truncated" << truncatedCopy(".png", 0.98);
    QTest::newRow("truncated jpeg") << "cut.jpg" << "truncated" << truncatedCopy(".jpg", 0.6);
    QTest::newRow("jpeg header only") << "head.jpg" << "truncated" << truncatedCopy(".jpg", 0.02);
    QTest::newRow("truncated tiff") << "cut.tif" << "truncated" << truncatedCopy(".tif", 0.5);
    QTest::newRow("truncated bmp") << "cut.bmp" << "truncated" << truncatedCopy(".bmp", 0.5);
    QTest::newRow("png header 100000x100000") << "huge.png" << "100000x100000"
                                              << MakeInput([](const std::string& p) { writeFile(p, pngDeclaring(100000, 100000)); });
    QTest::newRow("bmp header 100000x100000") << "huge.bmp" << "larger than OpenCV decodes"
                                              << MakeInput([](const std::string& p) { writeFile(p, bmpDeclaring(100000, 100000)); });
    // "DICM" at byte 128 sends a file to OpenCV's DICOM decoder, whose GDCM aborts the process on a
    // truncated one (found by fuzz_image: tests/fuzz/regressions/image/dicom-signature-gdcm-assert).
    QTest::newRow("dicom renamed .png") << "scan.png" << "not an image file in a format KernelLab reads"
                                        << MakeInput([](const std::string& p) {
                                               writeFile(p, std::string(128, '\0') + "DICM\x02\x00\x00\x00");
                                           });
    QTest::newRow("exr signature, dicom body") << "scan.exr" << "OpenCV would decode as DICOM"
                                               << MakeInput([](const std::string& p) {
                                                      writeFile(p, "\x76\x2F\x31\x01" + std::string(124, '\0') + "DICM");
                                                  });
    QTest::newRow("webp renamed .png") << "photo.png" << "not an image file in a format KernelLab reads"
                                       << MakeInput([](const std::string& p) { writeFile(p, "RIFF\x10\0\0\0WEBPVP8 "); });
}

void TestImageIo::badInputThrowsIoError()
{
    QFETCH(QString, fileName);
    QFETCH(QString, reason);
    QFETCH(MakeInput, make);
    const std::string path = kltest::tempDir() + "/" + fileName.toStdString();
    make(path);
    expectIoError([&] { kl::loadImage(path); }, fileName.toStdString(), reason.toStdString());
}

void TestImageIo::saveRefusesWhatTheFormatCannotStore_data()
{
    QTest::addColumn<QString>("fileName");
    QTest::addColumn<int>("type");
    QTest::addColumn<QString>("reason");
    QTest::newRow("f32 as png") << "out.png" << int(CV_32FC1) << "use .tif .tiff .exr";
    QTest::newRow("u16 as jpeg") << "out.jpg" << int(CV_16UC3) << "JPEG cannot store a 3-channel u16 image";
    QTest::newRow("alpha as jpeg") << "out.jpg" << int(CV_8UC4) << "JPEG cannot store";
    QTest::newRow("alpha as bmp") << "out.bmp" << int(CV_8UC4) << "BMP cannot store";
    QTest::newRow("colour as pgm") << "out.pgm" << int(CV_8UC3) << "PGM cannot store";
    QTest::newRow("u8 as exr") << "out.exr" << int(CV_8UC3) << "OpenEXR cannot store";
    QTest::newRow("unknown extension") << "out.gif" << int(CV_8UC3) << "unknown image extension '.gif'";
}

void TestImageIo::saveRefusesWhatTheFormatCannotStore()
{
    QFETCH(QString, fileName);
    QFETCH(int, type);
    QFETCH(QString, reason);
    const std::string directory = kltest::tempDir();
    const cv::Mat image = kltest::randomImage(8, 8, CV_MAT_DEPTH(type), CV_MAT_CN(type), 1);
    expectIoError([&] { kl::saveImage(directory + "/" + fileName.toStdString(), image); }, fileName.toStdString(),
                  reason.toStdString());
    QVERIFY(directoryEntries(directory).empty());
}

void TestImageIo::failedSaveLeavesNoFile_data()
{
    QTest::addColumn<QString>("where");
    QTest::newRow("missing directory") << "missing";
    QTest::newRow("read-only directory") << "read-only";
}

void TestImageIo::failedSaveLeavesNoFile()
{
    QFETCH(QString, where);
    std::string directory = kltest::tempDir() + "/" + where.toStdString();
    if (where == "read-only") {
        fs::create_directory(directory);
        ::chmod(directory.c_str(), 0555);
        if (::geteuid() == 0) directory = "/proc";  // root ignores permissions; nobody creates files in /proc
    }
    const std::string path = directory + "/saved.png";
    expectIoError([&] { kl::saveImage(path, kltest::randomImage(4, 4, CV_8U, 1, 1)); }, "saved.png", "cannot create");
    QVERIFY(!fs::exists(path));
    if (fs::exists(directory) && directory != "/proc") QVERIFY(directoryEntries(directory).empty());
}

void TestImageIo::saveReplacesExistingFileAndLeavesNoTemporary()
{
    const std::string directory = kltest::tempDir();
    const std::string path = directory + "/picture.png";
    kl::saveImage(path, kltest::randomImage(9, 9, CV_8U, 3, 1));
    const std::string firstVersion = readFile(path);

    // A refused save leaves the existing file untouched.
    QVERIFY_THROWS_EXCEPTION(kl::IoError, kl::saveImage(path, kltest::randomImage(9, 9, CV_32F, 3, 2)));
    QCOMPARE(readFile(path), firstVersion);

    const cv::Mat replacement = kltest::randomImage(5, 7, CV_16U, 1, 3);
    kl::saveImage(path, replacement);
    QVERIFY(exactlyEqual(kl::loadImage(path), replacement));
    QCOMPARE(directoryEntries(directory), std::vector<std::string>{"picture.png"});

    const std::string folder = directory + "/folder.png";
    fs::create_directory(folder);
    expectIoError([&] { kl::saveImage(folder, replacement); }, "folder.png", "directory");
    QVERIFY(fs::is_directory(folder));
}

void TestImageIo::extensionsListEverySavableFormat()
{
    const std::vector<std::string>& extensions = kl::imageExtensions();
    for (const char* extension : {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".pgm", ".ppm", ".exr"})
        QVERIFY2(std::find(extensions.begin(), extensions.end(), extension) != extensions.end(), extension);
}

void TestImageIo::npyHoldsTheImageInCOrder_data()
{
    kltest::addDepthChannelRows();
}

void TestImageIo::npyHoldsTheImageInCOrder()
{
    QFETCH(int, depth);
    QFETCH(int, channels);
    // A view with a row stride larger than its rows: the file holds the pixels only.
    const cv::Mat whole = kltest::randomImage(9, 11, depth, channels, uint64_t(depth * 10 + channels));
    const cv::Mat image = whole(cv::Rect(1, 2, 7, 5));
    const std::string path = kltest::tempDir() + "/image.npy";
    kl::saveImageNpy(path, image);
    const std::string bytes = readFile(path);

    QCOMPARE(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    const size_t headerLength = uint8_t(bytes[8]) | size_t(uint8_t(bytes[9])) << 8;
    const size_t dataStart = 10 + headerLength;
    QCOMPARE(dataStart % 64, size_t(0));
    const std::string header = bytes.substr(10, headerLength);
    const std::string descr = depth == CV_8U ? "|u1" : (depth == CV_16U ? "<u2" : "<f4");
    const std::string shape = channels == 1 ? "(5, 7)" : "(5, 7, " + std::to_string(channels) + ")";
    const std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    QCOMPARE(header.substr(0, dict.size()), dict);
    QCOMPARE(header.find_first_not_of(' ', dict.size()), header.size() - 1);  // padding, then the newline
    QCOMPARE(header.back(), '\n');
    // This host is little-endian, so the rows' bytes are the array's.
    std::string pixels;
    for (int y = 0; y < image.rows; ++y)
        pixels.append(reinterpret_cast<const char*>(image.ptr(y)), size_t(image.cols) * image.elemSize());
    QCOMPARE(bytes.size(), dataStart + pixels.size());
    QVERIFY(bytes.compare(dataStart, pixels.size(), pixels) == 0);
}

void TestImageIo::npyOfOneChannelF32ReadsAsASignal()
{
    // The signal reader takes (rows, cols) as frames x channels: an independent check of the file.
    const cv::Mat image = kltest::randomImage(6, 3, CV_32F, 1, 5);
    const std::string path = kltest::tempDir() + "/kernel.npy";
    kl::saveImageNpy(path, image);
    kl::SignalLoadOptions options;
    options.sampleRate = 1;
    const kl::Signal signal = kl::loadSignal(path, options);
    QCOMPARE(signal.frames, size_t(6));
    QCOMPARE(signal.channels, 3);
    for (int y = 0; y < image.rows; ++y)
        for (int x = 0; x < image.cols; ++x) QCOMPARE(signal.channel(x)[y], image.at<float>(y, x));
}

QTEST_GUILESS_MAIN(TestImageIo)
#include "tst_image_io.moc"
