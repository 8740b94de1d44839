#pragma once
// Staged host memory (HostMemory::Staged): copies between the caller's pageable memory and the
// device go through a ring of pinned buffers, a piece at a time, so that the host's memcpy of
// one piece overlaps the DMA of the piece before it. The memcpy runs on OpenCV's threads: the
// driver's own pageable path stages through one thread, far below the pinned rate
// (docs/performance.md, "Staged host memory").
#include "resources.hpp"

#include <cuda_runtime.h>

#include <array>
#include <cstddef>

namespace kl::gpu {

/// A region of `rows` rows of `width` bytes, each side with its own pitch (bytes).
struct CopyRegion {
    size_t width = 0, rows = 1;
    size_t dstPitch = 0, srcPitch = 0;
};

class StagingRing {
public:
    static constexpr size_t kPieceBytes = size_t(8) << 20;
    static constexpr int kSlots = 4;

    StagingRing();

    /// Queues the copy of `region` from host `src` to device `dst` on `stream`; returns once the
    /// host has read all of `src` (the last pieces' DMA may still be running).
    void toDevice(std::byte* dst, const std::byte* src, const CopyRegion& region, cudaStream_t stream);
    /// Copies `region` from device `src` to host `dst` after the work queued on `stream`; returns
    /// once `dst` holds it.
    void toHost(std::byte* dst, const std::byte* src, const CopyRegion& region, cudaStream_t stream);

private:
    struct Slot {
        PinnedPtr<std::byte> buffer;
        Event dmaDone;
        bool queued = false;  ///< a DMA from or to the buffer may still run
    };
    /// The next slot in the ring, once the DMA last queued on it has finished.
    Slot& acquire();

    std::array<Slot, kSlots> slots_;
    int next_ = 0;
};

/// Queues the copy of `region` on `stream` (one cudaMemcpyAsync for one row: no pitch limit applies).
void copyAsync(std::byte* dst, const std::byte* src, const CopyRegion& region, cudaMemcpyKind kind,
               cudaStream_t stream);

/// Copies `region` from `src` to `dst`, both host memory, on OpenCV's threads.
void parallelHostCopy(std::byte* dst, const std::byte* src, const CopyRegion& region);

} // namespace kl::gpu
