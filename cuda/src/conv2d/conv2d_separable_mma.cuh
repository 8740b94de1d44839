#pragma once
// conv2d's separable-mma kernel (conv2dSeparableMma): separable-tiles' bands and steps with the
// column pass on tensor cores. Included by conv2d_separable.cu only.
//
// The column pass is a product of a banded matrix of column taps and the staged input rows: for 16
// output rows, D[m][n] = sum_k A[m][k] * B[k][n] with A[m][k] = column tap (k - m) and B the slice
// rows from the tile's first, 8 columns at a time (mma.m16n8k16, f16 in, f32 sums). It is exact in
// f16 where it must be:
// - each input byte x is the normal f16 x * 2^kMmaByteExponent (a byte permute and normalBytes for
//   two elements), so u8 elements are one plane and u16 elements two, the low and the high bytes;
// - each column tap, times 2^s, is split into two f16 halves (splitMmaTaps), which hold it to 22 bits
//   or more; the high bytes' taps are also times 2^8 (mmaTapFragments).
// Products are exact in the f32 sums. The row pass then sums the mid rows as separable-tiles' does
// (bandRowSums), with row taps times 2^(-kMmaByteExponent - s), so every power of two cancels exactly.
#include "conv2d_mma.cuh"
#include "conv2d_separable_tiles.cuh"

#include <cuda_fp16.h>

namespace kl::gpu {
namespace {

/// A step's column pass covers rows in tiles of 16 and sums 2 chunks of 16 staged rows for each
/// (16 + K - 1 <= 32 for every compiled size); the staged rows are a ring of kMmaRingRows.
constexpr int kMmaTileRows = 16, kMmaChunks = 2, kMmaRingRows = 64;
static_assert(kTileStep % kMmaTileRows == 0 && kMmaRingRows >= kTileStep - kMmaTileRows + kMmaChunks * kMmaTileRows,
              "the rows a step's tiles read lie in distinct slots");

/// Floats mid leaves after every 16 elements of a row (MmaTile).
constexpr int kMmaGroupPad = 4;

/// conv2dSeparableMma's shared memory for a K x K kernel on CN channels of In: `ring`, the staged
/// rows as f16 planes (slice row k in slot k % kMmaRingRows; element x0 - pad at column 0), and
/// `mid`, one step's column-pass results (f32, kTileStep rows), kMmaGroupPad floats after every
/// 16 elements: the row pass's 8 lanes of a row then read 16-byte quads 80 bytes apart, in 8 bank
/// groups.
template <typename In, int CN_, int K> struct MmaTile {
    static constexpr int CN = CN_;
    static constexpr int planes = int(sizeof(In));  ///< u8: the bytes; u16: the low, then the high bytes
    /// Rows are staged in 16-byte vectors (StagePlan), from a 16-byte-aligned first element.
    static constexpr int vectorElements = 16 / int(sizeof(In));
    static constexpr int pad = (K / 2 * CN + vectorElements - 1) / vectorElements * vectorElements;
    static constexpr int inputCols = kTileBand + 2 * pad;  // a multiple of 16
    /// The 8 rows of an ldmatrix phase start 16 bytes times an odd number apart: 8 bank groups.
    static constexpr int ringStride = inputCols + 8, planeHalves = kMmaRingRows * ringStride;
    static constexpr int groups = inputCols / 16;  ///< column groups of 16 (two mma tiles of 8)
    /// The mma's 16 lanes of a store phase write 32 bytes of 4 rows: rows 8 or 24 words apart mod 32.
    static constexpr int midStride = (groups * (16 + kMmaGroupPad) + 15) / 16 * 16 + 8;
    static constexpr int rowVectors = inputCols / vectorElements;
    static constexpr int vectorsPerThread = (kTileStep * rowVectors + kTilesThreads - 1) / kTilesThreads;
    static constexpr size_t ringBytes = size_t(planes) * planeHalves * sizeof(__half);
    static constexpr size_t bytes = ringBytes + size_t(kTileStep) * midStride * sizeof(float);
    static_assert((ringStride / 8) % 2 == 1 && ringBytes % 16 == 0, "ring rows 16-byte aligned, an odd number of 16 bytes apart");
    static_assert(kMmaTileRows + K - 1 <= kMmaChunks * kMmaTileRows && kTileStep + K - 1 <= kMmaRingRows,
                  "a tile's rows lie in its chunks; a step's staged rows leave the rows before them in place");
};

/// A 16-byte vector's bytes as normal f16 (normalBytes, two to a word, in element order), 32 bytes: u8,
/// the 16 elements' one plane; u16, the 8 low bytes' plane, then the high bytes'.
__device__ void bytePlanes(uint4 w, uint8_t, uint4 (&halves)[2])
{
    const auto pair = [](uint32_t word, uint32_t selector) { return normalBytes(__byte_perm(word, 0, selector)); };
    halves[0] = {pair(w.x, 0x4140), pair(w.x, 0x4342), pair(w.y, 0x4140), pair(w.y, 0x4342)};
    halves[1] = {pair(w.z, 0x4140), pair(w.z, 0x4342), pair(w.w, 0x4140), pair(w.w, 0x4342)};
}
__device__ void bytePlanes(uint4 w, uint16_t, uint4 (&halves)[2])
{
    halves[0] = {lowBytes(w.x), lowBytes(w.y), lowBytes(w.z), lowBytes(w.w)};
    halves[1] = {highBytes(w.x), highBytes(w.y), highBytes(w.z), highBytes(w.w)};
}

/// A vector's planes (bytePlanes) into ring row `slot` from element `column`.
template <typename T> __device__ void storeRingVector(uint16_t* ring, int slot, int column, const uint4 (&halves)[2])
{
    uint16_t* target = ring + slot * T::ringStride + column;
    reinterpret_cast<uint4*>(target)[0] = halves[0];
    if constexpr (T::planes == 1) reinterpret_cast<uint4*>(target)[1] = halves[1];
    else *reinterpret_cast<uint4*>(target + T::planeHalves) = halves[1];
}

/// One step's input vectors, loaded into registers while the block computes the previous step.
template <int P> struct PendingVectors {
    uint4 vector[P];
};

/// Loads an inside step's vectors (stepInside) into registers.
template <typename T, typename In, typename Out, int P>
__device__ void loadMmaStep(const StripArgs<In, Out>& a, int x0, int k0, int count, const StagePlan<T>& plan,
                            PendingVectors<P>& pending)
{
    const In* first = a.inRow(k0) + x0 - T::pad;
#pragma unroll
    for (int p = 0; p < P; ++p)
        if (plan.row[p] < count) pending.vector[p] = __ldg(reinterpret_cast<const uint4*>(first + plan.source[p]));
}

/// Stores loadMmaStep's vectors (slice rows from k0) into the ring.
template <typename T, typename In, int P>
__device__ void storeMmaStep(int k0, int count, const StagePlan<T>& plan, const PendingVectors<P>& pending, uint16_t* ring)
{
#pragma unroll
    for (int p = 0; p < P; ++p)
        if (plan.row[p] < count) {
            uint4 halves[2];
            bytePlanes(pending.vector[p], In{}, halves);
            storeRingVector<T>(ring, unsigned(k0 + plan.row[p]) % kMmaRingRows, plan.column[p], halves);
        }
}

/// Stages a step that is not inside (stepInside) straight into the ring, as stageEdgeStep does:
/// vector loads where a vector lies inside its row, borderIndex element by element elsewhere. The
/// elements are integers in In's range (separable-mma holds a constant border value to them).
template <typename T, typename In, typename Out>
__device__ __noinline__ void stageMmaEdgeStep(StripArgs<In, Out> a, int x0, int k0, int count, uint16_t* ring)
{
    constexpr int E = T::vectorElements;
    for (int i = threadIdx.x; i < count * T::rowVectors; i += kTilesThreads) {
        const int r = i / T::rowVectors, v = i - r * T::rowVectors, k = k0 + r, flat = x0 - T::pad + E * v;
        const bool borderRow = a.borderRow(k);
        uint4 vector;
        if (!borderRow && flat >= 0 && flat + E <= a.cols * T::CN) {
            vector = __ldg(reinterpret_cast<const uint4*>(a.inRow(k) + flat));
        } else {
            In e[E];
            for (int n = 0; n < E; ++n) e[n] = In(fetch<T::CN>(a, k, borderRow, flat + n));
            memcpy(&vector, e, sizeof(vector));
        }
        uint4 halves[2];
        bytePlanes(vector, In{}, halves);
        storeRingVector<T>(ring, unsigned(k) % kMmaRingRows, E * v, halves);
    }
}

/// The column taps as mma A fragments (16 x 16, row-major, f16 pairs), per chunk, plane and half,
/// loaded from `fragments` (mmaTapFragments: register r of lane l at r * 32 + l).
template <int Planes> struct MmaTapFragments {
    uint32_t a[kMmaChunks][Planes][2][4];
    __device__ explicit MmaTapFragments(const uint32_t* fragments)
    {
        const int lane = threadIdx.x % 32;
#pragma unroll
        for (int c = 0; c < kMmaChunks; ++c)
#pragma unroll
            for (int p = 0; p < Planes; ++p)
#pragma unroll
                for (int h = 0; h < 2; ++h)
#pragma unroll
                    for (int e = 0; e < 4; ++e) a[c][p][h][e] = __ldg(fragments + (((c * Planes + p) * 2 + h) * 4 + e) * 32 + lane);
    }
};

/// The column pass for output rows y .. y + kTileStep - 1 into mid: each warp takes (tile of 16
/// rows, group of 16 columns) tasks in turn. Rows past the step's are summed too, from whatever the
/// ring holds there (finite: staged elements or the zeros it starts with); they are never stored.
template <typename T, int K>
__device__ void mmaColumnPass(const uint16_t* ring, float* mid, int y, const MmaTapFragments<T::planes>& taps)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, q = lane % 4;
    // ldmatrix: lanes 8j .. 8j + 7 address matrix j's rows: rows 0-7 / 8-15 of columns 0-7, then 8-15
    const int matrixRow = lane % 8 + 8 * (lane / 8 % 2), matrixColumn = 8 * (lane / 16);
    constexpr int tiles = kTileStep / kMmaTileRows;
    for (int task = warp; task < tiles * T::groups; task += kTileWarps) {
        const int tile = task % tiles, group = task / tiles;
        uint32_t b[kMmaChunks][T::planes][4];
#pragma unroll
        for (int c = 0; c < kMmaChunks; ++c) {
            const int k = y + kMmaTileRows * (tile + c) + matrixRow;
            const uint16_t* row = ring + unsigned(k) % kMmaRingRows * T::ringStride + 16 * group + matrixColumn;
#pragma unroll
            for (int p = 0; p < T::planes; ++p) loadMatrices<true>(row + p * T::planeHalves, b[c][p]);
        }
        // The smallest products first: the taps' low halves, then the low bytes' high halves, so
        // that the sums' truncation in the last, largest steps sets the error (a few units in the
        // last place of the result, as an f32 fma chain's; high bytes first, u16 results strayed
        // past the acceptance rule's random-input bound).
        float sum[2][4] = {};
#pragma unroll
        for (int h = 1; h >= 0; --h)
#pragma unroll
            for (int p = 0; p < T::planes; ++p)
#pragma unroll
                for (int c = 0; c < kMmaChunks; ++c) {
                    mmaAccumulate(sum[0], taps.a[c][p][h], b[c][p][0], b[c][p][1]);
                    mmaAccumulate(sum[1], taps.a[c][p][h], b[c][p][2], b[c][p][3]);
                }
        float* target = mid + (kMmaTileRows * tile + g) * T::midStride + (16 + kMmaGroupPad) * group + 2 * q;
#pragma unroll
        for (int n = 0; n < 2; ++n) {
            *reinterpret_cast<float2*>(target + 8 * n) = make_float2(sum[n][0], sum[n][1]);
            *reinterpret_cast<float2*>(target + 8 * T::midStride + 8 * n) = make_float2(sum[n][2], sum[n][3]);
        }
    }
}

/// 16 bytes of results (16 / sizeof(Out) of them) from `sum`, rounded and saturated as saturateRound.
__device__ uint4 packed16(const float* sum, uint8_t)
{
    return {roundedBytes(sum[0], sum[1], sum[2], sum[3]), roundedBytes(sum[4], sum[5], sum[6], sum[7]),
            roundedBytes(sum[8], sum[9], sum[10], sum[11]), roundedBytes(sum[12], sum[13], sum[14], sum[15])};
}
__device__ uint4 packed16(const float* sum, uint16_t)
{
    return {roundedHalves(sum[0], sum[1]), roundedHalves(sum[2], sum[3]), roundedHalves(sum[4], sum[5]),
            roundedHalves(sum[6], sum[7])};
}
__device__ uint4 packed16(const float* sum, float)
{
    return {__float_as_uint(sum[0]), __float_as_uint(sum[1]), __float_as_uint(sum[2]), __float_as_uint(sum[3])};
}

/// The row pass for output rows y .. y + count - 1 from mid, stored: thread (segment = lane % 8, row =
/// lane / 8 + 4 * warp) sums kTileRowElements adjacent elements, so that a warp stores 4 whole rows
/// of the band, 16 bytes a thread.
template <typename T, int K, typename In, typename Out>
__device__ void mmaRowPass(const StripArgs<In, Out>& a, const float* mid, int x0, int y, int count)
{
    constexpr int N = kTileRowElements, perStore = 16 / int(sizeof(Out));
    static_assert(N == 16 && kTileBand == 8 * N && kTileStep == 4 * kTileWarps, "8 segments of 16 elements, 4 rows a warp");
    const int segment = threadIdx.x % 8, r = threadIdx.x / 8;
    if (r >= count) return;
    float sum[N];
    bandRowSums<T::CN, K, N, T::pad - K / 2 * T::CN, kMmaGroupPad>(mid + r * T::midStride + segment * (N + kMmaGroupPad), sum);
    const int flatCols = a.cols * T::CN, e = x0 + segment * N;
    Out* out = a.outRow(y + r) + e;
    if (e + N <= flatCols) {
#pragma unroll
        for (int g = 0; g < N / perStore; ++g) *reinterpret_cast<uint4*>(out + g * perStore) = packed16(sum + g * perStore, Out{});
        return;
    }
#pragma unroll
    for (int g = 0; g < N / 4; ++g) {
        const float4 quad = make_float4(sum[4 * g], sum[4 * g + 1], sum[4 * g + 2], sum[4 * g + 3]);
        if (e + 4 * g + 4 <= flatCols) store4(out + 4 * g, quad);
        else if (e + 4 * g < flatCols) storeQuadEnd(out + 4 * g, flatCols - e - 4 * g, quad);
    }
}

/// separable-mma (u8/u16, square compiled sizes, rank-1 taps whose column taps splitMmaTaps splits; sm_80+):
/// separable-tiles' bands, strips and steps, with the passes the other way round. Each step stages
/// kTileStep input rows as f16 planes into the ring, sums the step's output rows down the ring on
/// tensor cores into mid (mmaColumnPass), and then along mid's rows (mmaRowPass). The next step's
/// global loads are in flight during both passes.
template <typename In, typename Out, int CN, int K>
__global__ void __launch_bounds__(kTilesThreads, sizeof(In) == 1 ? 3 : 2)
    conv2dSeparableMma(StripArgs<In, Out> a, int stripRows, const uint32_t* fragments)
{
    using T = MmaTile<In, CN, K>;
    extern __shared__ float4 sharedStorage[];
    uint16_t* ring = reinterpret_cast<uint16_t*>(sharedStorage);
    float* mid = reinterpret_cast<float*>(reinterpret_cast<char*>(sharedStorage) + T::ringBytes);
    for (int i = threadIdx.x; i < int(T::ringBytes / sizeof(float4)); i += kTilesThreads) sharedStorage[i] = {};
    const MmaTapFragments<T::planes> taps(fragments);
    const int x0 = blockIdx.x * kTileBand;
    const StagePlan<T> plan(a.inPitch);
    __syncthreads();  // the ring is zeroed before any row is staged
    for (int y0 = blockIdx.y * stripRows; y0 < a.rows; y0 += gridDim.y * stripRows) {
        const int y1 = min(y0 + stripRows, a.rows);
        // Stage 0 holds slice rows y0 .. y0 + K - 2; stage s > 0 the rows that complete output rows
        // y0 + (s - 1) * kTileStep onwards.
        int k0 = y0, count = K - 1;
        PendingVectors<T::vectorsPerThread> pending;
        bool inside = stepInside<T>(a, x0, k0, count);
        if (inside) loadMmaStep(a, x0, k0, count, plan, pending);
        for (int y = y0 - kTileStep; y < y1; y += kTileStep) {
            if (inside) storeMmaStep<T, In>(k0, count, plan, pending, ring);
            else stageMmaEdgeStep<T>(a, x0, k0, count, ring);
            __syncthreads();  // the rows are staged; the last row pass is done with mid
            const int nextK0 = y + kTileStep + K - 1, nextCount = min(kTileStep, y1 - (y + kTileStep));
            const bool nextInside = nextCount > 0 && stepInside<T>(a, x0, nextK0, nextCount);
            if (nextInside) loadMmaStep(a, x0, nextK0, nextCount, plan, pending);
            if (y >= y0) {
                mmaColumnPass<T, K>(ring, mid, y, taps);
                __syncthreads();  // mid holds the step; the ring may be restaged
                mmaRowPass<T, K>(a, mid, x0, y, min(kTileStep, y1 - y));
            }
            inside = nextInside;
            k0 = nextK0, count = nextCount;
        }
    }
}

} // namespace
} // namespace kl::gpu
