#include "staging.hpp"

#include <opencv2/core/utility.hpp>

#include <algorithm>
#include <cstring>
#include <deque>

namespace kl::gpu {

namespace {

/// Below this a thread's share of a copy costs more to hand out than to do.
constexpr size_t kMinBytesPerTask = size_t(256) << 10;

/// One piece of a region: rows [row, row + rows) and bytes [column, column + width) of each.
struct Piece {
    size_t row = 0, rows = 1, column = 0, width = 0;
};

/// Cuts `region` into pieces of at most StagingRing::kPieceBytes: whole rows where a row fits,
/// otherwise each row in parts. A region contiguous on both sides is one long row.
template <typename Visit> void forEachPiece(const CopyRegion& region, Visit&& visit)
{
    const size_t limit = StagingRing::kPieceBytes;
    const bool contiguous = region.rows == 1 || (region.srcPitch == region.width && region.dstPitch == region.width);
    if (contiguous) {
        const size_t bytes = region.width * region.rows;
        for (size_t at = 0; at < bytes; at += limit) visit(Piece{0, 1, at, std::min(limit, bytes - at)});
    } else if (region.width <= limit) {
        const size_t rowsPerPiece = limit / region.width;
        for (size_t row = 0; row < region.rows; row += rowsPerPiece)
            visit(Piece{row, std::min(rowsPerPiece, region.rows - row), 0, region.width});
    } else {
        for (size_t row = 0; row < region.rows; ++row)
            for (size_t at = 0; at < region.width; at += limit)
                visit(Piece{row, 1, at, std::min(limit, region.width - at)});
    }
}

/// Where a piece starts in memory with rows `pitch` bytes apart (a contiguous region's one row
/// has no pitch to apply).
size_t offsetOf(const Piece& piece, size_t pitch) { return piece.row * pitch + piece.column; }

} // namespace

void copyAsync(std::byte* dst, const std::byte* src, const CopyRegion& region, cudaMemcpyKind kind,
               cudaStream_t stream)
{
    if (region.rows == 1) KL_CUDA_TRY(cudaMemcpyAsync(dst, src, region.width, kind, stream));
    else
        KL_CUDA_TRY(cudaMemcpy2DAsync(dst, region.dstPitch, src, region.srcPitch, region.width, region.rows, kind,
                                      stream));
}

void parallelHostCopy(std::byte* dst, const std::byte* src, const CopyRegion& region)
{
    const size_t bytes = region.width * region.rows;
    if (bytes == 0) return;
    // A region contiguous on both sides splits anywhere; otherwise at rows.
    const bool flat = region.rows == 1 || (region.srcPitch == region.width && region.dstPitch == region.width);
    const size_t units = flat ? bytes : region.rows;
    const size_t tasks = std::clamp<size_t>(bytes / kMinBytesPerTask, 1, std::min(units, size_t(cv::getNumThreads())));
    const auto copyUnits = [&](size_t first, size_t last) {
        if (flat) std::memcpy(dst + first, src + first, last - first);
        else
            for (size_t row = first; row < last; ++row)
                std::memcpy(dst + row * region.dstPitch, src + row * region.srcPitch, region.width);
    };
    if (tasks == 1) {
        copyUnits(0, units);
        return;
    }
    cv::parallel_for_(
        cv::Range(0, int(tasks)),
        [&](const cv::Range& range) { copyUnits(units * size_t(range.start) / tasks, units * size_t(range.end) / tasks); },
        double(tasks));
}

StagingRing::StagingRing()
{
    for (Slot& slot : slots_) slot.buffer = allocatePinned<std::byte>(kPieceBytes);
}

StagingRing::Slot& StagingRing::acquire()
{
    Slot& slot = slots_[size_t(next_)];
    next_ = (next_ + 1) % kSlots;
    if (slot.queued) slot.dmaDone.synchronize();
    slot.queued = false;
    return slot;
}

void StagingRing::toDevice(std::byte* dst, const std::byte* src, const CopyRegion& region, cudaStream_t stream)
{
    forEachPiece(region, [&](const Piece& piece) {
        Slot& slot = acquire();
        const CopyRegion packed{piece.width, piece.rows, piece.width, region.srcPitch};
        parallelHostCopy(slot.buffer.get(), src + offsetOf(piece, region.srcPitch), packed);
        copyAsync(dst + offsetOf(piece, region.dstPitch), slot.buffer.get(),
                  CopyRegion{piece.width, piece.rows, region.dstPitch, piece.width}, cudaMemcpyHostToDevice, stream);
        slot.dmaDone.record(stream);
        slot.queued = true;
    });
}

void StagingRing::toHost(std::byte* dst, const std::byte* src, const CopyRegion& region, cudaStream_t stream)
{
    struct InFlight {
        Slot* slot;
        Piece piece;
    };
    std::deque<InFlight> inFlight;  // at most kSlots, in ring order
    const auto drainOldest = [&] {
        const InFlight f = inFlight.front();
        inFlight.pop_front();
        f.slot->dmaDone.synchronize();
        f.slot->queued = false;
        const CopyRegion unpacked{f.piece.width, f.piece.rows, region.dstPitch, f.piece.width};
        parallelHostCopy(dst + offsetOf(f.piece, region.dstPitch), f.slot->buffer.get(), unpacked);
    };
    forEachPiece(region, [&](const Piece& piece) {
        if (inFlight.size() == size_t(kSlots)) drainOldest();
        Slot& slot = acquire();
        copyAsync(slot.buffer.get(), src + offsetOf(piece, region.srcPitch),
                  CopyRegion{piece.width, piece.rows, piece.width, region.srcPitch}, cudaMemcpyDeviceToHost, stream);
        slot.dmaDone.record(stream);
        slot.queued = true;
        inFlight.push_back({&slot, piece});
    });
    while (!inFlight.empty()) drainOldest();
}

} // namespace kl::gpu
