#pragma once
// Repeated-run statistics used by every backend's report.
#include <functional>
#include <vector>

namespace kl {

struct TimingStats {
    double medianMs = 0, minMs = 0, maxMs = 0;
    int repetitions = 0;
};

/// Median / min / max of samples in milliseconds (empty input gives zeros).
TimingStats summarize(std::vector<double> samplesMs);

/// Runs `work` warmup times untimed, then `repetitions` times under a steady clock.
TimingStats timeCpu(const std::function<void()>& work, int repetitions, int warmup = 1);

} // namespace kl
