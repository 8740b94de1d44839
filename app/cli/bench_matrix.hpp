#pragma once
// kernellab-cli bench --matrix: the coverage matrix. Every case a user reaches from the preset
// menu, kernel only, auto variant, each cell against both roofs measured in the same run (% of
// the device copy bandwidth, % of the fp32 FMA peak) and held to the nearer one.
#include "bench_support.hpp"

#include <utility>
#include <vector>

namespace kl::cli {

struct MatrixSettings {
    std::vector<app::Op> ops = app::allOps();     ///< whose cells run (--ops)
    std::vector<std::pair<int, int>> imageSizes;  ///< cols, rows
    size_t frames = size_t(16) << 20;             ///< conv1d signal length
    int repetitions = 20, warmup = 3;
    int cpuThreads = 1;  ///< of the cpu-opencv run every cell is verified against
    BorderMode border = BorderMode::Reflect101;  ///< of the conv2d cells
    /// Each cell runs the first of these that applies to it and is left out where none does; empty:
    /// auto everywhere.
    QStringList variants;
    QString outDir;
    /// When set: each conv2d and transpose cell's input, kernel and verified GPU output as .npy
    /// here, listed in cells.csv (what bench/npp_peer.cu checks NPP against).
    QString dumpDir;
};

/// The roofs a cell is held to, measured in the same run.
struct MatrixRoofs {
    double copyGBs = 0;    ///< device-to-device copy, bytes read + written
    double fmaGFlops = 0;  ///< fp32 FMA, an FMA counting 2
};

/// Runs every cell on `engine`, prints the table and the worst cell, writes
/// kernellab-matrix.{json,csv,md} to settings.outDir; returns the exit code (kExitFailure when a
/// cell failed or disagreed with the CPU). Throws kl::Cancelled on Ctrl-C.
int runMatrix(const MatrixSettings& settings, gpu::Engine& engine, const MatrixRoofs& roofs, ProgressBar& progress);

} // namespace kl::cli
