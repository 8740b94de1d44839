#include "kernellab/timing.hpp"

#include "kernellab/error.hpp"

#include <algorithm>
#include <chrono>
#include <string>

namespace kl {

TimingStats summarize(std::vector<double> samplesMs)
{
    TimingStats stats;
    if (samplesMs.empty()) return stats;
    std::sort(samplesMs.begin(), samplesMs.end());
    const size_t n = samplesMs.size();
    stats.medianMs = n % 2 ? samplesMs[n / 2] : 0.5 * (samplesMs[n / 2 - 1] + samplesMs[n / 2]);
    stats.minMs = samplesMs.front();
    stats.maxMs = samplesMs.back();
    stats.repetitions = int(n);
    return stats;
}

TimingStats timeCpu(const std::function<void()>& work, int repetitions, int warmup)
{
    if (repetitions < 1)
        throw InvalidArgument("repetitions: " + std::to_string(repetitions) + " must be at least 1");
    if (warmup < 0) throw InvalidArgument("warmup: " + std::to_string(warmup) + " must not be negative");
    for (int i = 0; i < warmup; ++i) work();
    std::vector<double> samples;
    samples.reserve(size_t(repetitions));
    for (int i = 0; i < repetitions; ++i) {
        const auto start = std::chrono::steady_clock::now();
        work();
        const auto stop = std::chrono::steady_clock::now();
        samples.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
    }
    return summarize(std::move(samples));
}

} // namespace kl
