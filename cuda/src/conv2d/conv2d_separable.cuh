#pragma once
// conv2d's separable kernels (the register ring, the staged tiles they, integer and staged-rows
// share, and the two passes); separable-tiles is in conv2d_separable_tiles.cuh, integer's kernel in
// conv2d_integer_tiles.cuh, staged-rows in conv2d_staged_rows.cuh. Included by those and
// conv2d_separable.cu only.
#include "conv2d_device.cuh"

#include <cuda_pipeline_primitives.h>

#include <type_traits>

namespace kl::gpu {
namespace {

__constant__ float cRowTaps[kMaxConv2DKernelSize];               // kCols taps
__constant__ float cColumnTaps[kMaxConv2DKernelSize];            // kRows taps
__constant__ uint32_t cRowTapsInteger[kMaxConv2DKernelSize];     // integer: kCols taps * 2^8 / column scale
__constant__ uint32_t cColumnTapsInteger[kMaxConv2DKernelSize];  // integer: kRows taps, smallest integers

/// conv2dSeparableRing's shape: interleaved elements per thread and output rows per strip, the
/// fastest measured everywhere (more threads in flight; wider threads outgrow the instruction
/// cache). The walk prefetches up to 9x9; at 15x15 the prefetched window costs too many registers.
constexpr int kRingElements = 4, kRingStrip = 16;

/// integer: cRowTapsInteger (each a byte) for a thread's element n at the bytes of window quad q
/// they multiply: word n * kMaxWindowQuads + q (rowTapBytes).
constexpr int kMaxWindowQuads = 16;
__constant__ uint32_t cRowTapBytes[kRingElements * kMaxWindowQuads];

// ---- separable ---------------------------------------------------------------------------------------

/// The input window of the row pass for N interleaved elements from `flat` of an image row whose
/// window lies inside the row: quads from flat - head (the halo rounded up to 4), as loaded.
template <typename In, int CN, int K, int N> struct RowWindow {
    static constexpr int channels = CN, taps = K, elements = N;
    static constexpr int halo = K / 2 * CN, head = roundUp4(halo), quads = (2 * head + N) / 4;
    typename Quad<In>::type quad[quads];
};

/// The row tap that element n of window W multiplies with its byte s: j where s = head - halo + n +
/// j * channels, else -1.
template <typename W> __host__ __device__ constexpr int rowTapAt(int n, int s)
{
    const int offset = s - (W::head - W::halo + n);
    return offset >= 0 && offset % W::channels == 0 && offset / W::channels < W::taps ? offset / W::channels : -1;
}

/// Whether element n of window W has a row tap in quad q.
template <typename W> __host__ __device__ constexpr bool quadHasTap(int n, int q)
{
    for (int b = 0; b < 4; ++b)
        if (rowTapAt<W>(n, 4 * q + b) >= 0) return true;
    return false;
}

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

/// A loaded window as f32, element e at v[e]: exact (widen), or Subnormal (widenSubnormal).
template <bool Subnormal, typename In, int CN, int K, int N, int Quads = RowWindow<In, CN, K, N>::quads>
__device__ __forceinline__ void widenWindow(const RowWindow<In, CN, K, N>& w, float (&v)[4 * Quads])
{
#pragma unroll
    for (int q = 0; q < Quads; ++q) {
        const float4 f = Subnormal ? widenSubnormal(w.quad[q]) : widen(w.quad[q]);
        v[4 * q] = f.x, v[4 * q + 1] = f.y, v[4 * q + 2] = f.z, v[4 * q + 3] = f.w;
    }
}

/// `sum` plus element n's products over a widened window v of W's shape with the K taps from
/// `taps` (constant memory), added in order from the first, one fma each.
template <typename W, int K>
__device__ __forceinline__ float tapSum(const float* taps, const float* v, int n, float sum = 0)
{
#pragma unroll
    for (int j = 0; j < K; ++j) sum = fmaf(taps[j], v[W::head - W::halo + n + j * W::channels], sum);
    return sum;
}

/// The row pass over a loaded window, summed as conv2dRowPass sums it; u8/u16 elements as subnormals,
/// for the rings' scaled taps (subnormalRingTaps).
template <typename In, int CN, int K, int N> __device__ void rowSums(const RowWindow<In, CN, K, N>& w, float (&out)[N])
{
    using W = RowWindow<In, CN, K, N>;
    float v[4 * W::quads];
    widenWindow<true>(w, v);
#pragma unroll
    for (int n = 0; n < N; ++n) out[n] = tapSum<W, K>(cRowTaps, v, n);
}

/// A u8/u16 row-pass window loaded element by element: element j of one channel's N + K - 1 around
/// a thread's N outputs, zero-extended, so its bits are the subnormal x * 2^-149 that rowSums sums
/// with no instruction to widen it (StagedTile::elementLoads).
template <int K, int N> struct ElementWindow {
    static constexpr int elements = N + K - 1;
    uint32_t e[elements];
};

/// rowSums over an ElementWindow: the same products, added in the same order.
template <int K, int N> __device__ void rowSums(const ElementWindow<K, N>& w, float (&out)[N])
{
#pragma unroll
    for (int n = 0; n < N; ++n) {
        float sum = 0;
#pragma unroll
        for (int j = 0; j < K; ++j) sum = fmaf(cRowTaps[j], __uint_as_float(w.e[n + j]), sum);
        out[n] = sum;
    }
}

template <int N> struct RowValues { float v[N]; };

/// The row pass anywhere, element by element through borderIndex, with rowSums' scale: on u8/u16 the
/// taps times 2^-149 (exact) where rowSums takes the elements so. Not inlined: the ring kernel
/// unrolls its row loop K times, and one copy of this rarely taken path serves them all.
template <int CN, int K, int N, typename In, typename Out>
__device__ __noinline__ RowValues<N> rowPassBorder(StripArgs<In, Out> a, int k, int flat)
{
    const bool borderRow = a.borderRow(k);
    const float elementScale = std::is_same_v<In, float> ? 1.0f : 0x1p-149f;
    RowValues<N> out;
#pragma unroll
    for (int n = 0; n < N; ++n) {
        float sum = 0;
        for (int j = 0; j < K; ++j)
            sum = fmaf(cRowTaps[j] * elementScale, fetch<CN>(a, k, borderRow, flat + n + (j - K / 2) * CN), sum);
        out.v[n] = sum;
    }
    return out;
}

/// Whether a thread's N adjacent elements of Out, from a multiple of N inside a row, lie inside the
/// row's pitch (rowPitch) even where they pass the row end: the thread may store them whole, the
/// elements past the end into the row's padding, which is never copied back.
template <int N, typename Out> constexpr bool storesWithinPitch()
{
    return kRowAlignment % (N * sizeof(Out)) == 0;
}

/// A thread's N output sums to its elements from `flat` (< flatCols) of the row at `out`, Stride
/// apart. Adjacent ones (Stride 1) go in quads, all of them (storesWithinPitch), with no check of the
/// row end on every row; elements Stride apart go one by one up to the row end.
template <int N, int Stride = 1, typename Out>
__device__ void storeSums(Out* out, int flat, int flatCols, const float (&sum)[N])
{
    if constexpr (Stride > 1) {
        const bool whole = flat + (N - 1) * Stride < flatCols;
#pragma unroll
        for (int n = 0; n < N; ++n)
            if (whole || flat + n * Stride < flatCols) out[n * Stride] = saturateRound<Out>(sum[n]);
    } else {
        static_assert(storesWithinPitch<N, Out>(), "a thread's quads lie inside the pitch");
#pragma unroll
        for (int g = 0; g < N / 4; ++g)
            store4(out + 4 * g, make_float4(sum[4 * g], sum[4 * g + 1], sum[4 * g + 2], sum[4 * g + 3]));
    }
}

/// The column pass of one output row: its ring slots (slice row order from ring[first]) times the
/// column taps, added in order.
template <int K, int N> __device__ void ringColumnSums(const float (&ring)[K][N], int first, float (&sum)[N])
{
#pragma unroll
    for (int n = 0; n < N; ++n) sum[n] = 0;
#pragma unroll
    for (int i = 0; i < K; ++i)
#pragma unroll
        for (int n = 0; n < N; ++n) sum[n] = fmaf(cColumnTaps[i], ring[(first + i) % K][n], sum[n]);
}

/// The sums of output row y of the ring (slots in slice row order) to its N elements from `flat`.
template <int K, int N, typename Out>
__device__ void storeRingRow(Out* out, int flat, int flatCols, const float (&ring)[K][N], int first)
{
    float sum[N];
    ringColumnSums(ring, first, sum);
    storeSums(out, flat, flatCols, sum);
}

/// The staged ring's exchange of results on u16 4-channel images, whose threads each own one channel
/// of 4 adjacent pixels (channel c = threadIdx.x % 4; StagedTile::elementLoads): within each group
/// of 4 threads, so that thread c stores pixel c whole (8 bytes, one store), where 4 stores of one
/// channel each were 1.5x the kernel's time. 2 shuffles, 7 selects and 4 byte permutes for 4
/// results, the selects by lane masks (one LOP3 each). The masks pass through a shuffle once a walk:
/// computed from threadIdx, ptxas recomputed them at every store, which made the kernel slower than
/// the quad ring (docs/performance.md, "Thirty-sixth step").
struct PixelExchange {
    uint32_t upper, odd;  ///< all ones on channels 2 and 3 / on channels 1 and 3

    __device__ PixelExchange()
    {
        const unsigned lanes = __activemask();
        upper = __shfl_sync(lanes, 0u - (threadIdx.x >> 1 & 1u), int(threadIdx.x % 32));
        odd = __shfl_sync(lanes, 0u - (threadIdx.x & 1u), int(threadIdx.x % 32));
    }

    /// Bits of a where mask is set, else of b.
    __device__ static uint32_t select(uint32_t mask, uint32_t a, uint32_t b) { return (a & mask) | (b & ~mask); }

    /// Stores this thread's pixel of its group's 4: `pixel` is its address. Every lane of the warp
    /// must take part.
    __device__ void store(uint2* pixel, const float (&sum)[4]) const
    {
        const uint32_t p = roundedHalves(sum[0], sum[1]), q = roundedHalves(sum[2], sum[3]);
        // Partners c ^ 2 swap pixel pairs: each then holds pixels m, m + 1 (m = c & 2) of channels c & 1
        // (low) and (c & 1) + 2 (high).
        const uint32_t other = __shfl_xor_sync(0xFFFFFFFFu, select(upper, p, q), 2);
        const uint32_t low = select(upper, other, p), high = select(upper, q, other);
        // Channels c & 1 and (c & 1) + 2 of pixel m and of pixel m + 1; partners c ^ 1 swap the one the
        // other stores.
        const uint32_t first = __byte_perm(low, high, 0x5410), second = __byte_perm(low, high, 0x7632);
        const uint32_t rest = __shfl_xor_sync(0xFFFFFFFFu, select(odd, first, second), 1);
        const uint32_t own = select(odd, second, first);
        const uint32_t even = select(odd, rest, own), oddChannels = select(odd, own, rest);  // channels 0, 2 / 1, 3
        *pixel = {__byte_perm(even, oddChannels, 0x5410), __byte_perm(even, oddChannels, 0x7632)};
    }
};

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
/// instruction cache.
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

/// The ring walk of conv2dSeparableRing and the staged kernels over output rows yc .. y1 - 1 of a
/// walk from y0: rowInto(k, slot) leaves slice row k's row pass in ring[(k - y0) % K], then
/// storeRow(y, first) sums output row y from the slots of slice rows y .. y + K - 1, the first of
/// them ring[first]. Unrolled by K so that every slot index is a constant (the ring stays in
/// registers): whole rounds of K rows with no check of the walk's end, which cost a compare and a
/// branch a row, then the last rows one check each. A walk that goes on from an earlier one (yc >
/// y0, yc - y0 a multiple of K) finds slice rows yc .. yc + K - 2 in the ring.
template <int K, typename Slot, typename RowInto, typename StoreRow>
__device__ __forceinline__ void walkRing(int y0, int yc, int y1, Slot (&ring)[K], RowInto&& rowInto, StoreRow&& storeRow)
{
    if (yc == y0) {
#pragma unroll
        for (int s = 0; s < K - 1; ++s) rowInto(y0 + s, ring[s]);
    }
    const auto row = [&](int y, int s) {
        rowInto(y + s + K - 1, ring[(s + K - 1) % K]);
        storeRow(y + s, s);
    };
    int y = yc;
    for (; y + K <= y1; y += K) {
#pragma unroll
        for (int s = 0; s < K; ++s) row(y, s);
    }
#pragma unroll
    for (int s = 0; s < K - 1; ++s) {
        if (y + s >= y1) break;
        row(y, s);
    }
}

/// Separable K x K kernels: thread t owns interleaved elements t * N .. t * N + N - 1 of every row
/// of a strip of stripRows output rows. Slice row k's row pass lands in ring[(k - y0) % K]; output
/// row y sums ring slots for slice rows y .. y + K - 1 with the column taps, in order, as
/// conv2dColumnPass. The row loop is unrolled by K so that every ring index is a constant.
/// Prefetch: each row's window is loaded while the previous row is summed. Rows are pitched, so the
/// window is vector loads at any width. Strips that reach border rows go to ringEdgeStrip, and so
/// do threads whose window leaves the row where the walk prefetches; without prefetch (15x15)
/// those threads stay in the loop with the element-by-element row pass (each the faster there).
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
        walkRing(y0, y0, y1, ring, rowInto,
                 [&](int y, int first) { storeRingRow<K, N>(a.outRow(y) + flat, flat, flatCols, ring, first); });
    }
}

/// Output rows per staged tile, at most. Taller tiles recompute fewer halo rows but keep more shared
/// memory waiting for their copies; 32 was within 2% of the best everywhere measured (integer).
constexpr int kStagedTileRows = 32;

/// The staged kernels' tile (conv2dStagedRing, conv2dIntegerTiles, conv2dStagedRows): kRingThreads * N
/// interleaved elements of T by `rows` output rows, with a halo of `margin` elements each side, `span`
/// a row; `rows` kStagedTileRows, or fewer (by 8s) within 48 KB of static shared memory (f32: 16, u16
/// 15x15 on 3 or 4 channels: 24). Strips: a block's tile may be taller (a strip, stripSchedule), walked
/// in chunks of `chunkRows` output rows that each stage only the slice rows they add (walkStagedTiles).
template <typename T, int CN_, int K_, int N_, bool ElementLoads_ = false, bool Strips_ = false> struct StagedTile {
    static constexpr int CN = CN_, K = K_, N = N_, elements = kRingThreads * N;
    static constexpr bool strips = Strips_;
    using Window = RowWindow<T, CN, K, N>;
    /// Whether each thread owns one channel of N adjacent pixels, its elements CN apart, and loads
    /// its window element by element (ElementWindow), rather than N adjacent elements from quads.
    static constexpr bool elementLoads = ElementLoads_;
    static_assert(!elementLoads || kRingThreads % CN == 0, "a block's threads cover whole pixels");
    /// Thread t's first element in the tile.
    __device__ static int threadElement(int t) { return elementLoads ? t / CN * (N * CN) + t % CN : t * N; }
    static constexpr int chunk = 16 / int(sizeof(T));  ///< elements per 16-byte copy
    static constexpr int wordsFor(int margin) { return (elements + 2 * margin) * int(sizeof(T)) / 4; }
    static constexpr int fittingRows(int rows, int margin)
    {
        return rows <= 8 || (rows + K - 1) * wordsFor(margin) * 4 <= 48 * 1024 ? rows : fittingRows(rows - 8, margin);
    }
    static constexpr int headIn(int unit) { return (Window::head + unit - 1) / unit * unit; }
    /// The halo staged each side. Tiles: whole 32-byte sectors, so that each warp's copies start on
    /// one (from halfway into a sector they touched twice the sectors). Strips: whole 16-byte copies,
    /// as sectors there took 1.01-1.05x the time (docs/performance.md, "Forty-first step" and
    /// "Forty-second step").
    static constexpr int margin = strips ? headIn(chunk) : headIn(32 / int(sizeof(T)));
    static constexpr int span = elements + 2 * margin, copiesPerRow = span / chunk, words = wordsFor(margin);
    static constexpr int rows = fittingRows(kStagedTileRows, margin), sharedWords = (rows + K - 1) * words;
    /// A multiple of K, so that each chunk's ring walk starts at slot 0 (walkRing).
    static constexpr int chunkRows = rows / K * K;
    static_assert(!strips || chunkRows > 0, "a chunk holds K rows");
};

/// Elements a thread of the staged kernels that sum in f32. Each thread widens its window, N + 2 *
/// halo elements, once a slice row, so on u8 8 elements a thread widen fewer of them per output than
/// 4, up to the kernel size `widest` where K rows of 8 sums still fit the registers.
template <typename T, int K, int widest> constexpr int floatStagedElements()
{
    return sizeof(T) == 1 && K <= widest ? 2 * kRingElements : kRingElements;
}

/// The tiles of conv2dIntegerTiles and conv2dStagedRing (8 elements a thread on u8 up to 9x9: at 9x9
/// they are the faster on 3 and 4 channels and as fast on one); conv2dStagedRows' are in
/// conv2d_staged_rows.cuh.
template <int CN, int K> using IntegerTile = StagedTile<uint8_t, CN, K, kRingElements>;
/// Whether the staged ring's threads own one channel of 4 pixels each and load their windows element
/// by element (StagedTile::elementLoads): on u16 9x9 with 4 channels and u16 output, 0.95x the time
/// of quads. At 3x3, 5x5 and 7x7, and with per-channel stores on u8 or f32 output, they were slower
/// (docs/performance.md, "Thirty-sixth step").
template <typename In, typename Out, int CN, int K> constexpr bool stagedRingElementLoads()
{
    return std::is_same_v<In, uint16_t> && std::is_same_v<Out, uint16_t> && CN == 4 && K == 9;
}
/// Whether the staged ring walks strips (StagedTile::strips): the shapes measured faster so, whose tiles
/// at 8192² spend a third of their rows or more on halo rows (u8 9x9: 8 of 24; u16 15x15: 14 of 32):
/// 0.91x and 0.85x the time of tiles on one channel. u8 5x5 and u16 5x5, 7x7 and 9x9, with fewer halo
/// rows, took 1.04-1.16x in strips (docs/performance.md, "Thirty-seventh step").
template <typename In, int K> constexpr bool stagedRingStrips()
{
    return sizeof(In) == 1 ? K >= 9 : K >= 15;
}
template <typename T, typename Out, int CN, int K>
using StagedRingTile = StagedTile<T, CN, K, floatStagedElements<T, K, 9>(), stagedRingElementLoads<T, Out, CN, K>(),
                                  stagedRingStrips<T, K>()>;

/// The staging outside the row: slice rows y0 .. y0 + rows - 1, elements from `first`, span each, to
/// `target` (row r at target + r * span). Constant border rows get the border value; in the others
/// the elements from margin - head (no window reads those before) to chunk cLo and from chunk cHi
/// on come through borderIndex, spread over the block so that their loads overlap (a thread per 16
/// bytes, each waiting on its loads, made a row-end tile several times as slow). Where the image
/// ends inside the tile, only elements within 2 * margin past its last output are staged (the
/// windows of the threads with outputs end there). Not inlined: edge tiles only.
template <typename S, typename T, typename Out>
__device__ __noinline__ void stageTileEdges(StripArgs<T, Out> a, T* target, int y0, int rows, int first, int cLo, int cHi)
{
    constexpr int CN = S::CN, N = S::N;
    const int inTile = a.cols * CN - first - S::margin;  // elements from the tile's first to the row's end
    const int end = min(S::span, (inTile + N - 1) / N * N + 2 * S::margin);
    if (a.border == BorderMode::Constant && !(a.imageRow(y0) && a.imageRow(y0 + rows - 1))) {
        const T value = T(a.borderValue);  // representable: see walkStagedTiles
        for (int i = threadIdx.x; i < rows * S::span; i += kRingThreads)
            if (a.borderRow(y0 + i / S::span)) target[i] = value;
    }
    const int unread = cLo > 0 ? S::margin - S::Window::head : 0;
    const int head = S::chunk * cLo - unread, edgeElements = end - S::chunk * (cHi - cLo) - unread;
    for (int i = threadIdx.x; i < rows * edgeElements; i += kRingThreads) {
        const int r = i / edgeElements, e = i - r * edgeElements;
        const int offset = unread + (e < head ? e : e + S::chunk * (cHi - cLo));
        if (!a.borderRow(y0 + r)) target[r * S::span + offset] = T(fetch<CN>(a, y0 + r, false, first + offset));
    }
}

/// Which output rows each tile of a staged grid covers; tile t is blockIdx.y (then + gridDim.y, ...).
/// Three runs of tiles: the first wave of them cycles through heights kScheduleStep,
/// 2 kScheduleStep, ... S::rows, so that blocks resident together finish at different times and
/// the blocks after them do not stage their tiles at the same moment; then `tall` rows each
/// (stagedTileRows); the last wave kScheduleStep rows each, so that the grid ends in short blocks
/// (docs/performance.md, "Eighteenth step"). Strips (stripSchedule) may give the first and last
/// tile columns shorter ones, edgeTiles of edgeTall rows.
constexpr int kScheduleStep = 8;
struct TileSchedule {
    int headPeriod;  ///< heights in the head's cycle: kScheduleStep * (1 .. headPeriod)
    int headTiles;   ///< whole cycles
    int tall;
    int tallEnd;  ///< tiles [headTiles, tallEnd) are tall; the rest kScheduleStep rows
    int tiles;
    int edgeTall = 0, edgeTiles = 0;  ///< the edge columns' strips, where edgeTiles > 0

    /// Whether tile column `column` of `columns` walks the edge columns' strips.
    __host__ __device__ bool edgeStrips(int column, int columns) const
    {
        return edgeTiles > 0 && (column == 0 || column == columns - 1);
    }
    __host__ __device__ int tilesIn(bool edge) const { return edge ? edgeTiles : tiles; }

    __host__ __device__ int cycleRows() const { return kScheduleStep * headPeriod * (headPeriod + 1) / 2; }
    __host__ __device__ int headRows() const { return headTiles / headPeriod * cycleRows(); }

    /// Tile t's first output row and its rows (the last tile's may pass the image's last row); `edge`:
    /// of an edge column's strips (edgeStrips).
    __device__ void rowsOf(int t, bool edge, int& y0, int& rows) const
    {
        if (edge) {
            y0 = t * edgeTall, rows = edgeTall;
        } else if (t < headTiles) {
            const int j = t % headPeriod;
            y0 = t / headPeriod * cycleRows() + kScheduleStep * j * (j + 1) / 2, rows = kScheduleStep * (j + 1);
        } else if (t < tallEnd) {
            y0 = headRows() + (t - headTiles) * tall, rows = tall;
        } else {
            y0 = headRows() + (tallEnd - headTiles) * tall + (t - tallEnd) * kScheduleStep, rows = kScheduleStep;
        }
    }
};

/// The staged kernels' walk over their tiles: a block's tile is StagedTile's elements by the
/// schedule's rows for it (at most S::rows, or a strip: S::strips). The block copies the tile's input
/// rows, with the halo, into shared memory: inside the row by cp.async, 16 bytes per copy and all in
/// flight at once; past the row ends and in constant border rows element by element
/// (stageTileEdges). Then walk(flat, y0, y0, y1, window) walks the N elements from `flat` of the
/// thread down the tile, window(k) giving slice row k's RowWindow from shared memory. A strip taller
/// than S::rows goes in chunks of S::chunkRows output rows: each stages the slice rows it adds to the
/// last one's, then walk(flat, y0, yc, yEnd, window) walks output rows yc .. yEnd - 1 of the walk
/// from y0. A constant border value that T does not hold cannot be staged: the tiles that reach it
/// run edge(flat, y0, y1) instead, element by element. (Staging the tile, rather than the ring
/// walk's loads from global memory, keeps enough bytes in flight.)
template <typename S, typename T, typename Out, typename Walk, typename Edge>
__device__ __forceinline__ void walkStagedTiles(const StripArgs<T, Out>& a, const TileSchedule& schedule, Walk&& walk,
                                                Edge&& edge)
{
    using Window = typename S::Window;
    constexpr int CN = S::CN, K = S::K, N = S::N;
    __shared__ __align__(16) uint32_t tile[S::sharedWords];
    const int flatCols = a.cols * CN, x0 = blockIdx.x * S::elements, flat = x0 + S::threadElement(threadIdx.x);
    const bool interiorColumns = x0 >= S::margin && x0 + S::elements + S::margin <= flatCols;
    const float maxValue = float(sizeof(T) == 1 ? 255 : 65535);
    const bool stagedBorder = std::is_same_v<T, float> || a.border != BorderMode::Constant ||
                              isImageValue(a.borderValue, maxValue);
    const bool edgeStrips = schedule.edgeStrips(blockIdx.x, gridDim.x);
    for (int t = blockIdx.y; t < schedule.tilesIn(edgeStrips); t += gridDim.y) {
        int y0, tileRows;
        schedule.rowsOf(t, edgeStrips, y0, tileRows);
        const int y1 = min(y0 + tileRows, a.rows), last = y1 + K - 2;  // slice rows y0 .. last
        const bool imageRows = a.imageRow(y0) && a.imageRow(last);
        if (!stagedBorder && !(interiorColumns && imageRows)) {
            // N adjacent elements a thread, however the walk splits the tile
            if (const int edgeFlat = x0 + threadIdx.x * N; edgeFlat < flatCols) edge(edgeFlat, y0, y1);
            continue;
        }
        // Stages slice rows first .. lastRow to the tile's rows 0 ..; window(k) then reads slice row k.
        const auto stage = [&](int first, int lastRow, bool rowsInImage) {
            __syncthreads();  // the previous reads are done
            const int rows = lastRow - first + 1;
            // Chunks cLo .. cHi - 1 of every image row lie inside the row: 16-byte copies, all in flight.
            const int cLo = min(max(0, (S::margin - x0 + S::chunk - 1) / S::chunk), S::copiesPerRow);
            const int cHi = max(cLo, min(S::copiesPerRow, (flatCols - x0 + S::margin) / S::chunk));
            // Each warp copies whole rows (warp w rows w, w + kRingWarps, ...) and each lane chunks lane,
            // lane + 32, ... of them: one row address a warp a row, the chunks at constant offsets from
            // it, fewer instructions a copy than copies spread over the block by index (docs/performance.md,
            // "Thirty-ninth step"). A tile inside the image copies every chunk without asking (`checked`
            // false): a block waits on its copies before it sums, and the checks made them issue later
            // ("Twenty-ninth step").
            const auto copyTile = [&](auto checked) {
                const int lane = threadIdx.x % 32;
                int r = threadIdx.x / 32;
                const T* source = a.inRow(first + r) + x0 - S::margin + S::chunk * lane;
                for (uint32_t* target = tile + r * S::words + 4 * lane; r < rows; r += kRingWarps) {
#pragma unroll
                    for (int i = 0; i < (S::copiesPerRow + 31) / 32; ++i) {
                        const int c = lane + 32 * i;
                        if ((S::copiesPerRow % 32 == 0 || c < S::copiesPerRow) &&
                            (!decltype(checked)::value || (c >= cLo && c < cHi && (rowsInImage || !a.borderRow(first + r)))))
                            __pipeline_memcpy_async(target + 4 * 32 * i, source + S::chunk * 32 * i, 16);
                    }
                    source += ptrdiff_t(kRingWarps) * a.inPitch;
                    target += kRingWarps * S::words;
                }
            };
            if (interiorColumns && rowsInImage) {
                copyTile(std::false_type{});
            } else {
                copyTile(std::true_type{});
                stageTileEdges<S>(a, reinterpret_cast<T*>(tile), first, rows, x0 - S::margin, cLo, cHi);
            }
            __pipeline_commit();
            __pipeline_wait_prior(0);
            __syncthreads();
        };
        using QuadType = typename Quad<T>::type;
        const auto windowFrom = [&](int firstRow) {
            return [&, firstRow](int k) {
                if constexpr (S::elementLoads) {
                    ElementWindow<K, N> w;
                    const T* first = reinterpret_cast<const T*>(tile + (k - firstRow) * S::words) + S::margin -
                                     Window::halo + S::threadElement(threadIdx.x);
#pragma unroll
                    for (int j = 0; j < w.elements; ++j) w.e[j] = first[j * CN];
                    return w;
                } else {
                    Window w;
                    const QuadType* span = reinterpret_cast<const QuadType*>(tile + (k - firstRow) * S::words) +
                                           (S::margin - Window::head + N * threadIdx.x) / 4;
#pragma unroll
                    for (int q = 0; q < Window::quads; ++q) w.quad[q] = span[q];
                    return w;
                }
            };
        };
        if constexpr (S::strips) {
            for (int yc = y0; yc < y1;) {
                const int yEnd = yc == y0 && tileRows <= S::rows ? y1 : min(yc + S::chunkRows, y1);
                const int first = yc == y0 ? y0 : yc + K - 1, lastRow = yEnd + K - 2;
                stage(first, lastRow, a.imageRow(first) && a.imageRow(lastRow));
                if (flat < flatCols) walk(flat, y0, yc, yEnd, windowFrom(first));
                yc = yEnd;
            }
        } else {
            stage(y0, last, imageRows);
            if (flat < flatCols) walk(flat, y0, y0, y1, windowFrom(y0));
        }
    }
}

/// conv2dStagedRing's blocks an SM, at least: its register budget. More blocks keep more warps to
/// issue from; 5 on u8 5x5 and 6 on u16 9x9 were 1-3% faster than 4, where ptxas still fits the ring
/// (u8 9x9 at 5 was 1.5 times as slow). Other shapes were as fast or were not measured
/// (docs/performance.md, "Thirty-second step"). Element loads on u16 9x9 take 5 (91 registers).
template <typename In, int K, bool ElementLoads> constexpr int stagedRingBlocks()
{
    return sizeof(In) == 1 && K == 5 ? 5 : sizeof(In) == 2 && K == 9 ? (ElementLoads ? 5 : 6) : 4;
}

/// separable's ring for u8/u16 images and f32 up to 5x5 (takesStagedRing): the staged tiles
/// (walkStagedTiles) with conv2dSeparableRing's f32 sums (rowSums, storeRingRow), so the same bits as
/// that ring. On u16 9x9 with 4 channels and u16 output (stagedRingElementLoads) each thread owns one
/// channel of 4 pixels and loads its window element by element, widening none of it; the threads of a
/// pixel group exchange their results to store whole pixels (PixelExchange), except in warps that
/// pass the row end. Where the tiles' halo rows are many (stagedRingStrips) a block walks a strip.
template <typename In, typename Out, int CN, int K>
__global__ void __launch_bounds__(kRingThreads, stagedRingBlocks<In, K, stagedRingElementLoads<In, Out, CN, K>()>())
    conv2dStagedRing(StripArgs<In, Out> a, TileSchedule schedule)
{
    using S = StagedRingTile<In, Out, CN, K>;
    constexpr int N = S::N;
    float ring[K][N];  // carried from chunk to chunk of a strip
    walkStagedTiles<S>(
        a, schedule,
        [&](int flat, int y0, int yc, int y1, const auto& window) {
            const int flatCols = a.cols * CN;
            if constexpr (S::elementLoads) {
                static_assert(std::is_same_v<Out, uint16_t> && CN == 4 && N == 4, "PixelExchange's shape");
                const PixelExchange exchange;
                const int pixelFlat = flat + 3 * int(threadIdx.x % 4);  // the pixel this thread stores
                const int tileFirst = flat - S::threadElement(threadIdx.x);
                const bool warpWhole = tileFirst + S::threadElement(threadIdx.x | 31) + (N - 1) * CN < flatCols;
                walkRing(y0, yc, y1, ring, [&](int k, float(&out)[N]) { rowSums(window(k), out); }, [&](int y, int first) {
                    float sum[N];
                    ringColumnSums(ring, first, sum);
                    if (warpWhole) exchange.store(reinterpret_cast<uint2*>(a.outRow(y) + pixelFlat), sum);
                    else storeSums<N, CN>(a.outRow(y) + flat, flat, flatCols, sum);
                });
            } else {
                walkRing(y0, yc, y1, ring, [&](int k, float(&out)[N]) { rowSums(window(k), out); },
                         [&](int y, int first) { storeRingRow<K, N>(a.outRow(y) + flat, flat, flatCols, ring, first); });
            }
        },
        [&](int flat, int y0, int y1) { ringEdgeStrip<In, Out, CN, K, N>(a, flat, y0, y1); });
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

} // namespace
} // namespace kl::gpu
