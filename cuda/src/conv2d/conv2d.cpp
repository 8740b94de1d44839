// 2D convolution on the GPU: exactly conv2d.hpp's function (correlation with
// effectiveKernel, anchor at the centre, borderIndex borders, per channel,
// saturateRound to u8/u16) for every depth, channel count, border mode and
// kernel size. This file is the host side: the problem, the registry and auto
// choice, and the chunked run. The variants live in one .cu per family, each with
// its kernels and constant memory: conv2d_direct.cu (naive, constant), conv2d_tiled.cu (shared,
// tma), conv2d_separable.cu (separable, separable-tiles, separable-mma, integer, staged-rows),
// conv2d_rows_mma.cu (rows-mma), conv2d_direct_mma.cu (direct-mma), conv2d_dp4a.cu (dp4a, dp2a).
//
// auto: integer where it applies (u8 boxes and dyadic Gaussians: faster than dp4a on boxes too), then
// dp4a (sharpen, Laplacian, Sobel on u8), then dp2a for u16 kernels that are not rank 1 (faster than
// shared wherever they apply). Else, for rank-1 kernels of compiled sizes, rows-mma at 15x15 (and at
// 9x9 on 4 u16 channels and one u8 channel; on u8 at 15x15 separable-mma where rows-mma does not apply), the separable
// ring (on u8/u16 from staged tiles) or separable-tiles where each measured faster (autoConv2d);
// separable for other rank-1 sizes from 500 taps on; but on f32 separable (the staged ring) for rank-1
// 3x3 and 5x5 kernels and staged-rows for the other kernels up to 7x7 but rank-1 7x7 ones.
// Otherwise direct-mma for u8 at 7x7 and 9x9 where it applies, staged-rows for u8/u16 up to 7x7, tma
// where it applies up to 9x9, shared elsewhere.
// (docs/performance.md, "The auto rule", "separable-tiles", "The staged ring" and "staged-rows", has the
// measurements.)
//
// Accuracy: sums are f32, each kernel row summed on its own (taps in order, from
// 0) and the row sums then added in order, in every 2D variant alike, so naive,
// constant and shared give identical bits. This two-level summation keeps the
// error below about 5e-7 * sum|K * in| even for 63x63 kernels, inside
// conv2d.hpp's tie band of 1e-6 * sum|K * in|; one running sum over all 3969
// taps would not be (about 4e-6). The separable passes sum each pass the same
// way. So u8/u16 results equal the reference except where its unrounded sum lies
// within that band of a tie. separable-mma's column pass sums on tensor cores
// (exact products; the sums truncate, smallest products first), so near ties its
// results differ from the reference more often: 0.33% of a u16 15x15's outputs
// on noise, 0.002% of a u8's. rows-mma's row pass sums on tensor cores the same way.
//
// Chunks are horizontal strips of output rows. Chunk c owns a slice of the
// device input buffer holding (strip rows + 2 * ry) rows, ry = kRows / 2: slice
// row k is image row borderIndex(r0 - ry + k), uploaded from the host (rows the
// border puts outside the image, Constant mode, are not uploaded; the kernels
// test borderIndex on the image row and use the border value). The vertical
// border is thereby resolved by the upload and the horizontal one in the
// kernels; chunks never write or read each other's slices, so the output is the
// same for any stream count. Device rows (input slices and output) are pitched to
// kRowAlignment bytes and copied with cudaMemcpy2DAsync, so vector accesses and
// the TMA engine (16-byte row strides) work at any width.
//
// Bytes per run (kernelBytes): the input read once + the output written once.
// kernelFlops: 2 * taps * output pixels * channels for every variant, so for
// separable it is the 2D work it stands in for (effective FLOP/s).
#include "conv2d_variants.hpp"

#include "../pipeline.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"

#include <opencv2/core.hpp>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numeric>

namespace kl::gpu {

namespace {

/// Constant memory is one copy per device for the whole process: a run that uses it
/// holds this lock from uploading its taps until its last kernel has finished.
std::mutex constantTapsMutex;

/// The integer variant's taps (IntegerTaps), where it applies: a u8 image and output, a square
/// compiled size, and a rank-1 kernel of non-negative taps that are multiples of 2^-8 summing to at
/// most about 1 (255 * sum(column) * sum(row) + 128 for the rounding <= 65535), or else integers times
/// one factor (integerTapFactors) with 255 * sum(column) * sum(row) <= 65535; row taps up to 255
/// (dp4a's bytes; only a row such as 1 and 256 times a factor reached past that).
std::optional<IntegerTaps> integerTaps(int depth, int outDepth, const cv::Mat& kernel)
{
    if (depth != CV_8U || outDepth != CV_8U || !isCompiledSize(kernel.rows, kernel.cols)) return std::nullopt;
    const auto fits = [](const std::optional<IntegerSeparableKernel>& k, uint64_t rounding) {
        if (!k || std::any_of(k->row.begin(), k->row.end(), [](uint32_t t) { return t > 255; })) return false;
        const uint64_t column = std::accumulate(k->column.begin(), k->column.end(), uint64_t(0));
        const uint64_t row = std::accumulate(k->row.begin(), k->row.end(), uint64_t(0));
        constexpr uint64_t kLane = 0xFFFF;  // also bounds the factors, so the product cannot overflow
        return column <= kLane && row <= kLane && 255 * column * row + rounding <= kLane;
    };
    const std::optional<IntegerSeparableKernel> dyadic = integerSeparableKernel(kernel, kIntegerFractionBits);
    if (fits(dyadic, 1 << (kIntegerFractionBits - 1))) return IntegerTaps{*dyadic, std::ldexp(1.0f, -kIntegerFractionBits)};
    for (float factor : integerTapFactors(kernel)) {
        const std::optional<IntegerSeparableKernel> k = integerSeparableKernel(cv::Mat(kernel / factor), 0);
        if (fits(k, 0)) return IntegerTaps{*k, factor};
    }
    return std::nullopt;
}

const char* autoConv2d(const Conv2dProblem& p)
{
    if (p.integer) return "integer";
    if (conv2dVariants().whyNot("dp4a", p).empty()) return "dp4a";
    // Rank-1 u16 kernels go to the staged ring: as fast as dp2a on one channel, faster on several.
    if (conv2dVariants().whyNot("dp2a", p).empty() && !p.factors) return "dp2a";
    // f32 kernels up to 7x7: staged-rows was faster than tma, the global-memory ring and shared on
    // every such cell measured; on rank-1 kernels the staged ring, where it runs f32
    // (takesStagedRing), took 0.99-1.00x its time, and separable-tiles was 1.2-1.3x faster than
    // staged-rows at 7x7.
    const bool f32 = p.input.depth() == CV_32F, u8 = p.input.depth() == CV_8U;
    const int kRows = p.kRows, kCols = p.kCols;
    const bool stagedRing = p.factors && takesStagedRing(p.input.depth(), kRows, kCols);
    if (f32 && stagedRing && conv2dVariants().whyNot("separable", p).empty()) return "separable";
    const bool rankOneSeven = p.factors && kRows == 7 && kCols == 7;
    if (f32 && !rankOneSeven && conv2dVariants().whyNot("staged-rows", p).empty()) return "staged-rows";
    if (p.factors && kRows >= 3 && kCols >= 3) {
        // Where each measured faster (docs/performance.md, "The auto rule", "separable-tiles", "The
        // staged ring", the twenty-second and the thirtieth step). On u8/u16 the ring from staged
        // tiles beats separable-tiles up to 9x9 and ties it at 15x15 on one channel; on several,
        // separable-tiles is 1.4-1.6x faster there. On f32 (from 7x7 here) separable-tiles wins.
        const bool compiled = isCompiledSize(kRows, kCols);
        // 15x15: on u16 rows-mma 1.21-1.25x faster than the ring on one channel, 1.31 / 1.36x
        // separable-tiles' speed on 3 / 4; on u8 1.37-1.43x the ring's and 1.57-1.65x separable-mma's on
        // one channel, 1.13-1.36x separable-mma's on 3 and 4. At 9x9 rows-mma 1.08x the ring's speed on 4
        // u16 channels and 1.03-1.06x on one u8 channel, while the ring was 1.01-1.05x faster on 1 and 3
        // u16 channels and took 0.85-1.01x rows-mma's time on 3 and 4 u8 channels, 0.81-0.93x on one at 5x5
        // and 7x7.
        const int channels = p.input.channels();
        const bool rowsMma = kRows == 15 || (kRows == 9 && (u8 ? channels == 1 : channels == 4));
        if (compiled && rowsMma && conv2dVariants().whyNot("rows-mma", p).empty()) return "rows-mma";
        // u8 15x15 where rows-mma's row taps do not split: separable-mma 1.09-1.15x faster than separable-tiles.
        if (compiled && kRows == 15 && u8 && conv2dVariants().whyNot("separable-mma", p).empty()) return "separable-mma";
        const bool ring = compiled && !f32 && (kRows < 15 || channels == 1);
        if (ring && conv2dVariants().whyNot("separable", p).empty()) return "separable";
        if (compiled && kRows >= (f32 ? 7 : 9)) return "separable-tiles";
        if (!compiled && kRows * kCols >= 500) return "separable";
    }
    // Other u8 kernels at 7x7 and 9x9: direct-mma 1.27-1.46x staged-rows' speed at 7x7 and 2.07-2.59x
    // shared's at 9x9, on 1, 3 and 4 channels; at 5x5 staged-rows stays 1.17-1.51x faster.
    if (u8 && (kRows == 7 || kRows == 9) && conv2dVariants().whyNot("direct-mma", p).empty()) return "direct-mma";
    // Other u8/u16 kernels up to 7x7: 1.2-1.8x shared's speed everywhere measured.
    if (conv2dVariants().whyNot("staged-rows", p).empty()) return "staged-rows";
    // At 15x15 the plain tiles measured 3% faster than the TMA-fed ones.
    return kRows <= 9 && conv2dVariants().whyNot("tma", p).empty() ? "tma" : "shared";
}

} // namespace

std::vector<float> integerTapFactors(const cv::Mat& kernel)
{
    float smallest = 0;
    for (auto t = kernel.begin<float>(); t != kernel.end<float>(); ++t)
        if (*t != 0 && (smallest == 0 || std::fabs(*t) < smallest)) smallest = std::fabs(*t);
    std::vector<float> factors;
    for (float factor : {1.0f, smallest}) {
        const bool whole = factor != 0 && std::all_of(kernel.begin<float>(), kernel.end<float>(), [&](float t) {
            const float q = t / factor;
            return q == std::nearbyint(q) && q * factor == t;
        });
        if (whole && (factors.empty() || factors.back() != factor)) factors.push_back(factor);
    }
    return factors;
}

bool isCompiledSize(int kRows, int kCols)
{
    return kRows == kCols &&
           std::find(kConv2dCompiledSizes.begin(), kConv2dCompiledSizes.end(), kRows) != kConv2dCompiledSizes.end();
}

bool takesStagedRing(int inDepth, int kRows, int kCols)
{
    return stagedRingSize(inDepth == CV_32F, kRows) && isCompiledSize(kRows, kCols);
}

std::string compiledSizesText(const char* lastJoin, int largest)
{
    const auto end = std::upper_bound(kConv2dCompiledSizes.begin(), kConv2dCompiledSizes.end(), largest);
    std::string text;
    for (auto size = kConv2dCompiledSizes.begin(); size != end; ++size) {
        if (size != kConv2dCompiledSizes.begin()) text += size + 1 == end ? std::string(" ") + lastJoin + " " : ", ";
        text += std::to_string(*size);
    }
    return text;
}

Conv2dProblem::Conv2dProblem(const cv::Mat& in, const Conv2DSpec& s, const DeviceInfo& d)
    : input(in), spec(s), device(d)
{
    validateConv2D(input, spec);
    kernel = effectiveKernel(spec);
    kRows = kernel.rows;
    kCols = kernel.cols;
    outDepth = conv2dOutputDepth(input, spec);
    factors = separateKernel(kernel);
    integer = integerTaps(input.depth(), outDepth, kernel);
}

std::string Conv2dProblem::kernelSize() const { return std::to_string(kCols) + "x" + std::to_string(kRows); }

std::pair<int, int> Conv2dRun::strip(int chunk) const
{
    return {chunk * rowsPerChunk, std::min(rows, (chunk + 1) * rowsPerChunk)};
}

size_t Conv2dRun::sliceStart(int chunk) const { return size_t(chunk) * size_t(rowsPerChunk + halo()); }

const VariantRegistry<Conv2dProblem, Conv2dLaunch>& conv2dVariants()
{
    static const VariantRegistry<Conv2dProblem, Conv2dLaunch> registry(
        "conv2d", {naiveConv2d(), constantConv2d(), sharedConv2d(), tmaConv2d(), separableConv2d(), separableTilesConv2d(), separableMmaConv2d(), rowsMmaConv2d(), directMmaConv2d(), integerConv2d(), dp4aConv2d(), dp2aConv2d(), stagedRowsConv2d()},
        autoConv2d);
    return registry;
}

std::vector<VariantInfo> conv2dVariantInfo() { return conv2dVariants().info(); }

std::string whyNotApplicable(const std::string& variant, const cv::Mat& input, const Conv2DSpec& spec,
                             const DeviceInfo& device)
{
    return conv2dVariants().whyNot(variant, Conv2dProblem(input, spec, device));
}

std::string resolvedVariant(const std::string& variant, const cv::Mat& input, const Conv2DSpec& spec,
                            const DeviceInfo& device)
{
    return conv2dVariants().resolve(variant, Conv2dProblem(input, spec, device)).name;
}

GpuReport runConv2d(Engine::Impl& engine, const cv::Mat& input, const Conv2DSpec& spec, const RunOptions& options,
                    cv::Mat& output)
{
    const cv::Mat src = input.isContinuous() ? input : input.clone();
    const Conv2dProblem problem(src, spec, engine.info);
    const Conv2dVariant& variant = conv2dVariants().resolve(options.variant, problem);

    Conv2dRun run;
    run.rows = src.rows;
    run.cols = src.cols;
    run.channels = src.channels();
    run.inDepth = src.depth();
    run.outDepth = problem.outDepth;
    run.kRows = problem.kRows;
    run.kCols = problem.kCols;
    run.border = spec.border;
    run.borderValue = float(spec.borderValue);
    run.sharedMemoryLimit = engine.info.sharedMemoryPerBlockOptIn;
    run.multiprocessors = engine.info.multiprocessors;
    const size_t inRowBytes = size_t(run.cols) * src.elemSize();
    const size_t outRowBytes = size_t(run.cols) * run.channels * CV_ELEM_SIZE1(run.outDepth);
    run.inPitch = rowPitch(inRowBytes);
    run.outPitch = rowPitch(outRowBytes);
    ensureMemoryAvailable(uint64_t(run.rows) * run.outPitch, "conv2d output");
    cv::Mat dst(run.rows, run.cols, CV_MAKETYPE(run.outDepth, run.channels));

    Pipeline p;
    p.op = "conv2d";
    p.variant = variant.name;
    p.hostIn = src.data;
    p.hostInBytes = size_t(run.rows) * inRowBytes;
    p.hostOut = dst.data;
    p.hostOutBytes = size_t(run.rows) * outRowBytes;
    p.kernelBytes = uint64_t(p.hostInBytes) + p.hostOutBytes;
    p.kernelFlops = 2.0 * double(problem.kernel.total()) * double(run.rows) * run.cols * run.channels;

    p.prepare = [&](int requested) {
        const int rowsEach = std::max(1, (run.rows + requested - 1) / requested), multiple = variant.launch.chunkRowMultiple;
        run.rowsPerChunk = (rowsEach + multiple - 1) / multiple * multiple;
        run.chunks = (run.rows + run.rowsPerChunk - 1) / run.rowsPerChunk;
        run.in = static_cast<std::byte*>(engine.cache.device("conv2d.in", run.sliceStart(run.chunks) * run.inPitch));
        run.out = static_cast<std::byte*>(engine.cache.device("conv2d.out", size_t(run.rows) * run.outPitch));
        // Every variant's prepare leaves its taps in place before any chunk runs.
        variant.launch.prepare(problem, run, engine.cache, engine.streams[0].get());
        return run.chunks;
    };
    p.upload = [&](const ChunkContext& c) {
        const auto [r0, r1] = run.strip(c.chunk);
        std::byte* slice = run.in + run.sliceStart(c.chunk) * run.inPitch;
        const int sliceRows = r1 - r0 + run.halo();
        const auto imageRow = [&](int k) { return borderIndex(r0 - run.kRows / 2 + k, run.rows, spec.border); };
        size_t bytes = 0;
        // Runs of slice rows that are consecutive image rows go up in one copy.
        for (int k = 0; k < sliceRows;) {
            const int first = imageRow(k);
            int n = 1;
            if (first >= 0) {
                while (k + n < sliceRows && imageRow(k + n) == first + n) ++n;
                c.toDevice(slice + size_t(k) * run.inPitch, c.hostIn + size_t(first) * inRowBytes,
                           CopyRegion{inRowBytes, size_t(n), run.inPitch, inRowBytes});
                bytes += size_t(n) * inRowBytes;
            }
            k += n;
        }
        return bytes;
    };
    p.compute = [&](const ChunkContext& c) { variant.launch.compute(run, c.chunk, c.stream); };
    p.download = [&](const ChunkContext& c) {
        const auto [r0, r1] = run.strip(c.chunk);
        c.toHost(c.hostOut + size_t(r0) * outRowBytes, run.out + size_t(r0) * run.outPitch,
                 CopyRegion{outRowBytes, size_t(r1 - r0), outRowBytes, run.outPitch});
        return size_t(r1 - r0) * outRowBytes;
    };

    std::unique_lock<std::mutex> constantTaps(constantTapsMutex, std::defer_lock);
    if (variant.launch.constantTaps) constantTaps.lock();
    GpuReport report = runPipeline(engine, p, options);
    output = dst;
    return report;
}

} // namespace kl::gpu
