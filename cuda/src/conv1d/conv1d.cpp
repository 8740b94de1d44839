// 1D convolution on the GPU: exactly the function kl::conv1dReference computes
// (true convolution, numpy.convolve's full / same / valid slices, zeros outside
// the signal), per channel, float32. This file is the host side: validation, the
// chunks, the registry and auto choice, and the chunked run. The variants live in
// one .cu per family, each with its kernels and constant memory:
// conv1d_direct.cu (naive, shared), conv1d_fft.cu (fft).
//
// Layout. With M taps, output i of the mode's slice is full[offset + i] =
//   sum over t in [0, M) of r[t] * p[offset + i + t],   r[t] = h[M - 1 - t],
// where p is the channel with M - 1 zeros on each side. A chunk computing outputs
// [begin, end) of some channels reads their "window" p[offset + begin, offset +
// end + M - 1): its segment plus the (M - 1)-sample overlap, zero where it runs
// past the signal. Every variant sums the taps in ascending t, which is the
// reference's ascending signal index, so the direct variants differ from it
// only by fused multiply-adds (and naive and shared agree bit for bit).
//
// auto: shared when M <= kAutoFftTaps, fft above (measured crossover, below).
//
// Chunks are rectangles of channels x output segments: all channels in one chunk
// for one stream; otherwise each channel split into equal segments (whole fft
// units for fft) so that there are at most as many chunks as the pipeline asks
// for. Each chunk uploads its own window, so the M - 1 overlap crosses the bus
// once per chunk (counted in bytesH2D). Set-up outside the timed stages
// (prepare, like plan creation): taps upload, the taps' spectrum, cuFFT plans,
// and zeroing the window buffers (uploads then write only signal samples).
//
// kernelBytes = (input + output + taps) samples * 4: each read or written once,
// the least any kernel must move. kernelFlops = 2 * M * output samples *
// channels for every variant; for fft that is the direct-equivalent count, so
// its GFLOP/s is the effective rate of the convolution it replaces.
#include "conv1d_variants.hpp"

#include "../pipeline.hpp"

#include "kernellab/conv1d.hpp"
#include "kernellab/error.hpp"
#include "kernellab/image.hpp"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <vector>

namespace kl::gpu {

namespace {

/// auto: shared up to here, fft above, where they cross on the H200 (docs/performance.md).
constexpr size_t kAutoFftTaps = 300;

/// At most `requested` chunks; segments are multiples of `granule` outputs (except at a channel's end).
std::vector<Conv1dChunk> planChunks(int channels, size_t length, size_t taps, size_t granule, int requested)
{
    std::vector<Conv1dChunk> chunks;
    auto add = [&](int row0, int rows, size_t begin, size_t count) {
        const size_t padded = (count + granule - 1) / granule * granule;
        const size_t offset = chunks.empty() ? 0 : chunks.back().inOffset + chunks.back().windowSamples();
        chunks.push_back({row0, rows, begin, count, padded + taps - 1, offset});
    };
    if (channels >= requested) {
        const int rowsPerChunk = (channels + requested - 1) / requested;
        for (int r = 0; r < channels; r += rowsPerChunk) add(r, std::min(rowsPerChunk, channels - r), 0, length);
    } else {
        const size_t granules = (length + granule - 1) / granule;
        const size_t perChannel = size_t(requested / channels);
        const size_t segment = (granules + perChannel - 1) / perChannel * granule;
        for (int r = 0; r < channels; ++r)
            for (size_t b = 0; b < length; b += segment) add(r, 1, b, std::min(segment, length - b));
    }
    return chunks;
}

const char* autoConv1d(const Conv1dProblem& p) { return p.taps <= kAutoFftTaps ? "shared" : "fft"; }

const VariantRegistry<Conv1dProblem, Conv1dLaunch>& conv1dVariants()
{
    static const VariantRegistry<Conv1dProblem, Conv1dLaunch> registry(
        "conv1d", {naiveConv1d(), sharedConv1d(), fftConv1d()}, autoConv1d);
    return registry;
}

} // namespace

std::vector<VariantInfo> conv1dVariantInfo() { return conv1dVariants().info(); }

std::string whyNotApplicable(const std::string& variant, const Signal& input, const Conv1DSpec& spec,
                             const DeviceInfo& device)
{
    validateConv1D(input, spec);
    return conv1dVariants().whyNot(variant, Conv1dProblem{spec.taps.size(), device});
}

GpuReport runConv1d(Engine::Impl& engine, const Signal& input, const Conv1DSpec& spec, const RunOptions& options,
                    Signal& output)
{
    validateConv1D(input, spec);
    const size_t frames = input.frames, taps = spec.taps.size();
    const int channels = input.channels;
    Conv1dRun run;
    run.taps = taps;
    run.length = conv1dOutputLength(frames, taps, spec.mode);
    const size_t length = run.length;
    const size_t offset = conv1dOutputOffset(frames, taps, spec.mode);
    const Conv1dVariant& variant = conv1dVariants().resolve(options.variant, Conv1dProblem{taps, engine.info});
    const size_t outSamples = size_t(channels) * length;
    ensureMemoryAvailable(outSamples * sizeof(float), "conv1d output");
    Signal result(channels, length, input.sampleRate);

    Pipeline p;
    p.op = "conv1d";
    p.variant = variant.name;
    p.hostIn = input.data.data();
    p.hostInBytes = input.data.size() * sizeof(float);
    p.hostOut = result.data.data();
    p.hostOutBytes = outSamples * sizeof(float);
    p.kernelBytes = (uint64_t(input.data.size()) + outSamples + taps) * sizeof(float);
    p.kernelFlops = 2.0 * double(taps) * double(outSamples);

    const size_t granule = variant.launch.layout ? variant.launch.layout(run) : 1;

    p.prepare = [&](int requested) {
        run.chunks = planChunks(channels, length, taps, granule, requested);
        const size_t windowSamples = run.chunks.back().inOffset + run.chunks.back().windowSamples();
        run.windows = static_cast<float*>(engine.cache.device("conv1d.windows", windowSamples * sizeof(float)));
        run.out = static_cast<float*>(engine.cache.device("conv1d.out", outSamples * sizeof(float)));
        KL_CUDA_TRY(cudaMemsetAsync(run.windows, 0, windowSamples * sizeof(float), engine.streams[0].get()));
        // Chunk c runs on stream c % streams (runPipeline), so on the first min(streams, chunks).
        const int streamCount = options.endToEnd ? options.streams : 1;
        variant.launch.prepare(spec.taps, run, engine, std::min(streamCount, int(run.chunks.size())));
        return int(run.chunks.size());
    };
    p.upload = [&](const ChunkContext& c) {
        const Conv1dChunk& k = run.chunks[size_t(c.chunk)];
        // Window sample q of each row is signal sample q + shift; only [0, frames) is copied, the rest stays zero.
        const long long shift = static_cast<long long>(offset + k.begin) - static_cast<long long>(taps - 1);
        const long long first = std::max(0LL, -shift);
        const long long last = std::min(static_cast<long long>(k.inPitch), static_cast<long long>(frames) - shift);
        if (last <= first) return size_t(0);
        const size_t width = size_t(last - first) * sizeof(float);
        const float* src = reinterpret_cast<const float*>(c.hostIn) + size_t(k.row0) * frames + size_t(shift + first);
        c.toDevice(run.windows + k.inOffset + first, src,
                   CopyRegion{width, size_t(k.rows), k.inPitch * sizeof(float), frames * sizeof(float)});
        return width * size_t(k.rows);
    };
    p.compute = [&](const ChunkContext& c) { variant.launch.compute(run, run.chunks[size_t(c.chunk)], c.stream); };
    p.download = [&](const ChunkContext& c) {
        const Conv1dChunk& k = run.chunks[size_t(c.chunk)];
        const size_t first = size_t(k.row0) * length + k.begin, width = k.count * sizeof(float);
        c.toHost(c.hostOut + first * sizeof(float), run.out + first,
                 CopyRegion{width, size_t(k.rows), length * sizeof(float), length * sizeof(float)});
        return width * size_t(k.rows);
    };
    // The taps' __constant__ copy is one per device for the whole process: held until the last kernel.
    static std::mutex constantTapsMutex;
    std::unique_lock<std::mutex> constantTaps(constantTapsMutex, std::defer_lock);
    if (variant.launch.constantTaps) constantTaps.lock();
    GpuReport report = runPipeline(engine, p, options);
    output = std::move(result);
    return report;
}

} // namespace kl::gpu
