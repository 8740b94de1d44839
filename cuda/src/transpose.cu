// Transpose on the GPU: out(x, y) = in(y, x) per pixel, any size, depth and
// channel count (a pixel of 1..16 bytes moves as one element).
//
// Variants (the lessons of the classic "efficient matrix transpose" tutorial):
//   naive         one element per thread; reads coalesced, writes strided by the
//                 output pitch, so every warp store touches 32 separate segments.
//   tiled         a 32x32 tile staged in shared memory so both reads and writes
//                 are coalesced; reading a tile column hits one bank 32 times.
//   tiled-padded  the same with one padding element per tile row: no bank conflicts.
//   optimized     tiled-padded with 64-wide tiles and 8 elements per thread in
//                 flight; the default.
// Bytes per run: rows * cols * pixel size read + the same written.
#include "engine_internal.hpp"
#include "pipeline.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"

#include <opencv2/core.hpp>

#include <algorithm>
#include <cstdint>

namespace kl::gpu {

const std::vector<std::string> kTransposeVariants = {"naive", "tiled", "tiled-padded", "optimized"};

namespace {

enum class TransposeVariant { Naive, Tiled, TiledPadded, Optimized };

TransposeVariant parseVariant(const std::string& name)
{
    if (name == "naive") return TransposeVariant::Naive;
    if (name == "tiled") return TransposeVariant::Tiled;
    if (name == "tiled-padded") return TransposeVariant::TiledPadded;
    return TransposeVariant::Optimized;
}

/// A strip of `rows` input rows (pitch `inPitch` elements) transposed into `out`
/// (pitch `outPitch` elements): out[x * outPitch + y] = in[y * inPitch + x].
template <typename T> struct StripArgs {
    const T* in;
    T* out;
    int rows, cols;
    size_t inPitch, outPitch;
};

// Grids cap gridDim.y at 65535, so kernels stride over row blocks: any row count works.
constexpr unsigned kMaxGridY = 65535;

template <typename T> __global__ void transposeNaive(StripArgs<T> a)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < a.rows; y += gridDim.y * blockDim.y)
        if (x < a.cols) a.out[size_t(x) * a.outPitch + y] = a.in[size_t(y) * a.inPitch + x];
}

/// Tile of TILE x TILE elements, PAD extra elements per shared row, block TILE x ROWS threads.
template <typename T, int TILE, int ROWS, int PAD> __global__ void transposeTiled(StripArgs<T> a)
{
    __shared__ T tile[TILE][TILE + PAD];
    const int x0 = blockIdx.x * TILE;
    const int tx = threadIdx.x;
    for (int y0 = blockIdx.y * TILE; y0 < a.rows; y0 += gridDim.y * TILE) {
#pragma unroll
        for (int j = threadIdx.y; j < TILE; j += ROWS) {
            const int x = x0 + tx, y = y0 + j;
            if (x < a.cols && y < a.rows) tile[j][tx] = a.in[size_t(y) * a.inPitch + x];
        }
        __syncthreads();
#pragma unroll
        for (int j = threadIdx.y; j < TILE; j += ROWS) {
            const int outRow = x0 + j, outCol = y0 + tx;
            if (outRow < a.cols && outCol < a.rows) a.out[size_t(outRow) * a.outPitch + outCol] = tile[tx][j];
        }
        __syncthreads();  // the tile is refilled on the next row block
    }
}

template <typename T> void launchTranspose(TransposeVariant v, const StripArgs<T>& a, cudaStream_t s)
{
    if (a.rows == 0 || a.cols == 0) return;
    switch (v) {
    case TransposeVariant::Naive: {
        const dim3 block(32, 8);
        const dim3 grid((a.cols + 31) / 32, std::min((a.rows + 7u) / 8, kMaxGridY));
        transposeNaive<T><<<grid, block, 0, s>>>(a);
        break;
    }
    case TransposeVariant::Tiled:
    case TransposeVariant::TiledPadded: {
        const dim3 block(32, 8);
        const dim3 grid((a.cols + 31) / 32, std::min((a.rows + 31u) / 32, kMaxGridY));
        if (v == TransposeVariant::Tiled) transposeTiled<T, 32, 8, 0><<<grid, block, 0, s>>>(a);
        else transposeTiled<T, 32, 8, 1><<<grid, block, 0, s>>>(a);
        break;
    }
    case TransposeVariant::Optimized: {
        // 64x64 tiles of up to 8-byte pixels fit the 48 KB static shared-memory limit.
        constexpr int tile = sizeof(T) <= 8 ? 64 : 32;
        const dim3 block(tile, 8);
        const dim3 grid((a.cols + tile - 1) / tile, std::min((a.rows + tile - 1u) / tile, kMaxGridY));
        transposeTiled<T, tile, 8, 1><<<grid, block, 0, s>>>(a);
        break;
    }
    }
    KL_CHECK_LAUNCH();
}

/// Pixel-sized element types: each pixel moves as one T of the same size.
template <typename F> void withElementType(size_t pixelBytes, F&& f)
{
    switch (pixelBytes) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 3: f(uchar3{}); break;
    case 4: f(uint32_t{}); break;
    case 6: f(ushort3{}); break;
    case 8: f(uint2{}); break;
    case 12: f(uint3{}); break;
    case 16: f(uint4{}); break;
    default: throw InvalidArgument("transpose: pixel size " + std::to_string(pixelBytes) + " bytes is not supported");
    }
}

/// Transposes a continuous rows x cols matrix of `pixelBytes`-byte elements from hostIn to hostOut.
GpuReport transposeMatrix(Engine::Impl& engine, const void* hostIn, void* hostOut, int rows, int cols,
                          size_t pixelBytes, const RunOptions& options)
{
    const std::string variantName = resolveVariant("transpose", options.variant, kTransposeVariants, "optimized");
    const TransposeVariant variant = parseVariant(variantName);
    const size_t bytes = size_t(rows) * cols * pixelBytes;

    Pipeline p;
    p.op = "transpose";
    p.variant = variantName;
    p.hostIn = hostIn;
    p.hostInBytes = bytes;
    p.hostOut = hostOut;
    p.hostOutBytes = bytes;
    p.kernelBytes = 2 * uint64_t(bytes);

    std::byte* dIn = nullptr;
    std::byte* dOut = nullptr;
    int rowsPerChunk = rows;
    const size_t rowBytes = size_t(cols) * pixelBytes;
    // Chunks are strips of input rows; strip c becomes output columns [r0, r1).
    auto strip = [&](int chunk) { return std::pair<int, int>(chunk * rowsPerChunk, std::min(rows, (chunk + 1) * rowsPerChunk)); };

    p.prepare = [&](int requested) {
        dIn = static_cast<std::byte*>(engine.cache.device("transpose.in", bytes));
        dOut = static_cast<std::byte*>(engine.cache.device("transpose.out", bytes));
        rowsPerChunk = std::max(1, (rows + requested - 1) / requested);
        return (rows + rowsPerChunk - 1) / rowsPerChunk;
    };
    p.upload = [&](const ChunkContext& c) {
        const auto [r0, r1] = strip(c.chunk);
        const size_t n = size_t(r1 - r0) * rowBytes;
        KL_CUDA_TRY(cudaMemcpyAsync(dIn + r0 * rowBytes, c.hostIn + r0 * rowBytes, n, cudaMemcpyHostToDevice, c.stream));
        return n;
    };
    p.compute = [&](const ChunkContext& c) {
        const int r0 = strip(c.chunk).first, r1 = strip(c.chunk).second;
        withElementType(pixelBytes, [&](auto tag) {
            using T = decltype(tag);
            const StripArgs<T> a{reinterpret_cast<const T*>(dIn) + size_t(r0) * cols, reinterpret_cast<T*>(dOut) + r0,
                                 r1 - r0, cols, size_t(cols), size_t(rows)};
            launchTranspose(variant, a, c.stream);
        });
    };
    p.download = [&](const ChunkContext& c) {
        const auto [r0, r1] = strip(c.chunk);
        const size_t pitch = size_t(rows) * pixelBytes, width = size_t(r1 - r0) * pixelBytes;
        KL_CUDA_TRY(cudaMemcpy2DAsync(c.hostOut + r0 * pixelBytes, pitch, dOut + r0 * pixelBytes, pitch, width, size_t(cols),
                                      cudaMemcpyDeviceToHost, c.stream));
        return width * cols;
    };
    return runPipeline(engine, p, options);
}

} // namespace

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
