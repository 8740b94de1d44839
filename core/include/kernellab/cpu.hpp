#pragma once
// The host CPU as the CPU backends use it: how many threads they run on, the working
// memory they keep between runs, and the host's memory bandwidth (their roof).
#include <opencv2/core/mat.hpp>

#include <cstddef>
#include <vector>

namespace kl {

/// The largest thread count accepted (far beyond any host; larger is a typing mistake).
constexpr int kMaxCpuThreads = 1024;

/// Hardware threads available to this process (cv::getNumberOfCPUs: affinity and cgroup limits
/// count): the default thread count of the CPU backends.
int hardwareThreads();
/// Throws kl::InvalidArgument "cpu-threads: N is not in 1..1024 ..." for a bad count.
void validateCpuThreads(int threads);
/// The thread counts of a scaling run up to `threads`: 1, 2, 4 ... below it, then it.
std::vector<int> threadScalingCounts(int threads);

/// Sets the threads OpenCV's parallel loops (and so the CPU backends) use for the lifetime of
/// the object, then restores the previous count.
class ScopedCpuThreads {
public:
    explicit ScopedCpuThreads(int threads);
    ~ScopedCpuThreads();
    ScopedCpuThreads(const ScopedCpuThreads&) = delete;
    ScopedCpuThreads& operator=(const ScopedCpuThreads&) = delete;

private:
    int previous_;
};

/// Working memory a CPU backend keeps between calls, so that repeated runs reuse warm buffers
/// (as the GPU engine's buffer cache does) and no timed run allocates or first-touches memory.
/// Each backend names its own slots; buffers keep their size until a larger one is needed.
class CpuScratch {
public:
    /// Slots [first, first + count), created empty when new. Call before a parallel loop: the
    /// slots' addresses stay valid until the next call.
    cv::Mat* buffers(size_t first, size_t count);
    cv::Mat& buffer(size_t index) { return *buffers(index, 1); }

private:
    std::vector<cv::Mat> buffers_;
};

/// Host memory bandwidth in GB/s (1e9 bytes, read + written): `threads` threads copying
/// `bytes` between two buffers allocated and touched beforehand, the median of `repetitions`
/// timed copies after one untimed. The default size is far above the caches of the hosts
/// KernelLab runs on.
double measureHostCopyBandwidthGBs(int threads, size_t bytes = size_t(256) << 20, int repetitions = 5);

} // namespace kl
