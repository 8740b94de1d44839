#include "kernellab/image_io.hpp"

#include "file_util.hpp"
#include "npy.hpp"
#include "kernellab/image.hpp"

#include <opencv2/imgcodecs.hpp>

#include <algorithm>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string_view>

namespace kl {

namespace {

using detail::readError;
using detail::writeError;

struct ImageFormat {
    std::string name;
    std::vector<std::string> extensions;
    std::vector<int> depths;
    std::vector<int> channelCounts;
    std::vector<int> writeParams;
};

const std::vector<ImageFormat>& imageFormats()
{
    static const std::vector<ImageFormat> formats = {
        {"PNG", {".png"}, {CV_8U, CV_16U}, {1, 3, 4}, {}},
        {"JPEG", {".jpg", ".jpeg"}, {CV_8U}, {1, 3}, {cv::IMWRITE_JPEG_QUALITY, 95}},
        // OpenCV's default for 3-channel f32 TIFF is lossy SGILOG; LZW keeps every bit.
        {"TIFF", {".tif", ".tiff"}, {CV_8U, CV_16U, CV_32F}, {1, 3, 4}, {cv::IMWRITE_TIFF_COMPRESSION, 5}},
        {"BMP", {".bmp"}, {CV_8U}, {1, 3}, {}},
        {"PGM", {".pgm"}, {CV_8U, CV_16U}, {1}, {}},
        {"PPM", {".ppm"}, {CV_8U, CV_16U}, {3}, {}},
        {"PNM", {".pnm"}, {CV_8U, CV_16U}, {1, 3}, {}},
        {"OpenEXR", {".exr"}, {CV_32F}, {1, 3, 4}, {cv::IMWRITE_EXR_TYPE, cv::IMWRITE_EXR_TYPE_FLOAT}},
    };
    return formats;
}

template <typename T>
bool contains(const std::vector<T>& values, const T& value)
{
    return std::find(values.begin(), values.end(), value) != values.end();
}

std::string joined(const std::vector<std::string>& words, const std::string& separator)
{
    std::string text;
    for (const std::string& word : words) text += (text.empty() ? "" : separator) + word;
    return text;
}

// OpenCV builds may gate OpenEXR behind this variable, which imgcodecs reads once at its
// first EXR use; a value the user set (e.g. 0) is left alone.
void enableOpenExr()
{
    static const bool enabled = [] { return ::setenv("OPENCV_IO_ENABLE_OPENEXR", "1", 0) == 0; }();
    (void)enabled;
}

// What a file header declares, read before decoding so that absurd sizes are refused
// with a clear message instead of an allocation failure.
struct DeclaredImage {
    uint64_t width = 0;
    uint64_t height = 0;
    int channels = 0;
    int bytesPerSample = 1;
    bool truncated = false;
};

uint32_t bigEndian16(const std::string& bytes, size_t at)
{
    return uint32_t(uint8_t(bytes[at])) << 8 | uint8_t(bytes[at + 1]);
}

uint32_t bigEndian32(const std::string& bytes, size_t at)
{
    return bigEndian16(bytes, at) << 16 | bigEndian16(bytes, at + 2);
}

const std::string pngSignature("\x89PNG\r\n\x1a\n", 8);
constexpr size_t pngHeaderBytes = 33;  // signature + IHDR chunk, always the first chunk

std::optional<DeclaredImage> inspectPng(const std::string& head)
{
    if (head.size() < pngHeaderBytes || head.compare(0, 8, pngSignature) != 0 || head.compare(12, 4, "IHDR") != 0)
        return std::nullopt;
    DeclaredImage declared;
    declared.width = bigEndian32(head, 16);
    declared.height = bigEndian32(head, 20);
    declared.bytesPerSample = uint8_t(head[24]) == 16 ? 2 : 1;
    // OpenCV expands palette (possibly with transparency) and gray+alpha to BGR(A).
    declared.channels = uint8_t(head[25]) == 0 ? 1 : uint8_t(head[25]) == 2 ? 3 : 4;
    return declared;
}

bool isJpeg(const std::string& head)
{
    return head.size() >= 3 && uint8_t(head[0]) == 0xFF && uint8_t(head[1]) == 0xD8 && uint8_t(head[2]) == 0xFF;
}

// Walks the marker segments up to the first scan (SOS). libjpeg decodes a truncated scan
// into a grey-padded image with only a warning, so truncation is detected here: entropy-coded
// data never contains FF D9, hence a complete file has that end marker after the first scan.
std::optional<DeclaredImage> inspectJpeg(const std::string& bytes)
{
    DeclaredImage declared;
    size_t at = 2;
    while (true) {
        while (at + 1 < bytes.size() && uint8_t(bytes[at]) == 0xFF && uint8_t(bytes[at + 1]) == 0xFF) ++at;
        if (at + 4 > bytes.size()) {
            declared.truncated = true;
            return declared;
        }
        if (uint8_t(bytes[at]) != 0xFF) return std::nullopt;  // malformed: left to the decoder
        const uint8_t marker = uint8_t(bytes[at + 1]);
        const size_t segment = at + 2;
        const size_t length = bigEndian16(bytes, segment);
        const bool isStartOfFrame = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
        if (isStartOfFrame && segment + 8 <= bytes.size()) {
            declared.height = bigEndian16(bytes, segment + 3);
            declared.width = bigEndian16(bytes, segment + 5);
            declared.channels = uint8_t(bytes[segment + 7]);
        }
        if (marker == 0xDA) {
            declared.truncated = bytes.find("\xFF\xD9", segment + length) == std::string::npos;
            return declared;
        }
        at = segment + length;
    }
}

std::string readHead(const std::string& path, size_t count)
{
    std::ifstream in(path, std::ios::binary);
    std::string head(count, '\0');
    in.read(head.data(), std::streamsize(count));
    head.resize(size_t(in.gcount()));
    return head;
}

/// `head`: the file's first bytes, at least pngHeaderBytes of them where the file has them.
std::optional<DeclaredImage> inspectHeader(const std::string& path, const std::string& head)
{
    if (isJpeg(head)) return inspectJpeg(detail::readWholeFile(path));
    return inspectPng(head);
}

// The formats loadImage reads, by their first bytes. OpenCV's imread picks its decoder by content
// among all it was built with; Debian's has DICOM (GDCM), JPEG 2000, WebP, HDR and others, some
// of which abort the process on a malformed file (GDCM asserts). Only files that start like one
// of imageFormats() reach imread.
bool hasKnownSignature(const std::string& head)
{
    const auto startsWith = [&](std::string_view magic) { return head.compare(0, magic.size(), magic) == 0; };
    const bool pnm = head.size() >= 2 && head[0] == 'P' && head[1] >= '1' && head[1] <= '6';
    return startsWith("\x89PNG\r\n\x1a\n") || startsWith("\xFF\xD8\xFF") || startsWith({"II*\0", 4}) ||
           startsWith({"MM\0*", 4}) || startsWith({"II+\0", 4}) || startsWith({"MM\0+", 4}) || startsWith("BM") || pnm ||
           startsWith("\x76\x2F\x31\x01");
}

/// An OpenEXR signature with "DICM" at byte 128: OpenCV tries its DICOM decoder before its OpenEXR
/// one (the other formats' decoders come first).
bool exrClaimingDicom(const std::string& head)
{
    return head.compare(0, 4, "\x76\x2F\x31\x01") == 0 && head.size() >= 132 && head.compare(128, 4, "DICM") == 0;
}

// OpenCV's own limit (CV_IO_MAX_IMAGE_PIXELS, overridable through the environment).
uint64_t decoderPixelLimit()
{
    const char* configured = std::getenv("OPENCV_IO_MAX_IMAGE_PIXELS");
    return configured ? std::strtoull(configured, nullptr, 10) : uint64_t(1) << 30;
}

void checkDeclaredSize(const std::string& path, const std::string& head)
{
    const std::optional<DeclaredImage> declared = inspectHeader(path, head);
    if (!declared) return;
    if (declared->truncated) throw readError(path, "the file is truncated (the image data ends early)");
    const std::string size = std::to_string(declared->width) + "x" + std::to_string(declared->height);
    const uint64_t pixels = declared->width * declared->height;
    if (pixels > decoderPixelLimit())
        throw readError(path, "the header declares " + size + " pixels, more than OpenCV decodes ("
                                  + std::to_string(decoderPixelLimit()) + " pixels, see OPENCV_IO_MAX_IMAGE_PIXELS)");
    ensureMemoryAvailable(pixels * uint64_t(std::max(declared->channels, 1)) * uint64_t(declared->bytesPerSample),
                          "loading the " + size + " image '" + path + "'");
}

std::string decoderFailure(const cv::Exception& error)
{
    if (error.code == cv::Error::StsNoMem) return "not enough memory to decode it";
    if (error.err.find("CV_IO_MAX_IMAGE") != std::string::npos)
        return "the image is larger than OpenCV decodes (see OPENCV_IO_MAX_IMAGE_PIXELS/WIDTH/HEIGHT)";
    return "the decoder failed: " + error.err;
}

cv::Mat toSupportedType(const cv::Mat& decoded, const std::string& path)
{
    const int channels = decoded.channels();
    if (channels != 1 && channels != 3 && channels != 4)
        throw readError(path, "it has " + std::to_string(channels)
                                  + " channels; supported are 1 (gray), 3 (colour) and 4 (colour + alpha)");
    const int depth = decoded.depth();
    if (depth == CV_8U || depth == CV_16U || depth == CV_32F) return decoded;
    cv::Mat converted;
    decoded.convertTo(converted, CV_MAKETYPE(CV_32F, channels));
    return converted;
}

std::vector<std::string> extensionsFor(int depth, int channels)
{
    std::vector<std::string> extensions;
    for (const ImageFormat& format : imageFormats())
        if (contains(format.depths, depth) && contains(format.channelCounts, channels))
            extensions.insert(extensions.end(), format.extensions.begin(), format.extensions.end());
    return extensions;
}

const ImageFormat& writableFormat(const std::string& path, int depth, int channels)
{
    const std::string extension = detail::lowerExtension(path);
    const auto format = std::find_if(imageFormats().begin(), imageFormats().end(),
                                     [&](const ImageFormat& f) { return contains(f.extensions, extension); });
    if (format == imageFormats().end())
        throw writeError(path, "unknown image extension '" + extension + "' (use one of "
                                   + joined(imageExtensions(), " ") + ")");
    if (!contains(format->depths, depth) || !contains(format->channelCounts, channels)) {
        const std::string kind = std::to_string(channels) + "-channel " + depthName(depth);
        const std::vector<std::string> alternatives = extensionsFor(depth, channels);
        throw writeError(path, format->name + " cannot store a " + kind + " image"
                                   + (alternatives.empty() ? "" : "; use " + joined(alternatives, " ")));
    }
    return *format;
}

} // namespace

cv::Mat loadImage(const std::string& path)
{
    detail::requireReadableFile(path);
    enableOpenExr();
    const std::string head = readHead(path, 132);  // signatures, OpenEXR's DICOM check, a PNG's IHDR
    if (!hasKnownSignature(head))
        throw readError(path, "not an image file in a format KernelLab reads (PNG, JPEG, TIFF, BMP, PGM/PPM/PNM, "
                              "OpenEXR: " + joined(imageExtensions(), " ") + ")");
    if (exrClaimingDicom(head))
        throw readError(path, "it carries a DICOM signature at byte 128, which OpenCV would decode as DICOM; "
                              "KernelLab does not read DICOM");
    checkDeclaredSize(path, head);
    cv::Mat decoded;
    try {
        decoded = cv::imread(path, cv::IMREAD_UNCHANGED);
    } catch (const cv::Exception& error) {
        throw readError(path, decoderFailure(error));
    }
    if (decoded.empty()) throw readError(path, "the image data is corrupt or truncated");
    return toSupportedType(decoded, path);
}

void requireWritableImage(const std::string& path, int depth, int channels)
{
    writableFormat(path, depth, channels);
}

void saveImage(const std::string& path, const cv::Mat& image)
{
    validateImage(image, "image to save as '" + path + "'");
    const ImageFormat& format = writableFormat(path, image.depth(), image.channels());
    enableOpenExr();
    detail::writeAtomically(path, [&](const std::string& temporaryPath) {
        try {
            if (!cv::imwrite(temporaryPath, image, format.writeParams))
                throw writeError(path, "the " + format.name + " encoder failed");
        } catch (const cv::Exception& error) {
            throw writeError(path, "the " + format.name + " encoder failed: " + error.err);
        }
    });
}

void saveImageNpy(const std::string& path, const cv::Mat& image)
{
    validateImage(image, "image to save as '" + path + "'");
    const int depth = image.depth();
    const char* descr = depth == CV_8U ? "|u1" : (depth == CV_16U ? "<u2" : "<f4");
    std::vector<uint64_t> shape = {uint64_t(image.rows), uint64_t(image.cols)};
    if (image.channels() > 1) shape.push_back(uint64_t(image.channels()));
    const size_t elementSize = image.elemSize1(), rowElements = size_t(image.cols) * size_t(image.channels());
    std::string bytes = detail::npyPrefix(descr, shape);
    bytes.reserve(bytes.size() + size_t(image.rows) * rowElements * elementSize);
    for (int y = 0; y < image.rows; ++y) {
        const uchar* row = image.ptr(y);
        for (size_t i = 0; i < rowElements; ++i) {
            uint64_t value = 0;  // the element's bits; u16 and f32 in the host's order
            if (elementSize == 1) value = row[i];
            else if (elementSize == 2) value = reinterpret_cast<const uint16_t*>(row)[i];
            else {
                uint32_t bits;
                std::memcpy(&bits, row + 4 * i, sizeof bits);
                value = bits;
            }
            detail::appendLittleEndian(bytes, value, elementSize);
        }
    }
    detail::writeBytesAtomically(path, bytes);
}

const std::vector<std::string>& imageExtensions()
{
    static const std::vector<std::string> extensions = [] {
        std::vector<std::string> all;
        for (const ImageFormat& format : imageFormats())
            all.insert(all.end(), format.extensions.begin(), format.extensions.end());
        return all;
    }();
    return extensions;
}

} // namespace kl
