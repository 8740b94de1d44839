// conv2d's rows-mma variant (conv2dRowsMma): rank-1 kernels of compiled sizes on u8 and u16 images of
// 1, 3 or 4 channels, with the row pass on tensor cores and the column pass in registers.
//
// Each block owns a band of output elements (two a thread) and walks a strip of its rows in batches
// of kRowsMmaBatch slice rows, staged by cp.async a batch ahead (the few elements past the row ends
// through borderIndex, loaded while the batch before is summed). The row pass is a product of the
// staged rows and a banded matrix of row taps: for 8 output pixels n of one channel and a block of 8
// input pixels, D[m][n] = sum_k A[m][k] * B[k][n] with A the batch's 16 rows and k the block's low
// bytes, then its high bytes (mma.m16n8k16, f16 in, f32 sums; 3 blocks and 2 tap halves, 6 mma, a
// tile). It is exact in f16 where it must be: each u16 element is two normal f16, its low and its
// high byte (byte permutes, normalBytes), and each row tap two f16 halves (splitMmaTaps), the high bytes' times
// 2^8, so every product is exact. One channel's blocks come from ldmatrix; three interleaved channels'
// from 16-bit loads of one channel, four channels' from 32-bit loads of a pixel's channel pair, so that
// every tile has the density of one channel's. On u8 a block is 16 pixels of one channel, each byte
// a normal f16 (byteRowPass; ldmatrix on one channel, byte loads on several): two blocks and two
// tap halves, 4 mma, a tile. The row sums go through shared memory, in the image's element order; each
// thread then adds every row of its two elements' sums to the 16 output rows pending in a register
// ring (one fma chain an output, taps in order) and stores each output once its last row is in.
//
// Against separable-mma (the column pass on tensor cores, the row pass from shared memory) each
// output costs fewer instructions: the tensor cores read the staged u16 as it lies, and the column
// pass reads one float2 of sums a row for 2 * K multiply-adds. Blocks of 8 pixels take 6 mma a
// tile where blocks of 16 took 8, and leave registers for 4 blocks an SM (docs/performance.md,
// "Fifty-first step" to "Fifty-third step").
#include "conv2d_device.cuh"
#include "conv2d_mma.cuh"

#include <cuda_fp16.h>
#include <cuda_pipeline_primitives.h>

namespace kl::gpu {
namespace {

/// Slice rows a batch: the mma's 16 rows, and the ring's 16 pending output rows, so that a row's
/// place in the ring is a constant in the unrolled batch.
constexpr int kRowsMmaBatch = 16;
constexpr int kRowsMmaSlots = 2;  ///< staged batches: the one summed and the next in flight
/// rowsMmaStrips: every strip at least this many batches (each restages K - 1 rows) and at most
/// kRowsMmaMaxStrips a band (their rows are a table in the kernel's arguments).
constexpr int kRowsMmaMinBatches = 3;
constexpr int kRowsMmaMaxStrips = 255;
constexpr int kRowsMmaMaxSize = kConv2dCompiledSizes.back();
static_assert(kRowsMmaMaxSize <= 15, "the tap fragments' block offsets (RowsMmaShape::offsets) and the ring of 16 reach 15 taps");

/// The row of fill i of a batch with `count` edge elements a row, i / count, as a multiply and a shift
/// (scale = batchRowScale(count)): the edge bands fill every batch, and a division and borderIndex an
/// element there made them the launch's slowest blocks (docs/performance.md, "Sixty-ninth step").
__host__ __device__ constexpr unsigned batchRowScale(int count) { return ((1u << 20) + unsigned(count) - 1) / unsigned(count); }
__host__ __device__ constexpr int batchRow(int i, unsigned scale) { return int(unsigned(i) * scale >> 20); }
/// Whether batchRow is i / count for every count up to `counts` and i of a batch's fills.
constexpr bool batchRowsExact(int counts)
{
    for (int count = 1; count <= counts; ++count)
        for (int i = 0; i < kRowsMmaBatch * count; ++i)
            if (batchRow(i, batchRowScale(count)) != i / count) return false;
    return true;
}

/// A block's shape on CN-channel images of T. Each thread takes two elements of the band in the column
/// pass; the row pass sums tiles of 8 pixels of one channel (the mma's n). One channel: warp w takes
/// the tiles from pixel 64w, from ldmatrix. Three or four (interleaved): the band's 64 pixels; on u16
/// each warp one channel's 16 rows on three, from 16-bit loads, two channels' 8 rows on four, from
/// 32-bit loads (InterleavedLane); on u8 each warp one channel's 16 rows, from byte loads.
template <typename T, int CN> struct RowsMmaShape {
    static_assert(CN == 1 || CN == 3 || CN == 4, "one, three or four channels");
    static constexpr int elementBytes = sizeof(T), copyElements = 16 / sizeof(T);  ///< copyElements: a 16-byte copy's
    /// Input blocks an output tile reads: offsets d (block start - tile start, in 8 pixels) -1 .. 1 of
    /// 8-pixel blocks on u16, -2 .. 1 of 16-pixel blocks on u8 (two of them a tile, byteRowPass).
    static constexpr int offsets = sizeof(T) == 2 ? 3 : 4, firstOffset = sizeof(T) == 2 ? -1 : -2;
    static constexpr int warps = CN == 1 ? 4 : CN, threads = 32 * warps;
    static constexpr int band = 2 * threads;  ///< output elements a band
    static constexpr int bandTiles = band / CN / 8;
    /// Staged elements each side of the band: the outer tiles' input blocks (u16: 8 pixels, 16 on one
    /// channel; u8: 16 pixels).
    static constexpr int margin = sizeof(T) == 1 ? 16 * CN : CN == 1 ? 16 : 8 * CN;
    static constexpr int stagedElements = band + 2 * margin;
    static constexpr int copiesPerRow = stagedElements / copyElements;
    /// Staged rows lie an odd number of 16 bytes apart: ldmatrix's 8 rows of a phase hit 8 bank
    /// groups, and three channels' 16-bit (u16) or byte (u8) loads 32 banks. On four u16 channels, 4
    /// words (mod 32) apart, so that a warp's 32-bit loads (8 rows of 4 pixels, the channel pair
    /// flipping with the row's parity) hit 32 banks.
    static constexpr int slotStride = CN == 4 && sizeof(T) == 2 ? 328 : stagedElements + copyElements;
    /// Row sums: the 64-bit stores of a half-warp hit every bank once, one channel's (4 rows x 8
    /// columns) and four u16 channels' (swapsPixelPairs); three channels' single stores two lanes a
    /// bank, and four u8 channels'.
    static constexpr int sumStride = CN == 1 ? band + 8 : CN == 3 ? 196 : sizeof(T) == 2 ? band : band + 4;
    /// Tiles a warp sums together. On interleaved channels their accumulators and the A fragments of 3
    /// blocks stay in registers: three channels take all 8 (10 blocks loaded a batch, not 12; 1.01-1.02x
    /// faster at 4 blocks an SM); four channels 4, which leave registers for 4 blocks an SM. u8: 4.
    static constexpr int group = CN == 3 && sizeof(T) == 2 ? 8 : 4;
    static constexpr int blocksPerSM = 4;
    /// rowsMmaStrips: the share of an even split of the rows left that each strip takes, num / den.
    /// Measured fastest of 1/2 and 2/3 (docs/performance.md, "Fifty-sixth step").
    static constexpr int stripShareNum = CN == 1 ? 2 : 1, stripShareDen = CN == 1 ? 3 : 2;
    /// Edge elements a thread holds between batches: every band's of one channel; on more channels
    /// those of a band with one edge (an image narrower than a band has its stored at once).
    static constexpr int fillsPerThread = sizeof(T) == 2 ? (CN == 1 ? 3 : 5) : CN == 1 ? 4 : 6;
    /// The most edge elements a row that the threads hold (PendingFill), and so the entries of the
    /// table of their sources (EdgeElements::sources).
    static constexpr int heldEdgeElements = fillsPerThread * threads / kRowsMmaBatch;
    static constexpr int slotElements = kRowsMmaBatch * slotStride;
    static constexpr int sumElements = kRowsMmaBatch * sumStride;
    static constexpr size_t sharedBytes =
        kRowsMmaSlots * slotElements * sizeof(T) + 2 * sumElements * sizeof(float) + heldEdgeElements * sizeof(int);
    static_assert(fillsPerThread * threads % kRowsMmaBatch == 0 && batchRowsExact(heldEdgeElements),
                  "held edge elements fill whole rows, and batchRow finds their rows");
    static_assert(kRowsMmaSlots * slotElements * sizeof(T) % 16 == 0 && slotStride % copyElements == 0 && sumStride % 2 == 0,
                  "slots 16-byte aligned, rows of whole 16 bytes, sums of whole float2");
    static_assert(slotStride >= stagedElements && sumStride >= band, "rows hold the staged window and the band");
    static_assert(kRowsMmaBatch * (CN * (kRowsMmaMaxSize / 2) + copyElements - 1 + (CN == 1 ? kRowsMmaMaxSize / 2 : 0)) <=
                      fillsPerThread * threads,
                  "every edge element of a batch has a thread");
};

/// Whether sums row r holds each pixel pair swapped (four u16 channels, rows with r & 2): there a
/// column-pass thread's pair t, pixel t / 2, lies at pair t ^ 2.
template <typename T, int CN> __device__ constexpr bool swapsPixelPairs(int row)
{
    return sizeof(T) == 2 && CN == 4 && (row & 2);
}

/// Where lane (g, q) of warp w takes the A rows m = g (top) and g + 8 (bottom) of its tiles on
/// interleaved channels (staged row and channel), and where their sums go: the offsets of pixels 2q
/// and 2q + 1 of the band's first tile, in `sums`. Three channels: rows g and g + 8 of channel w.
/// Four: both A rows are staged row 8 (w / 2) + g, of channels c and c + 1, c = 2 (w % 2 ^ g % 2), one
/// word of each pixel, so that one 32-bit load brings a pixel to both rows; a pixel's two sums lie
/// side by side too (one 64-bit store), and with the pixel pairs swapped in the rows swapsPixelPairs
/// names, the stores of a half-warp hit every bank once.
template <int CN> struct InterleavedLane {
    int topRow, topChannel, bottomRow, bottomChannel;
    int topSum[2], bottomSum[2];
    __device__ InterleavedLane()
    {
        const int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, q = threadIdx.x % 4;
        if constexpr (CN == 4) {
            topRow = bottomRow = 8 * (warp / 2) + g;
            topChannel = 2 * ((warp % 2) ^ (g % 2));
            bottomChannel = topChannel + 1;
        } else {
            topRow = g, bottomRow = g + 8;
            topChannel = bottomChannel = warp;
        }
        const int swap = swapsPixelPairs<uint16_t, CN>(topRow);
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const int pixel = 2 * q + (j ^ swap);
            topSum[j] = topRow * RowsMmaShape<uint16_t, CN>::sumStride + CN * pixel + topChannel;
            bottomSum[j] = bottomRow * RowsMmaShape<uint16_t, CN>::sumStride + CN * pixel + bottomChannel;
        }
    }
};

__constant__ float cRowsMmaColumnTaps[kRowsMmaMaxSize];  // the column taps, SplitTaps::scaled

/// The row taps as mma B fragments (TapFragments, rowTapFragments): set o for block offset d = o +
/// RowsMmaShape::firstOffset, B[k][n] = row tap p(k) - n + 8d + K/2 (times 2^8 where place k holds a
/// high byte), 0 outside the kernel, with p(k) the block's pixel in place k (rowsMmaPlace).
template <int Offsets> using RowTapFragments = TapFragments<Offsets>;

/// The pixel of an input block and the byte plane (0 low, 1 high) that place k (0 .. 15) of its A
/// fragment holds, lane q's registers holding places 2q, 2q + 1 and 2q + 8, 2q + 9. u16 blocks of 8
/// pixels, one and three channels: the low bytes of pixels 0 .. 7 in places 0 .. 7, their high bytes
/// in 8 .. 15 (ldmatrix's order); four: pixel q + 4r's two bytes side by side in register r, the bytes
/// of one 16-bit element. u8 blocks of 16 pixels: on one channel lane q's word of an ldmatrix row,
/// pixels 4q .. 4q + 3, in places 2q, 2q + 1, 2q + 8, 2q + 9; on several pixels q, q + 4, q + 8, q + 12,
/// so that a warp's byte loads of one of them (8 rows, 4 consecutive pixels) hit 32 banks.
struct BlockPlace {
    int pixel, plane;
};
constexpr BlockPlace rowsMmaPlace(int k, int channels, int elementBytes)
{
    if (elementBytes == 1)
        return {channels == 1 ? 4 * (k % 8 / 2) + 2 * (k / 8) + k % 2 : k % 8 / 2 + 4 * (k % 2) + 8 * (k / 8), 0};
    return channels == 4 ? BlockPlace{k % 8 / 2 + 4 * (k / 8), k % 2} : BlockPlace{k % 8, k / 8};
}

/// Calls copy(r, c) for this thread's 16-byte copies of a batch. Rows of 32 copies or more: warp w
/// takes rows w, w + warps, ..., lane l copy l of each (one row address a warp a row), and the rows'
/// other copies a lane each. Shorter rows: copies in row order, a thread each in turn.
template <typename T, int CN, typename Copy> __device__ __forceinline__ void forEachBatchCopy(Copy&& copy)
{
    using S = RowsMmaShape<T, CN>;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if constexpr (S::copiesPerRow >= 32) {
        constexpr int rowsPerWarp = kRowsMmaBatch / S::warps, extra = S::copiesPerRow - 32;
        static_assert(rowsPerWarp * S::warps == kRowsMmaBatch && rowsPerWarp * extra <= 32, "a lane a copy, and one more");
#pragma unroll
        for (int i = 0; i < rowsPerWarp; ++i) copy(warp + S::warps * i, lane);
        if (lane < rowsPerWarp * extra) copy(warp + S::warps * (lane / extra), 32 + lane % extra);
    } else {
        constexpr int copies = kRowsMmaBatch * S::copiesPerRow;
#pragma unroll
        for (int m = 0; m < (copies + S::threads - 1) / S::threads; ++m)
            if (const int i = int(threadIdx.x) + S::threads * m; copies % S::threads == 0 || i < copies)
                copy(i / S::copiesPerRow, i % S::copiesPerRow);
    }
}

/// The elements of a band's staged window that no copy brings but outputs read, the same in every row:
/// left of the image (-CN * K/2 .. -1) and from the last copy inside the row to CN * K/2 past its end.
/// Element c of `count` is row element element(c). None on bands whose window lies inside the row.
/// Up to heldEdgeElements of them, `sources` holds where each is read in its row (edgeSource), found
/// once a block (findEdgeSources).
template <typename T, int CN> struct EdgeElements {
    int left, rightStart, count;
    unsigned rowScale;  ///< batchRowScale(count)
    int* sources;
    __device__ EdgeElements(int x0, int rowElements, int halfWidth, int* sourceTable) : sources(sourceTable)
    {
        using S = RowsMmaShape<T, CN>;
        left = x0 == 0 ? CN * halfWidth : 0;
        // copies start at multiples of copyElements (x0 - margin is one)
        rightStart = rowElements / S::copyElements * S::copyElements;
        count = left + max(0, min(x0 - S::margin + S::stagedElements, rowElements + CN * halfWidth) - rightStart);
        rowScale = count > 0 ? batchRowScale(count) : 0;
    }
    [[nodiscard]] __device__ int element(int c) const { return c < left ? c - left : rightStart + c - left; }
    /// Whether the threads hold the batch's edge elements between batches (PendingFill).
    [[nodiscard]] __device__ bool held() const { return count <= RowsMmaShape<T, CN>::heldEdgeElements; }
    /// Fill i of a held batch: its row r and its element's index c (element(c), sources[c]).
    __device__ void place(int i, int& r, int& c) const
    {
        r = batchRow(i, rowScale);
        c = i - r * count;
    }
};

/// Whether copy c of a row (copyElements from x0 - margin + copyElements * c) lies inside the row.
template <typename T, int CN> __device__ bool copyInside(int x0, int c, int rowElements)
{
    using S = RowsMmaShape<T, CN>;
    const int x = x0 - S::margin + S::copyElements * c;
    return x >= 0 && x + S::copyElements <= rowElements;
}

/// Where row element `e` (any, the border's too) is read in its image row, or -1 for the constant
/// border value.
template <int CN, typename T, typename Out> __device__ int edgeSource(const StripArgs<T, Out>& a, int e)
{
    const int p = floorDiv<CN>(e), sx = borderIndex(p, a.cols, a.border);
    return sx < 0 ? -1 : sx * CN + (e - p * CN);
}

/// The element of slice row k, an image row, that `source` (edgeSource) names.
template <typename T, typename Out> __device__ T sourceElement(const StripArgs<T, Out>& a, int k, int source)
{
    return source < 0 ? T(a.borderValue) : __ldg(a.inRow(k) + source);
}

/// Fills edge.sources, where the band holds its edge elements; the caller's barrier publishes them.
template <int CN, typename T, typename Out> __device__ void findEdgeSources(const StripArgs<T, Out>& a, const EdgeElements<T, CN>& edge)
{
    if (!edge.held()) return;
    for (int c = threadIdx.x; c < edge.count; c += RowsMmaShape<T, CN>::threads) edge.sources[c] = edgeSource<CN>(a, edge.element(c));
}

/// The edge elements of a staged batch (16 rows x EdgeElements::count), this thread's elements
/// i = threadIdx.x + threads * m: loaded before the batch before it is summed and stored into its
/// slot after, so that no thread waits on them.
template <typename T, int CN> struct PendingFill {
    T value[RowsMmaShape<T, CN>::fillsPerThread];
    bool any = false;
};

/// Stages slice rows first .. first + 15, all image rows of the slice (or, but for Constant, border
/// rows the upload placed): the copies inside the row by cp.async, all in flight, and the edge
/// elements from edge.sources into `fill` (or, more than it holds, through borderIndex into the slot
/// at once: the slot was last read before this batch's barrier).
template <int CN, typename T, typename Out>
__device__ void stageBatch(const StripArgs<T, Out>& a, int x0, int first, T* slot, const EdgeElements<T, CN>& edge,
                           PendingFill<T, CN>& fill)
{
    using S = RowsMmaShape<T, CN>;
    // Byte offsets from one row address: one multiply-add a copy.
    const char* source = reinterpret_cast<const char*>(a.inRow(first) + x0 - S::margin);
    const unsigned pitchBytes = unsigned(a.inPitch) * sizeof(T);
    const auto copy = [&](int r, int c) {
        const char* from = source + size_t(unsigned(r)) * pitchBytes + 16 * c;
        __pipeline_memcpy_async(slot + r * S::slotStride + S::copyElements * c, from, 16);
    };
    if (edge.count == 0) {
        forEachBatchCopy<T, CN>(copy);
        return;
    }
    const int rowElements = CN * a.cols;
    forEachBatchCopy<T, CN>([&](int r, int c) {
        if (copyInside<T, CN>(x0, c, rowElements)) copy(r, c);
    });
    const auto target = [&](int i, int& r) {
        r = i / edge.count;
        return slot + r * S::slotStride + edge.element(i - r * edge.count) - (x0 - S::margin);
    };
    if (!edge.held()) {
        for (int i = threadIdx.x, r; i < kRowsMmaBatch * edge.count; i += S::threads) {
            T* element = target(i, r);
            *element = sourceElement(a, first + r, edgeSource<CN>(a, edge.element(i - r * edge.count)));
        }
        return;
    }
    fill.any = true;
#pragma unroll
    for (int m = 0; m < S::fillsPerThread; ++m)
        if (const int i = threadIdx.x + S::threads * m; i < kRowsMmaBatch * edge.count) {
            int r, c;
            edge.place(i, r, c);
            fill.value[m] = sourceElement(a, first + r, edge.sources[c]);
        }
}

/// Stores stageBatch's edge elements into their slot.
template <typename T, int CN>
__device__ void storeFill(T* slot, int x0, const EdgeElements<T, CN>& edge, PendingFill<T, CN>& fill)
{
    using S = RowsMmaShape<T, CN>;
    if (!fill.any) return;
#pragma unroll
    for (int m = 0; m < S::fillsPerThread; ++m)
        if (const int i = threadIdx.x + S::threads * m; i < kRowsMmaBatch * edge.count) {
            int r, c;
            edge.place(i, r, c);
            slot[r * S::slotStride + edge.element(c) - (x0 - S::margin)] = fill.value[m];
        }
    fill.any = false;
}

/// Stages a batch that reaches past the slice's last row or into constant border rows (a strip's first
/// or last batch at most): copies inside an image row as stageBatch's, the other elements that outputs
/// read through borderIndex (fetch), at once. Rows past the slice stay as they were: only outputs past
/// the strip, never stored, read them. Not inlined: it runs on few batches.
template <typename T, typename Out, int K, int CN>
__device__ __noinline__ void stageBorderBatch(StripArgs<T, Out> a, int x0, int first, T* slot)
{
    using S = RowsMmaShape<T, CN>;
    const int lastSliceRow = a.rows + K - 2, rowElements = CN * a.cols;
    forEachBatchCopy<T, CN>([&](int r, int c) {
        const int k = first + r, x = x0 - S::margin + S::copyElements * c;
        if (k > lastSliceRow) return;
        const bool borderRow = a.borderRow(k);
        T* target = slot + r * S::slotStride + S::copyElements * c;
        if (!borderRow && copyInside<T, CN>(x0, c, rowElements)) {
            __pipeline_memcpy_async(target, a.inRow(k) + x, 16);
            return;
        }
        for (int n = 0; n < S::copyElements; ++n)
            if (x + n >= -CN * (K / 2) && x + n < rowElements + CN * (K / 2))
                target[n] = T(fetch<CN>(a, k, borderRow, x + n));
    });
}

/// The row pass of a staged batch of one channel into `sums` (16 rows of the band's columns): warp w
/// takes the 8 output tiles (8 columns) from 64w, four at a time. Tile t reads input blocks (8
/// columns) t - 1 .. t + 1, block c at index c + 1 of the four tiles' six, each one A fragment
/// (m16 x k16): its 16 rows' low bytes in k 0 .. 7 and high bytes in k 8 .. 15, as normal f16,
/// from half an ldmatrix.x4; the second four tiles take the first four's last two blocks. The four
/// tiles take turns, so that each mma waits on its tile's last one less.
__device__ void rowPass(const uint16_t* slot, float* sums, const RowTapFragments<RowsMmaShape<uint16_t, 1>::offsets>& taps)
{
    using S = RowsMmaShape<uint16_t, 1>;
    static_assert(S::bandTiles == 8 * S::warps && S::group == 4, "8 tiles a warp, 4 at a time");
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, q = lane % 4;
    // ldmatrix: lanes 8i .. 8i + 7 address matrix i's rows: rows 0-7 / 8-15 of columns 0-7, then 8-15,
    // from the warp's first input block (staged column 64w + margin - 8).
    const uint16_t* row = slot + (lane % 8 + 8 * (lane / 8 % 2)) * S::slotStride + 8 * (lane / 16) + 64 * warp + S::margin - 8;
    uint32_t block[6][4];
#pragma unroll
    for (int quad = 0; quad < 2; ++quad) {
#pragma unroll
        for (int i = 0; i < 3; ++i) {
            if (quad == 1 && i == 0) {
#pragma unroll
                for (int c = 0; c < 2; ++c)
#pragma unroll
                    for (int e = 0; e < 4; ++e) block[c][e] = block[4 + c][e];
                continue;
            }
            uint32_t raw[4];
            loadMatrices<false>(row + 16 * (2 * quad + i), raw);
#pragma unroll
            for (int c = 0; c < 2; ++c) {
                uint32_t(&a)[4] = block[2 * i + c];
                a[0] = lowBytes(raw[2 * c]), a[1] = lowBytes(raw[2 * c + 1]);
                a[2] = highBytes(raw[2 * c]), a[3] = highBytes(raw[2 * c + 1]);
            }
        }
        // The smallest products first (the taps' low halves), as separable-mma's.
        float tile[4][4] = {};
#pragma unroll
        for (int h = 1; h >= 0; --h)
#pragma unroll
            for (int d = 0; d < S::offsets; ++d)
#pragma unroll
                for (int t = 0; t < 4; ++t) mmaAccumulate(tile[t], block[t + d], taps.b[d][h][0], taps.b[d][h][1]);
#pragma unroll
        for (int t = 0; t < 4; ++t) {
            float* target = sums + g * S::sumStride + 64 * warp + 8 * (4 * quad + t) + 2 * q;
            *reinterpret_cast<float2*>(target) = make_float2(tile[t][0], tile[t][1]);
            *reinterpret_cast<float2*>(target + 8 * S::sumStride) = make_float2(tile[t][2], tile[t][3]);
        }
    }
}

/// The row pass of a staged batch of u8 into `sums`, as rowPass's: each warp sums 8 output tiles, four
/// at a time, from the six input blocks of 16 pixels from their pixel -16: on one channel warp w the
/// tiles from band pixel 64w, on three or four the band's tiles of channel w. Each block is one A
/// fragment, its 16 rows' bytes as normal f16 in rowsMmaPlace's places: on one channel from half an
/// ldmatrix.x4, on several from eight byte loads. Tile t reads blocks
/// (t + 1) / 2 and the next, at block offsets -2 and 0 (t even) or -1 and 1 (odd): 4 mma a tile where
/// u16's 8-pixel blocks take 6.
template <int CN>
__device__ void byteRowPass(const uint8_t* slot, float* sums, const RowTapFragments<RowsMmaShape<uint8_t, CN>::offsets>& taps)
{
    using S = RowsMmaShape<uint8_t, CN>;
    static_assert(S::bandTiles * CN == 8 * S::warps && S::group == 4 && S::margin == 16 * CN,
                  "8 tiles a warp, 4 at a time, blocks of 16 pixels");
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, q = lane % 4;
    // One channel, ldmatrix: lanes 8i .. 8i + 7 address matrix i's rows: rows 0-7 / 8-15 of a block, then
    // of the next, from the warp's first block (staged pixel 64w + margin - 16 = 64w). Several: lane
    // (g, q)'s pixel in place 2q of block 0, channel w, in rows g and g + 8.
    const uint8_t* row = CN == 1 ? slot + (lane % 8 + 8 * (lane / 8 % 2)) * S::slotStride + 16 * (lane / 16) + 64 * warp
                                 : slot + g * S::slotStride + CN * rowsMmaPlace(2 * q, CN, 1).pixel + warp;
    uint32_t block[6][4];
#pragma unroll
    for (int quad = 0; quad < 2; ++quad) {
        // The first four tiles read blocks 0 .. 3, the second four 2 .. 5.
#pragma unroll
        for (int pair = 2 * quad; pair < quad + 2; ++pair) {
            if constexpr (CN == 1) {
                uint32_t raw[4];
                loadMatrices<false>(reinterpret_cast<const uint16_t*>(row + 32 * pair), raw);
#pragma unroll
                for (int c = 0; c < 2; ++c) {
                    // Lane q's word of a row is pixels 4q .. 4q + 3: the first two to places 2q, 2q + 1,
                    // the last two to 2q + 8, 2q + 9, the zero bytes from the permute's second operand.
                    uint32_t(&a)[4] = block[2 * pair + c];
                    a[0] = normalBytes(__byte_perm(raw[2 * c], 0, 0x4140));
                    a[1] = normalBytes(__byte_perm(raw[2 * c + 1], 0, 0x4140));
                    a[2] = normalBytes(__byte_perm(raw[2 * c], 0, 0x4342));
                    a[3] = normalBytes(__byte_perm(raw[2 * c + 1], 0, 0x4342));
                }
            } else {
#pragma unroll
                for (int c = 0; c < 2; ++c) {
                    // The pixels of places 2q + 1, 2q + 8 and 2q + 9 from 2q's.
                    constexpr int next = CN * (rowsMmaPlace(1, CN, 1).pixel - rowsMmaPlace(0, CN, 1).pixel);
                    constexpr int far = CN * (rowsMmaPlace(8, CN, 1).pixel - rowsMmaPlace(0, CN, 1).pixel);
                    // Two pixels' bytes, zero-extended, to one word's f16.
                    const auto two = [](const uint8_t* p) { return normalBytes(__byte_perm(p[0], p[next], 0x5410)); };
                    const uint8_t* top = row + CN * 16 * (2 * pair + c);
                    const uint8_t* bottom = top + 8 * S::slotStride;
                    uint32_t(&a)[4] = block[2 * pair + c];
                    a[0] = two(top), a[1] = two(bottom), a[2] = two(top + far), a[3] = two(bottom + far);
                }
            }
        }
        // The smallest products first (the taps' low halves), as rowPass's.
        float tile[4][4] = {};
#pragma unroll
        for (int h = 1; h >= 0; --h)
#pragma unroll
            for (int j = 0; j < 2; ++j)
#pragma unroll
                for (int u = 0; u < 4; ++u) {
                    const int t = 4 * quad + u;
                    const int o = t % 2 + 2 * j;
                    mmaAccumulate(tile[u], block[(t + 1) / 2 + j], taps.b[o][h][0], taps.b[o][h][1]);
                }
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const int pixel = 8 * (4 * quad + u) + 2 * q;
            if constexpr (CN == 1) {
                float* target = sums + g * S::sumStride + 64 * warp + pixel;
                *reinterpret_cast<float2*>(target) = make_float2(tile[u][0], tile[u][1]);
                *reinterpret_cast<float2*>(target + 8 * S::sumStride) = make_float2(tile[u][2], tile[u][3]);
            } else {
                float* target = sums + g * S::sumStride + CN * pixel + warp;
                target[0] = tile[u][0], target[CN] = tile[u][1];
                target[8 * S::sumStride] = tile[u][2], target[8 * S::sumStride + CN] = tile[u][3];
            }
        }
    }
}

/// The row pass of a staged batch of CN = 3 or 4 interleaved channels into `sums`: each warp sums
/// its rows and channels (InterleavedLane) of the band's tiles, RowsMmaShape::group at a time, walking
/// their input blocks once. Each block is one A fragment (lane g's top and bottom rows, rowsMmaPlace's
/// places), from four 16-bit loads (three channels) or two 32-bit loads (four) and four byte permutes.
/// A tile's last block brings its high-half products, so that each tile's sums take its low halves
/// first and then its high halves, as on one channel.
template <int CN>
__device__ void interleavedRowPass(const uint16_t* slot, float* sums,
                                   const RowTapFragments<RowsMmaShape<uint16_t, CN>::offsets>& taps)
{
    using S = RowsMmaShape<uint16_t, CN>;
    constexpr int offsets = S::offsets;
    constexpr int group = S::group;
    static_assert(S::bandTiles % group == 0, "whole groups of tiles");
    const int q = threadIdx.x % 4;
    const InterleavedLane<CN> at;
    // Lane q's first pixel of staged block 0, the band's pixel -8: tile t's blocks are staged blocks t .. t + 2.
    constexpr int pixelStep = CN * (rowsMmaPlace(2, CN, 2).pixel - rowsMmaPlace(0, CN, 2).pixel);
    const uint16_t* top = slot + at.topRow * S::slotStride + pixelStep * q + at.topChannel;
    const uint16_t* bottom = slot + at.bottomRow * S::slotStride + pixelStep * q + at.bottomChannel;
#pragma unroll
    for (int first = 0; first < S::bandTiles; first += group) {
        float tile[group][4] = {};
        uint32_t block[offsets][4];
#pragma unroll
        for (int u = 0; u < group + 2; ++u) {
            const int staged = CN * 8 * (first + u);
            uint32_t(&a)[4] = block[u % offsets];
            if constexpr (CN == 4) {
                // Pixels q and q + 4, both rows' channels a word: each element's low and high byte as f16,
                // with the zero bytes from the permute's second operand.
                const uint32_t near = *reinterpret_cast<const uint32_t*>(top + staged);
                const uint32_t far = *reinterpret_cast<const uint32_t*>(top + staged + CN * rowsMmaPlace(8, CN, 2).pixel);
                a[0] = normalBytes(__byte_perm(near, 0, 0x4140)), a[1] = normalBytes(__byte_perm(near, 0, 0x4342));
                a[2] = normalBytes(__byte_perm(far, 0, 0x4140)), a[3] = normalBytes(__byte_perm(far, 0, 0x4342));
            } else {
                const uint16_t *p = top + staged, *l = bottom + staged;
                const uint32_t top0 = p[0], top1 = p[CN], bottom0 = l[0], bottom1 = l[CN];
                // The low (high) bytes of pixels 2q and 2q + 1, whose upper bytes are 0, as f16.
                a[0] = normalBytes(__byte_perm(top0, top1, 0x6420)), a[1] = normalBytes(__byte_perm(bottom0, bottom1, 0x6420));
                a[2] = normalBytes(__byte_perm(top0, top1, 0x6521)), a[3] = normalBytes(__byte_perm(bottom0, bottom1, 0x6521));
            }
#pragma unroll
            for (int t = u - 2 > 0 ? u - 2 : 0; t <= u && t < group; ++t)
                mmaAccumulate(tile[t], a, taps.b[u - t][1][0], taps.b[u - t][1][1]);
            if (const int t = u - 2; t >= 0) {
#pragma unroll
                for (int d = 0; d < offsets; ++d)
                    mmaAccumulate(tile[t], block[(t + d) % offsets], taps.b[d][0][0], taps.b[d][0][1]);
            }
        }
#pragma unroll
        for (int t = 0; t < group; ++t) {
            float* tileSums = sums + CN * 8 * (first + t);
            if constexpr (CN == 4) {
                *reinterpret_cast<float2*>(tileSums + at.topSum[0]) = make_float2(tile[t][0], tile[t][2]);
                *reinterpret_cast<float2*>(tileSums + at.topSum[1]) = make_float2(tile[t][1], tile[t][3]);
            } else {
                tileSums[at.topSum[0]] = tile[t][0], tileSums[at.topSum[1]] = tile[t][1];
                tileSums[at.bottomSum[0]] = tile[t][2], tileSums[at.bottomSum[1]] = tile[t][3];
            }
        }
    }
}

/// Two adjacent results in one store (saturateRound for u8 and u16).
__device__ void storePair(uint8_t* p, float2 v)
{
    *reinterpret_cast<uint16_t*>(p) = uint16_t(roundedBytes(v.x, v.y, 0.0f, 0.0f));
}
__device__ void storePair(uint16_t* p, float2 v) { *reinterpret_cast<uint32_t*>(p) = roundedHalves(v.x, v.y); }
__device__ void storePair(float* p, float2 v) { *reinterpret_cast<float2*>(p) = v; }

/// The column pass of the batch of strip slice rows s0 .. s0 + 15 (s0 a multiple of 16): each row of
/// this thread's two elements of sums (from `swappedSums` in the rows swapsPixelPairs names) is added
/// to the outputs it feeds, ring[y % 16] holding strip output row y, and the output the row completes
/// is stored. Guarded: some of those outputs lie outside the strip's `rows` or the image's row
/// (`inside`); a pair at the last odd element writes the row's padding too. Unguarded, the stores step
/// from one row address.
template <int K, int CN, bool Guarded, typename T, typename Out>
__device__ __forceinline__ void columnPass(const StripArgs<T, Out>& a, const float* sums, const float* swappedSums,
                                           int y0, int s0, int rows, int x, bool inside, float2 (&ring)[kRowsMmaBatch])
{
    char* firstOutput = Guarded ? nullptr : reinterpret_cast<char*>(a.outRow(y0 + s0 - (K - 1)) + x);
    const unsigned pitchBytes = unsigned(a.outPitch) * sizeof(Out);
#pragma unroll
    for (int u = 0; u < kRowsMmaBatch; ++u) {
        const float* row = (swapsPixelPairs<T, CN>(u) ? swappedSums : sums) + u * RowsMmaShape<T, CN>::sumStride;
        const float2 sum = *reinterpret_cast<const float2*>(row);
#pragma unroll
        for (int i = 0; i < K; ++i) {
            float2& output = ring[(u - i) & (kRowsMmaBatch - 1)];
            const float tap = cRowsMmaColumnTaps[i];
            output = i == 0 ? make_float2(tap * sum.x, tap * sum.y)
                            : make_float2(fmaf(tap, sum.x, output.x), fmaf(tap, sum.y, output.y));
        }
        const float2 done = ring[(u - (K - 1)) & (kRowsMmaBatch - 1)];
        const int y = s0 + u - (K - 1);
        if (!Guarded) storePair(reinterpret_cast<Out*>(firstOutput + size_t(u) * pitchBytes), done);
        else if (y >= 0 && y < rows && inside) storePair(a.outRow(y0 + y) + x, done);
    }
}

/// The strips of a band, tallest first (rowsMmaStrips): strip s, blockIdx.y, covers output rows
/// [start[s], start[s + 1]).
struct RowsMmaStrips {
    int start[kRowsMmaMaxStrips + 1];
};

/// rows-mma (u8 and u16 images of 1, 3 or 4 channels, square compiled sizes, rank-1 taps whose
/// row taps splitMmaTaps splits; sm_80+): each block walks a strip of its band in batches: stage batch
/// b + 1, sum batch b's rows on tensor cores, add batch b - 1's row sums down the columns. One barrier
/// a batch; 4 blocks an SM.
template <typename T, typename Out, int K, int CN>
__global__ void __launch_bounds__(RowsMmaShape<T, CN>::threads, RowsMmaShape<T, CN>::blocksPerSM)
    conv2dRowsMma(StripArgs<T, Out> a, RowsMmaStrips strips, const uint32_t* fragments)
{
    using S = RowsMmaShape<T, CN>;
    extern __shared__ float4 sharedStorage[];
    T* staged = reinterpret_cast<T*>(sharedStorage);
    float* sums = reinterpret_cast<float*>(staged + kRowsMmaSlots * S::slotElements);
    const RowTapFragments<S::offsets> taps(fragments);
    const int x0 = blockIdx.x * S::band, x = x0 + 2 * int(threadIdx.x);
    const EdgeElements<T, CN> edge(x0, CN * a.cols, K / 2, reinterpret_cast<int*>(sums + 2 * S::sumElements));
    const bool inside = x < CN * a.cols;
    const float* columnSums = sums + 2 * threadIdx.x;
    const float* swappedSums = sums + 2 * (threadIdx.x ^ 2);  // pair t ^ 2, where swapsPixelPairs
    const auto slot = [&](int b) { return staged + b % kRowsMmaSlots * S::slotElements; };
    PendingFill<T, CN> fill;
    const int y0 = strips.start[blockIdx.y], rows = strips.start[blockIdx.y + 1] - y0;
    const int batches = (rows + K - 1 + kRowsMmaBatch - 1) / kRowsMmaBatch;
    const auto stage = [&](int b) {
        const int first = y0 + kRowsMmaBatch * b, last = first + kRowsMmaBatch - 1;
        const bool imageRows = a.border != BorderMode::Constant || (a.imageRow(first) && a.imageRow(last));
        if (imageRows && last <= a.rows + K - 2) stageBatch<CN>(a, x0, first, slot(b), edge, fill);
        else stageBorderBatch<T, Out, K, CN>(a, x0, first, slot(b));
        __pipeline_commit();
    };
    findEdgeSources<CN>(a, edge);
    __syncthreads();
    stage(0);
    storeFill<T, CN>(slot(0), x0, edge, fill);
    float2 ring[kRowsMmaBatch] = {};
    for (int b = 0; b <= batches; ++b) {
        __pipeline_wait_prior(0);
        __syncthreads();  // batch b is staged; batch b - 1's row pass and b - 2's column pass are done
        if (b + 1 < batches) stage(b + 1);
        if (b < batches) {
            float* batchSums = sums + (b & 1) * S::sumElements;
            if constexpr (sizeof(T) == 1) byteRowPass<CN>(slot(b), batchSums, taps);
            else if constexpr (CN == 1) rowPass(slot(b), batchSums, taps);
            else interleavedRowPass<CN>(slot(b), batchSums, taps);
        }
        if (b > 0) {
            const int s0 = kRowsMmaBatch * (b - 1);
            const float* batchSums = columnSums + ((b - 1) & 1) * S::sumElements;
            const float* swappedBatchSums = swappedSums + ((b - 1) & 1) * S::sumElements;
            if (inside && s0 >= K - 1 && s0 + kRowsMmaBatch - K < rows)
                columnPass<K, CN, false>(a, batchSums, swappedBatchSums, y0, s0, rows, x, inside, ring);
            else
                columnPass<K, CN, true>(a, batchSums, swappedBatchSums, y0, s0, rows, x, inside, ring);
        }
        storeFill<T, CN>(slot(b + 1), x0, edge, fill);
    }
}

std::string whyNotRowsMma(const Conv2dProblem& p)
{
    return whyNotMmaVariant(p, p.input.depth() != CV_32F, "a u8 or u16 image", true);
}

/// Whether rows-mma has kernels for In: u8 and u16 images.
template <typename In> constexpr bool kRowsMmaCompiled = !std::is_same_v<In, float>;

/// Calls f(kernel, shape) with rows-mma's kernel for `run` (kRowsMmaCompiled, a square compiled size)
/// and its RowsMmaShape.
template <typename F> void withRowsMmaKernel(const Conv2dRun& run, F&& f)
{
    withElementTypes(run.inDepth, run.outDepth, [&](auto in, auto out) {
        using In = decltype(in);
        using Out = decltype(out);
        withChannels(run.channels, [&](auto cn) {
            if constexpr (kRowsMmaCompiled<In>)
                withFixedSize(run.kRows, [&](auto k) {
                    f(conv2dRowsMma<In, Out, decltype(k)::value, decltype(cn)::value>, RowsMmaShape<In, decltype(cn)::value>{});
                });
        });
    });
}

/// RowTapFragments' registers for a K x K kernel on `channels` channels of Shape (a RowsMmaShape), in
/// TapFragments' order.
template <typename Shape> std::vector<uint32_t> rowTapFragments(const SplitTaps& taps, int k, int channels)
{
    return tapFragments(Shape::offsets, [&](int o, int half, int place, int n) {
        const BlockPlace at = rowsMmaPlace(place, channels, Shape::elementBytes);
        return mmaTapBits(taps, half, at.plane, at.pixel - n + 8 * (o + Shape::firstOffset) + k / 2);
    });
}

void prepareRowsMma(const Conv2dProblem& problem, Conv2dRun& run, BufferCache& cache, cudaStream_t stream)
{
    const SplitTaps taps = *splitMmaTaps(problem.factors->row, problem.factors->column);
    std::vector<uint32_t> fragments;
    withRowsMmaKernel(run, [&](auto kernel, auto shape) {
        using S = decltype(shape);
        optInSharedMemory(kernel, S::sharedBytes, S::threads);
        run.stagedSlots = residentBlocks(kernel, S::threads, S::sharedBytes, run.multiprocessors);
        fragments = rowTapFragments<S>(taps, run.kCols, run.channels);
    });
    uploadMmaFragments(fragments, run, cache, stream);
    copyToSymbol(cRowsMmaColumnTaps, taps.scaled, stream);
    KL_CUDA_TRY(cudaStreamSynchronize(stream));  // the taps are pageable and about to go
}

/// The strips of `rows` rows of `bands` bands (`slots` blocks resident on the whole GPU) for a K x K
/// kernel on CN channels, tallest first, so that the grid ends in short blocks: the block scheduler
/// hands out strip s of every band before strip s + 1. Each strip takes RowsMmaShape's share of an
/// even split of the rows still left, remaining * bands / slots, in whole batches of its slice, and
/// at least kRowsMmaMinBatches and a kRowsMmaMaxStrips-th of the rows. Returns how many. Equal strips
/// filling 4 waves, each block a quarter of the kernel's time, left the SMs ending unevenly and ran
/// 1.02-1.11x slower (docs/performance.md, "Fifty-sixth step").
template <typename S> int rowsMmaStrips(int rows, int bands, int slots, int k, RowsMmaStrips& strips)
{
    const int halo = k - 1;
    const int fewest = std::max(kRowsMmaMinBatches * kRowsMmaBatch - halo, (rows + kRowsMmaMaxStrips - 1) / kRowsMmaMaxStrips);
    const int64_t even = int64_t(slots) * S::stripShareDen;
    int count = 0;
    for (int y0 = 0; y0 < rows; ++count) {
        strips.start[count] = y0;
        const int share = int((int64_t(rows - y0) * bands * S::stripShareNum + even - 1) / even);
        const int batches = (std::max(fewest, share) + halo + kRowsMmaBatch - 1) / kRowsMmaBatch;
        y0 += std::min(batches * kRowsMmaBatch - halo, rows - y0);
    }
    strips.start[count] = rows;
    return count;
}

/// Each band's strips (rowsMmaStrips) in blockIdx.y.
void computeRowsMma(const Conv2dRun& run, int chunk, cudaStream_t stream)
{
    withStrip(run, chunk, [&](const auto& a, auto cn) {
        using A = std::decay_t<decltype(a)>;
        using In = typename A::InType;
        constexpr int CN = decltype(cn)::value;
        if constexpr (kRowsMmaCompiled<In>) {
            using S = RowsMmaShape<In, CN>;
            const int bands = (CN * a.cols + S::band - 1) / S::band;
            RowsMmaStrips strips{};  // zeros past the last strip: equal launches pass equal arguments
            const int count = rowsMmaStrips<S>(a.rows, bands, run.stagedSlots, a.kRows, strips);
            const dim3 grid{unsigned(bands), unsigned(count)};
            withFixedSize(a.kRows, [&](auto k) {
                conv2dRowsMma<In, typename A::OutType, decltype(k)::value, CN>
                    <<<grid, S::threads, S::sharedBytes, stream>>>(a, strips, run.mmaFragments);
            });
        }
    });
    KL_CHECK_LAUNCH();
}

} // namespace

Conv2dVariant rowsMmaConv2d()
{
    return {"rows-mma",
            "rank-1 kernels of compiled sizes on u8 and u16 images of 1, 3 or 4 channels (sm_80+): the row pass on tensor cores "
            "straight from staged rows (bytes and two-half taps exact in f16, f32 sums), the column pass in a register ring",
            whyNotRowsMma,
            {prepareRowsMma, computeRowsMma, true}};
}

} // namespace kl::gpu
