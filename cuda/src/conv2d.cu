// 2D convolution on the GPU: exactly conv2d.hpp's function (correlation with
// effectiveKernel, anchor at the centre, borderIndex borders, per channel,
// saturateRound to u8/u16) for every depth, channel count, border mode and
// kernel size. One thread computes all channels of its output pixel.
//
// Variants:
//   naive      one output pixel per thread; taps and input read from global
//              memory, borderIndex per tap.
//   constant   the same with the taps in __constant__ memory: all threads of a
//              warp read the same tap, which the constant cache broadcasts.
//   shared     a block stages its output tile plus the kernel's halo in shared
//              memory, border resolved while loading, as f32 with one plane per
//              channel (a warp reads consecutive banks); taps in constant memory.
//              Each input pixel is read from global memory about once per block
//              instead of once per tap, and each thread computes up to 4
//              vertically adjacent outputs, so every value it reads from shared
//              memory feeds up to 4 independent sums.
//   separable  rank-1 kernels K = column * row^T (separateKernel): a row pass of
//              kCols taps into an f32 intermediate, then a column pass of kRows
//              taps, kRows + kCols multiply-adds per output instead of kRows * kCols.
//              Requesting it for another kernel is an InvalidArgument.
//   auto       separable when the kernel is rank-1 with both sides >= 3 and more
//              than 9 taps (5x3 and up: the two passes then do fewer multiply-adds
//              than one 2D pass, and a 1xN or Nx1 kernel gains nothing from a
//              second pass); shared otherwise.
//
// Accuracy: sums are f32, each kernel row summed on its own and the row sums then
// added (the separable passes do the same by construction). This two-level
// summation keeps the error below about 5e-7 * sum|K * in| even for 63x63
// kernels, inside conv2d.hpp's tie band of 1e-6 * sum|K * in|; one running sum
// over all 3969 taps would not be (about 4e-6). So u8/u16 results equal the
// reference except where its unrounded sum lies within that band of a tie.
//
// Chunks are horizontal strips of output rows. Chunk c owns a slice of the
// device input buffer holding (strip rows + 2 * ry) rows, ry = kRows / 2: slice
// row k is image row borderIndex(r0 - ry + k), uploaded from the host (rows the
// border puts outside the image, Constant mode, are not uploaded; the kernels
// test borderIndex on the image row and use the border value). The vertical
// border is thereby resolved by the upload and the horizontal one in the
// kernels; chunks never write or read each other's slices, so the output is the
// same for any stream count.
//
// Bytes per run (kernelBytes): the input read once + the output written once.
// kernelFlops: 2 * taps * output pixels * channels for every variant, so for
// separable it is the 2D work it stands in for (effective FLOP/s).
#include "engine_internal.hpp"
#include "pipeline.hpp"

#include "kernellab/border.hpp"
#include "kernellab/error.hpp"
#include "kernellab/image.hpp"
#include "kernellab/rounding.hpp"

#include <opencv2/core.hpp>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>

namespace kl::gpu {

const std::vector<std::string> kConv2dVariants = {"naive", "constant", "shared", "separable"};

namespace {

enum class Conv2dVariant { Naive, Constant, Shared, Separable };

Conv2dVariant parseVariant(const std::string& name)
{
    if (name == "naive") return Conv2dVariant::Naive;
    if (name == "constant") return Conv2dVariant::Constant;
    if (name == "separable") return Conv2dVariant::Separable;
    return Conv2dVariant::Shared;
}

constexpr int kMaxTaps = kMaxConv2DKernelSize * kMaxConv2DKernelSize;
__constant__ float cTaps[kMaxTaps];                        // constant, shared: row-major kRows x kCols
__constant__ float cRowTaps[kMaxConv2DKernelSize];         // separable: kCols taps
__constant__ float cColumnTaps[kMaxConv2DKernelSize];      // separable: kRows taps

/// Constant memory is one copy per device for the whole process: a run that uses it
/// holds this lock from uploading its taps until its last kernel has finished.
std::mutex constantTapsMutex;

// Blocks are kBlockX x kBlockY threads; grids stride over rows (gridDim.y <= 65535).
constexpr int kBlockX = 32, kBlockY = 8;
constexpr unsigned kMaxGridY = 65535;

/// One chunk: `rows` output rows from image row `row0`, read from a slice of
/// rows + kRows - 1 input rows (slice row k = image row borderIndex(row0 - kRows / 2 + k)).
template <typename In, typename Out> struct StripArgs {
    const In* in;
    Out* out;
    float* mid;          ///< separable: the row pass's result, one f32 per slice element
    const float* taps;   ///< naive: kRows x kCols taps in global memory
    int rows, cols, row0, imageRows;
    int kRows, kCols;
    BorderMode border;
    float borderValue;

    /// Whether slice row k lies in the constant border (outside the image in Constant mode).
    __device__ bool borderRow(int k) const { return borderIndex(row0 - kRows / 2 + k, imageRows, border) < 0; }
};

template <typename Out, int CN> __device__ void storePixel(Out* out, const float (&sum)[CN])
{
#pragma unroll
    for (int c = 0; c < CN; ++c) out[c] = saturateRound<Out>(sum[c]);
}

template <bool ConstantTaps> __device__ float tapAt(const float* taps, int t)
{
    if constexpr (ConstantTaps) return cTaps[t];
    else return taps[t];
}

/// naive and constant: every tap reads the input through borderIndex.
template <typename In, typename Out, int CN, bool ConstantTaps> __global__ void conv2dDirect(StripArgs<In, Out> a)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= a.cols) return;
    const int rx = a.kCols / 2;
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < a.rows; y += gridDim.y * blockDim.y) {
        float sum[CN] = {};
        for (int i = 0; i < a.kRows; ++i) {
            const bool borderRow = a.borderRow(y + i);
            const In* row = a.in + size_t(y + i) * a.cols * CN;
            float rowSum[CN] = {};
            for (int j = 0; j < a.kCols; ++j) {
                const float tap = tapAt<ConstantTaps>(a.taps, i * a.kCols + j);
                const int sx = borderIndex(x + j - rx, a.cols, a.border);
#pragma unroll
                for (int c = 0; c < CN; ++c)
                    rowSum[c] = fmaf(tap, borderRow || sx < 0 ? a.borderValue : float(row[size_t(sx) * CN + c]), rowSum[c]);
            }
#pragma unroll
            for (int c = 0; c < CN; ++c) sum[c] += rowSum[c];
        }
        storePixel<Out, CN>(a.out + (size_t(y) * a.cols + x) * CN, sum);
    }
}

/// shared: output tiles of kBlockX x (kBlockY * R) pixels; dynamic shared memory holds CN planes
/// of (kBlockY * R + kRows - 1) x (kBlockX + kCols - 1) floats. Each thread computes R vertically
/// adjacent outputs at once: every tile value it reads feeds up to R of them (R independent sums
/// in flight, 1/R of the shared-memory reads), each still summed in the same order as conv2dDirect.
template <typename In, typename Out, int CN, int R> __global__ void conv2dShared(StripArgs<In, Out> a)
{
    extern __shared__ float tile[];
    constexpr int tileRows = kBlockY * R;
    const int rx = a.kCols / 2;
    const int haloCols = kBlockX + a.kCols - 1, plane = (tileRows + a.kRows - 1) * haloCols;
    const int sliceRows = a.rows + a.kRows - 1;
    const int x0 = blockIdx.x * kBlockX, x = x0 + threadIdx.x;
    const int thread = threadIdx.y * blockDim.x + threadIdx.x, threads = blockDim.x * blockDim.y;
    const int firstRow = threadIdx.y * R;  // of this thread's outputs, within the tile
    for (int y0 = blockIdx.y * tileRows; y0 < a.rows; y0 += gridDim.y * tileRows) {
        __syncthreads();  // the previous tile has been read
        for (int e = thread; e < plane; e += threads) {
            const int r = e / haloCols, k = y0 + r;
            const int sx = borderIndex(x0 + e - r * haloCols - rx, a.cols, a.border);
            // Slice rows past the strip only feed outputs past it, which are never stored.
            const bool border = k >= sliceRows || sx < 0 || a.borderRow(k);
#pragma unroll
            for (int c = 0; c < CN; ++c)
                tile[c * plane + e] = border ? a.borderValue : float(a.in[(size_t(k) * a.cols + sx) * CN + c]);
        }
        __syncthreads();
        float sum[R][CN] = {}, rowSum[R][CN] = {};
        // Tile row firstRow + t is kernel row i = t - r of output r.
        for (int t = 0; t < R + a.kRows - 1; ++t) {
            const float* source = tile + (firstRow + t) * haloCols + threadIdx.x;
            for (int j = 0; j < a.kCols; ++j) {
                float v[CN];
#pragma unroll
                for (int c = 0; c < CN; ++c) v[c] = source[c * plane + j];
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    const int i = t - r;
                    if (i < 0 || i >= a.kRows) continue;
                    const float tap = cTaps[i * a.kCols + j];
#pragma unroll
                    for (int c = 0; c < CN; ++c) rowSum[r][c] = fmaf(tap, v[c], rowSum[r][c]);
                }
            }
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int i = t - r;
                if (i < 0 || i >= a.kRows) continue;
#pragma unroll
                for (int c = 0; c < CN; ++c) {
                    sum[r][c] += rowSum[r][c];
                    rowSum[r][c] = 0;
                }
            }
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int y = y0 + firstRow + r;
            if (x < a.cols && y < a.rows) storePixel<Out, CN>(a.out + (size_t(y) * a.cols + x) * CN, sum[r]);
        }
    }
}

/// separable, pass 1: every slice row (halo rows included) filtered horizontally into `mid`.
/// A constant-border row filters the border value, as the 2D sum does.
template <typename In, typename Out, int CN> __global__ void conv2dRowPass(StripArgs<In, Out> a)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= a.cols) return;
    const int rx = a.kCols / 2, sliceRows = a.rows + a.kRows - 1;
    for (int k = blockIdx.y * blockDim.y + threadIdx.y; k < sliceRows; k += gridDim.y * blockDim.y) {
        const bool borderRow = a.borderRow(k);
        const In* row = a.in + size_t(k) * a.cols * CN;
        float sum[CN] = {};
        for (int j = 0; j < a.kCols; ++j) {
            const float tap = cRowTaps[j];
            const int sx = borderIndex(x + j - rx, a.cols, a.border);
#pragma unroll
            for (int c = 0; c < CN; ++c)
                sum[c] = fmaf(tap, borderRow || sx < 0 ? a.borderValue : float(row[size_t(sx) * CN + c]), sum[c]);
        }
#pragma unroll
        for (int c = 0; c < CN; ++c) a.mid[(size_t(k) * a.cols + x) * CN + c] = sum[c];
    }
}

/// separable, pass 2: output row y is slice rows y .. y + kRows - 1 of `mid`, weighted by the column taps.
template <typename In, typename Out, int CN> __global__ void conv2dColumnPass(StripArgs<In, Out> a)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= a.cols) return;
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < a.rows; y += gridDim.y * blockDim.y) {
        const float* source = a.mid + (size_t(y) * a.cols + x) * CN;
        const size_t pitch = size_t(a.cols) * CN;
        float sum[CN] = {};
        for (int i = 0; i < a.kRows; ++i) {
            const float tap = cColumnTaps[i];
#pragma unroll
            for (int c = 0; c < CN; ++c) sum[c] = fmaf(tap, source[i * pitch + c], sum[c]);
        }
        storePixel<Out, CN>(a.out + (size_t(y) * a.cols + x) * CN, sum);
    }
}

dim3 gridFor(int cols, int rows, int rowsPerBlock)
{
    return dim3(unsigned(cols + kBlockX - 1) / kBlockX, std::min(unsigned(rows + rowsPerBlock - 1) / rowsPerBlock, kMaxGridY));
}

/// Output rows per shared-memory tile and the tile's bytes: the tallest of 32 and 16 rows
/// whose halo tile fits the default 48 KB (several blocks per SM), else 8 rows with the
/// device's opt-in limit (large kernels are bound by their multiply-adds, not the halo).
struct SharedTile {
    int rows = kBlockY;
    size_t bytes = 0;
};

SharedTile sharedTile(int kRows, int kCols, int channels, size_t optInLimit)
{
    const auto bytes = [&](int rows) {
        return size_t(channels) * size_t(rows + kRows - 1) * size_t(kBlockX + kCols - 1) * sizeof(float);
    };
    for (int rows : {4 * kBlockY, 2 * kBlockY})
        if (bytes(rows) <= 48 * 1024) return {rows, bytes(rows)};
    if (bytes(kBlockY) > optInLimit)
        throw InvalidArgument("conv2d shared: a " + std::to_string(kCols) + "x" + std::to_string(kRows) + " kernel on " +
                              std::to_string(channels) + " channels needs " + formatBytes(bytes(kBlockY)) +
                              " of shared memory per block; the device allows " + formatBytes(optInLimit));
    return {kBlockY, bytes(kBlockY)};
}

/// The shared kernel for a tile height (each thread computes tileRows / kBlockY outputs).
template <typename In, typename Out, int CN> auto sharedKernel(int tileRows)
{
    using Kernel = void (*)(StripArgs<In, Out>);
    switch (tileRows / kBlockY) {
    case 4: return Kernel(conv2dShared<In, Out, CN, 4>);
    case 2: return Kernel(conv2dShared<In, Out, CN, 2>);
    default: return Kernel(conv2dShared<In, Out, CN, 1>);
    }
}

template <typename In, typename Out, int CN>
void launchConv2d(Conv2dVariant v, const StripArgs<In, Out>& a, int tileRows, size_t sharedBytes, cudaStream_t s)
{
    const dim3 block(kBlockX, kBlockY);
    switch (v) {
    case Conv2dVariant::Naive:
        conv2dDirect<In, Out, CN, false><<<gridFor(a.cols, a.rows, kBlockY), block, 0, s>>>(a);
        break;
    case Conv2dVariant::Constant:
        conv2dDirect<In, Out, CN, true><<<gridFor(a.cols, a.rows, kBlockY), block, 0, s>>>(a);
        break;
    case Conv2dVariant::Shared:
        sharedKernel<In, Out, CN>(tileRows)<<<gridFor(a.cols, a.rows, tileRows), block, sharedBytes, s>>>(a);
        break;
    case Conv2dVariant::Separable:
        conv2dRowPass<In, Out, CN><<<gridFor(a.cols, a.rows + a.kRows - 1, kBlockY), block, 0, s>>>(a);
        KL_CHECK_LAUNCH();
        conv2dColumnPass<In, Out, CN><<<gridFor(a.cols, a.rows, kBlockY), block, 0, s>>>(a);
        break;
    }
    KL_CHECK_LAUNCH();
}

/// Calls f(In{}, Out{}) for the input depth and output depth pairs conv2d produces.
template <typename F> void withElementTypes(int inDepth, int outDepth, F&& f)
{
    const bool floatOut = outDepth == CV_32F;
    switch (inDepth) {
    case CV_8U: floatOut ? f(uint8_t{}, float{}) : f(uint8_t{}, uint8_t{}); break;
    case CV_16U: floatOut ? f(uint16_t{}, float{}) : f(uint16_t{}, uint16_t{}); break;
    default: f(float{}, float{}); break;
    }
}

/// Calls f(std::integral_constant<int, channels>{}) for 1, 3 or 4 channels.
template <typename F> void withChannels(int channels, F&& f)
{
    switch (channels) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    default: f(std::integral_constant<int, 4>{}); break;
    }
}

template <typename T> void copyToSymbol(const T& symbol, const std::vector<float>& values, cudaStream_t s)
{
    KL_CUDA_TRY(cudaMemcpyToSymbolAsync(symbol, values.data(), values.size() * sizeof(float), 0,
                                        cudaMemcpyHostToDevice, s));
}

} // namespace

GpuReport runConv2d(Engine::Impl& engine, const cv::Mat& input, const Conv2DSpec& spec, const RunOptions& options,
                    cv::Mat& output)
{
    validateConv2D(input, spec);
    const cv::Mat kernel = effectiveKernel(spec);
    const std::vector<float> taps(kernel.begin<float>(), kernel.end<float>());
    const int kRows = kernel.rows, kCols = kernel.cols;
    const std::optional<SeparableKernel> factors = separateKernel(kernel);
    const bool preferSeparable = factors && kRows >= 3 && kCols >= 3 && kRows * kCols > 9;
    const std::string variantName =
        resolveVariant("conv2d", options.variant, kConv2dVariants, preferSeparable ? "separable" : "shared");
    const Conv2dVariant variant = parseVariant(variantName);
    if (variant == Conv2dVariant::Separable && !factors)
        throw InvalidArgument("conv2d variant 'separable': the " + std::to_string(kCols) + "x" +
                              std::to_string(kRows) +
                              " kernel is not separable (not rank-1); use naive, constant, shared or auto");

    const cv::Mat src = input.isContinuous() ? input : input.clone();
    const int rows = src.rows, cols = src.cols, channels = src.channels();
    const int outDepth = conv2dOutputDepth(src, spec);
    const size_t inRowBytes = size_t(cols) * src.elemSize();
    const size_t outRowBytes = size_t(cols) * channels * CV_ELEM_SIZE1(outDepth);
    ensureMemoryAvailable(uint64_t(rows) * outRowBytes, "conv2d output");
    cv::Mat dst(rows, cols, CV_MAKETYPE(outDepth, channels));

    Pipeline p;
    p.op = "conv2d";
    p.variant = variantName;
    p.hostIn = src.data;
    p.hostInBytes = size_t(rows) * inRowBytes;
    p.hostOut = dst.data;
    p.hostOutBytes = size_t(rows) * outRowBytes;
    p.kernelBytes = uint64_t(p.hostInBytes) + p.hostOutBytes;
    p.kernelFlops = 2.0 * double(taps.size()) * double(rows) * cols * channels;

    const int halo = kRows - 1;  // slice rows beyond the strip's own
    int rowsPerChunk = rows;
    std::byte* dIn = nullptr;
    std::byte* dOut = nullptr;
    float* dMid = nullptr;
    float* dTaps = nullptr;
    SharedTile sharedTiling;
    auto strip = [&](int chunk) {
        return std::pair<int, int>(chunk * rowsPerChunk, std::min(rows, (chunk + 1) * rowsPerChunk));
    };
    // Chunk c's slice starts at slice row c * (rowsPerChunk + halo) of the device buffers.
    auto sliceStart = [&](int chunk) { return size_t(chunk) * size_t(rowsPerChunk + halo); };

    p.prepare = [&](int requested) {
        rowsPerChunk = std::max(1, (rows + requested - 1) / requested);
        const int chunks = (rows + rowsPerChunk - 1) / rowsPerChunk;
        const size_t sliceRows = sliceStart(chunks);
        dIn = static_cast<std::byte*>(engine.cache.device("conv2d.in", sliceRows * inRowBytes));
        dOut = static_cast<std::byte*>(engine.cache.device("conv2d.out", p.hostOutBytes));
        const cudaStream_t s = engine.streams[0].get();
        switch (variant) {
        case Conv2dVariant::Naive:
            dTaps = static_cast<float*>(engine.cache.device("conv2d.taps", taps.size() * sizeof(float)));
            KL_CUDA_TRY(cudaMemcpyAsync(dTaps, taps.data(), taps.size() * sizeof(float), cudaMemcpyHostToDevice, s));
            break;
        case Conv2dVariant::Constant: copyToSymbol(cTaps, taps, s); break;
        case Conv2dVariant::Shared:
            copyToSymbol(cTaps, taps, s);
            sharedTiling = sharedTile(kRows, kCols, channels, engine.properties.sharedMemPerBlockOptin);
            withElementTypes(src.depth(), outDepth, [&](auto in, auto out) {
                withChannels(channels, [&](auto cn) {
                    const auto kernel =
                        sharedKernel<decltype(in), decltype(out), decltype(cn)::value>(sharedTiling.rows);
                    KL_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                     int(sharedTiling.bytes)));
                    // Left to itself the driver may keep most of the SM's memory as L1, fitting fewer blocks.
                    KL_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                                     int(cudaSharedmemCarveoutMaxShared)));
                });
            });
            break;
        case Conv2dVariant::Separable:
            dMid = static_cast<float*>(
                engine.cache.device("conv2d.mid", sliceRows * size_t(cols) * channels * sizeof(float)));
            copyToSymbol(cRowTaps, factors->row, s);
            copyToSymbol(cColumnTaps, factors->column, s);
            break;
        }
        KL_CUDA_TRY(cudaStreamSynchronize(s));  // the taps are in place before any chunk runs
        return chunks;
    };
    p.upload = [&](const ChunkContext& c) {
        const int r0 = strip(c.chunk).first, r1 = strip(c.chunk).second;
        std::byte* slice = dIn + sliceStart(c.chunk) * inRowBytes;
        const int sliceRows = r1 - r0 + halo;
        const auto imageRow = [&](int k) { return borderIndex(r0 - kRows / 2 + k, rows, spec.border); };
        size_t bytes = 0;
        // Runs of slice rows that are consecutive image rows go up in one copy.
        for (int k = 0; k < sliceRows;) {
            const int first = imageRow(k);
            int n = 1;
            if (first >= 0) {
                while (k + n < sliceRows && imageRow(k + n) == first + n) ++n;
                KL_CUDA_TRY(cudaMemcpyAsync(slice + size_t(k) * inRowBytes, c.hostIn + size_t(first) * inRowBytes,
                                            size_t(n) * inRowBytes, cudaMemcpyHostToDevice, c.stream));
                bytes += size_t(n) * inRowBytes;
            }
            k += n;
        }
        return bytes;
    };
    p.compute = [&](const ChunkContext& c) {
        const int r0 = strip(c.chunk).first, r1 = strip(c.chunk).second;
        const size_t slice = sliceStart(c.chunk);
        withElementTypes(src.depth(), outDepth, [&](auto inTag, auto outTag) {
            using In = decltype(inTag);
            using Out = decltype(outTag);
            const StripArgs<In, Out> a{reinterpret_cast<const In*>(dIn + slice * inRowBytes),
                                       reinterpret_cast<Out*>(dOut + size_t(r0) * outRowBytes),
                                       dMid ? dMid + slice * size_t(cols) * channels : nullptr,
                                       dTaps,
                                       r1 - r0,
                                       cols,
                                       r0,
                                       rows,
                                       kRows,
                                       kCols,
                                       spec.border,
                                       float(spec.borderValue)};
            withChannels(channels, [&](auto cn) {
                launchConv2d<In, Out, decltype(cn)::value>(variant, a, sharedTiling.rows, sharedTiling.bytes, c.stream);
            });
        });
    };
    p.download = [&](const ChunkContext& c) {
        const auto [r0, r1] = strip(c.chunk);
        const size_t bytes = size_t(r1 - r0) * outRowBytes;
        KL_CUDA_TRY(cudaMemcpyAsync(c.hostOut + size_t(r0) * outRowBytes, dOut + size_t(r0) * outRowBytes, bytes,
                                    cudaMemcpyDeviceToHost, c.stream));
        return bytes;
    };

    std::unique_lock<std::mutex> constantTaps(constantTapsMutex, std::defer_lock);
    if (variant != Conv2dVariant::Naive) constantTaps.lock();
    GpuReport report = runPipeline(engine, p, options);
    output = dst;
    return report;
}

} // namespace kl::gpu
