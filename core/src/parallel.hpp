#pragma once
// Splitting CPU work over OpenCV's thread pool (internal to core).
#include <opencv2/core/utility.hpp>

#include <algorithm>
#include <cstdint>

namespace kl::detail {

/// The number of tasks forEachPiece runs `pieces` pieces on: at most one per OpenCV thread.
inline int pieceTasks(int pieces)
{
    return std::max(1, std::min(pieces, cv::getNumThreads()));
}

/// Calls body(task, piece) for every piece in [0, pieces). The pieces are fixed by the data,
/// never by the thread count, so results do not depend on it; they are dealt out as
/// pieceTasks(pieces) contiguous runs, one per task, under cv::parallel_for_, and `task`
/// (0 .. pieceTasks - 1) indexes the per-task scratch of the caller.
template <typename Body> void forEachPiece(int pieces, Body&& body)
{
    const int tasks = pieceTasks(pieces);
    cv::parallel_for_(
        cv::Range(0, tasks),
        [&](const cv::Range& range) {
            for (int task = range.start; task < range.end; ++task) {
                const int first = int(int64_t(pieces) * task / tasks), last = int(int64_t(pieces) * (task + 1) / tasks);
                for (int piece = first; piece < last; ++piece) body(task, piece);
            }
        },
        tasks);
}

} // namespace kl::detail
