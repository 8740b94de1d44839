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
#include "engine_internal.hpp"
#include "pipeline.hpp"

#include "kernellab/border.hpp"
#include "kernellab/error.hpp"
#include "kernellab/image.hpp"
#include "kernellab/rounding.hpp"

#include <cuda.h>  // CUtensorMap (types only: the encoder is reached through the runtime)
#include <cudaTypedefs.h>
#include <cuda/ptx>
#include <cuda_pipeline_primitives.h>
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

constexpr int kMaxTaps = kMaxConv2DKernelSize * kMaxConv2DKernelSize;
__constant__ float cTaps[kMaxTaps];                        // constant, shared: row-major kRows x kCols
__constant__ float cRowTaps[kMaxConv2DKernelSize];         // separable: kCols taps
__constant__ float cColumnTaps[kMaxConv2DKernelSize];      // separable: kRows taps
__constant__ uint32_t cRowTapsInteger[kMaxConv2DKernelSize];     // integer: kCols taps * 2^8 / column scale
__constant__ uint32_t cColumnTapsInteger[kMaxConv2DKernelSize];  // integer: kRows taps, smallest integers
/// integer: the taps are K = column * row^T / 2^kIntegerFractionBits, so results have 8 bits below the
/// point, and the rounded result is byte 1 of each 16-bit lane.
constexpr int kIntegerFractionBits = 8;

/// Constant memory is one copy per device for the whole process: a run that uses it
/// holds this lock from uploading its taps until its last kernel has finished.
std::mutex constantTapsMutex;

// Blocks are kBlockX x kBlockY threads; grids stride over rows (gridDim.y <= 65535).
constexpr int kBlockX = 32, kBlockY = 8;
constexpr unsigned kMaxGridY = 65535;
/// shared: every thread computes kPixelsPerThread adjacent pixels, a block 128 columns.
constexpr int kPixelsPerThread = 4, kTileCols = kBlockX * kPixelsPerThread;
/// separable (compiled sizes): threads per block.
constexpr int kRingThreads = 128;

constexpr int roundUp4(int n) { return (n + 3) / 4 * 4; }

/// Device rows of conv2d's input and output buffers start on this boundary: the widest vector
/// access (16 bytes) and the TMA engine's row stride (a multiple of 16 bytes) hold at any width.
constexpr size_t kRowAlignment = 128;
size_t rowPitch(size_t rowBytes) { return (rowBytes + kRowAlignment - 1) / kRowAlignment * kRowAlignment; }

/// One chunk: `rows` output rows from image row `row0`, read from a slice of
/// rows + kRows - 1 input rows (slice row k = image row borderIndex(row0 - kRows / 2 + k)).
template <typename In, typename Out> struct StripArgs {
    const In* in;
    Out* out;
    float* mid;          ///< separable (two passes): the row pass's result, one f32 per slice element
    const float* taps;   ///< naive: kRows x kCols taps in global memory
    int rows, cols, row0, imageRows;
    int kRows, kCols;
    BorderMode border;
    float borderValue;
    /// Elements from one row to the next of `in` and `out`. Device rows start on kRowAlignment-byte
    /// boundaries (rowPitch), so every group of 4 elements that starts at a multiple of 4 is aligned
    /// for one vector access at any image width.
    int inPitch, outPitch;

    __device__ const In* inRow(int k) const { return in + size_t(k) * inPitch; }
    __device__ Out* outRow(int y) const { return out + size_t(y) * outPitch; }

    /// Whether slice row k lies in the constant border (outside the image in Constant mode).
    __device__ bool borderRow(int k) const { return borderIndex(row0 - kRows / 2 + k, imageRows, border) < 0; }
    /// Whether slice row k is an image row itself rather than one the border supplies.
    __device__ bool imageRow(int k) const { return unsigned(row0 - kRows / 2 + k) < unsigned(imageRows); }
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

// ---- element access shared by the tiled and the separable kernels -------------------------------

/// Four consecutive elements of the input as one access.
template <typename In> struct Quad;
template <> struct Quad<float> { using type = float4; };
template <> struct Quad<uint8_t> { using type = uint32_t; };
template <> struct Quad<uint16_t> { using type = uint2; };

/// Four consecutive elements from a 4-element-aligned address, in one read-only load.
template <typename In> __device__ typename Quad<In>::type loadQuad(const In* p)
{
    return __ldg(reinterpret_cast<const typename Quad<In>::type*>(p));
}

/// A loaded quad as f32. Integers are placed under the exponent of 2^23 and 2^23 subtracted:
/// exact below 2^23, and two full-rate instructions instead of the quarter-rate conversion unit.
__device__ float4 widen(float4 q) { return q; }
__device__ float integerBits(uint32_t bits) { return __uint_as_float(bits) - 8388608.0f; }
__device__ float4 widen(uint32_t w)
{
    return {integerBits(__byte_perm(w, 0x4B000000u, 0x7440)), integerBits(__byte_perm(w, 0x4B000000u, 0x7441)),
            integerBits(__byte_perm(w, 0x4B000000u, 0x7442)), integerBits(__byte_perm(w, 0x4B000000u, 0x7443))};
}
__device__ float4 widen(uint2 w)
{
    return {integerBits(__byte_perm(w.x, 0x4B000000u, 0x7410)), integerBits(__byte_perm(w.x, 0x4B000000u, 0x7432)),
            integerBits(__byte_perm(w.y, 0x4B000000u, 0x7410)), integerBits(__byte_perm(w.y, 0x4B000000u, 0x7432))};
}

/// Four results to a 4-element-aligned address in one store (saturateRound for integers).
__device__ void store4(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }
__device__ void store4(uint8_t* p, float4 v)
{
    *reinterpret_cast<uint32_t*>(p) = uint32_t(saturateRound<uint8_t>(v.x)) | uint32_t(saturateRound<uint8_t>(v.y)) << 8 |
                                      uint32_t(saturateRound<uint8_t>(v.z)) << 16 |
                                      uint32_t(saturateRound<uint8_t>(v.w)) << 24;
}
__device__ void store4(uint16_t* p, float4 v)
{
    *reinterpret_cast<uint2*>(p) = {uint32_t(saturateRound<uint16_t>(v.x)) | uint32_t(saturateRound<uint16_t>(v.y)) << 16,
                                    uint32_t(saturateRound<uint16_t>(v.z)) | uint32_t(saturateRound<uint16_t>(v.w)) << 16};
}

/// floor(n / CN), n of either sign.
template <int CN> __device__ int floorDiv(int n) { return n >= 0 ? n / CN : (n + 1) / CN - 1; }

/// Element `flat` = pixel * CN + channel of slice row k, as f32; any pixel index (the border).
template <int CN, typename In, typename Out>
__device__ float fetch(const StripArgs<In, Out>& a, int k, bool borderRow, int flat)
{
    const int p = floorDiv<CN>(flat);
    const int sx = borderIndex(p, a.cols, a.border);
    return borderRow || sx < 0 ? a.borderValue : float(a.inRow(k)[sx * CN + (flat - p * CN)]);
}

// ---- shared: tiled kernels --------------------------------------------------------------------------

/// Stages slice rows y0 .. y0 + rows - 1, pixels px0 .. px0 + cols - 1 (px0 may be negative: the
/// border), channels firstPlane .. lastPlane - 1 into f32 planes
/// tile[((c - firstPlane) * rows + row) * cols + pixel - px0]. The interleaved rows are read in
/// `groups` groups of 4 elements from element `first` (a multiple of 4 at or before the first one
/// needed): one vector load per group inside the row, borderIndex per element elsewhere.
/// Slice rows past the strip only feed outputs past it, which are never stored.
/// AlignedTile (one channel, px0 and cols multiples of 4, first == px0): one vector store per group.
template <int CN, bool AlignedTile, typename In, typename Out>
__device__ void loadTile(float* tile, const StripArgs<In, Out>& a, int y0, int px0, int rows, int cols, int first,
                         int groups, int firstPlane, int lastPlane)
{
    const int flatCols = a.cols * CN, sliceRows = a.rows + a.kRows - 1;
    const int threads = blockDim.x * blockDim.y;
    for (int e = threadIdx.y * blockDim.x + threadIdx.x; e < rows * groups; e += threads) {
        const int r = e / groups, flat = first + 4 * (e - r * groups), k = y0 + r;
        const bool borderRow = k >= sliceRows || a.borderRow(k);
        float4 v;
        if (!borderRow && flat >= 0 && flat + 4 <= flatCols)
            v = widen(loadQuad(a.inRow(k) + flat));
        else
            v = {fetch<CN>(a, k, borderRow, flat), fetch<CN>(a, k, borderRow, flat + 1),
                 fetch<CN>(a, k, borderRow, flat + 2), fetch<CN>(a, k, borderRow, flat + 3)};
        if constexpr (AlignedTile) {
            reinterpret_cast<float4*>(tile + r * cols + flat - px0)[0] = v;
        } else {
            const float values[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int p = floorDiv<CN>(flat + q), c = flat + q - p * CN, s = p - px0;
                if (s >= 0 && s < cols && c >= firstPlane && c < lastPlane)
                    tile[((c - firstPlane) * rows + r) * cols + s] = values[q];
            }
        }
    }
}

/// A thread's results for channel c: pixels x .. x + 3 of rows y .. y + M - 1, those inside the strip.
template <int CN, int M, typename In, typename Out>
__device__ void storeTile(const StripArgs<In, Out>& a, int y, int x, int c, const float (&sum)[M][kPixelsPerThread])
{
#pragma unroll
    for (int r = 0; r < M; ++r) {
        if (y + r >= a.rows) return;
        Out* row = a.outRow(y + r);
        if (CN == 1 && x + 4 <= a.cols) {
            store4(row + x, make_float4(sum[r][0], sum[r][1], sum[r][2], sum[r][3]));
        } else {
#pragma unroll
            for (int n = 0; n < kPixelsPerThread; ++n)
                if (x + n < a.cols) row[(x + n) * CN + c] = saturateRound<Out>(sum[r][n]);
        }
    }
}

/// The tile of conv2dFixed and conv2dTma for a K x K kernel: 128 output pixels by kBlockY * M rows,
/// an f32 plane per channel.
template <int K, int CN, int M> struct FixedTile {
    static constexpr int radius = K / 2;
    /// Tile column 0 is pixel x0 - pad; for one channel pad is a multiple of 4 so that rows load
    /// and store whole float4s.
    static constexpr int pad = CN == 1 ? roundUp4(radius) : radius;
    /// A thread's register window starts at its first pixel's column - pad; tap j of pixel n is
    /// window[offset + j + n].
    static constexpr int offset = pad - radius;
    static constexpr int window = roundUp4(offset + K - 1 + kPixelsPerThread);
    static constexpr int cols = (kBlockX - 1) * kPixelsPerThread + window;
    static constexpr int outRows = kBlockY * M, rows = outRows + K - 1;
};

/// How conv2dFixed stages its tile: the interleaved elements of a tile row from x0 * CN - head, in
/// groups of 4, into `bytes` of shared memory.
template <int K, int CN, int M> struct FixedStaging : FixedTile<K, CN, M> {
    using T = FixedTile<K, CN, M>;
    static constexpr int head = roundUp4(T::pad * CN), groups = (head + (T::cols - T::pad) * CN + 3) / 4;
    static constexpr size_t bytes = size_t(CN) * T::rows * T::cols * sizeof(float);
};

/// Output rows per thread of conv2dFixed (tiles of kBlockY * 2 rows). Measured on the H200
/// (8192^2 f32, 3x3 .. 15x15; u8 3 and 4 channels): 2 beat 4 and 8 everywhere, e.g. 3x3
/// 0.176 / 0.204 / 0.281 ms: shorter tiles fit more blocks per SM, whose loads then overlap
/// other blocks' arithmetic.
constexpr int kFixedRowsPerThread = 2;

/// A conv2dFixed / conv2dTma thread's sums: pixels 4 across and M rows down from `source`, its
/// first tile row (row pitch T::cols floats), each kernel row summed on its own and the row sums
/// added in order.
template <int K, int CN, int M> __device__ void tileSums(const float* source, float (&sum)[M][kPixelsPerThread])
{
    using T = FixedTile<K, CN, M>;
    // Tile row t is kernel row i = t - r of output row r.
#pragma unroll
    for (int t = 0; t < M + K - 1; ++t) {
        float w[T::window];
#pragma unroll
        for (int g = 0; g < T::window / 4; ++g) {
            const float4 v = reinterpret_cast<const float4*>(source + t * T::cols)[g];
            w[4 * g] = v.x, w[4 * g + 1] = v.y, w[4 * g + 2] = v.z, w[4 * g + 3] = v.w;
        }
        // Keeps the compiler from hoisting every row's loads to the top (a register per value).
        asm volatile("" ::: "memory");
#pragma unroll
        for (int r = 0; r < M; ++r) {
            const int i = t - r;
            if (i < 0 || i >= K) continue;
            float rowSum[kPixelsPerThread] = {};
#pragma unroll
            for (int j = 0; j < K; ++j)
#pragma unroll
                for (int n = 0; n < kPixelsPerThread; ++n)
                    rowSum[n] = fmaf(cTaps[i * K + j], w[T::offset + j + n], rowSum[n]);
#pragma unroll
            for (int n = 0; n < kPixelsPerThread; ++n) sum[r][n] += rowSum[n];
        }
    }
}

template <typename In, typename Out, int CN, int K, int M>
__global__ void __launch_bounds__(kBlockX* kBlockY, 2) conv2dFixed(StripArgs<In, Out> a)
{
    using T = FixedStaging<K, CN, M>;
    extern __shared__ float4 sharedStorage[];
    float* tile = reinterpret_cast<float*>(sharedStorage);
    const int x0 = blockIdx.x * kTileCols, x = x0 + threadIdx.x * kPixelsPerThread, firstRow = threadIdx.y * M;
    for (int y0 = blockIdx.y * T::outRows; y0 < a.rows; y0 += gridDim.y * T::outRows) {
        __syncthreads();  // the previous tile has been read
        loadTile<CN, CN == 1>(tile, a, y0, x0 - T::pad, T::rows, T::cols, x0 * CN - T::head, T::groups, 0, CN);
        __syncthreads();
#pragma unroll 1
        for (int c = 0; c < CN; ++c) {
            float sum[M][kPixelsPerThread] = {};
            tileSums<K, CN, M>(tile + (c * T::rows + firstRow) * T::cols + threadIdx.x * kPixelsPerThread, sum);
            storeTile<CN, M>(a, y0 + firstRow, x, c, sum);
        }
    }
}

// ---- tma: conv2dFixed's tiles delivered by the TMA engine (f32, one channel, sm_90) -------------

/// conv2dTma's shape for a K x K kernel: output rows per thread (tiles of kBlockY * M rows) and
/// tile buffers per block. Measured on the H200 (8192^2 f32, random taps; ms for M = 2 / 3 / 4 with
/// 6 / 4 / 3 buffers, 3 blocks per SM unless marked): 3x3 0.159 / 0.177 (4 blocks) / 0.162, 5x5
/// 0.171 / 0.171 / 0.172, 7x7 0.205 / 0.189 / 0.184, 9x9 0.302 (2 blocks) / 0.258 / 0.251, 15x15
/// (2 blocks) 0.704 / 0.792 / 0.921.
template <int K> struct TmaShape {
    static constexpr int rowsPerThread = K >= 15 ? 2 : 4, stages = K >= 15 ? 6 : 3;
    using Tile = FixedTile<K, 1, rowsPerThread>;
    static constexpr int tileFloats = Tile::rows * Tile::cols;
    /// Buffers start on 128-byte boundaries, as the TMA engine requires of its destination.
    static constexpr int stageFloats = (tileFloats + 31) / 32 * 32;
    /// The buffers, then a "full" and an "empty" mbarrier per buffer.
    static constexpr size_t bytes = size_t(stages) * stageFloats * sizeof(float) + 2 * stages * sizeof(uint64_t);
};
/// conv2dTma's compute threads; one more warp issues the copies.
constexpr int kTmaConsumers = kBlockX * kBlockY;
/// Resident conv2dTma blocks per SM, at most. Measured on the H200 (sweep, 8192^2 f32): 3 beat 2
/// and 4 wherever the tile fits either (5x5, 4 rows per thread: 3 blocks 0.172 ms, 2 blocks 0.197;
/// 2 rows: 3 blocks 0.171, 4 blocks 0.202), and the 3x3 kernel, which fits 4, ran 0.174 ms with 4
/// against 0.162 in the sweep with 3.
constexpr int kTmaBlocksPerSM = 3;

/// conv2dFixed's tiles and arithmetic for f32 single-channel images, without the staging: a
/// persistent block walks tiles id = blockIdx.x, + gridDim.x, ... (row-major over tilesX columns of
/// tiles). One thread of a ninth warp copies each tile into one of `stages` shared buffers with one
/// cp.async.bulk.tensor (the TMA engine, `map` over the pitched slice) whose completion lands on
/// that buffer's "full" mbarrier; the 8 compute warps wait there, compute as conv2dFixed, and
/// release the buffer on its "empty" mbarrier, so each block has the next tiles in flight while it
/// computes. The engine fills columns outside the image with zeros: tiles at the left and right
/// ends (and constant-border rows, which are not uploaded) are fixed up in shared memory through
/// borderIndex first.
template <int K> __global__ void __launch_bounds__(kTmaConsumers + 32)
    conv2dTma(const __grid_constant__ CUtensorMap map, StripArgs<float, float> a, int tilesX, int tiles)
{
#if __CUDA_ARCH__ >= 900
    using S = TmaShape<K>;
    using T = typename S::Tile;
    constexpr int M = S::rowsPerThread;
    extern __shared__ float4 sharedStorage[];
    float* buffers = reinterpret_cast<float*>(sharedStorage);
    uint64_t* full = reinterpret_cast<uint64_t*>(buffers + S::stages * S::stageFloats);
    uint64_t* empty = full + S::stages;
    const int thread = threadIdx.y * kBlockX + threadIdx.x;
    if (thread == 0) {
        for (int s = 0; s < S::stages; ++s) {
            cuda::ptx::mbarrier_init(&full[s], 1);
            cuda::ptx::mbarrier_init(&empty[s], kTmaConsumers);
        }
        cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
    }
    __syncthreads();
    const auto waitPhase = [](uint64_t* barrier, uint32_t parity) {
        while (!cuda::ptx::mbarrier_try_wait_parity(barrier, parity)) {
        }
    };
    const auto tileOrigin = [&](int id) {  // the tile's first output pixel and row
        const int ty = id / tilesX;
        return int2{(id - ty * tilesX) * kTileCols, ty * T::outRows};
    };
    if (threadIdx.y == kBlockY) {  // the copying warp
        if (threadIdx.x != 0) return;
        int n = 0;
        for (int id = blockIdx.x; id < tiles; id += gridDim.x, ++n) {
            const int s = n % S::stages;
            if (n >= S::stages) waitPhase(&empty[s], (n / S::stages - 1) & 1);
            const int2 origin = tileOrigin(id);
            const int32_t coords[2] = {origin.x - T::pad, origin.y};
            cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                                 &full[s], S::tileFloats * sizeof(float));
            cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global,
                                            buffers + s * S::stageFloats, &map, coords, &full[s]);
        }
        return;
    }
    const int sliceRows = a.rows + K - 1;
    int n = 0;
    for (int id = blockIdx.x; id < tiles; id += gridDim.x, ++n) {
        const int s = n % S::stages;
        const int2 origin = tileOrigin(id);
        const int px0 = origin.x - T::pad, lastRow = min(origin.y + T::rows, sliceRows) - 1;
        float* tile = buffers + s * S::stageFloats;
        waitPhase(&full[s], (n / S::stages) & 1);
        if (px0 < 0 || px0 + T::cols > a.cols || a.borderRow(origin.y) || a.borderRow(lastRow)) {
            for (int e = thread; e < T::rows * T::cols; e += kTmaConsumers) {
                const int r = e / T::cols, px = px0 + e - r * T::cols, k = origin.y + r;
                if (k >= sliceRows) break;  // rows past the slice only feed outputs past the strip
                const bool borderRow = a.borderRow(k);
                if (px < 0 || px >= a.cols || borderRow) tile[e] = fetch<1>(a, k, borderRow, px);
            }
            asm volatile("bar.sync 1, %0;" ::"n"(kTmaConsumers) : "memory");  // the compute warps only
        }
        float sum[M][kPixelsPerThread] = {};
        tileSums<K, 1, M>(tile + threadIdx.y * M * T::cols + threadIdx.x * kPixelsPerThread, sum);
        // The reads above are generic-proxy accesses and the next copy into this buffer an
        // async-proxy write: without this fence the release let the copy overwrite values not yet
        // read (seen on the H200 as stale values in up to 1 of 10^5 outputs of a 1x1 kernel).
        cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
        cuda::ptx::mbarrier_arrive(&empty[s]);
        storeTile<1, M>(a, origin.y + threadIdx.y * M, origin.x + threadIdx.x * kPixelsPerThread, 0, sum);
    }
#endif
}

/// conv2dAny's tile for a kRows x kCols kernel: the taps as kRows rows of `quads` float4 (zero
/// padded), then one channel plane of 128 + 4 * quads columns (column 0 = pixel x0 - kCols / 2)
/// by kBlockY * M + kRows - 1 rows.
struct AnyTile {
    int quads, cols, rows;
    size_t bytes;
};

__host__ __device__ AnyTile anyTile(int kRows, int kCols, int rowsPerThread)
{
    const int quads = (kCols + 3) / 4, cols = kTileCols + 4 * quads, rows = kBlockY * rowsPerThread + kRows - 1;
    return {quads, cols, rows, (size_t(rows) * cols + size_t(kRows) * quads * 4) * sizeof(float)};
}

template <typename In, typename Out, int CN, int M>
__global__ void __launch_bounds__(kBlockX* kBlockY) conv2dAny(StripArgs<In, Out> a)
{
    extern __shared__ float4 sharedStorage[];
    const AnyTile shape = anyTile(a.kRows, a.kCols, M);
    const int fullQuads = a.kCols / 4, rx = a.kCols / 2;
    float4* taps = sharedStorage;
    float* tile = reinterpret_cast<float*>(sharedStorage + a.kRows * shape.quads);
    const int thread = threadIdx.y * blockDim.x + threadIdx.x, threads = blockDim.x * blockDim.y;
    for (int e = thread; e < a.kRows * shape.quads * 4; e += threads) {
        const int i = e / (shape.quads * 4), j = e - i * shape.quads * 4;
        reinterpret_cast<float*>(taps)[e] = j < a.kCols ? cTaps[i * a.kCols + j] : 0.f;
    }
    const int x0 = blockIdx.x * kTileCols, x = x0 + threadIdx.x * kPixelsPerThread, firstRow = threadIdx.y * M;
    const int px0 = x0 - rx;
    for (int y0 = blockIdx.y * kBlockY * M; y0 < a.rows; y0 += gridDim.y * kBlockY * M) {
#pragma unroll 1
        for (int c = 0; c < CN; ++c) {
            __syncthreads();  // the taps are in place; the previous plane has been read
            const int first = (px0 * CN + c) & ~3;
            const int groups = ((px0 + shape.cols - 1) * CN + c + 1 - first + 3) / 4;
            loadTile<CN, false>(tile, a, y0, px0, shape.rows, shape.cols, first, groups, c, c + 1);
            __syncthreads();
            const float* source = tile + firstRow * shape.cols + threadIdx.x * kPixelsPerThread;
            float sum[M][kPixelsPerThread] = {};
            for (int t = 0; t < M + a.kRows - 1; ++t) {
                bool live[M];
#pragma unroll
                for (int r = 0; r < M; ++r) live[r] = t - r >= 0 && t - r < a.kRows;
                float rowSum[M][kPixelsPerThread] = {};
                const float4* row = reinterpret_cast<const float4*>(source + t * shape.cols);
                for (int q = 0; q < shape.quads; ++q) {
                    const float4 lo = row[q], hi = row[q + 1];
                    const float w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
                    const bool full = q < fullQuads;
#pragma unroll
                    for (int r = 0; r < M; ++r) {
                        if (!live[r]) continue;
                        const float4 quad = taps[(t - r) * shape.quads + q];
                        const float tap[4] = {quad.x, quad.y, quad.z, quad.w};
#pragma unroll
                        for (int jj = 0; jj < 4; ++jj) {
                            if (!full && 4 * q + jj >= a.kCols) break;
#pragma unroll
                            for (int n = 0; n < kPixelsPerThread; ++n)
                                rowSum[r][n] = fmaf(tap[jj], w[jj + n], rowSum[r][n]);
                        }
                    }
                }
#pragma unroll
                for (int r = 0; r < M; ++r)
                    if (live[r])
#pragma unroll
                        for (int n = 0; n < kPixelsPerThread; ++n) sum[r][n] += rowSum[r][n];
            }
            storeTile<CN, M>(a, y0 + firstRow, x, c, sum);
        }
    }
}

// ---- separable ---------------------------------------------------------------------------------------

/// The input window of the row pass for N interleaved elements from `flat` of an image row whose
/// window lies inside the row: quads from flat - head (the halo rounded up to 4), as loaded.
template <typename In, int CN, int K, int N> struct RowWindow {
    static constexpr int halo = K / 2 * CN, head = roundUp4(halo), quads = (2 * head + N) / 4;
    typename Quad<In>::type quad[quads];
};

/// Slice row k's window around element `flat`, one vector load per quad (inside the row: see
/// ringInterior).
template <int CN, int K, int N, typename In, typename Out>
__device__ RowWindow<In, CN, K, N> loadWindow(const StripArgs<In, Out>& a, int k, int flat)
{
    using W = RowWindow<In, CN, K, N>;
    W w;
    const In* source = a.inRow(k) + flat - W::head;
#pragma unroll
    for (int q = 0; q < W::quads; ++q) w.quad[q] = loadQuad(source + 4 * q);
    return w;
}

/// Whether the window of the thread owning element `flat` lies inside its row, so that loadWindow
/// may read it.
template <int CN, int K, int N, typename In>
__device__ bool ringInterior(int flat, int flatCols)
{
    const int margin = RowWindow<In, CN, K, N>::head;
    return flat >= margin && flat + N + margin <= flatCols;
}

/// The row pass over a loaded window, summed as conv2dRowPass sums it.
template <typename In, int CN, int K, int N> __device__ void rowSums(const RowWindow<In, CN, K, N>& w, float (&out)[N])
{
    using W = RowWindow<In, CN, K, N>;
    float v[4 * W::quads];
#pragma unroll
    for (int q = 0; q < W::quads; ++q) {
        const float4 f = widen(w.quad[q]);
        v[4 * q] = f.x, v[4 * q + 1] = f.y, v[4 * q + 2] = f.z, v[4 * q + 3] = f.w;
    }
#pragma unroll
    for (int n = 0; n < N; ++n) {
        float sum = 0;
#pragma unroll
        for (int j = 0; j < K; ++j) sum = fmaf(cRowTaps[j], v[W::head - W::halo + n + j * CN], sum);
        out[n] = sum;
    }
}

/// Window bytes s and s + 1 as two 16-bit lanes, s's in the low one (s is a constant once unrolled).
template <int Q> __device__ uint32_t bytePair(const uint32_t (&quad)[Q], int s)
{
    const int word = s / 4, offset = s % 4;
    if (offset < 3) return __byte_perm(quad[word], 0, 0x4040 | offset | (offset + 1) << 8);
    return __byte_perm(quad[word], quad[word + 1], 0x0403) & 0x00FF00FFu;
}

/// The integer variant's row pass: elements 2p and 2p + 1 summed together in the two 16-bit lanes
/// of out[p], one IMAD per tap for both (no lane overflows: integerTaps bounds every sum).
template <int CN, int K, int N> __device__ void rowSums(const RowWindow<uint8_t, CN, K, N>& w, uint32_t (&out)[N / 2])
{
    using W = RowWindow<uint8_t, CN, K, N>;
#pragma unroll
    for (int p = 0; p < N / 2; ++p) {
        uint32_t sum = 0;
#pragma unroll
        for (int j = 0; j < K; ++j) sum += cRowTapsInteger[j] * bytePair(w.quad, W::head - W::halo + 2 * p + j * CN);
        out[p] = sum;
    }
}

template <int N> struct RowValues {
    float v[N];
};

/// The row pass anywhere, element by element through borderIndex. Not inlined: the ring kernel
/// unrolls its row loop K times, and one copy of this rarely taken path serves them all.
template <int CN, int K, int N, typename In, typename Out>
__device__ __noinline__ RowValues<N> rowPassBorder(StripArgs<In, Out> a, int k, int flat)
{
    const bool borderRow = a.borderRow(k);
    RowValues<N> out;
#pragma unroll
    for (int n = 0; n < N; ++n) {
        float sum = 0;
        for (int j = 0; j < K; ++j)
            sum = fmaf(cRowTaps[j], fetch<CN>(a, k, borderRow, flat + n + (j - K / 2) * CN), sum);
        out.v[n] = sum;
    }
    return out;
}

/// The sums of output row y of the ring (slots in slice row order) to its N elements from `flat`.
template <int K, int N, typename Out>
__device__ void storeRingRow(Out* out, int flat, int flatCols, const float (&ring)[K][N], int first)
{
    float sum[N] = {};
#pragma unroll
    for (int i = 0; i < K; ++i)
#pragma unroll
        for (int n = 0; n < N; ++n) sum[n] = fmaf(cColumnTaps[i], ring[(first + i) % K][n], sum[n]);
    if (flat + N <= flatCols) {
#pragma unroll
        for (int g = 0; g < N / 4; ++g)
            store4(out + 4 * g, make_float4(sum[4 * g], sum[4 * g + 1], sum[4 * g + 2], sum[4 * g + 3]));
    } else {
#pragma unroll
        for (int n = 0; n < N; ++n)
            if (flat + n < flatCols) out[n] = saturateRound<Out>(sum[n]);
    }
}

/// The integer ring's output row: the column taps over the ring's lanes give 2^8 times the result
/// (kIntegerFractionBits), rounded to nearest, ties to even, like saturateRound (integerTaps keeps
/// it within 0..255), to the `remaining` elements of the row from `out`, in whole words: a word that
/// passes the row end writes into the row's padding (rows are pitched, rowPitch), which is never
/// copied back. Byte stores for a row's last word cost a branch on every row of every thread: 8192^2
/// u8 3 channels 5x5 went from 0.159 to 0.145 ms without it.
template <int K, int N>
__device__ void storeRingRow(uint8_t* out, int remaining, const uint32_t (&ring)[K][N / 2], int first)
{
    uint32_t sum[N / 2] = {};
#pragma unroll
    for (int i = 0; i < K; ++i)
#pragma unroll
        for (int p = 0; p < N / 2; ++p) sum[p] += cColumnTapsInteger[i] * ring[(first + i) % K][p];
    const auto roundLanes = [](uint32_t v) { return v + 0x007F007Fu + (v >> 8 & 0x00010001u); };
    // bytes 1 and 3 of each rounded word are the results
    const auto results = [&](int g) { return __byte_perm(roundLanes(sum[2 * g]), roundLanes(sum[2 * g + 1]), 0x7531); };
#pragma unroll
    for (int g = 0; g < N / 4; ++g)
        if (4 * g < remaining) reinterpret_cast<uint32_t*>(out)[g] = results(g);
}

/// One row pass of slice row k for a thread whose window leaves its row, element by element.
template <typename In, typename Out, int CN, int K, int N>
__device__ void rowPassEdge(const StripArgs<In, Out>& a, int k, int flat, float (&out)[N])
{
    const RowValues<N> values = rowPassBorder<CN, K, N>(a, k, flat);
#pragma unroll
    for (int n = 0; n < N; ++n) out[n] = values.v[n];
}

/// The ring's strips that reach border rows, and with Prefetch those of threads whose window leaves
/// the row: one output row per iteration, the ring advanced by register moves. Not inlined and not
/// unrolled: these strips are few, and keeping them out of the main loop keeps that loop in the
/// instruction cache (a second unrolled copy measured up to 2.7x slower from instruction fetch
/// stalls).
template <typename In, typename Out, int CN, int K, int N>
__device__ __noinline__ void ringEdgeStrip(StripArgs<In, Out> a, int flat, int y0, int y1)
{
    const int flatCols = a.cols * CN;
    const bool interior = ringInterior<CN, K, N, In>(flat, flatCols);
    const auto rowInto = [&](int k, float(&out)[N]) {
        if (interior && a.imageRow(k)) rowSums(loadWindow<CN, K, N>(a, k, flat), out);
        else rowPassEdge<In, Out, CN, K, N>(a, k, flat, out);
    };
    float ring[K][N];
#pragma unroll
    for (int s = 0; s < K - 1; ++s) rowInto(y0 + s, ring[s]);
#pragma unroll 1
    for (int y = y0; y < y1; ++y) {
        rowInto(y + K - 1, ring[K - 1]);
        storeRingRow<K, N>(a.outRow(y) + flat, flat, flatCols, ring, 0);
#pragma unroll
        for (int s = 0; s < K - 1; ++s)
#pragma unroll
            for (int n = 0; n < N; ++n) ring[s][n] = ring[s + 1][n];
    }
}

/// The ring walk of conv2dSeparableRing and conv2dIntegerTiles over output rows y0 .. y1 - 1:
/// rowInto(k, slot) leaves slice row k's row pass in ring[(k - y0) % K], then storeRow(y, first)
/// sums output row y from the slots of slice rows y .. y + K - 1, the first of them ring[first].
/// Unrolled by K so that every slot index is a constant (the ring stays in registers).
template <int K, typename Slot, typename RowInto, typename StoreRow>
__device__ __forceinline__ void walkRing(int y0, int y1, Slot (&ring)[K], RowInto&& rowInto, StoreRow&& storeRow)
{
#pragma unroll
    for (int s = 0; s < K - 1; ++s) rowInto(y0 + s, ring[s]);
    for (int y = y0; y < y1; y += K) {
#pragma unroll
        for (int s = 0; s < K; ++s) {
            if (y + s >= y1) break;
            rowInto(y + s + K - 1, ring[(s + K - 1) % K]);
            storeRow(y + s, s);
        }
    }
}

/// Separable K x K kernels: thread t owns interleaved elements t * N .. t * N + N - 1 of every row
/// of a strip of stripRows output rows. Slice row k's row pass lands in ring[(k - y0) % K]; output
/// row y sums ring slots for slice rows y .. y + K - 1 with the column taps, in order, as
/// conv2dColumnPass. The row loop is unrolled by K so that every ring index is a constant.
/// Prefetch: each row's window is loaded while the previous row is summed. Rows are pitched, so the
/// window is vector loads at any width (an odd-width u8 image once took the element-by-element path
/// on every row, 5.3x slower per element; carrying a second load path cost 7%). Strips that
/// reach border rows go to ringEdgeStrip, and so do threads whose window leaves the row where the
/// walk prefetches; without prefetch (15x15) those threads stay in the loop with the element-by-
/// element row pass. Measured on the H200 (8192^2 f32 Gaussians): in the loop, 5x5 0.204 -> 0.227
/// ms and 9x9 0.348 -> 0.415 (the prefetching loop carries the second path); out of line, 15x15
/// 0.626 -> 0.679 (a warp holding a row-end thread runs the strip twice).
template <typename In, typename Out, int CN, int K, int N, bool Prefetch>
__global__ void __launch_bounds__(kRingThreads) conv2dSeparableRing(StripArgs<In, Out> a, int stripRows)
{
    using Window = RowWindow<In, CN, K, N>;
    const int flatCols = a.cols * CN, flat = (blockIdx.x * kRingThreads + threadIdx.x) * N;
    if (flat >= flatCols) return;
    const bool interior = ringInterior<CN, K, N, In>(flat, flatCols);
    for (int y0 = blockIdx.y * stripRows; y0 < a.rows; y0 += gridDim.y * stripRows) {
        const int y1 = min(y0 + stripRows, a.rows), last = y1 + K - 2;  // the strip reads slice rows y0 .. last
        if (!(a.imageRow(y0) && a.imageRow(last)) || (Prefetch && !interior)) {
            ringEdgeStrip<In, Out, CN, K, N>(a, flat, y0, y1);
            continue;
        }
        Window window{};
        if constexpr (Prefetch) window = loadWindow<CN, K, N>(a, y0, flat);
        // Leaves slice row k's row pass in out; called for k = y0, y0 + 1, ... in turn.
        const auto rowInto = [&](int k, float(&out)[N]) {
            if constexpr (Prefetch) {
                const Window next = loadWindow<CN, K, N>(a, min(k + 1, last), flat);
                rowSums(window, out);
                window = next;
            } else if (interior) {
                rowSums(loadWindow<CN, K, N>(a, k, flat), out);
            } else {
                rowPassEdge<In, Out, CN, K, N>(a, k, flat, out);
            }
        };
        float ring[K][N];
        walkRing(y0, y1, ring, rowInto,
                 [&](int y, int first) { storeRingRow<K, N>(a.outRow(y) + flat, flat, flatCols, ring, first); });
    }
}

/// conv2dSeparableRing's shape: interleaved elements per thread and output rows per strip. Measured
/// on the H200 (8192^2, 3x3 .. 15x15 f32 and 5x5 u8 3 channels): 4 elements and 16 rows beat 8 or
/// 16 elements and 32 or 64 rows everywhere (u8 3 channels 5x5: 0.395 ms against 0.45-0.50 for 8
/// elements and 0.73-1.4 for 16, even with 16-byte loads: the unrolled walk outgrows the
/// instruction cache, and a ring advanced by moves costs 4 instructions per element; 0.415 for 32
/// rows): more threads in flight, though short strips recompute more halo rows. The walk waits
/// on its loads, so it prefetches up to 9x9; at 15x15 the prefetched window takes the kernel from
/// about 100 to 160-255 registers (ptxas -v), fewer threads in flight, and it is left out there.
constexpr int kRingElements = 4, kRingStrip = 16;

/// conv2dIntegerTiles' staging outside the row: slice rows y0 .. y0 + rows - 1, bytes from element
/// `first`, span bytes each, to `target` (row r at target + r * span). Constant border rows are
/// filled with the border value; in the other rows the bytes before chunk cLo and from chunk cHi
/// on (16 bytes each) come through borderIndex. The bytes are spread over the whole block so that
/// their loads overlap: one thread per 16 bytes, each waiting on its loads in turn, took a row-end
/// tile several times as long as an inner one (8192^2 u8 3 channels 5x5: 0.194 ms against 0.146
/// with the row-end tiles skipped). Not inlined: it runs on the edge tiles only.
template <int CN>
__device__ __noinline__ void stageTileEdges(StripArgs<uint8_t, uint8_t> a, uint8_t* target, int span, int y0,
                                            int rows, int first, int cLo, int cHi)
{
    if (a.border == BorderMode::Constant) {
        const uint32_t fill = 0x01010101u * uint32_t(a.borderValue);  // a byte where tiles stage bytes
        for (int i = threadIdx.x; i < rows * span / 4; i += kRingThreads)
            if (a.borderRow(y0 + i / (span / 4))) reinterpret_cast<uint32_t*>(target)[i] = fill;
    }
    const int head = 16 * cLo, edgeBytes = span - 16 * (cHi - cLo);
    for (int i = threadIdx.x; i < rows * edgeBytes; i += kRingThreads) {
        const int r = i / edgeBytes, b = i - r * edgeBytes, offset = b < head ? b : b + 16 * (cHi - cLo);
        if (!a.borderRow(y0 + r)) target[r * span + offset] = uint8_t(fetch<CN>(a, y0 + r, false, first + offset));
    }
}

/// integer: output rows per tile. Taller tiles recompute fewer halo rows but keep more bytes of
/// shared memory waiting for their copies. Measured on the H200 (8192^2 u8 Gaussians, ms):
///   rows   3 ch 5x5   3 ch 3x3   1 ch 3x3   4 ch 5x5
///   16     0.169      0.142      0.053      0.216   (before whole-word stores)
///   24     0.148      0.124      0.049      0.188
///   32     0.145      0.125      0.051      0.183
///   48     0.142      0.126      0.051      0.179   (7 blocks per SM: shared memory)
/// 32 serves all; 48 gains 2% on 3 channels 5x5 and loses on one channel.
constexpr int kIntegerTileRows = 32;

/// The integer variant (u8, integerTaps' kernels): a block's tile is kRingThreads * 4 interleaved
/// elements by kIntegerTileRows output rows. The block copies the tile's input rows, with a
/// 16-byte-aligned halo, into shared memory: inside the row by cp.async, 16 bytes per copy and
/// all in flight at once; past the row ends and in constant border rows byte by byte
/// (stageTileEdges). Then each thread walks its 4 elements down the tile as conv2dSeparableRing does,
/// its window read from shared memory and its sums in 16-bit lanes, two elements per word (rowSums,
/// storeRingRow's integer forms). A constant border whose value is not a byte (0..255) cannot be
/// staged as bytes: the tiles that reach it run ringEdgeStrip in f32, exact for these kernels.
/// Measured on the H200 (8192^2 u8 3 channels 5x5): the ring walk's loads from global memory
/// (one row ahead, 4 bytes per thread) kept too few bytes in flight, 0.276 ms; the f32 strips on
/// the row-end tiles took 0.1 of 0.25 ms before they were staged here.
template <int CN, int K>
__global__ void __launch_bounds__(kRingThreads, 8) conv2dIntegerTiles(StripArgs<uint8_t, uint8_t> a)
{
    constexpr int N = kRingElements, tileBytes = kRingThreads * N;
    using Window = RowWindow<uint8_t, CN, K, N>;
    constexpr int margin = (Window::head + 15) / 16 * 16, spanBytes = tileBytes + 2 * margin;
    constexpr int copiesPerRow = spanBytes / 16, inputRows = kIntegerTileRows + K - 1;
    __shared__ __align__(16) uint32_t tile[inputRows][spanBytes / 4];
    const int flatCols = a.cols * CN, x0 = blockIdx.x * tileBytes, flat = x0 + threadIdx.x * N;
    const bool interiorColumns = x0 >= margin && x0 + tileBytes + margin <= flatCols;
    const bool byteBorder = a.border != BorderMode::Constant ||
                            (a.borderValue >= 0 && a.borderValue <= 255 && a.borderValue == truncf(a.borderValue));
    const int firstCopyRow = threadIdx.x / copiesPerRow, firstCopyChunk = threadIdx.x % copiesPerRow;
    for (int y0 = blockIdx.y * kIntegerTileRows; y0 < a.rows; y0 += gridDim.y * kIntegerTileRows) {
        const int y1 = min(y0 + kIntegerTileRows, a.rows), last = y1 + K - 2;  // slice rows y0 .. last
        const bool imageRows = a.imageRow(y0) && a.imageRow(last);
        if (!byteBorder && !(interiorColumns && imageRows)) {
            if (flat < flatCols) ringEdgeStrip<uint8_t, uint8_t, CN, K, N>(a, flat, y0, y1);
            continue;
        }
        __syncthreads();  // the previous tile's reads are done
        const int rows = last - y0 + 1;
        // Chunks cLo .. cHi - 1 of every image row lie inside the row: 16-byte copies, all in flight.
        const int cLo = min(max(0, (margin - x0 + 15) / 16), copiesPerRow);
        const int cHi = max(cLo, min(copiesPerRow, (flatCols - x0 + margin) / 16));
        // Copy i = threadIdx.x + n * kRingThreads is chunk c of row r, i = r * copiesPerRow + c: both
        // and the addresses advance by constants (with a division and a row address per copy, this
        // loop took 13% of the kernel's instructions; now 10%).
        int r = firstCopyRow, c = firstCopyChunk;
        const uint8_t* source = a.inRow(y0 + r) + x0 - margin + 16 * c;
        for (uint32_t* target = &tile[0][0] + 4 * threadIdx.x; r < rows; target += 4 * kRingThreads) {
            if (c >= cLo && c < cHi && (imageRows || !a.borderRow(y0 + r))) __pipeline_memcpy_async(target, source, 16);
            constexpr int rowStep = kRingThreads / copiesPerRow, chunkStep = kRingThreads % copiesPerRow;
            r += rowStep, c += chunkStep;
            source += ptrdiff_t(rowStep) * a.inPitch + 16 * chunkStep;
            if (c >= copiesPerRow) r += 1, c -= copiesPerRow, source += a.inPitch - spanBytes;
        }
        if (!(interiorColumns && imageRows))
            stageTileEdges<CN>(a, reinterpret_cast<uint8_t*>(tile), spanBytes, y0, rows, x0 - margin, cLo, cHi);
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();
        if (flat >= flatCols) continue;
        const auto rowInto = [&](int k, uint32_t(&out)[N / 2]) {
            Window w;
            const uint32_t* span = &tile[k - y0][(margin - Window::head) / 4 + threadIdx.x];
#pragma unroll
            for (int q = 0; q < Window::quads; ++q) w.quad[q] = span[q];
            rowSums(w, out);
        };
        uint32_t ring[K][N / 2];
        walkRing(y0, y1, ring, rowInto,
                 [&](int y, int first) { storeRingRow<K, N>(a.outRow(y) + flat, flatCols - flat, ring, first); });
    }
}

/// separable, other sizes, pass 1: every slice row (halo rows included) filtered horizontally into
/// `mid`. A constant-border row filters the border value, as the 2D sum does.
template <typename In, typename Out, int CN> __global__ void conv2dRowPass(StripArgs<In, Out> a)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= a.cols) return;
    const int rx = a.kCols / 2, sliceRows = a.rows + a.kRows - 1;
    for (int k = blockIdx.y * blockDim.y + threadIdx.y; k < sliceRows; k += gridDim.y * blockDim.y) {
        const bool borderRow = a.borderRow(k);
        const In* row = a.inRow(k);
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

/// separable, other sizes, pass 2: output row y is slice rows y .. y + kRows - 1 of `mid`,
/// weighted by the column taps.
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
        storePixel<Out, CN>(a.outRow(y) + x * CN, sum);
    }
}

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
