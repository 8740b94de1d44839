#pragma once
// conv2d's separable-tiles kernel (conv2dSeparableTiles) and its shared-memory tile, over the row
// and column taps of conv2d_separable.cuh. Included by conv2d_separable.cu only.
#include "conv2d_separable.cuh"

namespace kl::gpu {
namespace {

// ---- separable-tiles ---------------------------------------------------------------------------------

/// conv2dSeparableTiles' shape: a block of kTilesThreads covers kTileBand interleaved elements of
/// the row and walks down its strip kTileStep output rows at a time. The row pass gives each thread
/// kTileBand / warps adjacent elements of one row (a warp's lanes are the step's rows); the column
/// pass gives each thread 4 adjacent elements of kTileStep / warps rows (a warp's lanes are the band).
constexpr int kTilesThreads = 256, kTileBand = 128, kTileStep = 32;
constexpr int kTileWarps = kTilesThreads / 32;
constexpr int kTileRowElements = kTileBand / kTileWarps, kTileColumnRows = kTileStep / kTileWarps;
static_assert(kTileStep == 32 && kTileBand == 4 * 32, "a warp's lanes are the step's rows, or the band's quads");

/// Shared-memory rows whose length in floats is an odd multiple of 4: the 8 lanes of a 16-byte
/// access phase that read one column of 8 consecutive rows then hit 8 different bank groups.
constexpr int conflictFreeStride(int floats) { return roundUp4(floats) % 8 == 0 ? roundUp4(floats) + 4 : roundUp4(floats); }

/// conv2dSeparableTiles' shared memory for a K x K kernel on CN channels: `input`, the staged rows
/// of one step as f32 (element x0 - pad at column 0), and `mid`, a ring of rows slots of row-pass
/// results (slice row k in slot (k - strip start) % rows).
template <int CN_, int K> struct SeparableTile {
    static constexpr int CN = CN_;
    static constexpr int pad = roundUp4(K / 2 * CN), inputCols = kTileBand + 2 * pad;
    static constexpr int inputStride = conflictFreeStride(inputCols), midStride = conflictFreeStride(kTileBand);
    static constexpr int midRows = kTileStep + K - 1;
    static constexpr int inputQuads = inputCols / 4, quadsPerThread = (kTileStep * inputQuads + kTilesThreads - 1) / kTilesThreads;
    static constexpr int vectorElements = 4, rowVectors = inputQuads, vectorsPerThread = quadsPerThread;  // StagePlan
    static constexpr size_t bytes = (size_t(kTileStep) * inputStride + size_t(midRows) * midStride) * sizeof(float);
};

/// Where a thread's vectors of every step of tile T lie (T: SeparableTile, quads of 4 elements;
/// MmaTile, 16 bytes): vector p is vector threadIdx.x + p * kTilesThreads of the step's rows, row by
/// row; computed once, since it is the same in every step.
template <typename T> struct StagePlan {
    static constexpr int P = T::vectorsPerThread;
    int row[P];     ///< its row in the step (kTileStep: none)
    int source[P];  ///< elements from the step's first input element
    int column[P];  ///< its first element in the tile's row
    __device__ StagePlan(int inPitch)
    {
#pragma unroll
        for (int p = 0; p < P; ++p) {
            const int i = threadIdx.x + p * kTilesThreads, r = i / T::rowVectors, v = i - r * T::rowVectors;
            row[p] = r < kTileStep ? r : kTileStep;
            column[p] = T::vectorElements * v;
            source[p] = r * inPitch + column[p];
        }
    }
};

/// One step's input quads, loaded into registers while the block computes the previous step.
template <typename In, int P> struct PendingQuads {
    typename Quad<In>::type quad[P];
};

/// Whether the staged rows of slice rows k0 .. k0 + count - 1 of the band from x0 (tile T) lie inside
/// their rows and were uploaded, so that every quad is one vector load (the block's common case).
template <typename T, typename In, typename Out>
__device__ bool stepInside(const StripArgs<In, Out>& a, int x0, int k0, int count)
{
    return x0 >= T::pad && x0 + kTileBand + T::pad <= a.cols * T::CN && !a.borderRow(k0) &&
           !a.borderRow(k0 + count - 1);
}

/// Loads an inside step's quads (stepInside) into registers.
template <typename T, typename In, typename Out, int P>
__device__ void loadStep(const StripArgs<In, Out>& a, int x0, int k0, int count, const StagePlan<T>& plan,
                         PendingQuads<In, P>& pending)
{
    const In* first = a.inRow(k0) + x0 - T::pad;
#pragma unroll
    for (int p = 0; p < P; ++p)
        if (plan.row[p] < count) pending.quad[p] = loadQuad(first + plan.source[p]);
}

/// Stores loadStep's quads into the input tile as f32.
template <int CN, int K, typename In, int P>
__device__ void storeStep(int count, const StagePlan<SeparableTile<CN, K>>& plan, const PendingQuads<In, P>& pending,
                          float* input)
{
#pragma unroll
    for (int p = 0; p < P; ++p)
        if (plan.row[p] < count)
            *reinterpret_cast<float4*>(input + plan.row[p] * SeparableTile<CN, K>::inputStride + plan.column[p]) =
                widen(pending.quad[p]);
}

/// Stages a step that is not inside (stepInside) straight into the input tile: vector loads where
/// a quad lies inside its row, borderIndex element by element elsewhere. Not inlined: only the
/// bands at the row ends and the steps that reach constant border rows take it.
template <int CN, int K, typename In, typename Out>
__device__ __noinline__ void stageEdgeStep(StripArgs<In, Out> a, int x0, int k0, int count, float* input)
{
    using T = SeparableTile<CN, K>;
    for (int i = threadIdx.x; i < count * T::inputQuads; i += kTilesThreads) {
        const int r = i / T::inputQuads, q = i - r * T::inputQuads, k = k0 + r, flat = x0 - T::pad + 4 * q;
        const bool borderRow = a.borderRow(k);
        float4 v;
        if (!borderRow && flat >= 0 && flat + 4 <= a.cols * CN)
            v = widen(loadQuad(a.inRow(k) + flat));
        else
            v = {fetch<CN>(a, k, borderRow, flat), fetch<CN>(a, k, borderRow, flat + 1),
                 fetch<CN>(a, k, borderRow, flat + 2), fetch<CN>(a, k, borderRow, flat + 3)};
        *reinterpret_cast<float4*>(input + r * T::inputStride + 4 * q) = v;
    }
}

/// The row-pass sums of N adjacent elements of an f32 row in shared memory (16-byte aligned): element
/// n's products are over element Offset + n + j * CN, j = 0 .. K - 1, from `source`, each sum taking
/// its taps in order from 0, as conv2dRowPass does. The row may leave GroupPad floats after every 16
/// elements (MmaTile's mid). The window streams in a quad at a time, and each quad feeds every
/// (element, tap) it belongs to.
template <int CN, int K, int N, int Offset, int GroupPad = 0> __device__ void bandRowSums(const float* source, float (&sum)[N])
{
    constexpr int lead = Offset % 4, windowQuads = (lead + (K - 1) * CN + N + 3) / 4;
#pragma unroll
    for (int n = 0; n < N; ++n) sum[n] = 0;
#pragma unroll
    for (int g = 0; g < windowQuads; ++g) {
        const int quadIndex = Offset / 4 + g;
        const float4 quad = *reinterpret_cast<const float4*>(source + 4 * quadIndex + GroupPad * (quadIndex / 4));
        const float v[4] = {quad.x, quad.y, quad.z, quad.w};
#pragma unroll
        for (int q = 0; q < 4; ++q)
#pragma unroll
            for (int j = 0; j < K; ++j) {
                const int n = 4 * g + q - lead - j * CN;
                if (n >= 0 && n < N) sum[n] = fmaf(cRowTaps[j], v[q], sum[n]);
            }
    }
}

/// The row pass of the staged rows (count of them, slice rows k0 ..) into their mid slots: thread
/// (row = lane, segment = warp) sums kTileRowElements adjacent elements (bandRowSums).
template <int CN, int K>
__device__ void rowPassStep(const float* input, float* mid, int k0, int count, int stripStart)
{
    using T = SeparableTile<CN, K>;
    constexpr int N = kTileRowElements;
    const int r = threadIdx.x % 32, segment = threadIdx.x / 32;
    if (r >= count) return;
    float sum[N];
    bandRowSums<CN, K, N, T::pad - K / 2 * CN>(input + r * T::inputStride + segment * N, sum);
    float* target = mid + ((k0 + r - stripStart) % T::midRows) * T::midStride + segment * N;
#pragma unroll
    for (int g = 0; g < N / 4; ++g)
        reinterpret_cast<float4*>(target)[g] = make_float4(sum[4 * g], sum[4 * g + 1], sum[4 * g + 2], sum[4 * g + 3]);
}

/// The first `elements` (1 .. 3) of a quad of column-pass results, where the row end cuts the
/// quad. Not inlined: one thread per row of bands takes it.
template <typename Out> __device__ __noinline__ void storeQuadEnd(Out* out, int elements, float4 sum)
{
    const float s[4] = {sum.x, sum.y, sum.z, sum.w};
    for (int n = 0; n < elements; ++n) out[n] = saturateRound<Out>(s[n]);
}

/// The column pass for output rows y .. y + count - 1: thread (quad = lane, rows = warp) sums 4
/// adjacent elements of kTileColumnRows rows from the mid slots, taps in order from 0 as
/// conv2dColumnPass, and stores them.
template <int CN, int K, typename In, typename Out>
__device__ void columnPassStep(const StripArgs<In, Out>& a, const float* mid, int x0, int y, int count, int stripStart)
{
    using T = SeparableTile<CN, K>;
    constexpr int M = kTileColumnRows;
    const int quad = threadIdx.x % 32, firstRow = threadIdx.x / 32 * M;
    if (firstRow >= count) return;
    // The slots from the first row's on, wrapping at the ring's end.
    const float* ringEnd = mid + T::midRows * T::midStride;
    const float* source = mid + (y + firstRow - stripStart) % T::midRows * T::midStride + 4 * quad;
    float4 sum[M] = {};
#pragma unroll
    for (int t = 0; t < M + K - 1; ++t) {
        const float4 v = *reinterpret_cast<const float4*>(source);
        source += T::midStride;
        if (source >= ringEnd) source -= T::midRows * T::midStride;
#pragma unroll
        for (int m = 0; m < M; ++m) {
            const int i = t - m;
            if (i < 0 || i >= K) continue;
            const float tap = cColumnTaps[i];
            sum[m] = make_float4(fmaf(tap, v.x, sum[m].x), fmaf(tap, v.y, sum[m].y), fmaf(tap, v.z, sum[m].z),
                                 fmaf(tap, v.w, sum[m].w));
        }
    }
    const int flatCols = a.cols * CN, e = x0 + 4 * quad, rows = min(M, count - firstRow);
    Out* out = a.outRow(y + firstRow) + e;
    if (e + 4 <= flatCols) {
#pragma unroll
        for (int m = 0; m < M; ++m)
            if (m < rows) store4(out + m * a.outPitch, sum[m]);
    } else if (e < flatCols) {
#pragma unroll
        for (int m = 0; m < M; ++m)
            if (m < rows) storeQuadEnd(out + m * a.outPitch, flatCols - e, sum[m]);
    }
}

/// conv2dSeparableTiles' minimum blocks an SM. On u8/u16 images 3 gives ptxas room (80 registers,
/// not 64) to keep each thread's staging plan across steps instead of recomputing it, divisions
/// included. f32 kernels take no minimum (0 emits none): with one, ptxas gives them more registers
/// than pays (docs/performance.md).
template <typename In> constexpr int separableTilesBlocks()
{
    return std::is_same_v<In, float> ? 0 : 3;
}

/// separable-tiles (square compiled sizes, any depth and channel count): the separable passes
/// through shared memory. A block owns a band of kTileBand interleaved elements and walks down a
/// strip of stripRows output rows. Each step stages kTileStep input rows (with the kernel's
/// horizontal halo) as f32, filters them horizontally into a ring of row-pass results in shared
/// memory that holds the last kTileStep + K - 1 slice rows, and sums kTileStep output rows down
/// that ring. Every input element is widened once per band and every row pass computed once per
/// strip; the next step's global loads are in flight while the block computes. The sums are
/// conv2dRowPass's and conv2dColumnPass's, in their order: the bits equal the two-pass result.
template <typename In, typename Out, int CN, int K>
__global__ void __launch_bounds__(kTilesThreads, separableTilesBlocks<In>()) conv2dSeparableTiles(StripArgs<In, Out> a, int stripRows)
{
    using T = SeparableTile<CN, K>;
    extern __shared__ float4 sharedStorage[];
    float* input = reinterpret_cast<float*>(sharedStorage);
    float* mid = input + kTileStep * T::inputStride;
    const int x0 = blockIdx.x * kTileBand;
    const StagePlan<T> plan(a.inPitch);
    for (int y0 = blockIdx.y * stripRows; y0 < a.rows; y0 += gridDim.y * stripRows) {
        const int y1 = min(y0 + stripRows, a.rows);
        // Stage 0 holds slice rows y0 .. y0 + K - 2 (the ring's first rows); stage s > 0 the rows
        // for output rows y0 + (s - 1) * kTileStep onwards.
        int k0 = y0, count = K - 1;
        PendingQuads<In, T::quadsPerThread> pending;
        bool inside = stepInside<T>(a, x0, k0, count);
        if (inside) loadStep(a, x0, k0, count, plan, pending);
        for (int y = y0 - kTileStep; y < y1; y += kTileStep) {
            if (inside) storeStep(count, plan, pending, input);
            else stageEdgeStep<CN, K>(a, x0, k0, count, input);
            __syncthreads();  // the tile is staged; the last column pass is done with the ring
            const int nextK0 = y + kTileStep + K - 1, nextCount = min(kTileStep, y1 - (y + kTileStep));
            const bool nextInside = nextCount > 0 && stepInside<T>(a, x0, nextK0, nextCount);
            if (nextInside) loadStep(a, x0, nextK0, nextCount, plan, pending);
            rowPassStep<CN, K>(input, mid, k0, count, y0);
            __syncthreads();  // the ring holds this step's rows; the tile may be restaged
            if (y >= y0) columnPassStep<CN, K>(a, mid, x0, y, min(kTileStep, y1 - y), y0);
            inside = nextInside;
            k0 = nextK0, count = nextCount;
        }
    }
}

} // namespace
} // namespace kl::gpu
