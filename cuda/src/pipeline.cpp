#include "pipeline.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"

#include <nvtx3/nvtx3.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

namespace kl::gpu {

namespace {

struct KernelLabDomain {
    static constexpr char const* name{"KernelLab"};
};
using Range = nvtx3::scoped_range_in<KernelLabDomain>;

constexpr int kStages = 3;

/// Start/end events of every stage of every chunk, plus the run's start event.
struct RunEvents {
    Event start;
    std::vector<Event> marks;  // [chunk][stage][begin/end]
    explicit RunEvents(int chunks) : marks(size_t(chunks) * kStages * 2) {}
    Event& begin(int chunk, Stage s) { return marks[(size_t(chunk) * kStages + int(s)) * 2]; }
    Event& end(int chunk, Stage s) { return marks[(size_t(chunk) * kStages + int(s)) * 2 + 1]; }
};

struct Repetition {
    double h2d = 0, kernel = 0, d2h = 0, total = 0;
    std::vector<TimelineEntry> timeline;
};

/// Throws kl::Cancelled once `cancel` is set, after the work already queued has finished: the
/// device is then idle with no error pending and the cached buffers are free for the next run.
void stopIfCancelled(const Engine::Impl& engine, const std::atomic<bool>* cancel)
{
    if (!cancel || !cancel->load(std::memory_order_relaxed)) return;
    for (const Stream& stream : engine.streams) stream.synchronize();
    throw Cancelled();
}

/// How many chunks a run asks its op for, and why.
struct ChunkPlan {
    int requested = 1;
    std::string why;
};

constexpr int kChunksPerStream = 4;

ChunkPlan planChunks(const Pipeline& p, const RunOptions& options)
{
    if (!options.endToEnd) return {1, "kernel-only: one chunk"};
    const int streams = options.streams;
    if (streams == 1) return {1, "one stream: one chunk"};
    const int perStreams = kChunksPerStream * streams;
    const uint64_t bytes = uint64_t(p.hostInBytes) + p.hostOutBytes;
    const uint64_t floor = options.minChunkBytes == 0 ? 0 : std::max(options.minChunkBytes, p.minChunkBytes);
    if (floor == 0 || bytes / floor >= uint64_t(perStreams))
        return {perStreams, std::to_string(kChunksPerStream) + " per stream"};
    const int byData = int(std::max<uint64_t>(1, bytes / floor));
    return {byData, formatBytes(bytes) + " in and out: chunks of at least " + formatBytes(floor) +
                        (floor > options.minChunkBytes ? ", below which " + p.op + "'s fixed cost per launch outweighs "
                                                                                   "what a chunk overlaps"
                                                       : ", below which a chunk's host calls outweigh its copy")};
}

/// Where the stages read and write on the host: the caller's memory, or pinned staging.
struct HostSide {
    const std::byte* in = nullptr;
    std::byte* out = nullptr;
    bool pinned = false;
};

HostSide stageHost(Engine::Impl& engine, const Pipeline& p, HostMemory memory)
{
    HostSide host{static_cast<const std::byte*>(p.hostIn), static_cast<std::byte*>(p.hostOut), false};
    if (memory == HostMemory::Pinned) {
        auto* in = static_cast<std::byte*>(engine.cache.pinned("pipeline.in", p.hostInBytes));
        if (p.hostInBytes) std::memcpy(in, p.hostIn, p.hostInBytes);
        host = {in, static_cast<std::byte*>(engine.cache.pinned("pipeline.out", p.hostOutBytes)), true};
    }
    return host;
}

/// Touches every page of the caller's output before the first repetition, in pieces with the
/// cancel flag checked between them: a fresh 256 MB output takes ~160 ms to first-touch on the
/// H200's host, which inside one pageable copy could neither be timed apart nor cancelled.
void touchOutput(const Engine::Impl& engine, const Pipeline& p, const std::atomic<bool>* cancel)
{
    constexpr size_t kPiece = size_t(16) << 20;
    auto* out = static_cast<std::byte*>(p.hostOut);
    for (size_t offset = 0; offset < p.hostOutBytes; offset += kPiece) {
        stopIfCancelled(engine, cancel);
        std::memset(out + offset, 0, std::min(kPiece, p.hostOutBytes - offset));
    }
}

Repetition runEndToEnd(Engine::Impl& engine, Pipeline& p, const HostSide& host, int chunks, int streamCount,
                       const std::atomic<bool>* cancel, RunEvents& ev, uint64_t& bytesUp, uint64_t& bytesDown)
{
    const auto& streams = engine.streams;
    const cudaStream_t first = streams[0].get();
    if (p.resetOutput) p.resetOutput(first);
    ev.start.record(first);
    for (int s = 1; s < streamCount; ++s) KL_CUDA_TRY(cudaStreamWaitEvent(streams[s].get(), ev.start.get(), 0));

    bytesUp = bytesDown = 0;
    std::vector<ChunkContext> contexts(static_cast<size_t>(chunks));
    for (int c = 0; c < chunks; ++c) {
        // Checked before every stage: a pageable copy returns only once done, so with one stream
        // (one chunk) a cancel waits for about one stage, not a whole repetition.
        stopIfCancelled(engine, cancel);
        ChunkContext& ctx = contexts[size_t(c)];
        ctx = {c, chunks, streams[size_t(c % streamCount)].get(), host.in, host.out};
        {
            Range r{("h2d " + p.op).c_str()};
            ev.begin(c, Stage::H2D).record(ctx.stream);
            bytesUp += p.upload(ctx);
            ev.end(c, Stage::H2D).record(ctx.stream);
        }
        stopIfCancelled(engine, cancel);
        {
            Range r{("kernel " + p.op + " " + p.variant).c_str()};
            ev.begin(c, Stage::Kernel).record(ctx.stream);
            p.compute(ctx);
            ev.end(c, Stage::Kernel).record(ctx.stream);
        }
        if (p.download) {
            stopIfCancelled(engine, cancel);
            Range r{("d2h " + p.op).c_str()};
            ev.begin(c, Stage::D2H).record(ctx.stream);
            bytesDown += p.download(ctx);
            ev.end(c, Stage::D2H).record(ctx.stream);
        }
    }
    if (p.downloadAfterAll) {
        for (int c = 0; c < chunks; ++c) KL_CUDA_TRY(cudaStreamWaitEvent(first, ev.end(c, Stage::Kernel).get(), 0));
        Range r{("d2h " + p.op).c_str()};
        const ChunkContext ctx{chunks - 1, chunks, first, host.in, host.out};
        ev.begin(chunks - 1, Stage::D2H).record(first);
        bytesDown += p.downloadAfterAll(ctx);
        ev.end(chunks - 1, Stage::D2H).record(first);
    }
    KL_CUDA_TRY(cudaDeviceSynchronize());

    Repetition rep;
    double last = 0;
    for (int c = 0; c < chunks; ++c) {
        for (Stage s : {Stage::H2D, Stage::Kernel, Stage::D2H}) {
            if (s == Stage::D2H && !p.download && c != chunks - 1) continue;
            const double b = ev.begin(c, s).millisecondsSince(ev.start);
            const double e = ev.end(c, s).millisecondsSince(ev.start);
            (s == Stage::H2D ? rep.h2d : s == Stage::Kernel ? rep.kernel : rep.d2h) += e - b;
            const int stream = (s == Stage::D2H && !p.download) ? 0 : c % streamCount;
            rep.timeline.push_back({stream, c, s, b, e});
            last = std::max(last, e);
        }
    }
    rep.total = last;
    return rep;
}

double runKernelOnly(Engine::Impl& engine, Pipeline& p, const ChunkContext& ctx, RunEvents& ev)
{
    if (!engine.gate) engine.gate = std::make_unique<StreamGate>();
    engine.gate->hold(ctx.stream);  // so the events bracket the kernel, not its launch
    if (p.resetOutput) p.resetOutput(ctx.stream);
    Range r{("kernel " + p.op + " " + p.variant).c_str()};
    ev.begin(0, Stage::Kernel).record(ctx.stream);
    p.compute(ctx);
    ev.end(0, Stage::Kernel).record(ctx.stream);
    engine.gate->release();
    engine.streams[0].synchronize();
    if (engine.gate->timedOut())
        throw CudaError("kernel-only timing of " + p.op + " " + p.variant +
                            ": the kernel stage blocked the host, so the stream gate timed out", 0);
    return ev.end(0, Stage::Kernel).millisecondsSince(ev.begin(0, Stage::Kernel));
}

} // namespace

int RowStrips::split(int requested, int granule)
{
    const int perChunk = std::max(1, (rows_ + requested - 1) / requested);
    perChunk_ = (perChunk + granule - 1) / granule * granule;
    return std::max(1, (rows_ + perChunk_ - 1) / perChunk_);
}

std::pair<int, int> RowStrips::operator()(int chunk) const
{
    return {std::min(rows_, chunk * perChunk_), std::min(rows_, (chunk + 1) * perChunk_)};
}

size_t uploadRows(const ChunkContext& ctx, const RowStrips& strips, std::byte* device, size_t rowBytes)
{
    const auto [r0, r1] = strips(ctx.chunk);
    const size_t offset = size_t(r0) * rowBytes, n = size_t(r1 - r0) * rowBytes;
    KL_CUDA_TRY(cudaMemcpyAsync(device + offset, ctx.hostIn + offset, n, cudaMemcpyHostToDevice, ctx.stream));
    return n;
}

GpuReport runPipeline(Engine::Impl& engine, Pipeline& p, const RunOptions& options)
{
    validateRunOptions(options);
    stopIfCancelled(engine, options.cancel);
    engine.activate();
    const int streamCount = options.endToEnd ? options.streams : 1;
    engine.ensureStreams(streamCount);
    const ChunkPlan plan = planChunks(p, options);
    const int chunks = p.prepare(plan.requested);
    const HostSide host = stageHost(engine, p, options.memory);
    if (!host.pinned) touchOutput(engine, p, options.cancel);

    GpuReport report;
    report.op = p.op;
    report.variant = p.variant;
    report.device = engine.info.name;
    report.memory = options.memory;
    report.streams = streamCount;
    report.chunks = chunks;
    report.chunking = chunks == plan.requested ? plan.why : std::to_string(chunks) + " as the op divides its work (" +
                                                                std::to_string(plan.requested) + " asked: " + plan.why + ")";
    report.kernelBytes = p.kernelBytes;
    report.kernelFlops = p.kernelFlops;

    RunEvents events(chunks);
    std::vector<double> h2d, kernel, d2h, total;
    if (options.endToEnd) {
        for (int i = 0; i < options.warmup + options.repetitions; ++i) {
            uint64_t up = 0, down = 0;
            Repetition rep = runEndToEnd(engine, p, host, chunks, streamCount, options.cancel, events, up, down);
            if (i < options.warmup) continue;
            h2d.push_back(rep.h2d);
            kernel.push_back(rep.kernel);
            d2h.push_back(rep.d2h);
            total.push_back(rep.total);
            report.timeline = std::move(rep.timeline);
            report.bytesH2D = up;
            report.bytesD2H = down;
        }
    } else {
        const ChunkContext ctx{0, 1, engine.streams[0].get(), host.in, host.out};
        p.upload(ctx);
        // One ungated run first: with lazy module loading a kernel's first launch (cuFFT's too)
        // waits for the device to go idle, which it never would behind the gate.
        p.compute(ctx);
        engine.streams[0].synchronize();
        for (int i = 0; i < options.warmup + options.repetitions; ++i) {
            stopIfCancelled(engine, options.cancel);
            const double ms = runKernelOnly(engine, p, ctx, events);
            if (i >= options.warmup) kernel.push_back(ms);
        }
        if (p.download) p.download(ctx);
        if (p.downloadAfterAll) p.downloadAfterAll(ctx);
        engine.streams[0].synchronize();
    }
    report.h2d = summarize(h2d);
    report.kernel = summarize(kernel);
    report.d2h = summarize(d2h);
    report.total = summarize(total);
    if (host.pinned && p.hostOutBytes) std::memcpy(p.hostOut, host.out, p.hostOutBytes);
    return report;
}

} // namespace kl::gpu
