// transpose's optimized variant, the default: pixels of 1, 2, 3 or 4 bytes move in 16-byte
// chunks: a thread reads one chunk from each of 4 consecutive rows, transposes that block in
// registers (__byte_perm for bytes and halfwords) and stages it in a shared tile whose output
// rows leave as 16-byte chunks again; one byte per thread cannot come near the copy bandwidth.
// 3-byte pixels (u8 x3) are read 4 at a time (12 bytes), widened to words for the tile and
// packed back on the way out, each 16-byte chunk from the 8 pixels it overlaps.
// Device output rows are padded so that every strip's output rows start 16-byte aligned
// (transposeMatrix, transpose.cpp). Input rows may have any alignment (odd widths): aligned
// rows are read as whole chunks, other rows as aligned words funnel-shifted into place,
// tiles at the edges word by word within bounds. Tiles are 128 columns by 256 bytes of rows
// (in the tile), 128 bytes where rows are not even 4-byte aligned. 6-byte pixels (u16 x3) move
// as words through 64 x 64 tiles; 8-byte pixels through tiled-padded's kernel with 64-wide
// tiles and 8 elements per thread in flight; 12- and 16-byte pixels through tiled-padded itself.
#include "transpose_device.cuh"

#include <cuda_pipeline_primitives.h>

#include <algorithm>

namespace kl::gpu {
namespace {

constexpr int kChunkThreads = 256;

/// A tile of 128 input columns by 128 * K / px input rows, so that each of its 128 output rows
/// is 128 * K bytes (K = 1 or 2). A thread moves K blocks of 4 input rows by one 16-byte chunk.
/// 3-byte pixels are widened to words on the way in (px = 4; a chunk's 4 pixels come from 12
/// source bytes) and packed back on the way out.
template <typename T, int K> struct ChunkTile {
    static constexpr int sourcePx = int(sizeof(T));  ///< bytes of a pixel in the image
    static constexpr int px = sourcePx == 3 ? 4 : sourcePx;  ///< bytes of a pixel in the tile
    static constexpr int sourceChunkBytes = 16 / px * sourcePx;
    static constexpr int sourceWords = sourceChunkBytes / 4;
    static constexpr int perChunk = 16 / px;          ///< elements in a 16-byte chunk
    static constexpr int cols = 128, rows = 128 * K / px;
    static constexpr int rowBytes = 128 * K;          ///< one output row
    static constexpr int quadsPerItem = 32 / px;      ///< quads (4 input rows) a block's threads cover at once
    /// A chunk column of a quad, transposed, is perChunk output-row pieces ("units") of 4 elements.
    static constexpr int unitBytes = 4 * px, unitsPerChunk = 4 / px;
    static constexpr int chunksPerRow = rowBytes / 16;
    /// Whole pixels that cover the word unaligned rows read past a chunk.
    static constexpr int pixelsPastChunk = (4 + sourcePx - 1) / sourcePx;
};

/// The 4 bytes at row + offset, those at or past `available` read as 0; never reads past it.
__device__ __forceinline__ uint32_t loadWordWithin(const uint8_t* row, int offset, int available)
{
    const uintptr_t address = reinterpret_cast<uintptr_t>(row) + offset;
    const unsigned misalignment = unsigned(address & 3);
    const auto* aligned = reinterpret_cast<const uint32_t*>(address - misalignment);
    if (offset - int(misalignment) + (misalignment ? 8 : 4) <= available)
        return __funnelshift_r(__ldg(aligned), misalignment ? __ldg(aligned + 1) : 0u, 8 * misalignment);
    uint32_t word = 0;
    for (int b = 0; b < 4 && offset + b < available; ++b) word |= uint32_t(row[offset + b]) << (8 * b);
    return word;
}

/// Widens 4 packed 3-byte pixels (12 bytes in w[0..2]) to one word each (w[0..3]); the top
/// bytes are left undefined: packTriples ignores them.
__device__ __forceinline__ void widenTriples(uint32_t (&w)[4])
{
    w[3] = w[2] >> 8;
    w[2] = __byte_perm(w[1], w[2], 0x0432);
    w[1] = __byte_perm(w[0], w[1], 0x0543);
}

/// Packs 4 words' low 3 bytes (pixels) into 12 bytes.
__device__ __forceinline__ uint3 packTriples(uint32_t p0, uint32_t p1, uint32_t p2, uint32_t p3)
{
    return make_uint3(__byte_perm(p0, p1, 0x4210), __byte_perm(p1, p2, 0x5421), __byte_perm(p2, p3, 0x6542));
}

/// Transposes a 4 x 4 block of bytes held as one word per row into one word per column.
__device__ __forceinline__ void transposeBytes(uint32_t& w0, uint32_t& w1, uint32_t& w2, uint32_t& w3)
{
    const uint32_t low01 = __byte_perm(w0, w1, 0x5140), high01 = __byte_perm(w0, w1, 0x7362);
    const uint32_t low23 = __byte_perm(w2, w3, 0x5140), high23 = __byte_perm(w2, w3, 0x7362);
    w0 = __byte_perm(low01, low23, 0x5410);
    w1 = __byte_perm(low01, low23, 0x7632);
    w2 = __byte_perm(high01, high23, 0x5410);
    w3 = __byte_perm(high01, high23, 0x7632);
}

/// How a tile's input rows are read: whole tiles with aligned rows as whole chunks (uint4; 3-byte
/// pixels: 4-byte aligned rows as 3 words), other whole tiles as aligned words funnel-shifted
/// into place, partial tiles word by word within bounds.
enum class RowAccess { Vectors, Words, Checked };

/// Loads the tile at `in` (row pitch `pitch` bytes; only with Checked, `rows` rows and
/// `available` bytes per row) and stores it transposed into `tile`: output row o of the tile at
/// tile + o * rowBytes, its 4-element units XOR-swizzled by chunk column so that both the
/// transposed stores here and the row reads of storeChunks hit distinct banks.
template <typename T, int K, RowAccess Access>
__device__ __forceinline__ void loadChunks(const uint8_t* in, size_t pitch, int rows, int available, uint8_t* tile)
{
    using Tile = ChunkTile<T, K>;
    constexpr int px = Tile::px;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    // A warp instruction reads 4 rows of 8 chunks (128 bytes each).
    const int chunk = warp % px * 8 + lane % 8;
    const int quad0 = warp / px * 4 + lane / 8;
    uint32_t w[K][4][4];  // [block][input row][word]
#pragma unroll
    for (int i = 0; i < K; ++i)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int y = (quad0 + i * Tile::quadsPerItem) * 4 + r;
            const uint8_t* p = in + size_t(y) * pitch + Tile::sourceChunkBytes * chunk;
            constexpr int words = Tile::sourceWords;
            if constexpr (Access == RowAccess::Vectors && words == 4) {
                const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
                w[i][r][0] = v.x, w[i][r][1] = v.y, w[i][r][2] = v.z, w[i][r][3] = v.w;
            } else if constexpr (Access == RowAccess::Vectors) {
#pragma unroll
                for (int t = 0; t < words; ++t) w[i][r][t] = __ldg(reinterpret_cast<const uint32_t*>(p) + t);
            } else if constexpr (Access == RowAccess::Words) {
                const uintptr_t address = reinterpret_cast<uintptr_t>(p);
                const auto* aligned = reinterpret_cast<const uint32_t*>(address & ~uintptr_t(3));
                const unsigned shift = 8 * unsigned(address & 3);
                uint32_t next = __ldg(aligned);
#pragma unroll
                for (int t = 0; t < words; ++t) {
                    const uint32_t word = next;
                    next = t < words - 1 || shift ? __ldg(aligned + t + 1) : 0u;
                    w[i][r][t] = __funnelshift_r(word, next, shift);
                }
            } else {
#pragma unroll
                for (int t = 0; t < words; ++t)
                    w[i][r][t] = y < rows ? loadWordWithin(in + size_t(y) * pitch, Tile::sourceChunkBytes * chunk + 4 * t,
                                                           available)
                                          : 0u;
            }
            if constexpr (Tile::sourcePx == 3) widenTriples(w[i][r]);
        }
#pragma unroll
    for (int i = 0; i < K; ++i) {
        const int unit = (quad0 + i * Tile::quadsPerItem) ^ (chunk % 8 * Tile::unitsPerChunk);
        // Output row chunk * perChunk + e of the tile gets input column e of this chunk.
        uint8_t* base = tile + chunk * Tile::perChunk * Tile::rowBytes + unit * Tile::unitBytes;
        auto& b = w[i];
#pragma unroll
        for (int t = 0; t < 4; ++t) {
            if constexpr (px == 1) {
                transposeBytes(b[0][t], b[1][t], b[2][t], b[3][t]);
#pragma unroll
                for (int s = 0; s < 4; ++s) *reinterpret_cast<uint32_t*>(base + (4 * t + s) * Tile::rowBytes) = b[s][t];
            } else if constexpr (px == 2) {
                // Halfwords: word t holds columns 2t and 2t + 1 of a row.
                *reinterpret_cast<uint2*>(base + (2 * t) * Tile::rowBytes) =
                    make_uint2(__byte_perm(b[0][t], b[1][t], 0x5410), __byte_perm(b[2][t], b[3][t], 0x5410));
                *reinterpret_cast<uint2*>(base + (2 * t + 1) * Tile::rowBytes) =
                    make_uint2(__byte_perm(b[0][t], b[1][t], 0x7632), __byte_perm(b[2][t], b[3][t], 0x7632));
            } else {
                *reinterpret_cast<uint4*>(base + t * Tile::rowBytes) = make_uint4(b[0][t], b[1][t], b[2][t], b[3][t]);
            }
        }
    }
}

/// storeChunks for 3-byte pixels: each thread stores one 16-byte chunk of a packed output row,
/// so that a warp's stores are contiguous. Chunk k = 3m + r of a row is bytes [4r, 4r + 16) of
/// the tile's pixels 16m + 4r .. 16m + 4r + 7 packed (its chunks 4m + r and 4m + r + 1).
template <int K, bool Partial>
__device__ __forceinline__ void storeTriples(const uint8_t* tile, uint8_t* out, size_t pitch, int outRows, int bytes)
{
    using Tile = ChunkTile<uchar3, K>;
    constexpr int outChunks = Tile::chunksPerRow * 3 / 4;  ///< of a whole row, packed
    for (int i = threadIdx.x; i < outRows * outChunks; i += kChunkThreads) {
        const int o = i / outChunks, k = i % outChunks, r = k % 3, first = k / 3 * 4 + r;
        if (Partial && 16 * k >= bytes) continue;
        const uint8_t* row = tile + o * Tile::rowBytes;
        const int swizzle = o / Tile::perChunk % 8;
        const uint4 a = *reinterpret_cast<const uint4*>(row + 16 * (first ^ swizzle));
        const uint4 b = *reinterpret_cast<const uint4*>(row + 16 * ((first + 1) ^ swizzle));
        const uint3 low = packTriples(a.x, a.y, a.z, a.w), high = packTriples(b.x, b.y, b.z, b.w);
        const uint4 chunk = r == 0 ? make_uint4(low.x, low.y, low.z, high.x)
                            : r == 1 ? make_uint4(low.y, low.z, high.x, high.y)
                                     : make_uint4(low.z, high.x, high.y, high.z);
        uint8_t* dst = out + size_t(o) * pitch + 16 * k;
        if (!Partial || 16 * k + 16 <= bytes) {
            *reinterpret_cast<uint4*>(dst) = chunk;
        } else {
            const auto* src = reinterpret_cast<const uint8_t*>(&chunk);
            for (int c = 0; c < bytes - 16 * k; ++c) dst[c] = src[c];
        }
    }
}

/// Writes the tile's first `outRows` output rows, `bytes` bytes each (all of them unless
/// Partial), as 16-byte chunks to out (row pitch `pitch`; out and pitch 16-byte aligned).
template <typename T, int K, bool Partial>
__device__ __forceinline__ void storeChunks(const uint8_t* tile, uint8_t* out, size_t pitch, int outRows, int bytes)
{
    using Tile = ChunkTile<T, K>;
    if constexpr (Tile::sourcePx == 3) {
        storeTriples<K, Partial>(tile, out, pitch, outRows, bytes);
    } else {
        const int m = threadIdx.x % Tile::chunksPerRow;
        for (int o = threadIdx.x / Tile::chunksPerRow; o < outRows; o += kChunkThreads / Tile::chunksPerRow) {
            const uint8_t* src = tile + o * Tile::rowBytes + 16 * (m ^ (o / Tile::perChunk % 8));
            uint8_t* dst = out + size_t(o) * pitch + 16 * m;
            if (!Partial || 16 * m + 16 <= bytes) *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
            else
                for (int b = 0; b < bytes - 16 * m; ++b) dst[b] = src[b];
        }
    }
}

template <typename T, int K> __global__ void __launch_bounds__(kChunkThreads) transposeChunks(StripArgs<T> a)
{
    using Tile = ChunkTile<T, K>;
    __shared__ uint4 tile[Tile::cols * Tile::rowBytes / 16];
    auto* tileBytes = reinterpret_cast<uint8_t*>(tile);
    const auto* in = reinterpret_cast<const uint8_t*>(a.in);
    auto* out = reinterpret_cast<uint8_t*>(a.out);
    const size_t inPitch = a.inPitch * sizeof(T), outPitch = a.outPitch * sizeof(T);
    const int x0 = blockIdx.x * Tile::cols;
    const int outRows = min(Tile::cols, a.cols - x0);
    // Bytes readable from the tile's left edge to its rows' end (beyond one word past the tile, no matter).
    const int available = min(a.cols - x0, Tile::cols + Tile::pixelsPastChunk) * Tile::sourcePx;
    const uintptr_t inAlignment = reinterpret_cast<uintptr_t>(in) | inPitch;
    // Unaligned rows read one word past the chunk.
    const bool wholeWidth = available >= Tile::cols * Tile::sourcePx + (inAlignment & 3 ? 4 : 0);
    for (int y0 = blockIdx.y * Tile::rows; y0 < a.rows; y0 += gridDim.y * Tile::rows) {
        const int rows = min(Tile::rows, a.rows - y0);
        const uint8_t* tileIn = in + size_t(y0) * inPitch + size_t(x0) * Tile::sourcePx;
        if (!wholeWidth || rows < Tile::rows)
            loadChunks<T, K, RowAccess::Checked>(tileIn, inPitch, rows, available, tileBytes);
        else if (inAlignment % (Tile::sourceWords == 4 ? 16 : 4) == 0)
            loadChunks<T, K, RowAccess::Vectors>(tileIn, inPitch, rows, available, tileBytes);
        else
            loadChunks<T, K, RowAccess::Words>(tileIn, inPitch, rows, available, tileBytes);
        __syncthreads();
        uint8_t* tileOut = out + size_t(x0) * outPitch + size_t(y0) * Tile::sourcePx;
        if (rows == Tile::rows)
            storeChunks<T, K, false>(tileBytes, tileOut, outPitch, outRows, Tile::rows * Tile::sourcePx);
        else storeChunks<T, K, true>(tileBytes, tileOut, outPitch, outRows, rows * Tile::sourcePx);
        __syncthreads();  // the tile is refilled on the next row block
    }
}

template <typename T, int K> void launchChunks(const StripArgs<T>& a, cudaStream_t s)
{
    using Tile = ChunkTile<T, K>;
    const dim3 grid((a.cols + Tile::cols - 1) / Tile::cols,
                    std::min((unsigned(a.rows) + Tile::rows - 1) / Tile::rows, kMaxGridY));
    transposeChunks<T, K><<<grid, kChunkThreads, 0, s>>>(a);
}

/// 6-byte pixels (u16 x3), which no vector load or store fits: rows move as words, so that every
/// warp reads and writes 128 contiguous bytes. A block transposes 64 x 64 pixel tiles. Each tile
/// row is copied by cp.async, a word at a time, from the word boundary at or before its start
/// (rows may start 2 bytes past one), so no registers hold the bytes in flight; each output word
/// is put together from the two halfwords (components) it holds. Warp v moves tile rows (then
/// output rows) v, v + 8, ...
struct HalfwordTripleTile {
    static constexpr int pixels = 64, rowWords = pixels * 6 / 4, warps = 8, threads = 32 * warps;
    static constexpr int rowsPerWarp = pixels / warps;
    /// A row and the halfword before it; an odd pitch keeps the output rows' reads on distinct banks.
    static constexpr int pitchWords = rowWords + 1;
};

/// One tile of `rows` x `cols` pixels (whole tiles: Partial false, 64 x 64). A row's words are
/// copied up to its last whole one; a row ending 2 bytes past a word boundary copies its last
/// halfword on its own, so that nothing past the row is read.
template <bool Partial>
__device__ __forceinline__ void transposeHalfwordTripleTile(const StripArgs<ushort3>& a, uint32_t* tile, int x0, int y0,
                                                            int rows, int cols)
{
    using Tile = HalfwordTripleTile;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const size_t inRowBytes = a.inPitch * 6, outRowBytes = a.outPitch * 6;
    const uint8_t* tileIn = reinterpret_cast<const uint8_t*>(a.in) + size_t(y0) * inRowBytes + size_t(x0) * 6;
    // Tile row r starts shiftOf(r) = 0 or 2 bytes past a word boundary.
    const unsigned firstShift = unsigned(reinterpret_cast<uintptr_t>(tileIn) & 3), shiftStep = unsigned(inRowBytes & 3);
    const auto shiftOf = [&](int r) { return int((firstShift + unsigned(r) * shiftStep) & 3); };
#pragma unroll
    for (int j = 0; j < Tile::rowsPerWarp; ++j) {
        const int r = warp + j * Tile::warps;
        if (Partial && r >= rows) break;
        const int shift = shiftOf(r), bytes = shift + cols * 6, wholeWords = bytes / 4;
        const uint8_t* aligned = tileIn + size_t(r) * inRowBytes - shift;
        uint32_t* target = tile + r * Tile::pitchWords;
        for (int w = lane; w < wholeWords; w += 32) __pipeline_memcpy_async(target + w, aligned + 4 * w, 4);
        if (bytes % 4 && lane == 0)
            reinterpret_cast<uint16_t*>(target + wholeWords)[0] =
                __ldg(reinterpret_cast<const uint16_t*>(aligned + 4 * wholeWords));
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    // Output row o is tile column o: its halfword h is component h % 3 of the pixel in tile row h / 3.
    const auto* halves = reinterpret_cast<const uint16_t*>(tile);
    const auto halfOf = [&](int h, int o) {
        const int r = h / 3;
        return halves[2 * r * Tile::pitchWords + shiftOf(r) / 2 + 3 * o + h - 3 * r];
    };
    const int outBytes = rows * 6;
    uint8_t* out = reinterpret_cast<uint8_t*>(a.out) + size_t(x0 + warp) * outRowBytes + size_t(y0) * 6;
#pragma unroll
    for (int j = 0; j < Tile::rowsPerWarp; ++j) {
        const int o = warp + j * Tile::warps;
        if (Partial && o >= cols) break;
        uint8_t* row = out + j * Tile::warps * outRowBytes;
#pragma unroll
        for (int w = lane; w < Tile::rowWords; w += 32) {
            if (Partial && 4 * w >= outBytes) break;
            if (!Partial || 4 * w + 4 <= outBytes)
                *reinterpret_cast<uint32_t*>(row + 4 * w) = halfOf(2 * w, o) | uint32_t(halfOf(2 * w + 1, o)) << 16;
            else *reinterpret_cast<uint16_t*>(row + 4 * w) = halfOf(2 * w, o);
        }
    }
}

__global__ void __launch_bounds__(HalfwordTripleTile::threads) transposeHalfwordTriples(StripArgs<ushort3> a)
{
    using Tile = HalfwordTripleTile;
    __shared__ uint32_t tile[Tile::pixels * Tile::pitchWords];
    const int x0 = blockIdx.x * Tile::pixels, cols = min(Tile::pixels, a.cols - x0);
    for (int y0 = blockIdx.y * Tile::pixels; y0 < a.rows; y0 += gridDim.y * Tile::pixels) {
        const int rows = min(Tile::pixels, a.rows - y0);
        if (rows == Tile::pixels && cols == Tile::pixels)
            transposeHalfwordTripleTile<false>(a, tile, x0, y0, Tile::pixels, Tile::pixels);
        else transposeHalfwordTripleTile<true>(a, tile, x0, y0, rows, cols);
        __syncthreads();  // the tile is refilled on the next row block
    }
}

void launchOptimized(const TransposeStrip& strip, cudaStream_t s)
{
    // 64x64 tiles of up to 8-byte pixels fit the 48 KB static shared-memory limit; larger
    // pixels take tiled-padded's 32x32 tiles.
    if (strip.pixelBytes > 8) return launchTiledPadded(strip, s);
    withTypedStrip(strip, [&](const auto& a) {
        using T = typename std::decay_t<decltype(a)>::Element;
        if constexpr (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 3 || sizeof(T) == 4) {
            // Two blocks per thread keep more bytes in flight; rows that are not 4-byte aligned
            // need twice the load instructions (funnel shifts) and do better with one.
            if ((reinterpret_cast<uintptr_t>(a.in) | a.inPitch * sizeof(T)) % 4 == 0) launchChunks<T, 2>(a, s);
            else launchChunks<T, 1>(a, s);
        } else if constexpr (sizeof(T) == 6) {
            using Tile = HalfwordTripleTile;
            const dim3 grid((a.cols + Tile::pixels - 1) / Tile::pixels,
                            std::min((a.rows + Tile::pixels - 1u) / Tile::pixels, kMaxGridY));
            transposeHalfwordTriples<<<grid, Tile::threads, 0, s>>>(a);
        } else if constexpr (sizeof(T) == 8) {
            constexpr int tile = 64;
            const dim3 grid((a.cols + tile - 1) / tile, std::min((a.rows + tile - 1u) / tile, kMaxGridY));
            transposeTiled<T, tile, 8, 1><<<grid, dim3(tile, 8), 0, s>>>(a);
        }
    });
}

} // namespace

TransposeVariant optimizedTranspose()
{
    return {"optimized", "16-byte chunks transposed in registers and staged through shared memory", nullptr,
            {launchOptimized}};
}

} // namespace kl::gpu
