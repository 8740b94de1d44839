#pragma once
// A ring of shared-memory buffers that the Tensor Memory Accelerator fills (compute capability
// 9.0+): one thread issues a bulk copy per buffer, whose bytes complete the buffer's "full"
// mbarrier; the consumers wait there, read the buffer and release it on its "empty" mbarrier,
// which the copying thread waits on before refilling it. Fill n (n = 0, 1, ...) uses buffer
// n % Stages. Device code only; callers compile it for sm_90 and newer.
#include <cuda/ptx>

#include <cstdint>

namespace kl::gpu {

template <int Stages> class TmaRing {
public:
    /// The 2 * Stages mbarriers at `barriers` (8-byte aligned shared memory).
    __device__ explicit TmaRing(uint64_t* barriers) : full_(barriers), empty_(barriers + Stages) {}

    /// By one thread, before the block synchronizes: each buffer is released by `consumers` arrivals.
    __device__ void init(int consumers) const
    {
        for (int s = 0; s < Stages; ++s) {
            cuda::ptx::mbarrier_init(&full_[s], 1);
            cuda::ptx::mbarrier_init(&empty_[s], consumers);
        }
        cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
    }

    __device__ int buffer(int n) const { return n % Stages; }

    /// The copying thread, before fill n: waits until the consumers have released that buffer's
    /// previous fill, then announces `bytes` to come; returns the barrier the copy completes.
    __device__ uint64_t* beginFill(int n, uint32_t bytes) const
    {
        const int s = buffer(n);
        if (n >= Stages) wait(&empty_[s], uint32_t(n / Stages - 1) & 1);
        cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                             &full_[s], bytes);
        return &full_[s];
    }

    /// A consumer: waits until fill n has landed.
    __device__ void waitFull(int n) const { wait(&full_[buffer(n)], uint32_t(n / Stages) & 1); }

    /// A consumer: done reading fill n. Its reads are generic-proxy accesses and the next copy into
    /// the buffer an async-proxy write: without the fence the release let the copy overwrite values
    /// not yet read (seen on the H200 as stale values in up to 1 of 10^5 outputs).
    __device__ void release(int n) const
    {
        cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
        cuda::ptx::mbarrier_arrive(&empty_[buffer(n)]);
    }

private:
    __device__ static void wait(uint64_t* barrier, uint32_t parity)
    {
        while (!cuda::ptx::mbarrier_try_wait_parity(barrier, parity)) {
        }
    }

    uint64_t* full_;
    uint64_t* empty_;
};

} // namespace kl::gpu
