// conv2d's separable variants (kernels in conv2d_separable.cuh, conv2d_separable_tiles.cuh,
// conv2d_separable_mma.cuh, conv2d_integer_tiles.cuh and conv2d_staged_rows.cuh), for rank-1
// kernels K = column * row^T (separateKernel): kRows + kCols multiply-adds per output instead of
// kRows * kCols.
//   separable  square compiled sizes (conv2dSeparableRing): each thread owns 4 adjacent
//              elements of an interleaved row and walks down a strip of rows, filtering every
//              input row horizontally and keeping the last kRows results in registers for the
//              vertical pass; no intermediate leaves the chip. f32 images from 7x7 read the rows
//              straight from global memory; u8/u16 images, and f32 up to 5x5, from a tile of input
//              rows each block stages in shared memory by cp.async (conv2dStagedRing: the same sums,
//              with no thread waiting on its own loads; 8 elements a thread on u8 up to 9x9, so
//              that each thread widens fewer input elements per output; on u8/u16 the row pass
//              reads elements as subnormals, subnormalRingTaps; on u16 9x9 with 4 channels each
//              thread owns one channel of 4 pixels, loads it element by element and so widens
//              none, and stores whole pixels after an exchange of results, PixelExchange). Other
//              sizes: a row pass into an f32 intermediate in global memory, then a column pass.
//   integer    u8 images and output, square compiled sizes, rank-1 kernels of non-negative
//              integer taps times one factor whose sums fit 16 bits (IntegerTaps: OpenCV's default
//              3x3 and 5x5 Gaussians, taps k/256; boxes, ones times 1/K^2; row taps up to 255): the
//              separable passes in 16-bit integer lanes, two sums per multiply-add (the row pass on
//              one channel, and on three for boxes, by dp4a: 4 bytes times their taps an
//              instruction), exact, then one rounding (the
//              reference's sums are the same integers times the factor, exact in f64, so the bits
//              equal the reference's). Each block stages its tile of input rows in shared memory by
//              cp.async (conv2dIntegerTiles). Boxes keep running column sums: one row in, one out.
//   separable-mma  u8/u16 images, square compiled sizes, rank-1 kernels whose column taps two f16
//              halves hold (sm_80+): separable-tiles' bands and steps with the column pass as
//              tensor-core products of the staged rows and a banded matrix of the taps
//              (conv2d_separable_mma.cuh), then the row pass from shared memory.
// And one variant for any kernel that shares their staged tiles:
//   staged-rows  any image, square 3x3, 5x5 and 7x7 kernels of any taps (conv2dStagedRows): the tile
//              staged as integer's (f32 tiles 16 rows tall), then each thread widens each input row
//              once and adds its kernel row's products to the K output rows it feeds, each output
//              one fma chain. Fewer instructions an output than shared, which widens and stages
//              every element as f32, reloads each row for every output row and adds row sums.
#include "conv2d_integer_tiles.cuh"
#include "conv2d_separable.cuh"
#include "conv2d_separable_mma.cuh"
#include "conv2d_separable_tiles.cuh"
#include "conv2d_staged_rows.cuh"

#include "kernellab/image.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <optional>

namespace kl::gpu {
namespace {

/// The fewest waves of resident blocks a staged grid should have (stagedTileRows).
constexpr int kStagedMinWaves = 4;

/// The tallest of `tallest`, tallest - step, ... above `lowest` rows that `fills`, else `lowest`.
template <typename Fills> int tallestFilling(int tallest, int lowest, int step, Fills&& fills)
{
    for (int rows = tallest; rows > lowest; rows -= step)
        if (fills(rows)) return rows;
    return lowest;
}

/// Blocks of staged kernel `kernel` (kRingThreads each) resident on the whole device at once:
/// asked once per run, in prepare, so that launches stay free of driver queries.
template <typename Kernel> int stagedSlots(Kernel* kernel, int multiprocessors)
{
    return residentBlocks(kernel, kRingThreads, 0, multiprocessors);
}

/// Tile columns of strip `a` in tiles S.
template <typename S, typename T, typename Out> int stagedColumns(const StripArgs<T, Out>& a)
{
    return (a.cols * S::CN + S::elements - 1) / S::elements;
}

/// Whether strip `a` in `rows`-row tiles S is at least kStagedMinWaves waves of `slots` resident
/// blocks (on the whole GPU).
template <typename S, typename T, typename Out> bool fillsStagedWaves(const StripArgs<T, Out>& a, int rows, int slots)
{
    return long(stagedColumns<S>(a)) * ((a.rows + rows - 1) / rows) >= long(kStagedMinWaves) * slots;
}

/// The staged tiles' height for strip `a` (tile S; `slots` blocks resident on the whole GPU) between
/// the schedule's head and tail (stagedSchedule): the tallest of S::rows, S::rows - 8, ... 8 that
/// fills kStagedMinWaves waves, else 8. A grid below a wave (a sample image in 32-row tiles) leaves
/// SMs idle, and at 8192^2 u8 x1 4.1 waves of 24-row tiles measured 3% faster than 3.1 of 32; lower
/// tiles restage more halo rows per output (docs/performance.md, "Tile height").
template <typename S, typename T, typename Out> int stagedTileRows(const StripArgs<T, Out>& a, int slots)
{
    return tallestFilling(S::rows, kScheduleStep, kScheduleStep,
                          [&](int rows) { return fillsStagedWaves<S>(a, rows, slots); });
}

/// The tiles of strip `a` (tile S; `slots` blocks resident on the whole GPU), as TileSchedule
/// describes them: the head and the short tail a wave of tiles each, where the strip has rows for
/// them, whole cycles of the head only. A strip of fewer than kStagedMinWaves waves of
/// kScheduleStep-row tiles (a sample image) runs in those throughout: a head of taller tiles would
/// leave SMs idle there.
template <typename S, typename T, typename Out> TileSchedule stagedSchedule(const StripArgs<T, Out>& a, int slots)
{
    TileSchedule schedule{};
    schedule.headPeriod = S::rows / kScheduleStep;
    schedule.tall = stagedTileRows<S>(a, slots);
    const int columns = stagedColumns<S>(a);
    const int waveTiles = (slots + columns - 1) / columns;
    const int cycles = fillsStagedWaves<S>(a, kScheduleStep, slots)
                           ? std::min((waveTiles + schedule.headPeriod - 1) / schedule.headPeriod, a.rows / schedule.cycleRows()) : 0;
    schedule.headTiles = cycles * schedule.headPeriod;
    const int remaining = a.rows - schedule.headRows();
    const int tallTiles = std::max(0, remaining - waveTiles * kScheduleStep) / schedule.tall;
    schedule.tallEnd = schedule.headTiles + tallTiles;
    schedule.tiles = schedule.tallEnd + (remaining - tallTiles * schedule.tall + kScheduleStep - 1) / kScheduleStep;
    return schedule;
}

/// The rows of an edge tile column's strip over the others' (stripSchedule): the blocks of the two
/// edge columns stage the elements past the row ends one by one and took 11-19% longer; these shares
/// measured fastest, 0.93x the time of equal strips on u16 15x15 x1 and 0.92x on u8 9x9 x1
/// (docs/performance.md, "Forty-seventh step").
template <typename T> constexpr double edgeStripShare()
{
    return sizeof(T) == 1 ? 0.92 : 0.88;
}

/// How much taller the other columns' strips may grow to make room for the edge columns' shorter ones:
/// where they kept their height the shorter edge strips took 0.95x the time; where they grew 10%,
/// 1.04x (docs/performance.md, "Forty-eighth step").
constexpr double kEdgeStripGrowthLimit = 1.05;

/// The strips of strip `a` for tiles S that walk strips (StagedTile::strips): one wave of `slots`
/// resident blocks, each a strip of the rows of one tile column, where those strips are taller than
/// S::rows; else stagedSchedule's tiles. In one wave each block restages no halo rows after its
/// first chunk; the extra waves that let stagedSchedule's blocks end together were 1.04x (two) and
/// 1.07x (three) the time of one on u16 15x15 (docs/performance.md, "Thirty-seventh step"). With
/// three tile columns or more the two edge columns' strips are shorter (edgeStripShare), so that
/// their blocks end with the others, every column taking the most strips that keep one wave, unless
/// that leaves the other columns' strips more than kEdgeStripGrowthLimit times as tall.
template <typename S, typename T, typename Out> TileSchedule stripSchedule(const StripArgs<T, Out>& a, int slots)
{
    const int columns = stagedColumns<S>(a);
    const auto edgeStripCount = [](int strips) { return int(std::ceil(strips / edgeStripShare<T>())); };
    const auto fits = [&](int strips) { return (columns - 2) * strips + 2 * edgeStripCount(strips) <= slots; };
    const auto stripRows = [&](int strips) { return (a.rows + strips - 1) / strips; };
    int perColumn = std::max(1, slots / columns);
    bool tapered = columns >= 3 && fits(1);
    if (tapered) {
        int strips = perColumn;
        while (!fits(strips)) --strips;
        tapered = stripRows(strips) <= kEdgeStripGrowthLimit * stripRows(perColumn);
        if (tapered) perColumn = strips;
    }
    const int rows = stripRows(perColumn);
    if (rows <= S::rows) return stagedSchedule<S>(a, slots);
    TileSchedule schedule{};
    schedule.headPeriod = 1;  // no head
    schedule.tall = rows;
    schedule.tiles = schedule.tallEnd = (a.rows + rows - 1) / rows;
    if (tapered) {
        const int edge = edgeStripCount(perColumn);
        schedule.edgeTall = (a.rows + edge - 1) / edge;
        schedule.edgeTiles = (a.rows + schedule.edgeTall - 1) / schedule.edgeTall;
    }
    return schedule;
}

/// Launches staged-tile kernel `kernel` (tile S) over chunk `chunk` of `run` with its schedule:
/// kernel<<<grid, kRingThreads>>>(a, schedule, args...).
template <typename S, typename T, typename Out, typename... Args>
void launchStaged(S, void (*kernel)(StripArgs<T, Out>, TileSchedule, Args...), const Conv2dRun& run, int chunk,
                  cudaStream_t stream, Args... args)
{
    const StripArgs<T, Out> a = stripArgs<T, Out>(run, chunk);
    const TileSchedule schedule = S::strips ? stripSchedule<S>(a, run.stagedSlots) : stagedSchedule<S>(a, run.stagedSlots);
    const int gridTiles = std::max(schedule.tiles, schedule.edgeTiles);
    kernel<<<gridFor(a.cols * S::CN, gridTiles, S::elements, 1), kRingThreads, 0, stream>>>(a, schedule, args...);
}

/// Rank-1 factors whose largest row and column taps multiply to this or more would overflow the
/// staged ring's scaled column taps (subnormalRingTaps).
constexpr double kRingTapLimit = 0x1p100;

double largestMagnitude(const std::vector<float>& taps)
{
    double largest = 0;
    for (float t : taps) largest = std::max(largest, std::fabs(double(t)));
    return largest;
}

/// The staged ring's row and column taps for a u8/u16 image. Its row pass reads each element x as
/// the subnormal x * 2^-149 (widenSubnormal: one instruction, where widen's exact f32 takes 1.5 on
/// average), so the row taps are scaled by 2^s and the column taps by 2^(149 - s). Scaling by a
/// power of two is exact while values stay normal, so every row sum is the unscaled one times
/// 2^(s - 149) and every output the unscaled one: the same bits, unless a row tap lies 2^100 or more
/// below the largest. s puts the largest row tap in [2^126, 2^127); under kRingTapLimit the scaled
/// column taps stay below 2^123.
SeparableKernel subnormalRingTaps(SeparableKernel factors)
{
    const double largestRow = largestMagnitude(factors.row);
    if (largestRow == 0) return factors;
    const int s = 126 - std::ilogb(largestRow);
    for (float& t : factors.row) t = std::ldexp(t, s);
    for (float& t : factors.column) t = std::ldexp(t, 149 - s);
    return factors;
}

/// Whether the staged ring reads an image of `inDepth` as subnormals, with subnormalRingTaps' scaled
/// taps (u8/u16; f32 elements are summed as they are).
bool takesSubnormalRing(int inDepth, int kRows, int kCols)
{
    return inDepth != CV_32F && takesStagedRing(inDepth, kRows, kCols);
}

std::string whyNotSeparable(const Conv2dProblem& p)
{
    if (!p.factors) return "needs a rank-1 kernel; the " + p.kernelSize() + " kernel is not separable";
    const double largestProduct = largestMagnitude(p.factors->row) * largestMagnitude(p.factors->column);
    if (takesSubnormalRing(p.input.depth(), p.kRows, p.kCols) && largestProduct >= kRingTapLimit)
        return "needs taps below 2^100 in magnitude on u8/u16 images (its row pass scales them by powers of two); "
               "this is " + describeImage(p.input) + ", a " + p.kernelSize() + " kernel";
    return {};
}

std::string whyNotInteger(const Conv2dProblem& p)
{
    if (p.integer) return {};
    return "needs an 8-bit image with 8-bit output and a square " + compiledSizesText("or") +
           " rank-1 kernel whose taps are non-negative integers times one factor, small enough that 255 times the "
           "kernel's integers sums within 16 bits and each row integer within 255 (such as boxes and the default "
           "3x3 and 5x5 Gaussians); this is " +
           describeImage(p.input) + (p.spec.floatOutput ? " with float output" : "") + ", a " + p.kernelSize() +
           " kernel";
}

/// Calls f(S{}, kernel) with separable's staged ring kernel (tile S) for `run` where it takes one
/// (takesStagedRing); returns whether it does.
template <typename F> bool withStagedRingKernel(const Conv2dRun& run, F&& f)
{
    if (!takesStagedRing(run.inDepth, run.kRows, run.kCols)) return false;
    return withCompiledShape(run, [&](auto in, auto out, auto cn, auto k) {
        using In = decltype(in);
        constexpr int CN = decltype(cn)::value, K = decltype(k)::value;
        using Out = decltype(out);
        if constexpr (stagedRingSize(std::is_same_v<In, float>, K))
            f(StagedRingTile<In, Out, CN, K>{}, conv2dStagedRing<In, Out, CN, K>);
    });
}

/// Row and column taps into the f32 taps the separable kernels read, before the run's kernels.
void uploadTaps(const SeparableKernel& taps, cudaStream_t stream)
{
    copyToSymbol(cRowTaps, taps.row, stream);
    copyToSymbol(cColumnTaps, taps.column, stream);
    KL_CUDA_TRY(cudaStreamSynchronize(stream));  // the taps are pageable and may go after the call
}

void prepareSeparable(const Conv2dProblem& problem, Conv2dRun& run, BufferCache& cache, cudaStream_t stream)
{
    if (!isCompiledSize(run.kRows, run.kCols))
        run.mid = static_cast<float*>(cache.device(
            "conv2d.mid", run.sliceStart(run.chunks) * size_t(run.cols) * run.channels * sizeof(float)));
    withStagedRingKernel(run, [&](auto, auto kernel) { run.stagedSlots = stagedSlots(kernel, run.multiprocessors); });
    const bool subnormal = takesSubnormalRing(run.inDepth, run.kRows, run.kCols);
    uploadTaps(subnormal ? subnormalRingTaps(*problem.factors) : *problem.factors, stream);
}

void computeSeparable(const Conv2dRun& run, int chunk, cudaStream_t stream)
{
    const bool staged =
        withStagedRingKernel(run, [&](auto tile, auto kernel) { launchStaged(tile, kernel, run, chunk, stream); });
    if (!staged)
        withStrip(run, chunk, [&](const auto& a, auto cn) {
            using A = std::decay_t<decltype(a)>;
            using In = typename A::InType;
            using Out = typename A::OutType;
            constexpr int CN = decltype(cn)::value;
            const bool ring = a.kRows == a.kCols && withFixedSize(a.kRows, [&](auto k) {
                                  constexpr int K = decltype(k)::value;
                                  if constexpr (!stagedRingSize(std::is_same_v<In, float>, K)) {  // else staged
                                      conv2dSeparableRing<In, Out, CN, K, kRingElements, (K <= 9)>
                                          <<<gridFor(a.cols * CN, a.rows, kRingThreads * kRingElements, kRingStrip),
                                             kRingThreads, 0, stream>>>(a, kRingStrip);
                                  }
                              });
            if (!ring) {
                const dim3 block(kBlockX, kBlockY);
                conv2dRowPass<In, Out, CN>
                    <<<gridFor(a.cols, a.rows + a.kRows - 1, kBlockX, kBlockY), block, 0, stream>>>(a);
                KL_CHECK_LAUNCH();
                conv2dColumnPass<In, Out, CN><<<gridFor(a.cols, a.rows, kBlockX, kBlockY), block, 0, stream>>>(a);
            }
        });
    KL_CHECK_LAUNCH();
}

/// Calls f(kernel, shared bytes) with separable-tiles' kernel for `run` (a square compiled size).
template <typename F> void withTilesKernel(const Conv2dRun& run, F&& f)
{
    withCompiledShape(run, [&](auto in, auto out, auto cn, auto k) {
        constexpr int CN = decltype(cn)::value, K = decltype(k)::value;
        f(conv2dSeparableTiles<decltype(in), decltype(out), CN, K>, SeparableTile<CN, K>::bytes);
    });
}

std::string whyNotSeparableTiles(const Conv2dProblem& p)
{
    if (p.factors && isCompiledSize(p.kRows, p.kCols)) return {};
    return "needs a rank-1 kernel of a square compiled size (" + compiledSizesText("or") + "); this is a " +
           (p.factors ? "" : "non-separable ") + p.kernelSize() + " kernel";
}

void prepareSeparableTiles(const Conv2dProblem& problem, Conv2dRun& run, BufferCache&, cudaStream_t stream)
{
    withTilesKernel(run, [&](auto kernel, size_t bytes) {
        optInSharedMemory(kernel, bytes, kTilesThreads);
        run.stagedSlots = residentBlocks(kernel, kTilesThreads, bytes, run.multiprocessors);
    });
    uploadTaps(*problem.factors, stream);
}

/// separable-tiles' strips are at most kTilesStripSteps steps tall, and grids at least kTilesMinWaves
/// waves of resident blocks (tilesStripRows).
constexpr int kTilesStripSteps = 6, kTilesMinWaves = 10;

/// The rows of separable-tiles' strips over `rows` rows of `bands` bands (`slots` blocks resident on
/// the whole GPU): the tallest of kTilesStripSteps, kTilesStripSteps - 1, ... steps whose grid has
/// kTilesMinWaves waves, else 2 steps. Each strip restages K - 1 rows, so taller strips read less
/// halo; but while the last blocks of a grid of few waves finish, SMs idle. At 8192^2, 6 steps
/// (16-28 waves) measured fastest on 3 and 4 channels and 3-4 steps (8-14 waves) on one; 2-3 waves
/// of taller strips ran 1.2-1.6x slower (docs/performance.md, "Thirtieth step").
int tilesStripRows(int rows, int bands, int slots)
{
    return tallestFilling(kTilesStripSteps * kTileStep, 2 * kTileStep, kTileStep, [&](int stripRows) {
        return long(bands) * ((rows + stripRows - 1) / stripRows) >= long(kTilesMinWaves) * slots;
    });
}

void computeSeparableTiles(const Conv2dRun& run, int chunk, cudaStream_t stream)
{
    withStrip(run, chunk, [&](const auto& a, auto cn) {
        constexpr int CN = decltype(cn)::value;
        const int bands = (a.cols * CN + kTileBand - 1) / kTileBand;
        const int stripRows = tilesStripRows(a.rows, bands, run.stagedSlots);
        const dim3 grid(unsigned(bands), std::min(unsigned(a.rows + stripRows - 1) / unsigned(stripRows), kMaxGridY));
        withFixedSize(a.kRows, [&](auto k) {
            constexpr int K = decltype(k)::value;
            using A = std::decay_t<decltype(a)>;
            conv2dSeparableTiles<typename A::InType, typename A::OutType, CN, K>
                <<<grid, kTilesThreads, SeparableTile<CN, K>::bytes, stream>>>(a, stripRows);
        });
    });
    KL_CHECK_LAUNCH();
}

std::string whyNotSeparableMma(const Conv2dProblem& p)
{
    return whyNotMmaVariant(p, p.input.depth() != CV_32F, "a u8 or u16 image", false);
}

/// Calls f(kernel, shared bytes) with separable-mma's kernel for `run` (u8/u16, a square compiled size).
template <typename F> void withMmaKernel(const Conv2dRun& run, F&& f)
{
    withCompiledShape(run, [&](auto in, auto out, auto cn, auto k) {
        using In = decltype(in);
        constexpr int CN = decltype(cn)::value, K = decltype(k)::value;
        if constexpr (!std::is_same_v<In, float>) f(conv2dSeparableMma<In, decltype(out), CN, K>, MmaTile<In, CN, K>::bytes);
    });
}

/// The kernel's A fragments (MmaTapFragments) of `taps` for a K x K kernel on `planes` byte planes:
/// register r of lane l at r * 32 + l, so that a warp loads each register in one transaction: each
/// lane's taps lie at its own indices, which constant memory would serve one index at a time.
std::vector<uint32_t> mmaTapFragments(const SplitTaps& taps, int planes)
{
    std::vector<uint32_t> fragments;
    for (int c = 0; c < kMmaChunks; ++c)
        for (int p = 0; p < planes; ++p)
            for (int h = 0; h < 2; ++h)
                for (int e = 0; e < 4; ++e)
                    for (int lane = 0; lane < 32; ++lane) {
                        // register e: row g (+8 for odd e), columns 2q and 2q + 1 (+8 from e = 2)
                        const int g = lane / 4, q = lane % 4;
                        const int i = kMmaTileRows * c + 2 * q + 8 * (e / 2) - (g + 8 * (e % 2));
                        fragments.push_back(mmaTapBits(taps, h, p, i) | uint32_t(mmaTapBits(taps, h, p, i + 1)) << 16);
                    }
    return fragments;
}

void prepareSeparableMma(const Conv2dProblem& problem, Conv2dRun& run, BufferCache& cache, cudaStream_t stream)
{
    withMmaKernel(run, [&](auto kernel, size_t bytes) {
        optInSharedMemory(kernel, bytes, kTilesThreads);
        run.stagedSlots = residentBlocks(kernel, kTilesThreads, bytes, run.multiprocessors);
    });
    const SplitTaps taps = *splitMmaTaps(problem.factors->column, problem.factors->row);
    const std::vector<uint32_t> fragments = mmaTapFragments(taps, run.inDepth == CV_8U ? 1 : 2);
    uploadMmaFragments(fragments, run, cache, stream);
    copyToSymbol(cRowTaps, taps.scaled, stream);
    KL_CUDA_TRY(cudaStreamSynchronize(stream));  // the taps are pageable and about to go
}

void computeSeparableMma(const Conv2dRun& run, int chunk, cudaStream_t stream)
{
    withStrip(run, chunk, [&](const auto& a, auto cn) {
        using A = std::decay_t<decltype(a)>;
        using In = typename A::InType;
        constexpr int CN = decltype(cn)::value;
        if constexpr (!std::is_same_v<In, float>) {
            const int bands = (a.cols * CN + kTileBand - 1) / kTileBand;
            const int stripRows = tilesStripRows(a.rows, bands, run.stagedSlots);
            const dim3 grid(unsigned(bands), std::min(unsigned(a.rows + stripRows - 1) / unsigned(stripRows), kMaxGridY));
            withFixedSize(a.kRows, [&](auto k) {
                constexpr int K = decltype(k)::value;
                conv2dSeparableMma<In, typename A::OutType, CN, K>
                    <<<grid, kTilesThreads, MmaTile<In, CN, K>::bytes, stream>>>(a, stripRows, run.mmaFragments);
            });
        }
    });
    KL_CHECK_LAUNCH();
}

/// Calls f(S{}, kernel, dot) with the integer variant's kernel (tile S) for `run`; dot, a
/// std::bool_constant: whether its row pass takes dp4a (dotRowPass).
template <typename F> void withIntegerKernel(const Conv2dRun& run, F&& f)
{
    withChannels(run.channels, [&](auto cn) {
        constexpr int CN = decltype(cn)::value;
        withFixedSize(run.kRows, [&](auto k) {
            constexpr int K = decltype(k)::value;
            const auto call = [&](auto scaled, auto unitColumn) {
                constexpr bool UnitColumn = decltype(unitColumn)::value;
                f(IntegerTile<CN, K>{}, conv2dIntegerTiles<CN, K, decltype(scaled)::value, UnitColumn>,
                  std::bool_constant<dotRowPass<CN, UnitColumn>()>{});
            };
            // Non-dyadic unit columns are the boxes; a dyadic kernel with one takes the general form.
            if (run.dyadicTaps) call(std::false_type{}, std::false_type{});
            else if (run.unitColumnTaps) call(std::true_type{}, std::true_type{});
            else call(std::true_type{}, std::false_type{});
        });
    });
}

/// cRowTapBytes for window W: the byte of element n's tap j at its place in quad q.
template <typename W> std::vector<uint32_t> rowTapBytes(const std::vector<uint32_t>& row)
{
    std::vector<uint32_t> words(kRingElements * kMaxWindowQuads, 0);
    for (int n = 0; n < W::elements; ++n)
        for (int s = 0; s < 4 * W::quads; ++s)
            if (const int j = rowTapAt<W>(n, s); j >= 0) words[n * kMaxWindowQuads + s / 4] |= row[j] << 8 * (s % 4);
    return words;
}

void prepareInteger(const Conv2dProblem& problem, Conv2dRun& run, BufferCache&, cudaStream_t stream)
{
    const IntegerTaps& k = *problem.integer;
    run.tapScale = k.scale;
    run.dyadicTaps = k.dyadic();
    run.unitColumnTaps = std::all_of(k.taps.column.begin(), k.taps.column.end(), [](uint32_t t) { return t == 1; });
    withIntegerKernel(run, [&](auto tile, auto kernel, auto dot) {
        run.stagedSlots = stagedSlots(kernel, run.multiprocessors);
        if constexpr (decltype(dot)::value) copyToSymbol(cRowTapBytes, rowTapBytes<typename decltype(tile)::Window>(k.taps.row), stream);
        else copyToSymbol(cRowTapsInteger, k.taps.row, stream);
    });
    copyToSymbol(cColumnTapsInteger, k.taps.column, stream);
    // The edge strips' f32 taps (the staged ring's) from the same integers: the column as is, the
    // row times the scale (exact for dyadic taps, 2^-8). Such small taps are far under kRingTapLimit.
    SeparableKernel edgeTaps{std::vector<float>(k.taps.column.begin(), k.taps.column.end()), {}};
    for (uint32_t t : k.taps.row) edgeTaps.row.push_back(float(t) * k.scale);
    uploadTaps(subnormalRingTaps(std::move(edgeTaps)), stream);
}

void computeInteger(const Conv2dRun& run, int chunk, cudaStream_t stream)
{
    withIntegerKernel(run,
                      [&](auto tile, auto kernel, auto) { launchStaged(tile, kernel, run, chunk, stream, run.tapScale); });
    KL_CHECK_LAUNCH();
}

std::string whyNotStagedRows(const Conv2dProblem& p)
{
    if (p.kRows == p.kCols && p.kRows <= kStagedRowsMaxSize && isCompiledSize(p.kRows, p.kCols)) return {};
    return "needs a square 3x3, 5x5 or 7x7 kernel; this is a " + p.kernelSize() + " kernel";
}

/// Calls f(S{}, kernel) with staged-rows' kernel (tile S) for `run`.
template <typename F> void withStagedRowsKernel(const Conv2dRun& run, F&& f)
{
    withCompiledShape(run, [&](auto in, auto out, auto cn, auto k) {
        using In = decltype(in);
        constexpr int CN = decltype(cn)::value, K = decltype(k)::value;
        if constexpr (K <= kStagedRowsMaxSize)
            f(StagedRowsTile<In, CN, K>{}, conv2dStagedRows<In, decltype(out), CN, K>);
    });
}

void prepareStagedRows(const Conv2dProblem& problem, Conv2dRun& run, BufferCache&, cudaStream_t stream)
{
    withStagedRowsKernel(run, [&](auto, auto kernel) { run.stagedSlots = stagedSlots(kernel, run.multiprocessors); });
    copyToSymbol(cDirectTaps, std::vector<float>(problem.kernel.begin<float>(), problem.kernel.end<float>()), stream);
    KL_CUDA_TRY(cudaStreamSynchronize(stream));  // the taps are pageable and about to go
}

void computeStagedRows(const Conv2dRun& run, int chunk, cudaStream_t stream)
{
    withStagedRowsKernel(run, [&](auto tile, auto kernel) { launchStaged(tile, kernel, run, chunk, stream); });
    KL_CHECK_LAUNCH();
}

} // namespace

std::optional<SplitTaps> splitMmaTaps(const std::vector<float>& mmaPass, const std::vector<float>& fmaPass)
{
    const double largest = largestMagnitude(mmaPass);
    const int exponent = largest == 0 ? 0 : 6 - std::ilogb(largest);
    SplitTaps taps;
    for (float tap : mmaPass) {
        const float scaled = std::ldexp(tap, exponent);
        const float high = __half2float(__float2half_rn(scaled)), low = __half2float(__float2half_rn(scaled - high));
        if (std::fabs(double(scaled) - high - low) > std::ldexp(std::fabs(double(scaled)), -22)) return std::nullopt;
        taps.high.push_back(high);
        taps.low.push_back(low);
    }
    for (float tap : fmaPass) {
        const float scaled = std::ldexp(tap, -kMmaByteExponent - exponent);
        if (tap != 0 && !(std::fabs(scaled) >= FLT_MIN && std::fabs(scaled) <= FLT_MAX)) return std::nullopt;
        taps.scaled.push_back(scaled);
    }
    return taps;
}

bool mmaBorderFits(const Conv2dProblem& p)
{
    return p.spec.border != BorderMode::Constant ||
           isImageValue(p.spec.borderValue, p.input.depth() == CV_8U ? 255.0 : 65535.0);
}

std::string whyNotMmaVariant(const Conv2dProblem& p, bool imageFits, const std::string& imageNeeded, bool rowPass)
{
    const bool applies = imageFits && p.factors && isCompiledSize(p.kRows, p.kCols) && mmaBorderFits(p) &&
                         p.device.deviceCodeArchitecture >= 800 &&
                         (rowPass ? splitMmaTaps(p.factors->row, p.factors->column)
                                  : splitMmaTaps(p.factors->column, p.factors->row));
    if (applies) return {};
    return "needs " + imageNeeded + ", a rank-1 kernel of a square compiled size (" + compiledSizesText("or") + ") whose " +
           (rowPass ? "row" : "column") +
           " taps lie within about 2^9 of the largest (each is two f16 halves to 22 bits), a constant border value, if "
           "any, that is an image value, and a GPU of compute capability 8.0 or newer running device code built for 8.0 "
           "or newer; this is " + describeImage(p.input) + ", a " + (p.factors ? "" : "non-separable ") +
           p.kernelSize() + " kernel, " + describeCompute(p.device);
}

uint16_t mmaTapBits(const SplitTaps& taps, int half, int plane, int i)
{
    const float tap = i >= 0 && i < int(taps.high.size()) ? (half ? taps.low : taps.high)[size_t(i)] * (plane ? 256.0f : 1.0f) : 0.0f;
    return __half_raw(__float2half_rn(tap)).x;
}

void uploadMmaFragments(const std::vector<uint32_t>& fragments, Conv2dRun& run, BufferCache& cache, cudaStream_t stream)
{
    const size_t bytes = fragments.size() * sizeof(uint32_t);
    run.mmaFragments = static_cast<uint32_t*>(cache.device("conv2d.mma-fragments", bytes));
    KL_CUDA_TRY(cudaMemcpyAsync(run.mmaFragments, fragments.data(), bytes, cudaMemcpyHostToDevice, stream));
}

Conv2dVariant separableConv2d()
{
    return {"separable",
            "rank-1 kernels as a row and a column pass; compiled sizes keep the row results in a register ring (u8/u16 "
            "from input tiles staged in shared memory, taps below 2^100)",
            whyNotSeparable,
            {prepareSeparable, computeSeparable, true}};
}

Conv2dVariant separableTilesConv2d()
{
    return {"separable-tiles",
            "rank-1 kernels of compiled sizes: both passes through shared memory, each input widened once per band",
            whyNotSeparableTiles,
            {prepareSeparableTiles, computeSeparableTiles, true}};
}

Conv2dVariant separableMmaConv2d()
{
    return {"separable-mma",
            "u8/u16 rank-1 kernels of compiled sizes (sm_80+): separable-tiles' steps with the column pass on tensor "
            "cores (bytes and two-half taps exact in f16, f32 sums)",
            whyNotSeparableMma,
            {prepareSeparableMma, computeSeparableMma, true, kMmaTileRows}};
}

Conv2dVariant integerConv2d()
{
    return {"integer",
            "u8 rank-1 kernels of integer taps times one factor (boxes, Gaussians of taps k/256): the separable passes "
            "in exact 16-bit integer lanes",
            whyNotInteger, {prepareInteger, computeInteger, true}};
}

Conv2dVariant stagedRowsConv2d()
{
    return {"staged-rows",
            "any image, any 3x3, 5x5 or 7x7 taps: tiles staged in shared memory; each input row widened once and added "
            "to every output row it feeds",
            whyNotStagedRows,
            {prepareStagedRows, computeStagedRows, true}};
}

} // namespace kl::gpu
