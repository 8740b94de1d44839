#pragma once
// Holds a stream until released, so the work queued behind the gate runs back to
// back on the device. Kernel-only timings bracket a kernel with two events; without
// the gate the first event fires as soon as it is queued and the interval includes
// the host's launch latency (about 7 us on the H200), which dominates small inputs.
// The same "blocking kernel" technique as NVIDIA's nvbench.
#include "resources.hpp"

#include <cuda_runtime.h>

namespace kl::gpu {

class StreamGate {
public:
    StreamGate();
    StreamGate(const StreamGate&) = delete;
    StreamGate& operator=(const StreamGate&) = delete;

    /// Queues a kernel on `stream` that spins until release() (or a 100 ms safety timeout).
    void hold(cudaStream_t stream);
    /// Lets the held stream run.
    void release();
    /// After the stream has drained: whether the gate gave up waiting, i.e. something
    /// between hold() and release() blocked the host until the device was idle.
    [[nodiscard]] bool timedOut() const;

    static constexpr int kTimedOut = -1;

private:
    PinnedPtr<int> flag_;  ///< mapped host memory the spinning kernel polls
    int* deviceFlag_ = nullptr;
};

} // namespace kl::gpu
