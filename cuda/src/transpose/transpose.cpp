// Transpose on the GPU: out(x, y) = in(y, x) per pixel, any size, depth and
// channel count (a pixel of 1..16 bytes moves as one element). This file is the host
// side: the registry and auto choice, and the chunked run. The variants (the lessons of
// the classic "efficient matrix transpose" tutorial) live in one .cu per family, each
// with its kernels and launches: transpose_tutorial.cu (naive, tiled, tiled-padded),
// transpose_optimized.cu (optimized, the default: 16-byte chunks transposed in registers).
// Bytes per run: rows * cols * pixel size read + the same written.
#include "transpose_variants.hpp"

#include "../pipeline.hpp"

#include "kernellab/image.hpp"

#include <opencv2/core.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace kl::gpu {

const VariantRegistry<TransposeProblem, TransposeLaunch>& transposeVariants()
{
    static const VariantRegistry<TransposeProblem, TransposeLaunch> registry(
        "transpose", {naiveTranspose(), tiledTranspose(), tiledPaddedTranspose(), optimizedTranspose()},
        [](const TransposeProblem&) { return "optimized"; });
    return registry;
}

namespace {

/// Transposes a continuous rows x cols matrix of `pixelBytes`-byte elements from hostIn to hostOut.
GpuReport transposeMatrix(Engine::Impl& engine, const void* hostIn, void* hostOut, int rows, int cols,
                          size_t pixelBytes, const RunOptions& options)
{
    const auto& variant = transposeVariants().resolve(options.variant, TransposeProblem{pixelBytes, engine.info});
    const size_t bytes = size_t(rows) * cols * pixelBytes;

    Pipeline p;
    p.op = "transpose";
    p.variant = variant.name;
    p.hostIn = hostIn;
    p.hostInBytes = bytes;
    p.hostOut = hostOut;
    p.hostOutBytes = bytes;
    p.kernelBytes = 2 * uint64_t(bytes);

    std::byte* dIn = nullptr;
    std::byte* dOut = nullptr;
    RowStrips strip(rows);  // strip c of input rows becomes output columns [r0, r1)
    const size_t rowBytes = size_t(cols) * pixelBytes;
    // Device output rows are padded to a multiple of 16 pixels and strips are a multiple of 16
    // rows, so that every strip's output starts 16-byte aligned in every output row: the
    // optimized kernel stores 16-byte chunks. Rows of 8 line steps or more (linePixels: the fewest
    // pixels, a multiple of 16, that fill whole kRowAlignment lines) are padded to whole line
    // steps (at most 1/8 more memory): otherwise two tiles, at different times, may each write
    // half of the 32-byte sector where their segments of a row meet, which slowed odd heights by
    // up to half (docs/performance.md, "Twenty-fifth step"). The download skips the padding.
    constexpr size_t kStripAlignment = 16;
    const size_t linePixels = std::max(kStripAlignment, kRowAlignment / std::gcd(kRowAlignment, pixelBytes));
    const size_t pitchAlignment = size_t(rows) >= 8 * linePixels ? linePixels : kStripAlignment;
    const size_t outPitch = (size_t(rows) + pitchAlignment - 1) / pitchAlignment * pitchAlignment;

    // A strip's output is a column of the output, downloaded as one segment per output row; with
    // H2D running alongside, narrower segments slowed the copy engine several-fold
    // (docs/performance.md, "Transpose's strips"), so strips are at least this wide.
    constexpr size_t kMinSegmentBytes = size_t(8) << 10;
    p.maxChunks = int(std::max<size_t>(1, size_t(rows) * pixelBytes / kMinSegmentBytes));
    p.maxChunksWhy = "at most " + std::to_string(p.maxChunks) + ": strips of at least 8 KiB of each output row, below which their column downloads slow down";
    p.prepare = [&](int requested) {
        dIn = static_cast<std::byte*>(engine.cache.device("transpose.in", bytes));
        dOut = static_cast<std::byte*>(engine.cache.device("transpose.out", size_t(cols) * outPitch * pixelBytes));
        return strip.split(requested, int(kStripAlignment));
    };
    p.upload = [&](const ChunkContext& c) { return uploadRows(c, strip, dIn, rowBytes); };
    p.compute = [&](const ChunkContext& c) {
        const int r0 = strip(c.chunk).first, r1 = strip(c.chunk).second;
        const TransposeStrip strip{dIn + size_t(r0) * rowBytes, dOut + size_t(r0) * pixelBytes, r1 - r0, cols,
                                   size_t(cols), outPitch, pixelBytes};
        variant.launch.launch(strip, c.stream);
    };
    p.download = [&](const ChunkContext& c) {
        const auto [r0, r1] = strip(c.chunk);
        const size_t width = size_t(r1 - r0) * pixelBytes;
        c.toHost(c.hostOut + r0 * pixelBytes, dOut + r0 * pixelBytes,
                 CopyRegion{width, size_t(cols), size_t(rows) * pixelBytes, outPitch * pixelBytes});
        return width * cols;
    };
    return runPipeline(engine, p, options);
}

} // namespace

std::vector<VariantInfo> transposeVariantInfo() { return transposeVariants().info(); }

std::string whyNotApplicable(const std::string& variant, const cv::Mat& input, const DeviceInfo& device)
{
    validateImage(input, "transpose input");
    return transposeVariants().whyNot(variant, TransposeProblem{input.elemSize(), device});
}

std::string whyNotApplicable(const std::string& variant, const Signal& input, const DeviceInfo& device)
{
    validateSignal(input, "transpose input");
    return transposeVariants().whyNot(variant, TransposeProblem{sizeof(float), device});
}

GpuReport runTranspose(Engine::Impl& engine, const cv::Mat& input, const RunOptions& options, cv::Mat& output)
{
    validateImage(input, "transpose input");
    const cv::Mat src = input.isContinuous() ? input : input.clone();
    ensureMemoryAvailable(src.total() * src.elemSize(), "transpose output");
    cv::Mat dst(src.cols, src.rows, src.type());
    GpuReport report = transposeMatrix(engine, src.data, dst.data, src.rows, src.cols, src.elemSize(), options);
    output = dst;
    return report;
}

GpuReport runTransposeSignal(Engine::Impl& engine, const Signal& input, const RunOptions& options,
                             std::vector<float>& interleaved)
{
    validateSignal(input, "transpose input");
    std::vector<float> result(input.data.size());
    // Planar is a channels x frames matrix; its transpose is frames x channels, i.e. interleaved.
    GpuReport report = transposeMatrix(engine, input.data.data(), result.data(), input.channels, int(input.frames),
                                       sizeof(float), options);
    interleaved = std::move(result);
    return report;
}

} // namespace kl::gpu
