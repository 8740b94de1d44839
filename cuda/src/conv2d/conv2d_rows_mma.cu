// conv2d's rows-mma variant (conv2dRowsMma): rank-1 kernels of compiled sizes on one-channel u16
// images, with the row pass on tensor cores and the column pass in registers.
//
// Each block owns a band of kRowsMmaBand output columns and walks a strip of its rows in batches of
// kRowsMmaBatch slice rows, staged by cp.async a batch ahead (the few elements past the row ends
// through borderIndex, loaded while the batch before is summed). The row pass is a product of the
// staged rows and a banded matrix of row taps: for 8 output columns n and a block of 8 input
// columns, D[m][n] = sum_k A[m][k] * B[k][n] with A the batch's 16 rows and k the block's low bytes,
// then its high bytes (mma.m16n8k16, f16 in, f32 sums; 3 blocks and 2 tap halves, 6 mma, a tile).
// It is exact in f16 where it must be: each u16 element is two f16 subnormals, its low and its high
// byte (two byte permutes a register), and each row tap two f16 halves (splitMmaTaps), the high
// bytes' times 2^8, so every product is exact. The row sums go through shared memory; each thread
// then adds every row of its two columns' sums to the 16 output rows pending in a register ring
// (one fma chain an output, taps in order) and stores each output once its last row is in.
//
// Against separable-mma (the column pass on tensor cores, the row pass from shared memory) each
// output costs fewer instructions: the tensor cores read the staged u16 as it lies, and the column
// pass reads one float2 of sums a row for 2 * K multiply-adds. Blocks of 8 columns take 6 mma a
// tile where blocks of 16 took 8, and leave registers for 4 blocks an SM (docs/performance.md,
// "Fifty-first step" and "Fifty-second step").
#include "conv2d_device.cuh"
#include "conv2d_mma.cuh"

#include <cuda_fp16.h>
#include <cuda_pipeline_primitives.h>

namespace kl::gpu {
namespace {

constexpr int kRowsMmaThreads = 128, kRowsMmaWarps = kRowsMmaThreads / 32;
/// Output columns a block's band: two a thread in the column pass, 32 mma tiles of 8.
constexpr int kRowsMmaBand = 2 * kRowsMmaThreads;
constexpr int kRowsMmaWarpColumns = kRowsMmaBand / kRowsMmaWarps;
/// Slice rows a batch: the mma's 16 rows, and the ring's 16 pending output rows, so that a row's
/// place in the ring is a constant in the unrolled batch.
constexpr int kRowsMmaBatch = 16;
constexpr int kRowsMmaSlots = 2;  ///< staged batches: the one summed and the next in flight
constexpr int kRowsMmaMaxSize = kConv2dCompiledSizes.back();
static_assert(kRowsMmaMaxSize <= 15, "the tap fragments' block offsets -1 .. 1 and the ring of 16 reach 15 taps");
/// Staged columns each side of the band, of which the row pass's outer blocks read 8.
constexpr int kRowsMmaMargin = 16;
constexpr int kRowsMmaStagedColumns = kRowsMmaBand + 2 * kRowsMmaMargin;
constexpr int kRowsMmaCopiesPerRow = kRowsMmaStagedColumns / 8;  ///< 16-byte copies
/// Staged rows lie an odd number of 16 bytes apart: ldmatrix's 8 rows of a phase hit 8 bank groups.
constexpr int kRowsMmaSlotStride = kRowsMmaStagedColumns + 8;
/// Row sums lie 264 floats apart: a half-warp's 64-bit stores of 4 rows x 8 columns hit every bank once.
constexpr int kRowsMmaSumStride = kRowsMmaBand + 8;
constexpr int kRowsMmaSlotElements = kRowsMmaBatch * kRowsMmaSlotStride;
constexpr int kRowsMmaSumElements = kRowsMmaBatch * kRowsMmaSumStride;
constexpr size_t kRowsMmaSharedBytes =
    kRowsMmaSlots * kRowsMmaSlotElements * sizeof(uint16_t) + 2 * kRowsMmaSumElements * sizeof(float);
static_assert(kRowsMmaSlots * kRowsMmaSlotElements * sizeof(uint16_t) % 16 == 0 && (kRowsMmaSlotStride / 8) % 2 == 1,
              "slots 16-byte aligned, rows an odd number of 16 bytes apart");
/// Offsets d = c - t of input block c over output tile t (8 columns each) that hold taps at K <= 15:
/// -1 .. 1.
constexpr int kRowsMmaOffsets = 3;

__constant__ float cRowsMmaColumnTaps[kRowsMmaMaxSize];  // the column taps times 2^(24 - e) (SplitTaps::scaled)

/// The row taps as mma B fragments (16 x 8, k x n), loaded from `fragments` (rowTapFragments):
/// b[o][h] for block offset d = o - 1 and half h (splitMmaTaps' high, then low), register 0 the low
/// bytes' (k 0 .. 7) and register 1 the high bytes' (k 8 .. 15, the taps times 2^8): B[k][n] = row
/// tap k % 8 - n + 8d + K/2, 0 outside the kernel.
struct RowTapFragments {
    uint32_t b[kRowsMmaOffsets][2][2];
    __device__ explicit RowTapFragments(const uint32_t* fragments)
    {
        const int lane = threadIdx.x % 32;
#pragma unroll
        for (int d = 0; d < kRowsMmaOffsets; ++d)
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int r = 0; r < 2; ++r) b[d][h][r] = __ldg(fragments + ((d * 2 + h) * 2 + r) * 32 + lane);
    }
};

/// Calls copy(r, c) for this thread's 16-byte copies of a batch: warp w takes rows w, w + 4, ...,
/// lane l copy l of each (one row address a warp a row), and lanes 0 .. 15 the rows' last four copies.
template <typename Copy> __device__ __forceinline__ void forEachBatchCopy(Copy&& copy)
{
    static_assert(kRowsMmaCopiesPerRow == 32 + 4 && kRowsMmaBatch == 4 * kRowsMmaWarps, "a lane a copy, and 16 more a warp");
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
    for (int i = 0; i < kRowsMmaBatch / kRowsMmaWarps; ++i) copy(warp + kRowsMmaWarps * i, lane);
    if (lane < 16) copy(warp + kRowsMmaWarps * (lane / 4), 32 + lane % 4);
}

/// The columns of a band's staged window that no copy brings but outputs read, the same in every row:
/// left of the image (-K/2 .. -1) and from the last copy inside the row to K/2 past its end. Column c
/// of `count` is image column column(c). None on bands whose window lies inside the row.
struct EdgeColumns {
    int left, rightStart, count;
    __device__ EdgeColumns(int x0, int cols, int halfWidth)
    {
        left = x0 == 0 ? halfWidth : 0;
        rightStart = cols / 8 * 8;  // copies start at multiples of 8 (x0 - kRowsMmaMargin is one)
        count = left + max(0, min(x0 - kRowsMmaMargin + kRowsMmaStagedColumns, cols + halfWidth) - rightStart);
    }
    [[nodiscard]] __device__ int column(int c) const { return c < left ? c - left : rightStart + c - left; }
};

/// Whether copy c of a row (8 elements from x0 - kRowsMmaMargin + 8c) lies inside the row.
__device__ bool copyInside(int x0, int c, int cols)
{
    const int x = x0 - kRowsMmaMargin + 8 * c;
    return x >= 0 && x + 8 <= cols;
}

/// The edge columns' elements of a staged batch (16 rows x EdgeColumns::count), this thread's
/// elements i = threadIdx.x + kRowsMmaThreads * m: loaded before the batch before it is summed and
/// stored into its slot after, so that no thread waits on them.
constexpr int kRowsMmaFillsPerThread = 3;
static_assert(kRowsMmaBatch * (kRowsMmaMaxSize / 2 + 7 + kRowsMmaMaxSize / 2) <= kRowsMmaFillsPerThread * kRowsMmaThreads,
              "every edge element of a batch has a thread");
struct PendingFill {
    uint16_t value[kRowsMmaFillsPerThread];
    bool any = false;
};

/// Stages slice rows first .. first + 15, all image rows of the slice (or, but for Constant, border
/// rows the upload placed): the copies inside the row by cp.async, all in flight, and the edge
/// columns' elements through borderIndex into `fill`.
template <typename Out>
__device__ void stageBatch(const StripArgs<uint16_t, Out>& a, int x0, int first, uint16_t* slot, const EdgeColumns& edge,
                           PendingFill& fill)
{
    // Byte offsets from one row address: one multiply-add a copy.
    const char* source = reinterpret_cast<const char*>(a.inRow(first) + x0 - kRowsMmaMargin);
    const unsigned pitchBytes = unsigned(a.inPitch) * sizeof(uint16_t);
    const auto copy = [&](int r, int c) {
        __pipeline_memcpy_async(slot + r * kRowsMmaSlotStride + 8 * c, source + size_t(unsigned(r)) * pitchBytes + 16 * c, 16);
    };
    if (edge.count == 0) {
        forEachBatchCopy(copy);
        return;
    }
    forEachBatchCopy([&](int r, int c) {
        if (copyInside(x0, c, a.cols)) copy(r, c);
    });
    fill.any = true;
#pragma unroll
    for (int m = 0; m < kRowsMmaFillsPerThread; ++m)
        if (const int i = threadIdx.x + kRowsMmaThreads * m; i < kRowsMmaBatch * edge.count) {
            const int r = i / edge.count, sx = borderIndex(edge.column(i - r * edge.count), a.cols, a.border);
            fill.value[m] = sx < 0 ? uint16_t(a.borderValue) : __ldg(a.inRow(first + r) + sx);
        }
}

/// Stores stageBatch's edge elements into their slot.
__device__ void storeFill(uint16_t* slot, int x0, const EdgeColumns& edge, PendingFill& fill)
{
    if (!fill.any) return;
#pragma unroll
    for (int m = 0; m < kRowsMmaFillsPerThread; ++m)
        if (const int i = threadIdx.x + kRowsMmaThreads * m; i < kRowsMmaBatch * edge.count) {
            const int r = i / edge.count;
            slot[r * kRowsMmaSlotStride + edge.column(i - r * edge.count) - (x0 - kRowsMmaMargin)] = fill.value[m];
        }
    fill.any = false;
}

/// Stages a batch that reaches past the slice's last row or into constant border rows (a strip's first
/// or last batch at most): copies inside an image row as stageBatch's, the other elements that outputs
/// read through borderIndex (fetch), at once. Rows past the slice stay as they were: only outputs past
/// the strip, never stored, read them. Not inlined: it runs on few batches.
template <typename Out, int K>
__device__ __noinline__ void stageBorderBatch(StripArgs<uint16_t, Out> a, int x0, int first, uint16_t* slot)
{
    const int lastSliceRow = a.rows + K - 2;
    forEachBatchCopy([&](int r, int c) {
        const int k = first + r, x = x0 - kRowsMmaMargin + 8 * c;
        if (k > lastSliceRow) return;
        const bool borderRow = a.borderRow(k);
        uint16_t* target = slot + r * kRowsMmaSlotStride + 8 * c;
        if (!borderRow && copyInside(x0, c, a.cols)) {
            __pipeline_memcpy_async(target, a.inRow(k) + x, 16);
            return;
        }
        for (int n = 0; n < 8; ++n)
            if (x + n >= -K / 2 && x + n < a.cols + K / 2) target[n] = uint16_t(fetch<1>(a, k, borderRow, x + n));
    });
}

/// The row pass of a staged batch into `sums` (16 rows of the band's columns): warp w takes the 8
/// output tiles (8 columns) from 64w, four at a time. Tile t reads input blocks (8 columns) t - 1 ..
/// t + 1, block c at index c + 1 of the four tiles' six, each one A fragment (m16 x k16): its 16 rows'
/// low bytes in k 0 .. 7 and high bytes in k 8 .. 15, as f16 subnormals, from half an ldmatrix.x4.
/// The four tiles take turns, so that each mma waits on its tile's last one less.
__device__ void rowPass(const uint16_t* slot, float* sums, const RowTapFragments& taps)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, q = lane % 4;
    // ldmatrix: lanes 8i .. 8i + 7 address matrix i's rows: rows 0-7 / 8-15 of columns 0-7, then 8-15,
    // from the warp's first input block (staged column 64w + kRowsMmaMargin - 8).
    const uint16_t* row = slot + (lane % 8 + 8 * (lane / 8 % 2)) * kRowsMmaSlotStride + 8 * (lane / 16) +
                          kRowsMmaWarpColumns * warp + kRowsMmaMargin - 8;
#pragma unroll
    for (int quad = 0; quad < 2; ++quad) {
        uint32_t block[6][4];
#pragma unroll
        for (int i = 0; i < 3; ++i) {
            uint32_t raw[4];
            const unsigned address = unsigned(__cvta_generic_to_shared(row + 16 * (2 * quad + i)));
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                         : "=r"(raw[0]), "=r"(raw[1]), "=r"(raw[2]), "=r"(raw[3])
                         : "r"(address)
                         : "memory");
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
            for (int d = 0; d < kRowsMmaOffsets; ++d)
#pragma unroll
                for (int t = 0; t < 4; ++t) mmaAccumulate(tile[t], block[t + d], taps.b[d][h][0], taps.b[d][h][1]);
#pragma unroll
        for (int t = 0; t < 4; ++t) {
            float* target = sums + g * kRowsMmaSumStride + kRowsMmaWarpColumns * warp + 8 * (4 * quad + t) + 2 * q;
            *reinterpret_cast<float2*>(target) = make_float2(tile[t][0], tile[t][1]);
            *reinterpret_cast<float2*>(target + 8 * kRowsMmaSumStride) = make_float2(tile[t][2], tile[t][3]);
        }
    }
}

/// Two adjacent results in one store (saturateRound for u16).
__device__ void storePair(uint16_t* p, float2 v) { *reinterpret_cast<uint32_t*>(p) = roundedHalves(v.x, v.y); }
__device__ void storePair(float* p, float2 v) { *reinterpret_cast<float2*>(p) = v; }

/// The column pass of the batch of strip slice rows s0 .. s0 + 15 (s0 a multiple of 16): each row of
/// this thread's two columns of sums is added to the outputs it feeds, ring[y % 16] holding strip
/// output row y, and the output the row completes is stored. Guarded: some of those outputs lie
/// outside the strip's `rows` or the image's columns (`columnInside`); a pair at the last odd
/// column writes the row's padding too. Unguarded, the stores step from one row address.
template <int K, bool Guarded, typename Out>
__device__ __forceinline__ void columnPass(const StripArgs<uint16_t, Out>& a, const float* sums, int y0, int s0, int rows,
                                           int x, bool columnInside, float2 (&ring)[kRowsMmaBatch])
{
    char* firstOutput = Guarded ? nullptr : reinterpret_cast<char*>(a.outRow(y0 + s0 - (K - 1)) + x);
    const unsigned pitchBytes = unsigned(a.outPitch) * sizeof(Out);
#pragma unroll
    for (int u = 0; u < kRowsMmaBatch; ++u) {
        const float2 sum = *reinterpret_cast<const float2*>(sums + u * kRowsMmaSumStride);
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
        else if (y >= 0 && y < rows && columnInside) storePair(a.outRow(y0 + y) + x, done);
    }
}

/// rows-mma (one-channel u16, square compiled sizes, rank-1 taps whose row taps splitMmaTaps splits;
/// sm_80+): each block walks strips of its band in batches: stage batch b + 1, sum batch b's rows on
/// tensor cores, add batch b - 1's row sums down the columns. One barrier a batch; 4 blocks an SM.
template <typename Out, int K>
__global__ void __launch_bounds__(kRowsMmaThreads, 4)
    conv2dRowsMma(StripArgs<uint16_t, Out> a, int stripRows, const uint32_t* fragments)
{
    extern __shared__ float4 sharedStorage[];
    uint16_t* staged = reinterpret_cast<uint16_t*>(sharedStorage);
    float* sums = reinterpret_cast<float*>(staged + kRowsMmaSlots * kRowsMmaSlotElements);
    const RowTapFragments taps(fragments);
    const int x0 = blockIdx.x * kRowsMmaBand, x = x0 + 2 * int(threadIdx.x);
    const EdgeColumns edge(x0, a.cols, K / 2);
    const bool columnInside = x < a.cols;
    const float* columnSums = sums + 2 * threadIdx.x;
    const auto slot = [&](int b) { return staged + b % kRowsMmaSlots * kRowsMmaSlotElements; };
    PendingFill fill;
    for (int y0 = blockIdx.y * stripRows; y0 < a.rows; y0 += gridDim.y * stripRows) {
        const int rows = min(stripRows, a.rows - y0), batches = (rows + K - 1 + kRowsMmaBatch - 1) / kRowsMmaBatch;
        const auto stage = [&](int b) {
            const int first = y0 + kRowsMmaBatch * b, last = first + kRowsMmaBatch - 1;
            const bool imageRows = a.border != BorderMode::Constant || (a.imageRow(first) && a.imageRow(last));
            if (imageRows && last <= a.rows + K - 2) stageBatch(a, x0, first, slot(b), edge, fill);
            else stageBorderBatch<Out, K>(a, x0, first, slot(b));
            __pipeline_commit();
        };
        // The slot the first batch takes was last read before the previous strip's last barrier.
        stage(0);
        storeFill(slot(0), x0, edge, fill);
        float2 ring[kRowsMmaBatch] = {};
        for (int b = 0; b <= batches; ++b) {
            __pipeline_wait_prior(0);
            __syncthreads();  // batch b is staged; batch b - 1's row pass and b - 2's column pass are done
            if (b + 1 < batches) stage(b + 1);
            if (b < batches) rowPass(slot(b), sums + (b & 1) * kRowsMmaSumElements, taps);
            if (b > 0) {
                const int s0 = kRowsMmaBatch * (b - 1);
                const float* batchSums = columnSums + ((b - 1) & 1) * kRowsMmaSumElements;
                if (columnInside && s0 >= K - 1 && s0 + kRowsMmaBatch - K < rows)
                    columnPass<K, false>(a, batchSums, y0, s0, rows, x, columnInside, ring);
                else
                    columnPass<K, true>(a, batchSums, y0, s0, rows, x, columnInside, ring);
            }
            storeFill(slot(b + 1), x0, edge, fill);
        }
    }
}

std::string whyNotRowsMma(const Conv2dProblem& p)
{
    return whyNotMmaVariant(p, p.input.depth() == CV_16U && p.input.channels() == 1, "a one-channel u16 image", true);
}

/// Calls f(kernel) with rows-mma's kernel for `run` (a u16 image, a square compiled size).
template <typename F> void withRowsMmaKernel(const Conv2dRun& run, F&& f)
{
    withElementTypes(run.inDepth, run.outDepth, [&](auto in, auto out) {
        if constexpr (std::is_same_v<decltype(in), uint16_t>)
            withFixedSize(run.kRows, [&](auto k) { f(conv2dRowsMma<decltype(out), decltype(k)::value>); });
    });
}

/// RowTapFragments' registers for a K x K kernel: register r of lane l at index
/// ((d * 2 + h) * 2 + r) * 32 + l, so that a warp loads each in one transaction.
std::vector<uint32_t> rowTapFragments(const SplitTaps& taps, int k)
{
    std::vector<uint32_t> fragments;
    for (int d = 0; d < kRowsMmaOffsets; ++d)
        for (int h = 0; h < 2; ++h)
            for (int r = 0; r < 2; ++r)
                for (int lane = 0; lane < 32; ++lane) {
                    // register r: rows (k) 2q and 2q + 1 of column (n) g on byte plane r; offset d - 1
                    const int g = lane / 4, q = lane % 4;
                    const int j = 2 * q - g + 8 * (d - 1) + k / 2;
                    fragments.push_back(mmaTapBits(taps, h, r, j) | uint32_t(mmaTapBits(taps, h, r, j + 1)) << 16);
                }
    return fragments;
}

void prepareRowsMma(const Conv2dProblem& problem, Conv2dRun& run, BufferCache& cache, cudaStream_t stream)
{
    withRowsMmaKernel(run, [&](auto kernel) {
        optInSharedMemory(kernel, kRowsMmaSharedBytes, kRowsMmaThreads);
        run.stagedSlots = residentBlocks(kernel, kRowsMmaThreads, kRowsMmaSharedBytes, run.multiprocessors);
    });
    const SplitTaps taps = *splitMmaTaps(problem.factors->row, problem.factors->column);
    const std::vector<uint32_t> fragments = rowTapFragments(taps, run.kCols);
    const size_t bytes = fragments.size() * sizeof(uint32_t);
    run.mmaFragments = static_cast<uint32_t*>(cache.device("conv2d.mma-fragments", bytes));
    KL_CUDA_TRY(cudaMemcpyAsync(run.mmaFragments, fragments.data(), bytes, cudaMemcpyHostToDevice, stream));
    copyToSymbol(cRowsMmaColumnTaps, taps.scaled, stream);
    KL_CUDA_TRY(cudaStreamSynchronize(stream));  // the taps are pageable and about to go
}

/// Strips are at least this tall: each restages K - 1 rows.
constexpr int kRowsMmaMinStripRows = 4 * kRowsMmaBatch;
/// The waves of resident blocks a grid fills at most. Strips of one wave ran 1.11x slower: the busiest
/// SM was active 1.21x the mean's cycles; 2 to 6 waves ran within 1.5% at 15x15, 4 the fastest at 9x9
/// (docs/performance.md, "Fifty-first step" and "Fifty-second step").
constexpr int kRowsMmaWaves = 4;

/// The rows of rows-mma's strips over `rows` rows of `bands` bands (`slots` blocks resident on the whole
/// GPU) for a K x K kernel: the most strips whose blocks fill at most kRowsMmaWaves waves, each strip's
/// slice whole batches.
int rowsMmaStripRows(int rows, int bands, int slots, int k)
{
    const int strips = std::max(1, kRowsMmaWaves * slots / bands);
    const int batches = ((rows + strips - 1) / strips + k - 1 + kRowsMmaBatch - 1) / kRowsMmaBatch;
    return std::max(batches * kRowsMmaBatch - (k - 1), kRowsMmaMinStripRows);
}

/// Strips of rowsMmaStripRows, each band's strips in blockIdx.y.
void computeRowsMma(const Conv2dRun& run, int chunk, cudaStream_t stream)
{
    withStrip(run, chunk, [&](const auto& a, auto) {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<typename A::InType, uint16_t>) {
            const int bands = (a.cols + kRowsMmaBand - 1) / kRowsMmaBand;
            const int stripRows = rowsMmaStripRows(a.rows, bands, run.stagedSlots, a.kRows);
            const dim3 grid(unsigned(bands), std::min(unsigned((a.rows + stripRows - 1) / stripRows), kMaxGridY));
            withFixedSize(a.kRows, [&](auto k) {
                conv2dRowsMma<typename A::OutType, decltype(k)::value>
                    <<<grid, kRowsMmaThreads, kRowsMmaSharedBytes, stream>>>(a, stripRows, run.mmaFragments);
            });
        }
    });
    KL_CHECK_LAUNCH();
}

} // namespace

Conv2dVariant rowsMmaConv2d()
{
    return {"rows-mma",
            "one-channel u16 rank-1 kernels of compiled sizes (sm_80+): the row pass on tensor cores straight from "
            "staged rows (bytes and two-half taps exact in f16, f32 sums), the column pass in a register ring",
            whyNotRowsMma,
            {prepareRowsMma, computeRowsMma, true}};
}

} // namespace kl::gpu
