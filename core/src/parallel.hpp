#pragma once
// Splitting CPU work over OpenCV's thread pool (internal to core).
#include <opencv2/core/utility.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace kl::detail {

/// The number of tasks forEachPiece runs `pieces` pieces on: at most one per OpenCV thread.
inline int pieceTasks(int pieces)
{
    return std::max(1, std::min(pieces, cv::getNumThreads()));
}

/// Calls body(task, piece) for every piece in [0, pieces) on pieceTasks(pieces) tasks under
/// cv::parallel_for_; `task` (0 .. pieceTasks - 1) indexes the caller's per-task scratch. The
/// pieces are fixed by the data, never by the thread count, and each task takes the next piece
/// when it has finished one, so a thread the host stalls holds up only the piece it is on. Which
/// pieces share a task varies from run to run: per-task results must combine in any order
/// (counts, minima and maxima), so that results never depend on it. startTask(task) is called once
/// for every task, on its thread, before it takes pieces: per-task scratch is prepared in the same
/// parallel region as the work.
template <typename StartTask, typename Body> void forEachPiece(int pieces, StartTask&& startTask, Body&& body)
{
    const int tasks = pieceTasks(pieces);
    if (tasks == 1) {  // on this thread: no wake-up of the pool for one piece or one thread
        startTask(0);
        for (int piece = 0; piece < pieces; ++piece) body(0, piece);
        return;
    }
    std::atomic<int> next{0};
    cv::parallel_for_(
        cv::Range(0, tasks),
        [&](const cv::Range& range) {
            for (int task = range.start; task < range.end; ++task) {
                startTask(task);
                for (int piece = next++; piece < pieces; piece = next++) body(task, piece);
            }
        },
        tasks);
}

/// forEachPiece with nothing to prepare per task.
template <typename Body> void forEachPiece(int pieces, Body&& body)
{
    forEachPiece(pieces, [](int) {}, body);
}

} // namespace kl::detail
