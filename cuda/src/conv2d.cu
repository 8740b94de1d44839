// 2D convolution on the GPU: exactly conv2d.hpp's function (correlation with
// effectiveKernel, anchor at the centre, borderIndex borders, per channel,
// saturateRound to u8/u16) for every depth, channel count, border mode and
// kernel size.
//
// Variants:
//   naive      one output pixel per thread, all its channels; taps and input read
//              from global memory, borderIndex per tap.
//   constant   the same with the taps in __constant__ memory: all threads of a
//              warp read the same tap, which the constant cache broadcasts.
//   shared     a block stages its input tile (output tile plus the kernel's halo)
//              in shared memory as f32 channel planes, the border resolved while
//              loading, with one vector load per 4 elements inside the row. Each
//              thread computes 4 adjacent pixels in M adjacent rows: per input row
//              it loads the values its window needs into registers once and feeds
//              every output row and tap from them.
//              Square 3, 5, 7, 9 and 15 kernels have compiled sizes (conv2dFixed):
//              loops fully unrolled, every tap at a constant address (the uniform
//              datapath loads two per ULDC and the FFMAs read them from uniform
//              registers), all channel planes staged at once. Other sizes
//              (conv2dAny) stage one plane at a time and keep the taps in shared
//              memory, walking each kernel row in quads of taps.
//   tma        f32 single-channel images, square compiled sizes, compute capability
//              9.0+ (conv2dTma): shared's tiles and arithmetic, but the tiles arrive
//              by the Tensor Memory Accelerator. Persistent blocks walk the tiles; a
//              ninth warp issues one cp.async.bulk.tensor per tile into a ring of
//              tile buffers (mbarrier completion), so each block's next tiles load
//              while it computes instead of loading, synchronising, then computing.
//              Requesting it elsewhere is an InvalidArgument.
//   separable  rank-1 kernels K = column * row^T (separateKernel), kRows + kCols
//              multiply-adds per output instead of kRows * kCols. Square 3..15
//              kernels (conv2dSeparableRing): each thread owns 4 adjacent
//              elements of an interleaved row and walks down a strip of rows,
//              filtering every input row horizontally straight from global memory
//              and keeping the last kRows results in registers for the vertical
//              pass; no intermediate leaves the chip. Other sizes: a row pass into
//              an f32 intermediate in global memory, then a column pass.
//              Requesting it for another kernel is an InvalidArgument.
//   integer    u8 images and output, square compiled sizes, rank-1 kernels whose taps
//              are non-negative multiples of 1/256 summing to at most 1 (integerTaps;
//              OpenCV's default 3x3 and 5x5 Gaussians): the separable passes in 16-bit
//              integer lanes, two bytes per multiply-add, exact (every sum of these
//              taps is exact in f32 and f64 too, so the bits equal the reference's).
//              Each block stages its tile of input rows in shared memory by cp.async
//              (conv2dIntegerTiles). Requesting it elsewhere is an InvalidArgument.
//   auto       integer where it applies. Else separable for rank-1 kernels with both
//              sides >= 3 and more than 9 taps where it measured faster: compiled
//              sizes on several channels, or 15x15 on f32; other sizes from 500 taps
//              on. Otherwise tma where it applies up to 9x9, shared elsewhere.
//
// Measured on an H200 (2026-11-21), kernel only, median ms; copy bandwidth 4163 GB/s
// (read + write), fp32 FMA peak 66.9 TFLOP/s. tests/gpu/tst_conv2d_gpu.cpp `throughput`
// (KL_BENCH=1) prints these; docs/performance.md (conv2d section) has the rest.
//   8192^2 f32, 1 channel     naive  constant  shared   tma    separable  auto
//     3x3  (tma 81% of copy)   1.12    1.06     0.170   0.158   0.175      tma
//     5x5  (tma 76%)           2.43    2.27     0.196   0.170   0.205      tma
//     9x9  (tma 63% of fp32    6.78    6.34     0.337   0.258   0.353      tma
//           peak)
//     15x15 (shared 66%;      17.7    16.5      0.686   0.714   0.623      separable (rank-1),
//           separable 72%)                                                shared
//   8192^2 u8, 3 channels, 5x5 2.81    2.64     0.625     -     0.348      separable (27.8% of copy)
//     default Gaussian (a later run): integer 0.145 ms (66.5% of copy), 3x3
//     0.125 (77%); u8 1 channel 3x3 / 5x5: integer 0.051 / 0.056 (shared 0.136 / 0.175); 4
//     channels 0.165 / 0.183 (78% / 70%).
//   4096^2 u8 (Gaussians)  1ch 15x15: shared 0.176, separable 0.292; 1ch 63x63: 5.85,
//     1.410 (two passes); 4ch 15x15: 0.811, 0.741; 4ch 63x63: 22.0, 3.55.
//   Odd sizes (8191x8179, bench), per element against 8192^2: f32 3x3 1.00, 5x5 1.03,
//     u8 3 channels 5x5 1.02.
// Measured 2026-11-20 (before rows were pitched and u8/u16 rounding became one cvt.rni.sat):
//   Any-size kernels against the two passes (4096^2 f32): 5x3 0.088 / 0.213, 11x11
//     0.234 / 0.342, 31x7 0.324 / 0.676, 31x31 1.243 / 0.758 ms.
//
// Accuracy: sums are f32, each kernel row summed on its own (taps in order, from
// 0) and the row sums then added in order, in every 2D variant alike, so naive,
// constant and shared give identical bits. This two-level summation keeps the
// error below about 5e-7 * sum|K * in| even for 63x63 kernels, inside
// conv2d.hpp's tie band of 1e-6 * sum|K * in|; one running sum over all 3969
// taps would not be (about 4e-6). The separable passes sum each pass the same
// way. So u8/u16 results equal the reference except where its unrounded sum lies
// within that band of a tie.
//
// Chunks are horizontal strips of output rows. Chunk c owns a slice of the
// device input buffer holding (strip rows + 2 * ry) rows, ry = kRows / 2: slice
// row k is image row borderIndex(r0 - ry + k), uploaded from the host (rows the
// border puts outside the image, Constant mode, are not uploaded; the kernels
// test borderIndex on the image row and use the border value). The vertical
// border is thereby resolved by the upload and the horizontal one in the
// kernels; chunks never write or read each other's slices, so the output is the
// same for any stream count. Device rows (input slices and output) are pitched to
// kRowAlignment bytes and copied with cudaMemcpy2DAsync, so vector accesses and
// the TMA engine (16-byte row strides) work at any width: before, a width whose
// rows were not 16-byte aligned took element-by-element paths, up to 1.19x slower
// per element (5.3x for the separable ring until it got a second load path).
//
// Bytes per run (kernelBytes): the input read once + the output written once.
// kernelFlops: 2 * taps * output pixels * channels for every variant, so for
// separable it is the 2D work it stands in for (effective FLOP/s).
#include "conv2d_separable.cuh"
#include "conv2d_tiled.cuh"
#include "engine_internal.hpp"
#include "pipeline.hpp"

#include "kernellab/border.hpp"
#include "kernellab/error.hpp"
#include "kernellab/image.hpp"
#include "kernellab/rounding.hpp"

#include <cuda.h>  // CUtensorMap (types only: the encoder is reached through the runtime)
#include <cudaTypedefs.h>
#include <opencv2/core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <optional>
#include <type_traits>
#include <utility>

namespace kl::gpu {

const std::vector<std::string> kConv2dVariants = {"naive", "constant", "shared", "tma", "separable", "integer"};

namespace {

enum class Conv2dVariant { Naive, Constant, Shared, Tma, Separable, Integer };

Conv2dVariant parseVariant(const std::string& name)
{
    if (name == "naive") return Conv2dVariant::Naive;
    if (name == "constant") return Conv2dVariant::Constant;
    if (name == "separable") return Conv2dVariant::Separable;
    if (name == "tma") return Conv2dVariant::Tma;
    if (name == "integer") return Conv2dVariant::Integer;
    return Conv2dVariant::Shared;
}

/// Constant memory is one copy per device for the whole process: a run that uses it
/// holds this lock from uploading its taps until its last kernel has finished.
std::mutex constantTapsMutex;

// ---- naive, constant ------------------------------------------------------------------------------

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
            const In* row = a.inRow(y + i);
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
        storePixel<Out, CN>(a.outRow(y) + x * CN, sum);
    }
}

// ---- host side ---------------------------------------------------------------------------------------

/// Calls f(std::integral_constant<int, k>{}) when k is a compiled kernel size, and returns whether it was.
template <typename F> bool withFixedSize(int k, F&& f)
{
    switch (k) {
    case 3: f(std::integral_constant<int, 3>{}); return true;
    case 5: f(std::integral_constant<int, 5>{}); return true;
    case 7: f(std::integral_constant<int, 7>{}); return true;
    case 9: f(std::integral_constant<int, 9>{}); return true;
    case 15: f(std::integral_constant<int, 15>{}); return true;
    default: return false;
    }
}

dim3 gridFor(int cols, int rows, int colsPerBlock, int rowsPerBlock)
{
    return dim3(unsigned(cols + colsPerBlock - 1) / unsigned(colsPerBlock),
                std::min(unsigned(rows + rowsPerBlock - 1) / unsigned(rowsPerBlock), kMaxGridY));
}

/// The shared variant's kernel for a problem, its dynamic shared memory and output rows per block.
template <typename In, typename Out> struct SharedKernel {
    void (*kernel)(StripArgs<In, Out>) = nullptr;
    size_t bytes = 0;
    int rowsPerBlock = 0;
};

/// conv2dFixed for square compiled sizes whose tile fits the device, else conv2dAny with the
/// tallest tile (4, 2 or 1 rows per thread) that fits.
template <typename In, typename Out, int CN> SharedKernel<In, Out> sharedKernel(int kRows, int kCols, size_t optInLimit)
{
    SharedKernel<In, Out> chosen;
    if (kRows == kCols)
        withFixedSize(kRows, [&](auto k) {
            constexpr int M = kFixedRowsPerThread;
            using T = FixedStaging<decltype(k)::value, CN, M>;
            if (T::bytes <= optInLimit) chosen = {conv2dFixed<In, Out, CN, decltype(k)::value, M>, T::bytes, T::outRows};
        });
    if (chosen.kernel) return chosen;
    const auto any = [&](auto m) {
        return SharedKernel<In, Out>{conv2dAny<In, Out, CN, decltype(m)::value>,
                                     anyTile(kRows, kCols, decltype(m)::value).bytes, kBlockY * decltype(m)::value};
    };
    for (const SharedKernel<In, Out>& k : {any(std::integral_constant<int, 4>{}), any(std::integral_constant<int, 2>{}),
                                           any(std::integral_constant<int, 1>{})})
        if (k.bytes <= optInLimit) return k;
    throw InvalidArgument("conv2d shared: a " + std::to_string(kCols) + "x" + std::to_string(kRows) +
                          " kernel needs " + formatBytes(any(std::integral_constant<int, 1>{}).bytes) +
                          " of shared memory per block; the device allows " + formatBytes(optInLimit));
}

/// Whether the separable variant runs conv2dSeparableRing (square compiled sizes) rather than two passes.
bool ringApplies(int kRows, int kCols)
{
    return kRows == kCols && withFixedSize(kRows, [](auto) {});
}

/// The integer variant's taps, K = column * row^T / 2^8, where it applies: a u8 image and output, a
/// square compiled size (the ring), and a rank-1 kernel with non-negative taps that are multiples of
/// 2^-8 (integerSeparableKernel) and sum to at most about 1, so that every sum fits a 16-bit lane:
/// 255 * sum(column) * sum(row) + 128 (rounding) <= 65535.
std::optional<IntegerSeparableKernel> integerTaps(int depth, int outDepth, const cv::Mat& kernel)
{
    if (depth != CV_8U || outDepth != CV_8U || !ringApplies(kernel.rows, kernel.cols)) return std::nullopt;
    std::optional<IntegerSeparableKernel> k = integerSeparableKernel(kernel, kIntegerFractionBits);
    if (!k) return std::nullopt;
    const uint64_t columnSum = std::accumulate(k->column.begin(), k->column.end(), uint64_t(0));
    const uint64_t rowSum = std::accumulate(k->row.begin(), k->row.end(), uint64_t(0));
    constexpr uint64_t kLane = 0xFFFF;
    if (columnSum > kLane || rowSum > kLane || 255 * columnSum * rowSum + (1 << (kIntegerFractionBits - 1)) > kLane)
        return std::nullopt;
    return k;
}

/// Whether the tma variant applies: an f32 single-channel image and output, a square compiled size,
/// and a device with the TMA engine (compute capability 9.0 or newer).
bool tmaApplies(int depth, int outDepth, int channels, int kRows, int kCols, const cudaDeviceProp& device)
{
    return depth == CV_32F && outDepth == CV_32F && channels == 1 && ringApplies(kRows, kCols) && device.major >= 9;
}

/// auto: integer wherever it applies. Else separable where it measured faster on the H200 (see the
/// header): rank-1 kernels with both sides >= 3 and more than 9 taps, on the ring (compiled sizes)
/// for several channels or 15x15 on f32, in two passes from 500 taps on. Otherwise tma where it
/// applies up to 9x9 (at 15x15 the plain tiles measured 3% faster), shared elsewhere.
std::string preferredVariant(bool rankOne, bool integer, int kRows, int kCols, int depth, int channels, bool tma)
{
    if (integer) return "integer";
    if (rankOne && kRows >= 3 && kCols >= 3 && kRows * kCols > 9) {
        if (ringApplies(kRows, kCols) ? channels > 1 || (depth == CV_32F && kRows >= 15) : kRows * kCols >= 500)
            return "separable";
    }
    return tma && kRows <= 9 ? "tma" : "shared";
}

/// Lets `kernel` launch with `bytes` of dynamic shared memory (above 48 KB a kernel must opt in
/// before its launch); this also loads its module before any timed run.
template <typename Kernel> void optInSharedMemory(Kernel* kernel, size_t bytes)
{
    KL_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
    // Left to itself the driver may keep most of the SM's memory as L1, fitting fewer blocks.
    KL_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                     int(cudaSharedmemCarveoutMaxShared)));
}

/// Raises the shared variant's dynamic shared-memory limit for this problem.
template <typename In, typename Out, int CN> void configureShared(int kRows, int kCols, size_t optInLimit)
{
    const SharedKernel<In, Out> k = sharedKernel<In, Out, CN>(kRows, kCols, optInLimit);
    optInSharedMemory(k.kernel, k.bytes);
}

/// The driver's cuTensorMapEncodeTiled, reached through the runtime (nothing links libcuda).
PFN_cuTensorMapEncodeTiled_v12000 tensorMapEncoder()
{
    static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
        void* function = nullptr;
        cudaDriverEntryPointQueryResult found{};
        KL_CUDA_TRY(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault,
                                                     &found));
        if (found != cudaDriverEntryPointSuccess || !function)
            throw CudaError("conv2d tma: the CUDA driver has no cuTensorMapEncodeTiled", int(cudaErrorNotSupported));
        return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
    }();
    return encode;
}

/// conv2dTma's launch for one chunk: a tensor map over its slice, and the persistent grid's size.
struct TmaPlan {
    CUtensorMap map;
    int blocks;
};

/// Opts conv2dTma<K> in to its shared memory; returns the persistent grid's size on `device`.
template <int K> int configureTma(const cudaDeviceProp& device)
{
    optInSharedMemory(conv2dTma<K>, TmaShape<K>::bytes);
    int perSM = 0;
    KL_CUDA_TRY(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSM, conv2dTma<K>, kTmaConsumers + 32, TmaShape<K>::bytes));
    return std::clamp(perSM, 1, kTmaBlocksPerSM) * device.multiProcessorCount;
}

/// A tensor map over a `cols` x `sliceRows` f32 slice at `slice` (rows `pitchBytes` apart) whose
/// box is conv2dTma<K>'s tile.
template <int K> CUtensorMap sliceTensorMap(const float* slice, int cols, int sliceRows, size_t pitchBytes)
{
    using T = typename TmaShape<K>::Tile;
    CUtensorMap map;
    const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(sliceRows)}, strides[1] = {cuuint64_t(pitchBytes)};
    const cuuint32_t box[2] = {cuuint32_t(T::cols), cuuint32_t(T::rows)}, elementStrides[2] = {1, 1};
    const CUresult r = tensorMapEncoder()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(slice), dims,
                                          strides, box, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                          CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        throw CudaError("conv2d tma: cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ")", int(r));
    return map;
}

template <int K> void launchTma(const StripArgs<float, float>& a, const TmaPlan& plan, cudaStream_t s)
{
    using T = typename TmaShape<K>::Tile;
    const int tilesX = (a.cols + kTileCols - 1) / kTileCols, tiles = tilesX * ((a.rows + T::outRows - 1) / T::outRows);
    conv2dTma<K><<<std::min(tiles, plan.blocks), dim3(kBlockX, kBlockY + 1), TmaShape<K>::bytes, s>>>(plan.map, a,
                                                                                                     tilesX, tiles);
}

template <typename In, typename Out, int CN>
void launchConv2d(Conv2dVariant v, const StripArgs<In, Out>& a, size_t optInLimit, const TmaPlan* tma, cudaStream_t s)
{
    const dim3 block(kBlockX, kBlockY);
    switch (v) {
    case Conv2dVariant::Naive:
        conv2dDirect<In, Out, CN, false><<<gridFor(a.cols, a.rows, kBlockX, kBlockY), block, 0, s>>>(a);
        break;
    case Conv2dVariant::Constant:
        conv2dDirect<In, Out, CN, true><<<gridFor(a.cols, a.rows, kBlockX, kBlockY), block, 0, s>>>(a);
        break;
    case Conv2dVariant::Shared: {
        const SharedKernel<In, Out> k = sharedKernel<In, Out, CN>(a.kRows, a.kCols, optInLimit);
        k.kernel<<<gridFor(a.cols, a.rows, kTileCols, k.rowsPerBlock), block, k.bytes, s>>>(a);
        break;
    }
    case Conv2dVariant::Tma:
        if constexpr (std::is_same_v<In, float> && std::is_same_v<Out, float> && CN == 1)
            withFixedSize(a.kRows, [&](auto k) { launchTma<decltype(k)::value>(a, *tma, s); });
        break;
    case Conv2dVariant::Integer:
        if constexpr (std::is_same_v<In, uint8_t> && std::is_same_v<Out, uint8_t>)
            withFixedSize(a.kRows, [&](auto k) {
                conv2dIntegerTiles<CN, decltype(k)::value>
                    <<<gridFor(a.cols * CN, a.rows, kRingThreads * kRingElements, kIntegerTileRows), kRingThreads,
                       0, s>>>(a);
            });
        break;
    case Conv2dVariant::Separable:
        if (ringApplies(a.kRows, a.kCols)) {
            withFixedSize(a.kRows, [&](auto k) {
                constexpr int K = decltype(k)::value;
                conv2dSeparableRing<In, Out, CN, K, kRingElements, (K <= 9)>
                    <<<gridFor(a.cols * CN, a.rows, kRingThreads * kRingElements, kRingStrip), kRingThreads, 0, s>>>(
                        a, kRingStrip);
            });
        } else {
            conv2dRowPass<In, Out, CN><<<gridFor(a.cols, a.rows + a.kRows - 1, kBlockX, kBlockY), block, 0, s>>>(a);
            KL_CHECK_LAUNCH();
            conv2dColumnPass<In, Out, CN><<<gridFor(a.cols, a.rows, kBlockX, kBlockY), block, 0, s>>>(a);
        }
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

template <typename T, typename V> void copyToSymbol(const T& symbol, const std::vector<V>& values, cudaStream_t s)
{
    KL_CUDA_TRY(cudaMemcpyToSymbolAsync(symbol, values.data(), values.size() * sizeof(V), 0, cudaMemcpyHostToDevice, s));
}

} // namespace

bool conv2dApplies(const Engine::Impl& engine, const std::string& variant, const cv::Mat& input, const Conv2DSpec& spec)
{
    validateConv2D(input, spec);
    const cv::Mat kernel = effectiveKernel(spec);
    if (variant == "separable") return separateKernel(kernel).has_value();
    if (variant == "integer")
        return integerTaps(input.depth(), conv2dOutputDepth(input, spec), kernel).has_value();
    if (variant == "tma")
        return tmaApplies(input.depth(), conv2dOutputDepth(input, spec), input.channels(), kernel.rows, kernel.cols,
                          engine.properties);
    return true;
}

GpuReport runConv2d(Engine::Impl& engine, const cv::Mat& input, const Conv2DSpec& spec, const RunOptions& options,
                    cv::Mat& output)
{
    validateConv2D(input, spec);
    const cv::Mat kernel = effectiveKernel(spec);
    const std::vector<float> taps(kernel.begin<float>(), kernel.end<float>());
    const int kRows = kernel.rows, kCols = kernel.cols;
    const std::optional<SeparableKernel> factors = separateKernel(kernel);
    const int outDepth = conv2dOutputDepth(input, spec);
    const cudaDeviceProp& device = engine.properties;
    const bool tma = tmaApplies(input.depth(), outDepth, input.channels(), kRows, kCols, device);
    const std::optional<IntegerSeparableKernel> integer = integerTaps(input.depth(), outDepth, kernel);
    const std::string variantName = resolveVariant(
        "conv2d", options.variant, kConv2dVariants,
        preferredVariant(factors.has_value(), integer.has_value(), kRows, kCols, input.depth(), input.channels(), tma));
    const Conv2dVariant variant = parseVariant(variantName);
    const std::string size = std::to_string(kCols) + "x" + std::to_string(kRows);
    if (variant == Conv2dVariant::Separable && !factors)
        throw InvalidArgument("conv2d variant 'separable': the " + size +
                              " kernel is not separable (not rank-1); use naive, constant, shared or auto");
    if (variant == Conv2dVariant::Tma && !tma)
        throw InvalidArgument("conv2d variant 'tma' needs a 32-bit float single-channel image with float output, a "
                              "square 3, 5, 7, 9 or 15 kernel and a GPU of compute capability 9.0 or newer; this is " +
                              describeImage(input) + ", a " + size + " kernel, compute capability " +
                              std::to_string(device.major) + "." + std::to_string(device.minor) +
                              "; use naive, constant, shared or auto");
    if (variant == Conv2dVariant::Integer && !integer)
        throw InvalidArgument("conv2d variant 'integer' needs an 8-bit image with 8-bit output and a square 3, 5, 7, 9 "
                              "or 15 rank-1 kernel whose taps are non-negative multiples of 1/256 summing to at most "
                              "1 (such as the default 3x3 and 5x5 Gaussians); this is " +
                              describeImage(input) + (spec.floatOutput ? " with float output" : "") + ", a " + size +
                              " kernel; use separable, shared or auto");

    const cv::Mat src = input.isContinuous() ? input : input.clone();
    const int rows = src.rows, cols = src.cols, channels = src.channels();
    const size_t inRowBytes = size_t(cols) * src.elemSize();
    const size_t outRowBytes = size_t(cols) * channels * CV_ELEM_SIZE1(outDepth);
    const size_t inPitch = rowPitch(inRowBytes), outPitch = rowPitch(outRowBytes);  // device rows, bytes
    ensureMemoryAvailable(uint64_t(rows) * outPitch, "conv2d output");
    cv::Mat dst(rows, cols, CV_MAKETYPE(outDepth, channels));
    const size_t optInLimit = engine.properties.sharedMemPerBlockOptin;

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
    std::vector<TmaPlan> tmaPlans;  // per chunk
    auto strip = [&](int chunk) {
        return std::pair<int, int>(chunk * rowsPerChunk, std::min(rows, (chunk + 1) * rowsPerChunk));
    };
    // Chunk c's slice starts at slice row c * (rowsPerChunk + halo) of the device buffers.
    auto sliceStart = [&](int chunk) { return size_t(chunk) * size_t(rowsPerChunk + halo); };

    p.prepare = [&](int requested) {
        rowsPerChunk = std::max(1, (rows + requested - 1) / requested);
        const int chunks = (rows + rowsPerChunk - 1) / rowsPerChunk;
        const size_t sliceRows = sliceStart(chunks);
        dIn = static_cast<std::byte*>(engine.cache.device("conv2d.in", sliceRows * inPitch));
        dOut = static_cast<std::byte*>(engine.cache.device("conv2d.out", size_t(rows) * outPitch));
        const cudaStream_t s = engine.streams[0].get();
        switch (variant) {
        case Conv2dVariant::Naive:
            dTaps = static_cast<float*>(engine.cache.device("conv2d.taps", taps.size() * sizeof(float)));
            KL_CUDA_TRY(cudaMemcpyAsync(dTaps, taps.data(), taps.size() * sizeof(float), cudaMemcpyHostToDevice, s));
            break;
        case Conv2dVariant::Constant:
        case Conv2dVariant::Shared:
        case Conv2dVariant::Tma: copyToSymbol(cTaps, taps, s); break;
        case Conv2dVariant::Separable:
            if (!ringApplies(kRows, kCols))
                dMid = static_cast<float*>(
                    engine.cache.device("conv2d.mid", sliceRows * size_t(cols) * channels * sizeof(float)));
            copyToSymbol(cRowTaps, factors->row, s);
            copyToSymbol(cColumnTaps, factors->column, s);
            break;
        case Conv2dVariant::Integer: {
            copyToSymbol(cRowTapsInteger, integer->row, s);
            copyToSymbol(cColumnTapsInteger, integer->column, s);
            // The edge strips' f32 taps from the same integers, exact: column as is, row over 2^8.
            std::vector<float> row, column(integer->column.begin(), integer->column.end());
            for (uint32_t t : integer->row) row.push_back(std::ldexp(float(t), -kIntegerFractionBits));
            copyToSymbol(cRowTaps, row, s);
            copyToSymbol(cColumnTaps, column, s);
            break;
        }
        }
        if (variant == Conv2dVariant::Shared)
            withElementTypes(src.depth(), outDepth, [&](auto in, auto out) {
                withChannels(channels, [&](auto cn) {
                    configureShared<decltype(in), decltype(out), decltype(cn)::value>(kRows, kCols, optInLimit);
                });
            });
        if (variant == Conv2dVariant::Tma)
            withFixedSize(kRows, [&](auto k) {
                constexpr int K = decltype(k)::value;
                const int blocks = configureTma<K>(device);
                tmaPlans.clear();
                for (int c = 0; c < chunks; ++c) {
                    const auto [r0, r1] = strip(c);
                    tmaPlans.push_back({sliceTensorMap<K>(reinterpret_cast<const float*>(dIn + sliceStart(c) * inPitch),
                                                          cols, r1 - r0 + halo, inPitch),
                                        blocks});
                }
            });
        KL_CUDA_TRY(cudaStreamSynchronize(s));  // the taps are in place before any chunk runs
        return chunks;
    };
    p.upload = [&](const ChunkContext& c) {
        const int r0 = strip(c.chunk).first, r1 = strip(c.chunk).second;
        std::byte* slice = dIn + sliceStart(c.chunk) * inPitch;
        const int sliceRows = r1 - r0 + halo;
        const auto imageRow = [&](int k) { return borderIndex(r0 - kRows / 2 + k, rows, spec.border); };
        size_t bytes = 0;
        // Runs of slice rows that are consecutive image rows go up in one copy.
        for (int k = 0; k < sliceRows;) {
            const int first = imageRow(k);
            int n = 1;
            if (first >= 0) {
                while (k + n < sliceRows && imageRow(k + n) == first + n) ++n;
                KL_CUDA_TRY(cudaMemcpy2DAsync(slice + size_t(k) * inPitch, inPitch, c.hostIn + size_t(first) * inRowBytes,
                                              inRowBytes, inRowBytes, size_t(n), cudaMemcpyHostToDevice, c.stream));
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
            const StripArgs<In, Out> a{reinterpret_cast<const In*>(dIn + slice * inPitch),
                                       reinterpret_cast<Out*>(dOut + size_t(r0) * outPitch),
                                       dMid ? dMid + slice * size_t(cols) * channels : nullptr,
                                       dTaps,
                                       r1 - r0,
                                       cols,
                                       r0,
                                       rows,
                                       kRows,
                                       kCols,
                                       spec.border,
                                       float(spec.borderValue),
                                       int(inPitch / sizeof(In)),
                                       int(outPitch / sizeof(Out))};
            withChannels(channels, [&](auto cn) {
                launchConv2d<In, Out, decltype(cn)::value>(variant, a, optInLimit,
                                                           tmaPlans.empty() ? nullptr : &tmaPlans[c.chunk], c.stream);
            });
        });
    };
    p.download = [&](const ChunkContext& c) {
        const auto [r0, r1] = strip(c.chunk);
        const size_t bytes = size_t(r1 - r0) * outRowBytes;
        KL_CUDA_TRY(cudaMemcpy2DAsync(c.hostOut + size_t(r0) * outRowBytes, outRowBytes, dOut + size_t(r0) * outPitch,
                                      outPitch, outRowBytes, size_t(r1 - r0), cudaMemcpyDeviceToHost, c.stream));
        return bytes;
    };

    std::unique_lock<std::mutex> constantTaps(constantTapsMutex, std::defer_lock);
    if (variant != Conv2dVariant::Naive) constantTaps.lock();
    GpuReport report = runPipeline(engine, p, options);
    output = dst;
    return report;
}

} // namespace kl::gpu
