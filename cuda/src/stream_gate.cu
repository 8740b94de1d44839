#include "stream_gate.hpp"

#include <cstdint>

namespace kl::gpu {

namespace {

constexpr uint64_t kGateTimeoutNs = 100'000'000;  // never hang if the host dies between hold and release

__device__ uint64_t globalTimerNs()
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void waitForRelease(volatile int* flag)
{
    const uint64_t start = globalTimerNs();
    while (*flag == 0) {
        if (globalTimerNs() - start > kGateTimeoutNs) {
            *flag = StreamGate::kTimedOut;
            return;
        }
        __nanosleep(1000);
    }
}

} // namespace

StreamGate::StreamGate()
{
    void* p = nullptr;
    KL_CUDA_TRY(cudaHostAlloc(&p, sizeof(int), cudaHostAllocMapped));
    flag_.reset(static_cast<int*>(p));
    KL_CUDA_TRY(cudaHostGetDevicePointer(reinterpret_cast<void**>(&deviceFlag_), p, 0));
}

void StreamGate::hold(cudaStream_t stream)
{
    *static_cast<volatile int*>(flag_.get()) = 0;
    waitForRelease<<<1, 1, 0, stream>>>(deviceFlag_);
    KL_CHECK_LAUNCH();
}

void StreamGate::release()
{
    int open = 0;  // leave a timeout the device already reported in place
    __atomic_compare_exchange_n(flag_.get(), &open, 1, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

bool StreamGate::timedOut() const { return *static_cast<volatile int*>(flag_.get()) == kTimedOut; }

} // namespace kl::gpu
