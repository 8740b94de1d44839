#pragma once
// RAII owners for CUDA resources. All are move-only; destructors never throw and stay quiet
// when they run after the CUDA runtime has begun unloading (KL_CUDA_TRY_NOTHROW).
//   DevicePtr<T> / PinnedPtr<T>  unique_ptr with cudaFree / cudaFreeHost deleters
//   Stream, Event, FftPlan       own a cudaStream_t, cudaEvent_t, cufftHandle
//   Graph, GraphExec             own a captured cudaGraph_t and its instantiation
//   BufferCache                  device and pinned buffers kept between runs, by role
#include "cuda_check.hpp"

#include <cuda_runtime.h>
#include <cufft.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace kl::gpu {

struct DeviceDeleter {
    void operator()(void* p) const noexcept { KL_CUDA_TRY_NOTHROW(cudaFree(p)); }
};
struct PinnedDeleter {
    void operator()(void* p) const noexcept { KL_CUDA_TRY_NOTHROW(cudaFreeHost(p)); }
};
template <typename T> using DevicePtr = std::unique_ptr<T[], DeviceDeleter>;
template <typename T> using PinnedPtr = std::unique_ptr<T[], PinnedDeleter>;

template <typename T> [[nodiscard]] DevicePtr<T> allocateDevice(size_t count)
{
    void* p = nullptr;
    KL_CUDA_TRY(cudaMalloc(&p, count * sizeof(T)));
    return DevicePtr<T>(static_cast<T*>(p));
}
template <typename T> [[nodiscard]] PinnedPtr<T> allocatePinned(size_t count)
{
    void* p = nullptr;
    KL_CUDA_TRY(cudaMallocHost(&p, count * sizeof(T)));
    return PinnedPtr<T>(static_cast<T*>(p));
}

/// A non-blocking stream (no implicit sync with the legacy default stream).
class Stream {
public:
    Stream() { KL_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
    ~Stream() { if (stream_) KL_CUDA_TRY_NOTHROW(cudaStreamDestroy(stream_)); }
    Stream(Stream&& o) noexcept : stream_(std::exchange(o.stream_, nullptr)) {}
    Stream& operator=(Stream&& o) noexcept { std::swap(stream_, o.stream_); return *this; }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    [[nodiscard]] cudaStream_t get() const noexcept { return stream_; }
    void synchronize() const { KL_CUDA_TRY(cudaStreamSynchronize(stream_)); }

private:
    cudaStream_t stream_ = nullptr;
};

/// A timing event, or with cudaEventDisableTiming one that only orders work.
class Event {
public:
    explicit Event(unsigned flags = cudaEventDefault) { KL_CUDA_TRY(cudaEventCreateWithFlags(&event_, flags)); }
    ~Event() { if (event_) KL_CUDA_TRY_NOTHROW(cudaEventDestroy(event_)); }
    Event(Event&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
    Event& operator=(Event&& o) noexcept { std::swap(event_, o.event_); return *this; }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;

    [[nodiscard]] cudaEvent_t get() const noexcept { return event_; }
    void record(cudaStream_t stream) { KL_CUDA_TRY(cudaEventRecord(event_, stream)); }
    void synchronize() const { KL_CUDA_TRY(cudaEventSynchronize(event_)); }
    /// Milliseconds from `start` to this event (both recorded and complete).
    [[nodiscard]] float millisecondsSince(const Event& start) const
    {
        float ms = 0;
        KL_CUDA_TRY(cudaEventElapsedTime(&ms, start.event_, event_));
        return ms;
    }

private:
    cudaEvent_t event_ = nullptr;
};

/// A cuFFT plan.
class FftPlan {
public:
    FftPlan() = default;
    explicit FftPlan(cufftHandle handle) : handle_(handle), valid_(true) {}
    ~FftPlan() { if (valid_) KL_CUFFT_TRY_NOTHROW(cufftDestroy(handle_)); }
    FftPlan(FftPlan&& o) noexcept : handle_(o.handle_), valid_(std::exchange(o.valid_, false)) {}
    FftPlan& operator=(FftPlan&& o) noexcept { std::swap(handle_, o.handle_); std::swap(valid_, o.valid_); return *this; }
    FftPlan(const FftPlan&) = delete;
    FftPlan& operator=(const FftPlan&) = delete;

    [[nodiscard]] cufftHandle get() const noexcept { return handle_; }
    [[nodiscard]] bool valid() const noexcept { return valid_; }

private:
    cufftHandle handle_ = 0;
    bool valid_ = false;
};

/// A captured CUDA graph.
class Graph {
public:
    explicit Graph(cudaGraph_t graph = nullptr) noexcept : graph_(graph) {}
    ~Graph() { if (graph_) KL_CUDA_TRY_NOTHROW(cudaGraphDestroy(graph_)); }
    Graph(Graph&& o) noexcept : graph_(std::exchange(o.graph_, nullptr)) {}
    Graph& operator=(Graph&& o) noexcept { std::swap(graph_, o.graph_); return *this; }
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;

    [[nodiscard]] cudaGraph_t get() const noexcept { return graph_; }

private:
    cudaGraph_t graph_ = nullptr;
};

/// An instantiated graph, ready to launch.
class GraphExec {
public:
    GraphExec() = default;
    explicit GraphExec(const Graph& graph) { KL_CUDA_TRY(cudaGraphInstantiate(&exec_, graph.get(), 0)); }
    ~GraphExec() { if (exec_) KL_CUDA_TRY_NOTHROW(cudaGraphExecDestroy(exec_)); }
    GraphExec(GraphExec&& o) noexcept : exec_(std::exchange(o.exec_, nullptr)) {}
    GraphExec& operator=(GraphExec&& o) noexcept { std::swap(exec_, o.exec_); return *this; }
    GraphExec(const GraphExec&) = delete;
    GraphExec& operator=(const GraphExec&) = delete;

    [[nodiscard]] cudaGraphExec_t get() const noexcept { return exec_; }
    explicit operator bool() const noexcept { return exec_ != nullptr; }
    void launch(cudaStream_t stream) const { KL_CUDA_TRY(cudaGraphLaunch(exec_, stream)); }

private:
    cudaGraphExec_t exec_ = nullptr;
};

/// Buffers kept between runs so interactive use does not pay cudaMalloc every
/// time: one buffer per role ("conv2d.in", ...), regrown only when a run needs more.
class BufferCache {
public:
    /// At least `bytes` of device memory for `role`; contents are undefined. Throws kl::OutOfMemory
    /// naming the role and the size when cudaMalloc fails or the device buffers would exceed the limit.
    [[nodiscard]] void* device(const std::string& role, size_t bytes);
    /// Caps the device bytes all roles may hold together (0: no cap), as if the device were that small.
    void setDeviceLimit(uint64_t bytes) noexcept { deviceLimit_ = bytes; }
    [[nodiscard]] uint64_t deviceLimit() const noexcept { return deviceLimit_; }
    /// Device bytes the cached buffers hold now.
    [[nodiscard]] uint64_t deviceBytes() const noexcept;
    /// At least `bytes` of pinned host memory for `role`.
    [[nodiscard]] void* pinned(const std::string& role, size_t bytes);
    /// Frees the buffers of one role.
    void release(const std::string& role) noexcept;
    void clear() noexcept;

private:
    template <typename Ptr> struct Entry { Ptr ptr; size_t bytes = 0; };
    std::map<std::string, Entry<DevicePtr<std::byte>>> device_;
    std::map<std::string, Entry<PinnedPtr<std::byte>>> pinned_;
    uint64_t deviceLimit_ = 0;
};

/// Device image rows (conv2d's, users' kernels', long transposed rows) start on this boundary, a
/// 128-byte line: the widest vector access and the TMA engine's row stride (16 bytes) hold at any
/// width, and no two rows share a 32-byte sector, which two blocks would each write part of.
constexpr size_t kRowAlignment = 128;
inline size_t rowPitch(size_t rowBytes) { return (rowBytes + kRowAlignment - 1) / kRowAlignment * kRowAlignment; }

} // namespace kl::gpu
