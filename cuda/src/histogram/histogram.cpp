// Histogram on the GPU: exactly kl::histogramReference (the same bins, out-of-range
// and NaN counts, 64-bit totals) for every depth, channel count and binning. This file is
// the host side: the binning, the registry and auto choice, and the chunked run. The
// variants (the steps of the classic privatized-histogram tutorial) live in one .cu per
// family, each with its kernels and launch plans: histogram_atomics.cu (global-atomics,
// shared), histogram_optimized.cu (optimized, the default: lane-private counters wherever a
// block's shared memory holds one word per lane position for each, per-warp sub-histograms
// for larger histograms; tma: optimized's byte bins for one channel of u8, or u16 with the
// default bins, fed by the Tensor Memory Accelerator on sm_90+, which optimized's register
// loads now outrun: docs/performance.md, "Twenty-eighth step").
// When one histogram does not fit in a block's shared memory (many bins times entries,
// e.g. 65536 bins), shared and optimized count with global atomics instead.
//
// Exactness: the kernels bin with the shared kl::histogramBin and compute luminance with
// kl::luminanceFixed / kl::luminanceFloat, which round on the device exactly as on the CPU.
// Two integer shortcuts are provably identical to histogramBin:
//   u8: 256 bins over [0, 256), scale 1, offset 0, so histogramBin(v) == v;
//   u16 with the default 256 bins over [0, 65536): scale 2^-8 makes v * scale exact and
//   the offset is 0, so histogramBin(v) == floor(v / 256) == v >> 8.
// Other u16 and f32 binnings take histogramBinInRangeFloat, which is histogramBinInRange
// wherever it decides and defers to it near bin edges (kl::floatBinning bounds its error).
// Counters: each entry (the channels, then luminance) has bins + 2 of them: the bins,
// then out-of-range, then NaN. Per-block 32-bit counters cannot overflow: a block counts
// at most 2^30 + a few thousand pixels (see launchWarpAtomics; a lane-column block, below
// 2^32 values, tma's too: laneGridBlocks' limits; both in histogram_optimized.cu).
// Bytes per run: the input, read once (the histogram itself is negligible).
#include "histogram_variants.hpp"

#include "../pipeline.hpp"

#include <opencv2/core.hpp>

#include <cstdint>

namespace kl::gpu {

const VariantRegistry<HistogramProblem, HistogramLaunch>& histogramVariants()
{
    static const VariantRegistry<HistogramProblem, HistogramLaunch> registry(
        "histogram", {globalAtomicsHistogram(), sharedHistogram(), optimizedHistogram(), tmaHistogram()},
        [](const HistogramProblem&) { return "optimized"; });
    return registry;
}

std::vector<VariantInfo> histogramVariantInfo() { return histogramVariants().info(); }

namespace {

/// u16 with 256 bins over [0, 65536): scale 2^-8, offset 0, so histogramBin(v) == v >> 8.
bool defaultU16Binning(int depth, const HistogramBinning& b)
{
    return depth == CV_16U && b.bins == 256 && b.lo == 0 && b.hi == 65536 && b.scale == 1.0 / 256 && b.offset == 0;
}

HistogramProblem problemFor(const cv::Mat& input, const HistogramSpec& spec, const HistogramBinning& binning,
                            const DeviceInfo& device)
{
    const int depth = input.depth();
    return {depth, input.channels(), spec.luminance && input.channels() >= 3,
            depth == CV_8U || defaultU16Binning(depth, binning), device};
}

} // namespace

std::string whyNotApplicable(const std::string& variant, const cv::Mat& input, const HistogramSpec& spec,
                             const DeviceInfo& device)
{
    return histogramVariants().whyNot(variant, problemFor(input, spec, resolveBinning(input, spec), device));
}

GpuReport runHistogram(Engine::Impl& engine, const cv::Mat& input, const HistogramSpec& spec,
                       const RunOptions& options, HistogramResult& output)
{
    const HistogramBinning binning = resolveBinning(input, spec);  // validates input and spec
    const cv::Mat src = input.isContinuous() ? input : input.clone();
    const int rows = src.rows, channels = src.channels(), depth = src.depth();
    const HistogramProblem problem = problemFor(src, spec, binning, engine.info);
    const bool luminance = problem.luminance;
    const auto& variant = histogramVariants().resolve(options.variant, problem);
    const BinRule rule{binning.scale, binning.offset, binning.bins, defaultU16Binning(depth, binning),
                       floatBinning(binning)};
    const size_t stride = size_t(rule.stride()), slotCount = size_t(channels + (luminance ? 1 : 0)) * stride;
    const size_t countBytes = slotCount * sizeof(unsigned long long);
    const size_t rowBytes = src.cols * src.elemSize(), bytes = rows * rowBytes;
    std::vector<uint64_t> slots(slotCount);

    Pipeline p;
    p.op = "histogram";
    p.variant = variant.name;
    p.hostIn = src.data;
    p.hostInBytes = bytes;
    p.hostOut = slots.data();
    p.hostOutBytes = countBytes;
    p.kernelBytes = bytes;
    // Every chunk's launch zeroes and merges a resident grid's private histograms (~14 us on the
    // H200), while all a chunk overlaps is the next one's copy: chunks of 4 MiB made 4 streams
    // slower than one (docs/performance.md).
    p.minChunkBytes = uint64_t(16) << 20;

    std::byte* dIn = nullptr;
    unsigned long long* dCounts = nullptr;
    LaunchPlan plan;
    RowStrips strip(rows);  // every strip's kernel adds into the one device histogram

    p.prepare = [&](int requested) {
        dIn = static_cast<std::byte*>(engine.cache.device("histogram.in", bytes));
        dCounts = static_cast<unsigned long long*>(engine.cache.device("histogram.counts", countBytes));
        plan = variant.launch.plan(problem, rule, engine.properties);
        return strip.split(requested);
    };
    p.resetOutput = [&](cudaStream_t s) { KL_CUDA_TRY(cudaMemsetAsync(dCounts, 0, countBytes, s)); };
    p.upload = [&](const ChunkContext& c) { return uploadRows(c, strip, dIn, rowBytes); };
    p.compute = [&](const ChunkContext& c) {
        const auto [r0, r1] = strip(c.chunk);
        const PixelSpan span{size_t(r0) * src.cols, size_t(r1) * src.cols};
        if (span.last > span.first) plan.launch(plan, dIn, span, rule, dCounts, c.stream);
    };
    p.downloadAfterAll = [&](const ChunkContext& c) {
        c.toHost(c.hostOut, dCounts, CopyRegion{countBytes, 1, countBytes, countBytes});
        return countBytes;
    };
    GpuReport report = runPipeline(engine, p, options);

    HistogramResult result;
    result.binning = binning;
    result.hasLuminance = luminance;
    result.labels = histogramLabels(channels, luminance);
    for (size_t e = 0; e < slotCount / stride; ++e) {
        const auto entry = slots.begin() + std::ptrdiff_t(e * stride);
        result.counts.emplace_back(entry, entry + binning.bins);
        result.outOfRange.push_back(entry[binning.bins]);
        result.nanCount.push_back(entry[binning.bins + 1]);
    }
    output = std::move(result);
    return report;
}

} // namespace kl::gpu
