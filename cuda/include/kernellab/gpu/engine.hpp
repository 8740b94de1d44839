#pragma once
// The GPU engine: runs the four operations on a CUDA device, computing exactly
// the functions core/ defines, and reports where the time went.
// This header exposes no CUDA types; it is safe to include from any C++ code.
#include "kernellab/conv1d.hpp"
#include "kernellab/conv2d.hpp"
#include "kernellab/histogram.hpp"
#include "kernellab/signal.hpp"
#include "kernellab/timing.hpp"
#include "kernellab/gpu/cuda_error.hpp"

#include <opencv2/core/mat.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kl::gpu {

/// Whether a usable device is present; `reason` is the CUDA runtime's own text when not.
struct GpuStatus {
    bool available = false;
    std::string reason;
};

struct DeviceInfo {
    int index = 0;
    std::string name;
    int computeMajor = 0, computeMinor = 0;
    int multiprocessors = 0;
    uint64_t globalMemoryBytes = 0;
    uint64_t l2CacheBytes = 0;
    uint64_t sharedMemoryPerBlockOptIn = 0;  ///< the most shared memory one block may opt in to
    int smClockKHz = 0, memoryClockKHz = 0, memoryBusWidthBits = 0;
    double theoreticalBandwidthGBs = 0;  ///< 2 * memory clock * bus width (GB = 1e9)
    int driverVersion = 0, runtimeVersion = 0;  ///< e.g. 13000
    int cufftVersion = 0;
    /// The library's device code this GPU runs, as __CUDA_ARCH__ (750, 900, ...; 0: none): the newest
    /// architecture built (CMAKE_CUDA_ARCHITECTURES) at or below the GPU's. A build for sm_75 runs on
    /// an H200 as PTX compiled by the driver, without the sm_80 and sm_90 instructions some
    /// variants need; they do not apply there. Never above the GPU's own, so a variant's check on it
    /// covers the compute capability too.
    int deviceCodeArchitecture = 0;
};

/// Never throws: no device, no driver, or a too-old driver give available = false and the reason.
GpuStatus gpuStatus();
/// Every visible device (empty when gpuStatus() is not available).
std::vector<DeviceInfo> listDevices();

/// The most streams one run may pipeline over (RunOptions::streams is 1..kMaxStreams).
inline constexpr int kMaxStreams = 16;
/// conv2d's compiled kernel sizes: square kernels of these sizes run fully unrolled kernels
/// (shared, tma, the separable ring, integer); other sizes take the general loops.
inline constexpr std::array<int, 5> kConv2dCompiledSizes = {3, 5, 7, 9, 15};

/// Where the host side of a GPU run's copies lives.
///   Pageable: the caller's memory, copied by cudaMemcpyAsync as it is (the driver stages it
///             through its own small pinned buffers on one thread): the teaching baseline.
///   Staged:   the caller's memory, copied through a ring of pinned buffers in pieces, the host's
///             memcpy of each piece (on OpenCV's threads) overlapping the DMA of the one before.
///   Pinned:   the data kept in pinned memory, as an app that allocates it so would have it: the
///             input is copied there before timing and the result out of it after.
enum class HostMemory { Pageable, Staged, Pinned };
inline constexpr std::array<HostMemory, 3> kHostMemories = {HostMemory::Pageable, HostMemory::Staged,
                                                            HostMemory::Pinned};
std::string toString(HostMemory m);  // "pageable", "staged", "pinned"
HostMemory parseHostMemory(const std::string& name);

enum class Stage { H2D, Kernel, D2H };
std::string toString(Stage s);  // "h2d", "kernel", "d2h"

struct RunOptions {
    std::string variant = "auto";        ///< a name from variants(op) or "auto"
    HostMemory memory = HostMemory::Pageable;
    int streams = 1;                     ///< 1 .. kMaxStreams; the input is split into chunks pipelined across them
    /// End to end on several streams: 4 chunks per stream, but none below this many bytes of input
    /// plus output, where a chunk's host calls (copies, launch, events: tens of microseconds)
    /// would outweigh its copy. 0: always 4 per stream (tests of chunk boundaries on small inputs).
    uint64_t minChunkBytes = uint64_t(4) << 20;
    bool endToEnd = true;                ///< false: upload once, time the kernel alone (h2d/d2h/total left 0)
    /// End to end with pinned memory in several chunks: each repetition is one CUDA graph launch
    /// (captured at the start of the run, replayed for every repetition) instead of a call per
    /// copy, kernel and event. Pageable and staged copies are never captured (the host takes part
    /// in them), nor is a single chunk (its few calls ran faster on a stream).
    bool graph = true;
    int repetitions = 10;                ///< timed runs (median/min/max reported)
    int warmup = 2;                      ///< untimed runs before timing
    /// When set and it becomes true, the run stops between repetitions or chunks and throws kl::Cancelled.
    const std::atomic<bool>* cancel = nullptr;
};

/// One stage of one chunk on one stream, times in ms from the start of the run.
struct TimelineEntry {
    int stream = 0;
    int chunk = 0;
    Stage stage = Stage::Kernel;
    double startMs = 0, endMs = 0;
};

/// Registers, shared memory and occupancy of a user kernel at its launch (user_kernel.hpp).
struct KernelResources {
    int registers = 0;
    int staticSharedBytes = 0, dynamicSharedBytes = 0, localBytes = 0;
    int blockThreads = 0;
    int activeBlocksPerSM = 0;  ///< cudaOccupancyMaxActiveBlocksPerMultiprocessor
    double occupancy = 0;       ///< active threads per SM / the SM's maximum
    int gridX = 0, gridY = 0;
};

/// What one run measured. Kernel-only time is `kernel`; end-to-end is `total`
/// (H2D + kernel + D2H, overlapped across streams when streams > 1).
struct GpuReport {
    std::string op;
    std::string variant;       ///< the variant actually used (auto resolved)
    std::string device;
    HostMemory memory = HostMemory::Pageable;
    int streams = 1;
    /// Chunks the work was split into (end to end; 1 kernel-only), and why that many: 4 per
    /// stream, or fewer where the data is too small for chunks to pay, or as the op divides it.
    int chunks = 1;
    std::string chunking;
    /// Whether the repetitions were CUDA graph launches, and how: "graph, instantiated",
    /// "graph, updated in place" (the engine's last graph had the same nodes), or "streams: "
    /// and why not a graph.
    bool graph = false;
    std::string launch;
    TimingStats h2d, kernel, d2h, total;
    std::vector<TimelineEntry> timeline;  ///< of the last timed repetition
    uint64_t bytesH2D = 0, bytesD2H = 0;
    uint64_t kernelBytes = 0;  ///< bytes a kernel must move in device memory (documented per op)
    double kernelFlops = 0;    ///< 0 where FLOP/s means nothing (histogram, transpose)
    std::optional<KernelResources> resources;  ///< user kernels: registers, shared memory, occupancy
    [[nodiscard]] double kernelGBs() const;      ///< kernelBytes / median kernel time, GB = 1e9
    [[nodiscard]] double kernelGFlops() const;   ///< 0 when kernelFlops is 0
    [[nodiscard]] double endToEndGBs() const;    ///< (bytesH2D + bytesD2H) / median total time
};

/// The shortest end-to-end time `chunks` chunks on several streams can reach, from a one-stream
/// run's stage times (the copies and the kernel each at the rate they ran alone): the slowest
/// stage must run whole, and the other two for one chunk before it starts and after it ends,
///   max(h2d, kernel, d2h) + (h2d + kernel + d2h - max) / chunks   (stage medians, ms).
/// H2D and D2H use separate copy engines, so they may overlap each other too, but they share the
/// link: given `bothWaysGBs` (Engine::linkBothWaysGBs) the limit is at least the time the link
/// takes to carry both directions' bytes at once, (bytesH2D + bytesD2H) / bothWaysGBs.
/// 0 without stages.
double overlapLimitMs(const GpuReport& oneStream, int chunks, double bothWaysGBs = 0);

/// One GPU variant of an op, as its registry entry describes it.
struct VariantInfo {
    std::string name;         ///< as RunOptions::variant takes it
    std::string description;  ///< one line (GUI tooltips, CLI help)
};
/// The variants of an op ("conv2d", "conv1d", "histogram", "transpose") in teaching order, "auto"
/// excluded; an unknown op is a kl::InvalidArgument.
std::vector<VariantInfo> variantInfo(const std::string& op);
/// Their names.
std::vector<std::string> variants(const std::string& op);

/// Why `variant` (a name from variants() or "auto") cannot run this problem on `device`; empty when
/// it can, as "auto" always can. An unknown variant or an input the op rejects is a kl::InvalidArgument.
/// No GPU is needed: the answer depends on the device's description only.
std::string whyNotApplicable(const std::string& variant, const cv::Mat& input, const Conv2DSpec& spec,
                             const DeviceInfo& device);
/// The conv2d variant a run of `variant` uses: auto's choice for this problem on `device`, or the
/// named one; a variant that does not apply is a kl::InvalidArgument, as in a run. No GPU needed.
std::string resolvedVariant(const std::string& variant, const cv::Mat& input, const Conv2DSpec& spec,
                            const DeviceInfo& device);
std::string whyNotApplicable(const std::string& variant, const Signal& input, const Conv1DSpec& spec,
                             const DeviceInfo& device);
std::string whyNotApplicable(const std::string& variant, const cv::Mat& input, const HistogramSpec& spec,
                             const DeviceInfo& device);
/// transpose of an image, or of a signal (planar to interleaved).
std::string whyNotApplicable(const std::string& variant, const cv::Mat& input, const DeviceInfo& device);
std::string whyNotApplicable(const std::string& variant, const Signal& input, const DeviceInfo& device);

/// The environment variable that caps the device memory an engine's buffers may hold together
/// (parseByteSize's form: "64M", "1.5G"), for seeing how the app meets a full GPU: a run that
/// would need more fails like a real device out-of-memory, naming the buffer and its size. It
/// covers the engine's buffers, not the CUDA context nor cuFFT's plan work areas. Read when an
/// Engine is made; a value that is not a size makes the constructor throw kl::InvalidArgument.
inline constexpr const char* kDeviceMemoryLimitVariable = "KERNELLAB_DEVICE_MEMORY_LIMIT";

class Engine {
public:
    /// Throws kl::gpu::CudaError (a std::runtime_error) when no device is usable: check gpuStatus() first.
    explicit Engine(int device = 0);
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;
    Engine(Engine&&) noexcept;
    Engine& operator=(Engine&&) noexcept;

    [[nodiscard]] const DeviceInfo& device() const;

    /// Device-to-device copy bandwidth (bytes read + written per second / 1e9), measured now.
    double measureCopyBandwidthGBs(uint64_t bytes = 1ull << 30);
    /// fp32 FMA throughput (GFLOP/s, an FMA counting 2) of independent register chains on every SM,
    /// measured now: the compute roof compute-bound kernels are held to.
    double measureFmaPeakGFlops();
    /// The two roofs above as runs use them: measured on the first call that succeeds, then
    /// remembered for the engine's life (a failure, e.g. on a capped device, is tried again).
    double copyBandwidthGBs();
    double fmaPeakGFlops();
    /// Host<->device copy rates (GB/s) for the given memory kind.
    struct TransferRates { double h2dGBs = 0, d2hGBs = 0; };
    TransferRates measureTransferGBs(HostMemory memory, uint64_t bytes = 256ull << 20);
    /// Pinned H2D and D2H at once, on two streams (bytes both ways per second / 1e9): what the link
    /// carries when streams overlap copies in both directions. Measured on the first call (64 MiB
    /// each way, about 0.1 s with the pinned allocation), then remembered.
    double linkBothWaysGBs();

    GpuReport conv2d(const cv::Mat& input, const Conv2DSpec& spec, const RunOptions& options, cv::Mat& output);
    GpuReport conv1d(const Signal& input, const Conv1DSpec& spec, const RunOptions& options, Signal& output);
    GpuReport histogram(const cv::Mat& input, const HistogramSpec& spec, const RunOptions& options,
                        HistogramResult& output);
    GpuReport transpose(const cv::Mat& input, const RunOptions& options, cv::Mat& output);
    /// Interleaved <-> planar for signals (the transpose kernels on a frames x channels matrix).
    GpuReport transposeSignal(const Signal& input, const RunOptions& options, std::vector<float>& interleaved);

    /// Frees cached device buffers and plans (they are otherwise kept for reuse between runs of one shape).
    void releaseCache();
    /// Device memory now: what this engine's cached buffers hold, their cap (0: none; see
    /// kDeviceMemoryLimitVariable), and the device's free and total bytes (cudaMemGetInfo).
    struct DeviceMemory { uint64_t heldBytes = 0, limitBytes = 0, freeBytes = 0, totalBytes = 0; };
    [[nodiscard]] DeviceMemory deviceMemory() const;

    struct Impl;  ///< device state, defined in the engine's sources (opaque here)

private:
    std::unique_ptr<Impl> impl_;
};

} // namespace kl::gpu
