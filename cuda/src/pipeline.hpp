#pragma once
// The chunked, multi-stream H2D -> kernel -> D2H pipeline every op runs through,
// and the event timings it reports.
//
// End-to-end (options.endToEnd): the op splits its work into chunks (1 for one
// stream; otherwise 4 per stream, but none under the larger of RunOptions::minChunkBytes
// and Pipeline::minChunkBytes of input plus output); chunk c runs H2D, kernel, D2H on stream
// c % streams, so copies of one chunk overlap kernels of another. Each stage of
// each chunk is bracketed by CUDA events; per repetition the report takes
//   h2d / kernel / d2h = the sum of that stage's durations over the chunks,
//   total = first event to last event (wall time on the device).
// Kernel-only: one chunk; the input is uploaded once and the kernel stage run once,
// untimed (this loads its modules); each repetition then times the kernel stage
// alone, queued behind a StreamGate so that the host's launch latency stays out of
// the interval.
// Pinned: the input is staged once into pinned memory before timing (as an app
// that keeps its data pinned would have it) and results land in pinned memory,
// copied out after timing. Pageable: copies go straight from/to the caller's memory.
// Staged: copies go through the engine's StagingRing, inside the timed stages.
// Graph (pinned, end to end, several chunks, RunOptions::graph): after the first warm-up, one repetition's
// calls are captured as a CUDA graph (timing events as event-record nodes) and each further
// repetition is one cudaGraphLaunch; the engine keeps the instantiated graph and updates it in
// place when the next run's capture has the same nodes.
#include "engine_internal.hpp"
#include "staging.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <string>
#include <utility>

namespace kl::gpu {

struct ChunkContext {
    int chunk = 0;
    int chunks = 1;
    cudaStream_t stream = nullptr;
    const std::byte* hostIn = nullptr;  ///< the whole input (pinned staging or the caller's)
    std::byte* hostOut = nullptr;       ///< the whole output
    StagingRing* staging = nullptr;     ///< set for staged host memory: copies go through it

    /// Copies `region` between host and device on the chunk's stream, straight or staged; every
    /// host copy of an op goes through these. toHost returns once the copy is queued, or, staged,
    /// once the host memory holds the data.
    void toDevice(void* device, const void* host, const CopyRegion& region) const;
    void toHost(void* host, const void* device, const CopyRegion& region) const;
};

struct Pipeline {
    std::string op, variant;
    const void* hostIn = nullptr;
    size_t hostInBytes = 0;
    void* hostOut = nullptr;
    size_t hostOutBytes = 0;
    uint64_t kernelBytes = 0;  ///< device-memory bytes the kernel stage must move, whole input
    /// The op's own floor on a chunk's input plus output bytes, where its kernels have a fixed
    /// cost per launch; the larger of this and RunOptions::minChunkBytes applies (unless that is 0).
    uint64_t minChunkBytes = 0;
    /// The op's own ceiling on the chunk count (0: none), and why; like minChunkBytes, waived when
    /// RunOptions::minChunkBytes is 0.
    int maxChunks = 0;
    std::string maxChunksWhy;
    double kernelFlops = 0;

    /// Splits the work into at most `requested` chunks and allocates device buffers; returns the chunk count.
    std::function<int(int requested)> prepare;
    /// Optional: runs on stream 0 before each repetition's first event (e.g. zero a histogram).
    std::function<void(cudaStream_t)> resetOutput;
    /// Enqueue one chunk's stage; upload/download return the bytes they copy.
    std::function<size_t(const ChunkContext&)> upload;
    std::function<void(const ChunkContext&)> compute;
    std::function<size_t(const ChunkContext&)> download;
    /// Set instead of `download` when the output is only complete after every chunk's kernel
    /// (histogram: chunks add into one device histogram); runs once on stream 0.
    std::function<size_t(const ChunkContext&)> downloadAfterAll;
};

/// Chunks as strips of whole rows: strip c covers rows [first, second) of `rows`.
class RowStrips {
public:
    explicit RowStrips(int rows) : rows_(rows), perChunk_(rows) {}
    /// Splits into at most `requested` strips whose heights are multiples of `granule`
    /// (the last one may be shorter); returns the strip count.
    int split(int requested, int granule = 1);
    [[nodiscard]] std::pair<int, int> operator()(int chunk) const;

private:
    int rows_, perChunk_;
};

/// Copies the rows of chunk `ctx.chunk` (each `rowBytes`, contiguous on host and device)
/// from the host input to the same place in `device`; returns the bytes copied.
size_t uploadRows(const ChunkContext& ctx, const RowStrips& strips, std::byte* device, size_t rowBytes);

/// Runs the pipeline `options.warmup` times untimed, then `options.repetitions` times, and
/// leaves the result in pipeline.hostOut. Checks `options.cancel` before each repetition and
/// between the chunks of one; when it is set, waits for the queued work and throws kl::Cancelled.
GpuReport runPipeline(Engine::Impl& engine, Pipeline& pipeline, const RunOptions& options);

} // namespace kl::gpu
