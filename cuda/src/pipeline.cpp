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

/// The run's start event, start/end events of every stage of every chunk, and the untimed
/// events that fork the run onto its streams and join them back: the engine's, reused from run
/// to run, so that a graph captured with them can be updated in place by the next capture.
/// Captured into a graph, only the start and the stage ends are recorded (as event-record
/// nodes): a stage there begins when the one before it on its stream ends, so its begin event
/// would add a node and tell nothing. Stream launches record both: a stage may begin later
/// than that, when the host gets to queue it.
class RunEvents {
public:
    RunEvents(Engine::Impl& engine, int chunks, int streams)
    {
        const auto grow = [](std::vector<Event>& events, size_t count, unsigned flags) {
            while (events.size() < count) events.emplace_back(flags);
            return events.data();
        };
        timing_ = grow(engine.pipelineTiming, 1 + size_t(chunks) * kStages * 2, cudaEventDefault);
        order_ = grow(engine.pipelineOrder, 1 + size_t(streams), cudaEventDisableTiming);
    }

    bool capturing = false;  ///< recording into a graph

    Event& start() { return timing_[0]; }
    Event& begin(int chunk, Stage s) { return timing_[1 + (size_t(chunk) * kStages + int(s)) * 2]; }
    Event& end(int chunk, Stage s) { return timing_[2 + (size_t(chunk) * kStages + int(s)) * 2]; }
    Event& fork() { return order_[0]; }
    Event& join(int stream) { return order_[1 + size_t(stream)]; }

    void markStart(cudaStream_t stream) { mark(start(), stream); }
    void markBegin(int chunk, Stage s, cudaStream_t stream)
    {
        if (!capturing) begin(chunk, s).record(stream);
    }
    void markEnd(int chunk, Stage s, cudaStream_t stream) { mark(end(chunk, s), stream); }

private:
    void mark(Event& event, cudaStream_t stream) const
    {
        if (capturing) KL_CUDA_TRY(cudaEventRecordWithFlags(event.get(), stream, cudaEventRecordExternal));
        else event.record(stream);
    }

    Event* timing_ = nullptr;
    Event* order_ = nullptr;
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
    ChunkPlan plan{perStreams, std::to_string(kChunksPerStream) + " per stream"};
    if (floor != 0 && bytes / floor < uint64_t(perStreams))
        plan = {int(std::max<uint64_t>(1, bytes / floor)),
                formatBytes(bytes) + " in and out: chunks of at least " + formatBytes(floor) +
                    (floor > options.minChunkBytes
                         ? ", below which " + p.op + "'s fixed cost per launch outweighs what a chunk overlaps"
                         : ", below which a chunk's host calls outweigh its copy")};
    if (floor != 0 && p.maxChunks > 0 && p.maxChunks < plan.requested) plan = {p.maxChunks, p.maxChunksWhy};
    return plan;
}

/// Where the stages read and write on the host: the caller's memory, or pinned staging.
struct HostSide {
    const std::byte* in = nullptr;
    std::byte* out = nullptr;
    bool pinned = false;
    StagingRing* staging = nullptr;
};

HostSide stageHost(Engine::Impl& engine, const Pipeline& p, HostMemory memory)
{
    HostSide host{static_cast<const std::byte*>(p.hostIn), static_cast<std::byte*>(p.hostOut), false, nullptr};
    if (memory == HostMemory::Pinned) {
        auto* in = static_cast<std::byte*>(engine.cache.pinned("pipeline.in", p.hostInBytes));
        if (p.hostInBytes) std::memcpy(in, p.hostIn, p.hostInBytes);
        host = {in, static_cast<std::byte*>(engine.cache.pinned("pipeline.out", p.hostOutBytes)), true, nullptr};
    } else if (memory == HostMemory::Staged) {
        if (!engine.staging) engine.staging = std::make_unique<StagingRing>();
        host.staging = engine.staging.get();
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

/// Makes stream 0 wait for everything queued so far on the other streams.
void joinStreams(const std::vector<Stream>& streams, int streamCount, RunEvents& ev)
{
    for (int s = 1; s < streamCount; ++s) {
        ev.join(s).record(streams[size_t(s)].get());
        KL_CUDA_TRY(cudaStreamWaitEvent(streams[0].get(), ev.join(s).get(), 0));
    }
}

/// Queues one end-to-end repetition on `streamCount` streams (or, when ev.capturing, records it
/// into the graph being captured on stream 0); returns the bytes its copies move up and down.
std::pair<uint64_t, uint64_t> enqueueRepetition(Engine::Impl& engine, Pipeline& p, const HostSide& host, int chunks,
                                                int streamCount, const std::atomic<bool>* cancel, RunEvents& ev)
{
    const auto& streams = engine.streams;
    const cudaStream_t first = streams[0].get();
    if (p.resetOutput) p.resetOutput(first);
    ev.markStart(first);
    ev.fork().record(first);
    for (int s = 1; s < streamCount; ++s) KL_CUDA_TRY(cudaStreamWaitEvent(streams[s].get(), ev.fork().get(), 0));

    uint64_t up = 0, down = 0;
    for (int c = 0; c < chunks; ++c) {
        // Checked before every stage: a pageable copy returns only once done, so with one stream
        // (one chunk) a cancel waits for about one stage, not a whole repetition.
        stopIfCancelled(engine, cancel);
        const ChunkContext ctx{c, chunks, streams[size_t(c % streamCount)].get(), host.in, host.out, host.staging};
        {
            Range r{("h2d " + p.op).c_str()};
            ev.markBegin(c, Stage::H2D, ctx.stream);
            up += p.upload(ctx);
            ev.markEnd(c, Stage::H2D, ctx.stream);
        }
        stopIfCancelled(engine, cancel);
        {
            Range r{("kernel " + p.op + " " + p.variant).c_str()};
            ev.markBegin(c, Stage::Kernel, ctx.stream);
            p.compute(ctx);
            ev.markEnd(c, Stage::Kernel, ctx.stream);
        }
        if (p.download) {
            stopIfCancelled(engine, cancel);
            Range r{("d2h " + p.op).c_str()};
            ev.markBegin(c, Stage::D2H, ctx.stream);
            down += p.download(ctx);
            ev.markEnd(c, Stage::D2H, ctx.stream);
        }
    }
    joinStreams(streams, streamCount, ev);  // every chunk's kernel, before downloadAfterAll
    if (p.downloadAfterAll) {
        Range r{("d2h " + p.op).c_str()};
        const ChunkContext ctx{chunks - 1, chunks, first, host.in, host.out, host.staging};
        ev.markBegin(chunks - 1, Stage::D2H, first);
        down += p.downloadAfterAll(ctx);
        ev.markEnd(chunks - 1, Stage::D2H, first);
    }
    return {up, down};
}

/// The stage times and timeline of the repetition whose events have all completed. `graph`: the
/// begin events were not recorded, and a stage began when the work before it on its stream ended.
Repetition readRepetition(const Pipeline& p, RunEvents& ev, int chunks, int streamCount, bool graph)
{
    Repetition rep;
    std::vector<double> streamFree(size_t(streamCount), 0.0);  // when each stream's last stage ended
    double last = 0;
    for (int c = 0; c < chunks; ++c) {
        for (Stage s : {Stage::H2D, Stage::Kernel, Stage::D2H}) {
            const bool afterAll = s == Stage::D2H && !p.download;
            if (afterAll && c != chunks - 1) continue;
            const int stream = afterAll ? 0 : c % streamCount;
            const double e = ev.end(c, s).millisecondsSince(ev.start());
            // downloadAfterAll waits for every stream: it begins when the last of them is done.
            const double b = !graph ? ev.begin(c, s).millisecondsSince(ev.start())
                             : afterAll ? *std::max_element(streamFree.begin(), streamFree.end())
                                        : streamFree[size_t(stream)];
            streamFree[size_t(stream)] = e;
            (s == Stage::H2D ? rep.h2d : s == Stage::Kernel ? rep.kernel : rep.d2h) += e - b;
            rep.timeline.push_back({stream, c, s, b, e});
            last = std::max(last, e);
        }
    }
    rep.total = last;
    return rep;
}

/// Why a run's repetitions are stream launches rather than a graph; empty when a graph can run them.
std::string whyNoGraph(const RunOptions& options, int chunks)
{
    if (!options.endToEnd) return "kernel-only timing queues each kernel behind a gate";
    if (!options.graph) return "graphs are off for this run";
    if (options.memory == HostMemory::Pageable) return "pageable copies cannot be captured into a graph";
    if (options.memory == HostMemory::Staged) return "staged copies need the host between their pieces";
    // A graph pays for many calls per repetition; a single chunk's few calls ran slower as one
    // (docs/performance.md, "Graph launches").
    if (chunks == 1) return "one chunk, whose few calls run faster on a stream than as a graph";
    return {};
}

/// Captures one repetition into engine.pipelineGraph. A run of the same op, variant, sizes,
/// chunks and streams as the last one captured has the same nodes, and the last graph is updated
/// in place with the new one's parameters (pointers, taps); any other is instantiated anew (an
/// update would fail on the CUDA runtime's constraints: other kernels, other copy shapes).
/// Returns "instantiated" or "updated in place".
std::string captureRepetition(Engine::Impl& engine, Pipeline& p, const HostSide& host, int chunks, int streamCount,
                              RunEvents& ev, std::pair<uint64_t, uint64_t>& bytes)
{
    const cudaStream_t first = engine.streams[0].get();
    KL_CUDA_TRY(cudaStreamBeginCapture(first, cudaStreamCaptureModeThreadLocal));
    ev.capturing = true;
    cudaGraph_t captured = nullptr;
    try {
        bytes = enqueueRepetition(engine, p, host, chunks, streamCount, nullptr, ev);
    } catch (...) {
        ev.capturing = false;
        cudaStreamEndCapture(first, &captured);  // ends the (invalidated) capture; the error is the one thrown
        Graph discard(captured);
        throw;
    }
    ev.capturing = false;
    KL_CUDA_TRY(cudaStreamEndCapture(first, &captured));
    const Graph graph(captured);
    const std::string shape = p.op + " " + p.variant + " " + std::to_string(p.hostInBytes) + " " +
                              std::to_string(p.hostOutBytes) + " " + std::to_string(chunks) + " " +
                              std::to_string(streamCount);
    if (engine.pipelineGraph && shape == engine.pipelineGraphShape) {
        cudaGraphExecUpdateResultInfo result{};
        if (cudaGraphExecUpdate(engine.pipelineGraph.get(), graph.get(), &result) == cudaSuccess) return "updated in place";
        (void)cudaGetLastError();  // the failed update's error is not sticky: clear it and rebuild
    }
    engine.pipelineGraph = GraphExec(graph);
    engine.pipelineGraphShape = shape;
    return "instantiated";
}

double runKernelOnly(Engine::Impl& engine, Pipeline& p, const ChunkContext& ctx, RunEvents& ev)
{
    if (!engine.gate) engine.gate = std::make_unique<StreamGate>();
    engine.gate->hold(ctx.stream);  // so the events bracket the kernel, not its launch
    if (p.resetOutput) p.resetOutput(ctx.stream);
    Range r{("kernel " + p.op + " " + p.variant).c_str()};
    ev.markBegin(0, Stage::Kernel, ctx.stream);
    p.compute(ctx);
    ev.markEnd(0, Stage::Kernel, ctx.stream);
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

void ChunkContext::toDevice(void* device, const void* host, const CopyRegion& region) const
{
    auto* dst = static_cast<std::byte*>(device);
    const auto* src = static_cast<const std::byte*>(host);
    if (staging) staging->toDevice(dst, src, region, stream);
    else copyAsync(dst, src, region, cudaMemcpyHostToDevice, stream);
}

void ChunkContext::toHost(void* host, const void* device, const CopyRegion& region) const
{
    auto* dst = static_cast<std::byte*>(host);
    const auto* src = static_cast<const std::byte*>(device);
    if (staging) staging->toHost(dst, src, region, stream);
    else copyAsync(dst, src, region, cudaMemcpyDeviceToHost, stream);
}

size_t uploadRows(const ChunkContext& ctx, const RowStrips& strips, std::byte* device, size_t rowBytes)
{
    const auto [r0, r1] = strips(ctx.chunk);
    const size_t offset = size_t(r0) * rowBytes, n = size_t(r1 - r0) * rowBytes;
    ctx.toDevice(device + offset, ctx.hostIn + offset, CopyRegion{n, 1, n, n});
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

    const std::string noGraph = whyNoGraph(options, chunks);
    report.graph = noGraph.empty();
    report.launch = "streams: " + noGraph;

    // Streams beyond the chunk count would only add fork and join work.
    const int streamsUsed = std::min(streamCount, chunks);
    RunEvents events(engine, chunks, streamsUsed);
    std::vector<double> h2d, kernel, d2h, total;
    if (options.endToEnd) {
        std::pair<uint64_t, uint64_t> bytes;
        bool captured = false;
        for (int i = 0; i < options.warmup + options.repetitions; ++i) {
            // The first warm-up runs as stream launches: it loads the kernels' modules (lazily
            // loaded) before a capture, which records launches without running them.
            const bool viaGraph = report.graph && (i > 0 || options.warmup == 0);
            if (viaGraph) {
                if (!captured)
                    report.launch = "graph, " + captureRepetition(engine, p, host, chunks, streamsUsed, events, bytes);
                captured = true;
                stopIfCancelled(engine, options.cancel);
                engine.pipelineGraph.launch(engine.streams[0].get());
            } else {
                bytes = enqueueRepetition(engine, p, host, chunks, streamsUsed, options.cancel, events);
            }
            KL_CUDA_TRY(cudaDeviceSynchronize());
            if (i < options.warmup) continue;
            Repetition rep = readRepetition(p, events, chunks, streamsUsed, viaGraph);
            h2d.push_back(rep.h2d);
            kernel.push_back(rep.kernel);
            d2h.push_back(rep.d2h);
            total.push_back(rep.total);
            report.timeline = std::move(rep.timeline);
            report.bytesH2D = bytes.first;
            report.bytesD2H = bytes.second;
        }
    } else {
        const ChunkContext ctx{0, 1, engine.streams[0].get(), host.in, host.out, host.staging};
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
