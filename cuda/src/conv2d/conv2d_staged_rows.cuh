#pragma once
// conv2d's staged-rows kernel (conv2dStagedRows): any K x K taps up to kStagedRowsMaxSize over the
// staged tiles of conv2d_separable.cuh. Included by conv2d_separable.cu only.
#include "conv2d_separable.cuh"

namespace kl::gpu {
namespace {

/// conv2dStagedRows' elements a thread: floatStagedElements up to 5x5, and 8 on u16 5x5 with 3 or 4
/// channels too, whose 4-element windows (20 and 24 elements for 4 outputs) widened more elements
/// than they summed. At 3x3 and 7x7, and on one u16 channel, 8 were the slower (docs/performance.md,
/// "Twenty-ninth step").
template <typename T, int CN, int K> constexpr int stagedRowsElements()
{
    return sizeof(T) == 2 && CN >= 3 && K == 5 ? 2 * kRingElements : floatStagedElements<T, K, 5>();
}

template <typename T, int CN, int K> using StagedRowsTile = StagedTile<T, CN, K, stagedRowsElements<T, CN, K>()>;

__constant__ float cDirectTaps[kStagedRowsMaxSize * kStagedRowsMaxSize];  // staged-rows: kRows x kCols, row-major

/// staged-rows' output rows y0 .. y1 - 1 for a thread whose tile cannot be staged (u8/u16 only),
/// element by element through borderIndex, in conv2dStagedRows' order. Not inlined: it runs on few
/// tiles.
template <typename In, typename Out, int CN, int K, int N>
__device__ __noinline__ void stagedRowsEdgeStrip(StripArgs<In, Out> a, int flat, int y0, int y1)
{
    const int flatCols = a.cols * CN;
    for (int y = y0; y < y1; ++y)
        for (int n = 0; n < N && flat + n < flatCols; ++n) {
            float sum = 0;
            for (int i = 0; i < K; ++i) {
                const bool borderRow = a.borderRow(y + i);
                for (int j = 0; j < K; ++j)
                    sum = fmaf(cDirectTaps[i * K + j], fetch<CN>(a, y + i, borderRow, flat + n + (j - K / 2) * CN), sum);
            }
            a.outRow(y)[flat + n] = saturateRound<Out>(sum);
        }
}

/// staged-rows (any image, any K x K taps up to kStagedRowsMaxSize): the staged tiles (walkStagedTiles);
/// each thread widens each slice row's window once and adds kernel row i's products over it to the
/// sums of output row k - i, holding K rows of N sums in registers and storing an output row once its
/// last kernel row is in. An output's K x K products are one fma chain in row-major order: no
/// separate row sums to add (a different order from shared's, equal under the acceptance rule).
/// On u8 the bound of 5 blocks an SM leaves the registers at 96 as before, but ptxas's schedule for it
/// ran 5x5 on one channel 3-4% faster (docs/performance.md, "Twenty-ninth step").
template <typename In, typename Out, int CN, int K>
__global__ void __launch_bounds__(kRingThreads, sizeof(In) == 1 ? 5 : 4)
    conv2dStagedRows(StripArgs<In, Out> a, TileSchedule schedule)
{
    using S = StagedRowsTile<In, CN, K>;
    using W = typename S::Window;
    constexpr int N = S::N;
    walkStagedTiles<S>(
        a, schedule,
        [&](int flat, int y0, int, int y1, const auto& window) {
            // Output row y's sums are sums[(y - y0) % K]; the loops are unrolled by K so that every
            // slot is a constant.
            float sums[K][N];
            float v[4 * W::quads];
            const auto addKernelRow = [&](int i, float(&sum)[N]) {
#pragma unroll
                for (int n = 0; n < N; ++n) sum[n] = tapSum<W, K>(cDirectTaps + i * K, v, n, i == 0 ? 0.0f : sum[n]);
            };
            // Slice rows y0 .. y0 + K - 2 start output rows y0 .. y0 + K - 2 (kernel rows 0 .. s).
#pragma unroll
            for (int s = 0; s < K - 1; ++s) {
                widenWindow<false>(window(y0 + s), v);
#pragma unroll
                for (int i = 0; i <= s; ++i) addKernelRow(i, sums[s - i]);
            }
            // Slice row y + s + K - 1 completes output row y + s and adds to the later rows it feeds.
            const int flatCols = a.cols * CN;
            for (int y = y0; y < y1; y += K) {
                const int remaining = y1 - y;
#pragma unroll
                for (int s = 0; s < K; ++s) {
                    if (s >= remaining) break;
                    widenWindow<false>(window(y + s + K - 1), v);
#pragma unroll
                    for (int i = 0; i < K; ++i)
                        if (s + K - 1 - i < remaining) addKernelRow(i, sums[(s + K - 1 - i) % K]);
                    storeSums(a.outRow(y + s) + flat, flat, flatCols, sums[s]);
                }
            }
        },
        [&](int flat, int y0, int y1) { stagedRowsEdgeStrip<In, Out, CN, K, N>(a, flat, y0, y1); });
}

} // namespace
} // namespace kl::gpu
