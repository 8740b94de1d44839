#pragma once
// conv2d's tiled kernels: shared (compiled and any sizes) and tma. Included by conv2d_tiled.cu only.
#include "conv2d_device.cuh"
#include "../tma_ring.cuh"

#include <cuda.h>  // CUtensorMap (types only: the encoder is reached through the runtime)
#include <cuda/ptx>

namespace kl::gpu {
namespace {

__constant__ float cTaps[kMaxTaps];  // row-major kRows x kCols

// ---- shared: tiled kernels --------------------------------------------------------------------------

/// Stages slice rows y0 .. y0 + rows - 1, pixels px0 .. px0 + cols - 1 (px0 may be negative: the
/// border), channels firstPlane .. lastPlane - 1 into f32 planes
/// tile[((c - firstPlane) * rows + row) * cols + pixel - px0]. The interleaved rows are read in
/// `groups` groups of 4 elements from element `first` (a multiple of 4 at or before the first one
/// needed): one vector load per group inside the row, borderIndex per element elsewhere.
/// Slice rows past the strip only feed outputs past it, which are never stored.
/// AlignedTile (px0, cols and first in elements rather than pixels, px0 == first and both multiples
/// of 4; the tile is the rows' elements as they lie, channels interleaved): one vector store per group.
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

/// A thread's results as interleaved elements: elements e .. e + 3 (pixel * CN + channel) of rows
/// y .. y + M - 1, those inside the strip; one vector store per row where all 4 are inside.
template <int CN, int M, typename In, typename Out>
__device__ void storeElements(const StripArgs<In, Out>& a, int y, int e, const float (&sum)[M][kPixelsPerThread])
{
    const int flatCols = a.cols * CN;
#pragma unroll
    for (int r = 0; r < M; ++r) {
        if (y + r >= a.rows) return;
        Out* row = a.outRow(y + r);
        if (e + 4 <= flatCols) {
            store4(row + e, make_float4(sum[r][0], sum[r][1], sum[r][2], sum[r][3]));
        } else {
#pragma unroll
            for (int n = 0; n < kPixelsPerThread; ++n)
                if (e + n < flatCols) row[e + n] = saturateRound<Out>(sum[r][n]);
        }
    }
}

/// A thread's results for channel c: pixels x .. x + 3 of rows y .. y + M - 1, those inside the strip.
template <int CN, int M, typename In, typename Out>
__device__ void storeTile(const StripArgs<In, Out>& a, int y, int x, int c, const float (&sum)[M][kPixelsPerThread])
{
    if constexpr (CN == 1) {
        storeElements<1, M>(a, y, x, sum);
    } else {
#pragma unroll
        for (int r = 0; r < M; ++r) {
            if (y + r >= a.rows) return;
            Out* row = a.outRow(y + r);
#pragma unroll
            for (int n = 0; n < kPixelsPerThread; ++n)
                if (x + n < a.cols) row[(x + n) * CN + c] = saturateRound<Out>(sum[r][n]);
        }
    }
}

/// The tile of conv2dFixed and conv2dTma for a K x K kernel, in interleaved elements (pixel * CN +
/// channel, as the image rows hold them): 128 output elements by kBlockY * M rows. In those units
/// tap j of output element e reads element e + (j - K / 2) * CN, so every channel count is one
/// stencil with taps CN apart.
template <int K, int CN, int M> struct FixedTile {
    static constexpr int radius = K / 2;
    /// Tile column 0 is element x0 - pad, pad a multiple of 4 so that rows load and store whole float4s.
    static constexpr int pad = roundUp4(radius * CN);
    /// A thread's register window starts at its first element's column - pad; tap j of element n
    /// is window[offset + j * CN + n].
    static constexpr int offset = pad - radius * CN;
    static constexpr int window = roundUp4(offset + (K - 1) * CN + kPixelsPerThread);
    static constexpr int cols = (kBlockX - 1) * kPixelsPerThread + window;
    static constexpr int outRows = kBlockY * M, rows = outRows + K - 1;
    static constexpr size_t bytes = size_t(rows) * cols * sizeof(float);
};

/// Output rows per thread of conv2dFixed (tiles of kBlockY * 2 rows): shorter tiles fit more
/// blocks per SM, whose loads then overlap other blocks' arithmetic (2 beat 4 and 8 everywhere).
constexpr int kFixedRowsPerThread = 2;

/// A conv2dFixed / conv2dTma thread's sums: elements 4 across and M rows down from `source`, its
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
                    rowSum[n] = fmaf(cTaps[i * K + j], w[T::offset + j * CN + n], rowSum[n]);
#pragma unroll
            for (int n = 0; n < kPixelsPerThread; ++n) sum[r][n] += rowSum[n];
        }
    }
}

/// Blocks cover 128 interleaved elements of the row (kTileCols; gridFor over cols * CN) and
/// stage their tile as it lies in memory, converted to f32: aligned vector loads and stores
/// throughout, and one pass of arithmetic whatever the channel count.
template <typename In, typename Out, int CN, int K, int M>
__global__ void __launch_bounds__(kBlockX* kBlockY, 2) conv2dFixed(StripArgs<In, Out> a)
{
    using T = FixedTile<K, CN, M>;
    extern __shared__ float4 sharedStorage[];
    float* tile = reinterpret_cast<float*>(sharedStorage);
    const int x0 = blockIdx.x * kTileCols, e = x0 + threadIdx.x * kPixelsPerThread, firstRow = threadIdx.y * M;
    for (int y0 = blockIdx.y * T::outRows; y0 < a.rows; y0 += gridDim.y * T::outRows) {
        __syncthreads();  // the previous tile has been read
        loadTile<CN, true>(tile, a, y0, x0 - T::pad, T::rows, T::cols, x0 - T::pad, T::cols / 4, 0, CN);
        __syncthreads();
        float sum[M][kPixelsPerThread] = {};
        tileSums<K, CN, M>(tile + firstRow * T::cols + threadIdx.x * kPixelsPerThread, sum);
        storeElements<CN, M>(a, y0 + firstRow, e, sum);
    }
}

// ---- tma: conv2dFixed's tiles delivered by the TMA engine (f32, one channel, sm_90) -------------

/// conv2dTma's shape for a K x K kernel: output rows per thread (tiles of kBlockY * M rows) and
/// tile buffers per block: the fastest measured per size.
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
/// Resident conv2dTma blocks per SM, at most: 3 beat 2 and 4 wherever the tile fits either.
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
    const TmaRing<S::stages> ring(reinterpret_cast<uint64_t*>(buffers + S::stages * S::stageFloats));
    const int thread = threadIdx.y * kBlockX + threadIdx.x;
    if (thread == 0) ring.init(kTmaConsumers);
    __syncthreads();
    const auto tileOrigin = [&](int id) {  // the tile's first output pixel and row
        const int ty = id / tilesX;
        return int2{(id - ty * tilesX) * kTileCols, ty * T::outRows};
    };
    if (threadIdx.y == kBlockY) {  // the copying warp
        if (threadIdx.x != 0) return;
        int n = 0;
        for (int id = blockIdx.x; id < tiles; id += gridDim.x, ++n) {
            uint64_t* full = ring.beginFill(n, S::tileFloats * sizeof(float));
            const int2 origin = tileOrigin(id);
            const int32_t coords[2] = {origin.x - T::pad, origin.y};
            cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global,
                                            buffers + ring.buffer(n) * S::stageFloats, &map, coords, full);
        }
        return;
    }
    const int sliceRows = a.rows + K - 1;
    int n = 0;
    for (int id = blockIdx.x; id < tiles; id += gridDim.x, ++n) {
        const int2 origin = tileOrigin(id);
        const int px0 = origin.x - T::pad, lastRow = min(origin.y + T::rows, sliceRows) - 1;
        float* tile = buffers + ring.buffer(n) * S::stageFloats;
        ring.waitFull(n);
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
        ring.release(n);
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

} // namespace
} // namespace kl::gpu
