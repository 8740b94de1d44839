#include "kernellab/cpu.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"
#include "kernellab/timing.hpp"

#include "parallel.hpp"

#include <opencv2/core/utility.hpp>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

namespace kl {

int hardwareThreads()
{
    return std::max(1, cv::getNumberOfCPUs());
}

void validateCpuThreads(int threads)
{
    if (threads < 1 || threads > kMaxCpuThreads)
        throw InvalidArgument("cpu-threads: " + std::to_string(threads) + " is not in 1.." +
                              std::to_string(kMaxCpuThreads) + " (this machine has " +
                              std::to_string(hardwareThreads()) + " hardware threads)");
}

std::vector<int> threadScalingCounts(int threads)
{
    validateCpuThreads(threads);
    std::vector<int> counts;
    for (int n = 1; n < threads; n *= 2) counts.push_back(n);
    counts.push_back(threads);
    return counts;
}

ScopedCpuThreads::ScopedCpuThreads(int threads)
    : previous_(cv::getNumThreads())
{
    validateCpuThreads(threads);
    if (threads != previous_) cv::setNumThreads(threads);
}

ScopedCpuThreads::~ScopedCpuThreads()
{
    if (cv::getNumThreads() != previous_) cv::setNumThreads(previous_);
}

cv::Mat* CpuScratch::buffers(size_t first, size_t count)
{
    if (buffers_.size() < first + count) buffers_.resize(first + count);
    return buffers_.data() + first;
}

double measureHostCopyBandwidthGBs(int threads, size_t bytes, int repetitions)
{
    if (repetitions < 1) throw InvalidArgument("host bandwidth: repetitions must be at least 1");
    ensureMemoryAvailable(2 * uint64_t(bytes), "host bandwidth measurement (two copy buffers)");
    const ScopedCpuThreads scope(threads);
    const std::unique_ptr<char[]> source(new char[bytes]), target(new char[bytes]);
    // One contiguous piece per thread, touched first in parallel: copies this large take the C
    // library's streaming stores, as a large memcpy in any program does.
    constexpr size_t kPage = 4096;
    const size_t piece = (bytes / size_t(threads) + kPage - 1) / kPage * kPage;
    const int pieces = int((bytes + piece - 1) / piece);
    const auto range = [&](int index) {
        const size_t begin = size_t(index) * piece;
        return std::pair{begin, std::min(piece, bytes - begin)};
    };
    detail::forEachPiece(pieces, [&](int, int index) {
        const auto [begin, length] = range(index);
        std::memset(source.get() + begin, index & 0xff, length);
        std::memset(target.get() + begin, 0, length);
    });
    const auto copy = [&] {
        detail::forEachPiece(pieces, [&](int, int index) {
            const auto [begin, length] = range(index);
            std::memcpy(target.get() + begin, source.get() + begin, length);
        });
    };
    const TimingStats stats = timeCpu(copy, repetitions, 1);
    return 2.0 * double(bytes) / (stats.medianMs * 1e6);
}

} // namespace kl
