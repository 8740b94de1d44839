#pragma once
// Users' own kernels (docs/custom-kernels.md): the per-op templates, run-time compilation with
// NVRTC (no GPU needed), and one run of a compiled kernel on the device, verified and timed by
// the caller. The app runs that last step in a worker process (kernellab-worker) so that a kernel
// which hangs or faults cannot take the app down; the job and its outcome therefore travel
// through files (writeJob / readOutcome). This header exposes no CUDA types.
#include "kernellab/border.hpp"
#include "kernellab/histogram.hpp"
#include "kernellab/timing.hpp"
#include "kernellab/gpu/engine.hpp"

#include <opencv2/core/mat.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kl::gpu {

/// The ops a user kernel may implement (transpose of images only).
const std::vector<std::string>& userKernelOps();

/// How a user kernel is launched. Each block has blockX x blockY threads and covers tileX x tileY
/// elements of the op's work domain (conv2d: output pixels; transpose, histogram: input pixels;
/// conv1d: output samples x channels); KernelLab sizes the grid to cover it:
/// ceil(width / tileX) x ceil(height / tileY). A tile of 0 is the block. The kernel sees these as
/// the macros KL_BLOCK_X, KL_BLOCK_Y, KL_TILE_X, KL_TILE_Y. sharedBytes is dynamic shared memory.
struct UserKernelLaunch {
    int blockX = 16, blockY = 16;
    int tileX = 0, tileY = 0;
    int sharedBytes = 0;
    [[nodiscard]] int tileWidth() const { return tileX > 0 ? tileX : blockX; }
    [[nodiscard]] int tileHeight() const { return tileY > 0 ? tileY : blockY; }
    [[nodiscard]] std::string text() const;  ///< "block 32x8, tile 32x32, 0 B dynamic shared memory"
};
/// Throws kl::InvalidArgument naming the bad field: threads per block 1..1024, tiles >= 0,
/// shared bytes 0..(1 << 20).
void validateLaunch(const UserKernelLaunch& launch);
/// "32x8" or "256" (y = 1) into x, y; throws kl::InvalidArgument naming `what`.
void parseDimensions(const std::string& text, int& x, int& y, const std::string& what);
/// The launch a source asks for in a line "// kernellab: block 32x8 tile 32x32 shared 4096" (any
/// of the three, in any order); the defaults where it has none. A malformed line throws
/// kl::InvalidArgument naming it.
UserKernelLaunch launchFromSource(const std::string& source);
/// The name of the first __global__ function the source defines ("" when none).
std::string firstKernelName(const std::string& source);

/// A teaching kernel to start from (the CUDA tutorials' naive and shared-memory versions).
struct KernelTemplate {
    std::string op, name, description, source;
};
const std::vector<KernelTemplate>& kernelTemplates();
/// The template `name` of `op` ("" = its first); throws kl::InvalidArgument listing the names.
const KernelTemplate& kernelTemplate(const std::string& op, const std::string& name = {});
/// kernellab.cuh, the header user kernels include, with the rule headers it pulls in.
struct EmbeddedHeader {
    std::string name, text;
};
const std::vector<EmbeddedHeader>& userKernelHeaders();

/// One compiler message, as "kernel.cu:12:5: error: expected a ';'".
struct Diagnostic {
    std::string file;
    int line = 0, column = 0;  ///< 1-based; 0 when the compiler gave none
    std::string severity;      ///< "error" or "warning"
    std::string message;
    [[nodiscard]] std::string text() const;
};

struct UserKernelSource {
    std::string op;                      ///< one of userKernelOps()
    std::string code;
    std::string fileName = "kernel.cu";  ///< as diagnostics name it
    std::string entry;                   ///< the __global__ function to run
    int inputDepth = CV_32F;             ///< CV_8U, CV_16U or CV_32F: the kernel's kl::In
    int outputDepth = CV_32F;            ///< conv2d's kl::Out; the input's for the other ops
    UserKernelLaunch launch;
};

struct UserKernelBinary {
    bool ok = false;
    std::vector<Diagnostic> diagnostics;  ///< errors first; warnings too when it compiled
    std::string cubin;                    ///< the device code for `arch`
    std::string loweredName;              ///< the entry's symbol in it
    std::string arch;                     ///< "sm_90"
    bool fromCache = false;
    /// The diagnostics, one per line (for messages and exit-2 output).
    [[nodiscard]] std::string diagnosticsText() const;
};

/// The environment variable naming the compiled-kernel cache directory; by default
/// $XDG_CACHE_HOME/kernellab/kernels or ~/.cache/kernellab/kernels.
inline constexpr const char* kKernelCacheVariable = "KERNELLAB_KERNEL_CACHE";
/// "sm_90" for compute capability 9.0.
std::string archOf(const DeviceInfo& device);
/// The architectures NVRTC can compile for ("sm_75", ... ), newest last.
std::vector<std::string> supportedArchs();
/// Compiles with NVRTC for `arch`, checking the entry against the op's contract: a missing entry
/// or one with another signature is an error that says what the contract wants. Results are
/// cached on disk by a hash of the source, entry, depths, launch, arch and NVRTC version; a failed
/// compilation is not cached. An unknown op, depth or arch throws kl::InvalidArgument.
UserKernelBinary compileUserKernel(const UserKernelSource& source, const std::string& arch);

/// Everything one run of a user kernel needs, resolved by the caller from the op's request.
struct UserKernelJob {
    std::string op;
    std::string entry, loweredName, cubin;
    UserKernelLaunch launch;
    int device = 0;
    /// The image, or for conv1d a channels x frames CV_32F matrix (one signal channel per row).
    cv::Mat input;
    /// conv2d: the effective kernel (CV_32F, kRows x kCols); conv1d: the taps (CV_32F, 1 x M).
    cv::Mat taps;
    int outputDepth = CV_32F;                    ///< conv2d
    BorderMode border = BorderMode::Reflect101;  ///< conv2d
    float borderValue = 0;                       ///< conv2d
    int64_t outFrames = 0, offset = 0;           ///< conv1d
    HistogramBinning binning;                    ///< histogram
    bool luminance = false;                      ///< histogram: a luminance entry after the channels
    int repetitions = 10, warmup = 2;
    bool endToEnd = false;                       ///< H2D + kernel + D2H on one stream; else the kernel alone
    bool pinned = false;                         ///< end to end: the host side in pinned memory
    double timeoutSeconds = 5;                   ///< per kernel launch
};

/// What the run gave. `error` is set (and nothing else need be) when it failed.
struct UserKernelOutcome {
    std::string error;
    cv::Mat output;                 ///< conv2d, transpose: the image; conv1d: channels x outFrames CV_32F
    std::vector<uint64_t> counts;   ///< histogram: per entry its bins, then out of range, then NaN
    TimingStats h2d, kernel, d2h, total;
    KernelResources resources;
};

/// Runs the job in this process: a first run whose output is returned (outputs sit between guard
/// zones; a write into them is an error naming how far out it went), warm-up, then timed runs
/// (kernel alone behind the stream gate, or end to end), CUDA events, median of `repetitions`.
/// A launch still running after timeoutSeconds ends the process (exit code 3) once the outcome
/// saying so is written to `outcomeDir`: the device context cannot be recovered from it.
UserKernelOutcome runUserKernel(const UserKernelJob& job, const std::string& outcomeDir);

/// The job and outcome files in a directory (text + raw binary; same machine and build).
void writeJob(const UserKernelJob& job, const std::string& dir);
UserKernelJob readJob(const std::string& dir);
void writeOutcome(const UserKernelOutcome& outcome, const std::string& dir);
/// Throws kl::IoError when the directory holds no (complete) outcome.
UserKernelOutcome readOutcome(const std::string& dir);

} // namespace kl::gpu
