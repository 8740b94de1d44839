#pragma once
// conv2d's integer variant (conv2dIntegerTiles): u8 images and output, sums in 16-bit integer lanes,
// on the staged tiles and ring walk of conv2d_separable.cuh. Included by conv2d_separable.cu only.
#include "conv2d_separable.cuh"

namespace kl::gpu {
namespace {

/// Window bytes s and s + 1 as two 16-bit lanes, s's in the low one (s is a constant once unrolled).
template <int Q> __device__ uint32_t bytePair(const uint32_t (&quad)[Q], int s)
{
    const int word = s / 4, offset = s % 4;
    if (offset < 3) return __byte_perm(quad[word], 0, 0x4040 | offset | (offset + 1) << 8);
    return __byte_perm(quad[word], quad[word + 1], 0x0403) & 0x00FF00FFu;
}

/// Whether the integer variant's row pass takes dp4a (4 bytes of a row times their taps an
/// instruction) rather than byte pairs (one IMAD a tap for two elements). dp4a was faster on one
/// channel at every size, and on three for boxes; on four channels each quad holds a single tap of
/// an element, so it multiplies one byte where the pair's IMAD multiplies two (docs/performance.md,
/// "Thirty-second step").
template <int CN, bool UnitColumn> constexpr bool dotRowPass()
{
    return CN == 1 || (CN == 3 && UnitColumn);
}

/// The integer variant's row pass, exact, elements 2p and 2p + 1 in the two 16-bit lanes of out[p]
/// for the column pass (integerTaps bounds every sum to 16 bits). Dot: each element's sum by dp4a
/// over the quads that hold its taps (cRowTapBytes), then paired; else both elements of a pair
/// summed together, one IMAD a tap (cRowTapsInteger).
template <bool Dot, int CN, int K, int N>
__device__ void rowSums(const RowWindow<uint8_t, CN, K, N>& w, uint32_t (&out)[N / 2])
{
    using W = RowWindow<uint8_t, CN, K, N>;
    if constexpr (Dot) {
        static_assert(N <= kRingElements && W::quads <= kMaxWindowQuads);
        uint32_t sum[N];
#pragma unroll
        for (int n = 0; n < N; ++n) {
            sum[n] = 0;
#pragma unroll
            for (int q = 0; q < W::quads; ++q)
                if (quadHasTap<W>(n, q)) sum[n] = __dp4a(w.quad[q], cRowTapBytes[n * kMaxWindowQuads + q], sum[n]);
        }
#pragma unroll
        for (int p = 0; p < N / 2; ++p) out[p] = __byte_perm(sum[2 * p], sum[2 * p + 1], 0x5410);
    } else {
#pragma unroll
        for (int p = 0; p < N / 2; ++p) {
            uint32_t sum = 0;
#pragma unroll
            for (int j = 0; j < K; ++j) sum += cRowTapsInteger[j] * bytePair(w.quad, W::head - W::halo + 2 * p + j * CN);
            out[p] = sum;
        }
    }
}

/// An integer output row's exact sums, in 16-bit lanes (sum[p]: elements 2p and 2p + 1), to a
/// thread's N elements of the row at `out`, whole (storesWithinPitch). Dyadic taps (Scaled false): the
/// sums are 2^8 times the result (kIntegerFractionBits), rounded to nearest, ties to even, like
/// saturateRound, in the lanes (integerTaps keeps them within 0..255). Scaled: each sum times
/// `scale`, rounded once by saturateRound.
template <bool Scaled, int N>
__device__ void storeLaneSums(uint8_t* out, const uint32_t (&sum)[N / 2], float scale)
{
    static_assert(storesWithinPitch<N, uint8_t>(), "a thread's words lie inside the pitch");
    if constexpr (Scaled) {
        // (2^23 + lane) * scale - 2^23 * scale in one fma: the lane's sum times scale, rounded once
        const float offset = -8388608.0f * scale;
        const auto lane = [&](uint32_t v, uint32_t selector) {
            return fmaf(__uint_as_float(__byte_perm(v, 0x4B000000u, selector)), scale, offset);
        };
#pragma unroll
        for (int g = 0; g < N / 4; ++g)
            store4(out + 4 * g, make_float4(lane(sum[2 * g], 0x7410), lane(sum[2 * g], 0x7432), lane(sum[2 * g + 1], 0x7410),
                                            lane(sum[2 * g + 1], 0x7432)));
    } else {
        const auto roundLanes = [](uint32_t v) { return v + 0x007F007Fu + (v >> 8 & 0x00010001u); };
        // bytes 1 and 3 of each rounded word are the results
        const auto results = [&](int g) { return __byte_perm(roundLanes(sum[2 * g]), roundLanes(sum[2 * g + 1]), 0x7531); };
#pragma unroll
        for (int g = 0; g < N / 4; ++g) reinterpret_cast<uint32_t*>(out)[g] = results(g);
    }
}

/// The integer ring's output row, ring slots `first` .. in slice row order, through storeLaneSums.
template <bool Scaled, int K, int N>
__device__ void storeRingRow(uint8_t* out, const uint32_t (&ring)[K][N / 2], int first, float scale)
{
    uint32_t sum[N / 2] = {};
#pragma unroll
    for (int i = 0; i < K; ++i)
#pragma unroll
        for (int p = 0; p < N / 2; ++p) sum[p] += cColumnTapsInteger[i] * ring[(first + i) % K][p];
    storeLaneSums<Scaled, N>(out, sum, scale);
}

/// conv2dIntegerTiles' blocks an SM, at least: its register budget. Boxes ran 1-5% faster at 6 than
/// at 8 (80 registers, not 64), the other kernels 1% slower on 3 and 4 channels (docs/performance.md,
/// "Thirty-second step").
template <bool UnitColumn> constexpr int integerTilesBlocks()
{
    return UnitColumn ? 6 : 8;
}

/// The integer variant (u8, integerTaps' kernels; Scaled: not dyadic, see storeLaneSums): the staged
/// tiles (walkStagedTiles) with sums in 16-bit lanes, two elements per word (rowSums,
/// storeRingRow's integer forms). UnitColumn (column taps all 1, as a box's): each output row's sums
/// are the previous row's less the slice row that leaves the window plus the one that enters (whose
/// row pass takes the leaving row's slot), 2 adds a word instead of K multiply-adds. No lane
/// borrows: the sums still hold the leaving row.
template <int CN, int K, bool Scaled, bool UnitColumn>
__global__ void __launch_bounds__(kRingThreads, integerTilesBlocks<UnitColumn>()) conv2dIntegerTiles(StripArgs<uint8_t, uint8_t> a, TileSchedule schedule, float scale)
{
    using S = IntegerTile<CN, K>;
    constexpr int N = S::N;
    walkStagedTiles<S>(
        a, schedule,
        [&](int flat, int y0, int, int y1, const auto& window) {
            if constexpr (UnitColumn) {
                uint32_t ring[K][N / 2] = {}, sum[N / 2] = {};
                walkRing(y0, y0, y1, ring,
                         [&](int k, uint32_t(&slot)[N / 2]) {
#pragma unroll
                             for (int p = 0; p < N / 2; ++p) sum[p] -= slot[p];
                             rowSums<dotRowPass<CN, UnitColumn>()>(window(k), slot);
#pragma unroll
                             for (int p = 0; p < N / 2; ++p) sum[p] += slot[p];
                         },
                         [&](int y, int) { storeLaneSums<Scaled, N>(a.outRow(y) + flat, sum, scale); });
            } else {
                uint32_t ring[K][N / 2];
                walkRing(y0, y0, y1, ring, [&](int k, uint32_t(&out)[N / 2]) { rowSums<dotRowPass<CN, UnitColumn>()>(window(k), out); },
                         [&](int y, int first) { storeRingRow<Scaled, K, N>(a.outRow(y) + flat, ring, first, scale); });
            }
        },
        [&](int flat, int y0, int y1) { ringEdgeStrip<uint8_t, uint8_t, CN, K, N>(a, flat, y0, y1); });
}

} // namespace
} // namespace kl::gpu
