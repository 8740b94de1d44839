// conv2d's direct-mma variant (directMmaConv2d): square kernels of any taps up to 9x9 on u8 images of 1,
// 3 or 4 channels, every kernel row summed on tensor cores, no second pass.
//
// For 8 output pixels n of one channel and 16 output rows m, kernel row i is a product D_i[m][n] =
// sum_k A_i[m][k] * B_i[k][n]: A_i the 16 staged rows from m + i, 16 pixels from the tiles' pixel -4 (k),
// and B_i the row's taps as a banded matrix, B_i[k][n] = K[i][k - 4 - n + K/2] (0 outside the row), so
// that one block of 16 pixels holds the inputs of a tile's 8 outputs up to 9 taps (mma.m16n8k16, f16 in,
// f32 sums). Each byte is staged once as the normal f16 byte * 2^kMmaByteExponent, in planes of one
// channel, and each tap is two f16 halves (splitMmaTaps): every product is exact. Each kernel row sums
// in an accumulator of its own, low halves first, and the rows' sums are then added in order, the
// summation every 2D variant keeps (conv2d.cpp). So a tile costs one ldmatrix and two mma a kernel row,
// where staged-rows' fma chains take K * K multiply-adds an output.
//
// Each block owns a band of 256 pixels of one channel, or 64 pixels of three or four, and walks a strip
// of its rows in batches of 16 output rows. Staged input rows form a ring of three segments of 16: a
// batch reads two, the next is loaded into registers while the batch is summed and stored after, and
// each batch's outputs go out through shared memory a batch later, in 16-byte stores. One barrier a
// batch. The few elements borderIndex supplies, at the row's ends, come through a table of their source
// columns made once a block, loaded with the rest: one by one they held the edge bands' blocks to 2.3-2.7x
// the others' time (docs/performance.md, "Sixty-first step").
#include "conv2d_device.cuh"
#include "conv2d_mma.cuh"

#include "kernellab/image.hpp"

namespace kl::gpu {
namespace {

constexpr int kDirectMmaBatch = 16;  ///< output rows a batch: the mma's m
constexpr int kDirectMmaSegments = 3;  ///< staged segments of kDirectMmaBatch rows: two summed, one filled
constexpr int kDirectMmaRingRows = kDirectMmaSegments * kDirectMmaBatch;
constexpr int kDirectMmaMaxSize = 9;  ///< a block of 16 pixels holds a tile's inputs up to 9 taps
/// Staged pixels left of the band: tile t's block starts at band pixel 8t - kDirectMmaMargin, on a
/// 16-byte boundary of the staged row.
constexpr int kDirectMmaMargin = 4;
static_assert(kDirectMmaMaxSize / 2 <= kDirectMmaMargin && kDirectMmaMargin + 8 + kDirectMmaMaxSize / 2 <= 16,
              "a block of 16 pixels from the tile's pixel -4 covers its 8 outputs' taps");
static_assert(kDirectMmaMaxSize - 1 <= kDirectMmaBatch, "a batch reads two segments");
/// Groups of 4 pixels a staged row takes through borderIndex at most: one left of the row, two at its end.
constexpr int kDirectMmaEdgeGroups = 3;

/// A block's shape on CN-channel u8 images. Warp w sums 8 tiles of 8 pixels: band pixels 64w .. 64w + 63
/// of the one channel, or channel w's 64 pixels.
template <int CN, typename Out> struct DirectMmaShape {
    static_assert(CN == 1 || CN == 3 || CN == 4, "one, three or four channels");
    static constexpr int warps = CN == 1 ? 4 : CN, threads = 32 * warps;
    static constexpr int bandPixels = CN == 1 ? 256 : 64, bandElements = CN * bandPixels;
    static constexpr int tilesPerWarp = 8;
    /// Staged pixels a row of a plane: the band and kDirectMmaMargin each side. Rows lie an odd number of
    /// 16 bytes apart, so that ldmatrix's 8 rows of a phase hit 8 bank groups.
    static constexpr int stagedPixels = bandPixels + 2 * kDirectMmaMargin;
    static constexpr int planeElements = kDirectMmaRingRows * stagedPixels;  ///< f16 a plane's ring
    static constexpr int groupsPerRow = stagedPixels / 4;  ///< staging goes in groups of 4 pixels (CN words)
    /// A batch's outputs, rows 32 bytes longer than the band's, so that a warp's fragment stores of 8 rows
    /// step 8 banks a row.
    static constexpr int outRowBytes = bandElements * int(sizeof(Out)) + 32;
    static constexpr int outBytes = kDirectMmaBatch * outRowBytes;
    static constexpr size_t sharedBytes =
        size_t(CN) * planeElements * sizeof(uint16_t) + 2 * size_t(outBytes) + kDirectMmaEdgeGroups * 4 * CN * sizeof(int2);
    static_assert(stagedPixels * 2 % 32 == 16 && stagedPixels % 4 == 0, "rows an odd number of 16 bytes, whole groups");
    static_assert(warps * tilesPerWarp * 8 == CN * bandPixels, "the warps' tiles cover the band");
    static_assert(outRowBytes % 16 == 0 && planeElements * sizeof(uint16_t) % 16 == 0, "16-byte rows and planes");
};

/// The kernel rows' taps as mma B fragments (TapFragments, directTapFragments): set i for kernel row i,
/// B[k][n] = K[i][k - kDirectMmaMargin - n + K/2], 0 outside the row.
template <int K> using DirectTapFragments = TapFragments<K>;

/// The groups of 4 pixels of a band's staged rows that borderIndex supplies in part, the same in every
/// row: left of the row (x0 = 0) and at its end, up to 4 pixels past it (the kernel's reach). Groups
/// from `rightEnd` on lie wholly past that and are staged as 0. Each edge group's elements come through
/// the block's edge table (edgeTable): edge element n of a row comes from element source[n] of the slice
/// row (-1: the border value) and goes to f16 target[n] of a staged row.
template <int CN> struct EdgeGroups {
    static constexpr int groupElements = 4 * CN;
    static constexpr int maxElements = kDirectMmaEdgeGroups * groupElements;
    int left, rightFirst, rightEnd;
    __device__ EdgeGroups(int x0, int rowElements, int groupsPerRow)
    {
        const int distance = rowElements - CN * (x0 - kDirectMmaMargin);  // from the first group's start to the row's end
        left = x0 < kDirectMmaMargin ? 1 : 0;
        rightFirst = min(distance / groupElements, groupsPerRow);
        rightEnd = min((distance + groupElements - 1) / groupElements + 1, groupsPerRow);
    }
    [[nodiscard]] __device__ int elements() const { return groupElements * (left + rightEnd - rightFirst); }
    [[nodiscard]] __device__ bool edge(int group) const { return group < left || (group >= rightFirst && group < rightEnd); }
    /// The group of edge element n of a row.
    [[nodiscard]] __device__ int group(int n) const { return n / groupElements < left ? 0 : rightFirst + n / groupElements - left; }
};

/// Slice rows a segment stages: threadsPerRow threads a row, this thread's groups of 4 pixels (CN
/// words each) of one row, groups c, c + threadsPerRow, ..., and its elements of the rows' edge groups,
/// loaded while a batch is summed (load) and stored into the ring after (store). Which of its groups
/// are loaded and which stored is the same in every row: two masks made once.
template <int CN, typename Out> struct SegmentGroups {
    using S = DirectMmaShape<CN, Out>;
    static constexpr int threadsPerRow = S::threads / kDirectMmaBatch;
    static constexpr int groupsPerThread = (S::groupsPerRow + threadsPerRow - 1) / threadsPerRow;
    static constexpr int edgePerThread = (kDirectMmaBatch * EdgeGroups<CN>::maxElements + S::threads - 1) / S::threads;
    static_assert(threadsPerRow * kDirectMmaBatch == S::threads && groupsPerThread <= 32, "whole rows, a mask bit a group");
    uint32_t word[groupsPerThread][CN];
    uint32_t edgeByte[edgePerThread];
    int row, column;                 ///< this thread's row of a segment, and its first group
    uint32_t loaded = 0, stored = 0;  ///< bit m: group m is inside the row (loaded) / not an edge group (stored)

    __device__ explicit SegmentGroups(const EdgeGroups<CN>& edges)
        : row(threadIdx.x / threadsPerRow), column(threadIdx.x % threadsPerRow)
    {
#pragma unroll
        for (int m = 0; m < groupsPerThread; ++m) {
            const int group = column + threadsPerRow * m;
            if (group >= S::groupsPerRow || edges.edge(group)) continue;
            stored |= 1u << m;
            if (group < edges.rightEnd) loaded |= 1u << m;
        }
    }

    /// Loads the groups: inside the image row and slice, CN aligned words; past the slice's rows and the
    /// kernel's reach, 0; on constant border rows, the border value; the edge groups' elements through
    /// the edge table.
    __device__ void load(const StripArgs<uint8_t, Out>& a, const EdgeGroups<CN>& edges, const int2* edgeTable, int x0,
                         int first)
    {
        const int lastSliceRow = a.rows + a.kRows - 2, k = first + row;
        const uint32_t borderByte = uint32_t(a.borderValue);  // an image value (whyNotDirectMma)
        const bool image = k <= lastSliceRow && !a.borderRow(k);
        const uint32_t* p = reinterpret_cast<const uint32_t*>(a.inRow(k) + CN * (x0 - kDirectMmaMargin)) + CN * column;
        const uint32_t fill = k <= lastSliceRow ? borderByte * 0x01010101u : 0;
#pragma unroll
        for (int m = 0; m < groupsPerThread; ++m) {
            const bool inside = image && (loaded >> m & 1);
#pragma unroll
            for (int c = 0; c < CN; ++c) word[m][c] = inside ? __ldg(p + CN * threadsPerRow * m + c) : loaded >> m & 1 ? fill : 0;
        }
        const int perRow = edges.elements();
#pragma unroll
        for (int s = 0; s < edgePerThread; ++s) {
            const int i = threadIdx.x + S::threads * s;
            const int r = i / EdgeGroups<CN>::maxElements, n = i - r * EdgeGroups<CN>::maxElements, edgeRow = first + r;
            uint32_t value = 0;
            if (r < kDirectMmaBatch && n < perRow && edgeRow <= lastSliceRow) {
                const int source = edgeTable[n].x;
                value = a.borderRow(edgeRow) || source < 0 ? borderByte : __ldg(a.inRow(edgeRow) + source);
            }
            edgeByte[s] = value;
        }
    }

    /// Stores the groups as f16 (normalBytes) into segment `segment` of each channel's plane (the edge
    /// groups element by element).
    __device__ void store(uint16_t* staged, const EdgeGroups<CN>& edges, const int2* edgeTable, int segment) const
    {
        uint16_t* target = staged + (kDirectMmaBatch * segment + row) * S::stagedPixels + 4 * column;
#pragma unroll
        for (int m = 0; m < groupsPerThread; ++m) {
            if (!(stored >> m & 1)) continue;
#pragma unroll
            for (int c = 0; c < CN; ++c)
                *reinterpret_cast<uint2*>(target + 4 * threadsPerRow * m + c * S::planeElements) =
                    make_uint2(pixelPair(m, c, 0), pixelPair(m, c, 1));
        }
        const int perRow = edges.elements();
#pragma unroll
        for (int s = 0; s < edgePerThread; ++s) {
            const int i = threadIdx.x + S::threads * s;
            const int r = i / EdgeGroups<CN>::maxElements, n = i - r * EdgeGroups<CN>::maxElements;
            if (r < kDirectMmaBatch && n < perRow)
                staged[(kDirectMmaBatch * segment + r) * S::stagedPixels + edgeTable[n].y] = uint16_t(normalBytes(edgeByte[s]));
        }
    }

    /// Pixels 2j and 2j + 1 of channel c in group m, as two f16.
    __device__ uint32_t pixelPair(int m, int c, int j) const
    {
        const int first = 2 * j * CN + c, second = first + CN;  // the bytes' places in the group's words
        const uint32_t a = word[m][first / 4], b = word[m][second / 4];
        if (first / 4 == second / 4) return normalBytes(__byte_perm(a, 0, 0x4040 | first % 4 | second % 4 << 8));
        return normalBytes(__byte_perm(a, b, first % 4 | (4 + second % 4) << 8) & 0x00FF00FFu);
    }
};

/// A lane's four outputs of a tile into a batch's staged outputs: two adjacent pixels in `top` and in
/// `bottom`, `step` elements apart (saturateRound for u8).
__device__ void stageTile(uint8_t* top, uint8_t* bottom, int step, const float (&sum)[4])
{
    const uint32_t bytes = roundedBytes(sum[0], sum[1], sum[2], sum[3]);
    if (step == 1) {
        *reinterpret_cast<uint16_t*>(top) = uint16_t(bytes);
        *reinterpret_cast<uint16_t*>(bottom) = uint16_t(bytes >> 16);
    } else {
        top[0] = uint8_t(bytes), top[step] = uint8_t(bytes >> 8);
        bottom[0] = uint8_t(bytes >> 16), bottom[step] = uint8_t(bytes >> 24);
    }
}
__device__ void stageTile(float* top, float* bottom, int step, const float (&sum)[4])
{
    if (step == 1) {
        *reinterpret_cast<float2*>(top) = make_float2(sum[0], sum[1]);
        *reinterpret_cast<float2*>(bottom) = make_float2(sum[2], sum[3]);
    } else {
        top[0] = sum[0], top[step] = sum[1];
        bottom[0] = sum[2], bottom[step] = sum[3];
    }
}

/// Sums batch rows 16b .. 16b + 15 of this warp's tiles, their slice rows from ring row `ringRow0`, into
/// `out` (the batch's staged outputs, the band's element order).
template <int K, int CN, typename Out>
__device__ void sumBatch(const uint16_t* staged, int ringRow0, const DirectTapFragments<K>& taps, float scale, Out* out)
{
    using S = DirectMmaShape<CN, Out>;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, q = lane % 4;
    const int plane = CN == 1 ? 0 : warp, firstPixel = CN == 1 ? 64 * warp : 0;
    // ldmatrix: lanes 8i .. 8i + 7 address matrix i's rows: rows 0-7 / 8-15 of a block's pixels 0-7,
    // then 8-15; kernel row i's A rows start at ring row ringRow0 + i.
    const int m = lane % 8 + 8 * (lane / 8 % 2);
    const uint16_t* planeRows = staged + plane * S::planeElements + firstPixel + 8 * (lane / 16);
    const uint16_t* rowOf[K];
#pragma unroll
    for (int i = 0; i < K; ++i) {
        int r = ringRow0 + m + i;
        if (r >= kDirectMmaRingRows) r -= kDirectMmaRingRows;
        rowOf[i] = planeRows + r * S::stagedPixels;
    }
    const int step = CN;  // from one pixel's output element to the next
    Out* top = out + g * (S::outRowBytes / int(sizeof(Out))) + CN * (firstPixel + 2 * q) + (CN == 1 ? 0 : warp);
    Out* bottom = top + 8 * (S::outRowBytes / int(sizeof(Out)));
#pragma unroll
    for (int t = 0; t < S::tilesPerWarp; ++t) {
        float row[K][4];
#pragma unroll
        for (int i = 0; i < K; ++i) {
            uint32_t a[4];
            loadMatrices<false>(rowOf[i] + 8 * t, a);
            // The smallest products first (the taps' low halves), as the other mma variants'.
            row[i][0] = row[i][1] = row[i][2] = row[i][3] = 0.0f;
            mmaAccumulate(row[i], a, taps.b[i][1][0], taps.b[i][1][1]);
            mmaAccumulate(row[i], a, taps.b[i][0][0], taps.b[i][0][1]);
        }
        float sum[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            sum[e] = row[0][e];
#pragma unroll
            for (int i = 1; i < K; ++i) sum[e] += row[i][e];
            sum[e] *= scale;
        }
        stageTile(top + CN * 8 * t, bottom + CN * 8 * t, step, sum);
    }
}

/// Stores a batch's staged outputs, strip rows s0 .. s0 + 15 of output rows from y0: 16-byte pieces of
/// the band inside the strip's rows and the image's row, element by element at the row's end.
template <int CN, typename Out>
__device__ void storeBatch(const StripArgs<uint8_t, Out>& a, const Out* out, int x0, int y0, int s0, int stripRows)
{
    using S = DirectMmaShape<CN, Out>;
    constexpr int pieceElements = 16 / sizeof(Out), piecesPerRow = S::bandElements / pieceElements;
    const int rowElements = CN * a.cols, firstElement = CN * x0;
    for (int i = threadIdx.x; i < kDirectMmaBatch * piecesPerRow; i += S::threads) {
        const int r = i / piecesPerRow, piece = i - r * piecesPerRow;
        if (s0 + r >= stripRows) continue;
        const int e = firstElement + pieceElements * piece;
        if (e >= rowElements) continue;
        const Out* from = out + r * (S::outRowBytes / int(sizeof(Out))) + pieceElements * piece;
        Out* to = a.outRow(y0 + s0 + r) + e;
        if (e + pieceElements <= rowElements) {
            *reinterpret_cast<uint4*>(to) = *reinterpret_cast<const uint4*>(from);
        } else {
            for (int n = 0; n < rowElements - e; ++n) to[n] = from[n];
        }
    }
}

/// direct-mma (u8 images of 1, 3 or 4 channels, square kernels up to 9x9 whose taps splitMmaTaps
/// splits; sm_80+): each block walks a strip of `stripRows` output rows of its band (blockIdx.y) in
/// batches: load segment b + 2, sum batch b from segments b and b + 1, store batch b - 1's outputs, store
/// segment b + 2. `scale` undoes the taps' and the bytes' powers of two.
template <typename Out, int K, int CN>
__global__ void __launch_bounds__(DirectMmaShape<CN, Out>::threads, K <= 5 ? 5 : 4)
    conv2dDirectMma(StripArgs<uint8_t, Out> a, int stripRows, const uint32_t* fragments, float scale)
{
    using S = DirectMmaShape<CN, Out>;
    extern __shared__ float4 sharedStorage[];
    uint16_t* staged = reinterpret_cast<uint16_t*>(sharedStorage);
    char* outputs = reinterpret_cast<char*>(staged + CN * S::planeElements);
    int2* edgeTable = reinterpret_cast<int2*>(outputs + 2 * S::outBytes);
    const auto batchOut = [&](int b) { return reinterpret_cast<Out*>(outputs + (b & 1) * S::outBytes); };
    const DirectTapFragments<K> taps(fragments);
    const int x0 = blockIdx.x * S::bandPixels, y0 = blockIdx.y * stripRows;
    const EdgeGroups<CN> edges(x0, CN * a.cols, S::groupsPerRow);
    if (const int n = threadIdx.x; n < edges.elements()) {
        const int e = CN * (x0 - kDirectMmaMargin + 4 * edges.group(n)) + n % EdgeGroups<CN>::groupElements;
        const int p = floorDiv<CN>(e), c = e - CN * p, sx = borderIndex(p, a.cols, a.border);
        edgeTable[n] = make_int2(sx < 0 ? -1 : CN * sx + c, c * S::planeElements + p - (x0 - kDirectMmaMargin));
    }
    __syncthreads();
    stripRows = min(stripRows, a.rows - y0);
    const int batches = (stripRows + kDirectMmaBatch - 1) / kDirectMmaBatch;
    const int segments = (stripRows + K - 1 + kDirectMmaBatch - 1) / kDirectMmaBatch;
    SegmentGroups<CN, Out> pending(edges);
#pragma unroll 1
    for (int s = 0; s < 2 && s < segments; ++s) {
        pending.load(a, edges, edgeTable, x0, y0 + kDirectMmaBatch * s);
        pending.store(staged, edges, edgeTable, s);
    }
    __syncthreads();
#pragma unroll 1
    for (int b = 0; b <= batches; ++b) {
        const bool fill = b + 2 < segments;
        if (fill) pending.load(a, edges, edgeTable, x0, y0 + kDirectMmaBatch * (b + 2));
        if (b < batches) sumBatch<K, CN>(staged, kDirectMmaBatch * (b % kDirectMmaSegments), taps, scale, batchOut(b));
        if (b > 0) storeBatch<CN>(a, batchOut(b - 1), x0, y0, kDirectMmaBatch * (b - 1), stripRows);
        if (fill) pending.store(staged, edges, edgeTable, (b + 2) % kDirectMmaSegments);
        __syncthreads();  // segment b + 2 and batch b's outputs are staged; segment b and batch b - 1's are free
    }
}

/// The split of `p`'s taps (row-major) with the output scale in `scaled` (splitMmaTaps' other pass: one
/// tap of 1), or nullopt where they do not split.
std::optional<SplitTaps> directMmaTaps(const Conv2dProblem& p)
{
    return splitMmaTaps(std::vector<float>(p.kernel.begin<float>(), p.kernel.end<float>()), {1.0f});
}

std::string whyNotDirectMma(const Conv2dProblem& p)
{
    const bool applies = p.input.depth() == CV_8U && p.kRows <= kDirectMmaMaxSize && isCompiledSize(p.kRows, p.kCols) &&
                         mmaBorderFits(p) && p.device.deviceCodeArchitecture >= 800 && directMmaTaps(p);
    if (applies) return {};
    return "needs a u8 image, a square kernel of size " + compiledSizesText("or", kDirectMmaMaxSize) +
           " whose taps lie within about 2^9 of the largest (each is two f16 halves to 22 bits), a constant border "
           "value, if any, that is an image value, and a GPU of compute capability 8.0 or newer running device code "
           "built for 8.0 or newer; this is " +
           describeImage(p.input) + ", a " + p.kernelSize() + " kernel, " + describeCompute(p.device);
}

/// Calls f(kernel, shape) with direct-mma's kernel for `run` (a u8 image, a square compiled size up to
/// kDirectMmaMaxSize) and its DirectMmaShape.
template <typename F> void withDirectMmaKernel(const Conv2dRun& run, F&& f)
{
    withElementTypes(run.inDepth, run.outDepth, [&](auto in, auto out) {
        using Out = decltype(out);
        if constexpr (std::is_same_v<decltype(in), uint8_t>)
            withChannels(run.channels, [&](auto cn) {
                constexpr int CN = decltype(cn)::value;
                withFixedSize(run.kRows, [&](auto k) {
                    constexpr int K = decltype(k)::value;
                    if constexpr (K <= kDirectMmaMaxSize) f(conv2dDirectMma<Out, K, CN>, DirectMmaShape<CN, Out>{});
                });
            });
    });
}

/// DirectTapFragments' registers for a K x K kernel, in TapFragments' order.
std::vector<uint32_t> directTapFragments(const SplitTaps& taps, int k)
{
    return tapFragments(k, [&](int i, int half, int place, int n) -> uint16_t {
        const int j = place - kDirectMmaMargin - n + k / 2;
        return j >= 0 && j < k ? mmaTapBits(taps, half, 0, i * k + j) : 0;
    });
}

void prepareDirectMma(const Conv2dProblem& problem, Conv2dRun& run, BufferCache& cache, cudaStream_t stream)
{
    const SplitTaps taps = *directMmaTaps(problem);
    withDirectMmaKernel(run, [&](auto kernel, auto shape) {
        using S = decltype(shape);
        optInSharedMemory(kernel, S::sharedBytes, S::threads);
        run.stagedSlots = residentBlocks(kernel, S::threads, S::sharedBytes, run.multiprocessors);
    });
    run.tapScale = taps.scaled[0];
    const std::vector<uint32_t> fragments = directTapFragments(taps, run.kCols);
    uploadMmaFragments(fragments, run, cache, stream);
    KL_CUDA_TRY(cudaStreamSynchronize(stream));  // the fragments are pageable and about to go
}

/// Strips of equal rows, as many a band as fill the resident blocks once (at least 3 batches each).
void computeDirectMma(const Conv2dRun& run, int chunk, cudaStream_t stream)
{
    withStrip(run, chunk, [&](const auto& a, auto cn) {
        using A = std::decay_t<decltype(a)>;
        using Out = typename A::OutType;
        constexpr int CN = decltype(cn)::value;
        if constexpr (std::is_same_v<typename A::InType, uint8_t>) {
            using S = DirectMmaShape<CN, Out>;
            const int bands = (a.cols + S::bandPixels - 1) / S::bandPixels;
            const int strips = std::clamp(run.stagedSlots / bands, 1, std::max(1, a.rows / (3 * kDirectMmaBatch)));
            const int stripRows = (a.rows + strips - 1) / strips;
            const dim3 grid{unsigned(bands), unsigned((a.rows + stripRows - 1) / stripRows)};
            withFixedSize(a.kRows, [&](auto k) {
                constexpr int K = decltype(k)::value;
                if constexpr (K <= kDirectMmaMaxSize)
                    conv2dDirectMma<Out, K, CN><<<grid, S::threads, S::sharedBytes, stream>>>(a, stripRows, run.mmaFragments,
                                                                                             run.tapScale);
            });
        }
    });
    KL_CHECK_LAUNCH();
}

} // namespace

Conv2dVariant directMmaConv2d()
{
    return {"direct-mma",
            "square kernels of any taps up to 9x9 on u8 images of 1, 3 or 4 channels (sm_80+): every kernel row on tensor "
            "cores (bytes and two-half taps exact in f16, each row's f32 sum of its own, the rows added in order), no "
            "second pass",
            whyNotDirectMma,
            {prepareDirectMma, computeDirectMma, false}};
}

} // namespace kl::gpu
