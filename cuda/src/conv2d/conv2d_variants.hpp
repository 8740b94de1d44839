#pragma once
// What conv2d's host side (conv2d.cpp: the problem, the auto choice, chunking) and its
// variant families (one .cu each, owning their kernels and constant memory) share: the
// problem a variant is asked to run, one run's device buffers and strips, and the
// descriptors each family registers. Host code only: no kernels here.
#include "../engine_internal.hpp"
#include "../variant_registry.hpp"

#include "kernellab/border.hpp"
#include "kernellab/conv2d.hpp"

#include <cuda.h>  // CUtensorMap (a plain struct; nothing links libcuda)

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kl::gpu {

/// integer: the taps are K = column * row^T / 2^kIntegerFractionBits, so results have 8 bits below
/// the point, and the rounded result is byte 1 of each 16-bit lane.
constexpr int kIntegerFractionBits = 8;

/// The integer variant's taps: non-negative integers with K = scale * column * row^T, every lane sum
/// (255 * sum(column) * sum(row)) within 16 bits. Dyadic kernels (OpenCV's default 3x3 and 5x5
/// Gaussians) have taps.fractionBits kIntegerFractionBits and scale 2^-8: the lanes hold the result
/// with 8 bits below the point and round as bytes. Other kernels (boxes: ones times 1/K^2) have
/// fractionBits 0: each lane's exact sum is multiplied by scale and rounded once, which gives the
/// reference's bits (the reference's sum is scale times the same integer sum, exactly in f64).
struct IntegerTaps {
    IntegerSeparableKernel taps;
    float scale = 1;
    [[nodiscard]] bool dyadic() const { return taps.fractionBits == kIntegerFractionBits; }
};

/// The factors f such that every tap of `kernel` is an integer multiple of f, exactly in f32
/// (q = t / f is whole and q * f == t): 1 where the taps are integers, then the smallest tap
/// magnitude (a box: 1/K^2 times ones). Variants that sum integer taps exactly and scale once take
/// the first whose integers they hold.
std::vector<float> integerTapFactors(const cv::Mat& kernel);

/// staged-rows runs square kernels up to this size (its K rows of sums are registers).
constexpr int kStagedRowsMaxSize = 7;

/// separable runs f32 images in the staged ring up to this size: on rank-1 3x3 and 5x5 kernels it took
/// 0.99-1.00x staged-rows' time (docs/performance.md, "Forty-first step"). From 7x7 auto takes
/// separable-tiles on f32, and the staged ring there was not measured.
constexpr int kFloatStagedRingMaxSize = 5;
/// Whether separable runs a compiled size k x k in the staged ring on an image of floats
/// (`floatImage`) or of integers: integers at every compiled size, floats up to kFloatStagedRingMaxSize.
constexpr bool stagedRingSize(bool floatImage, int k) { return !floatImage || k <= kFloatStagedRingMaxSize; }

/// Whether k x k is one of kConv2dCompiledSizes (fully unrolled kernels).
bool isCompiledSize(int kRows, int kCols);
/// Whether separable runs kRows x kCols on an image of `inDepth` in the staged ring: a compiled
/// size, within stagedRingSize.
bool takesStagedRing(int inDepth, int kRows, int kCols);
/// kConv2dCompiledSizes up to `largest` as text: "3, 5, 7, 9 or 15" (`lastJoin` "or"), for messages.
std::string compiledSizesText(const char* lastJoin, int largest = kConv2dCompiledSizes.back());

/// The tensor cores take each input byte as the normal f16 byte * 2^kMmaByteExponent (normalBytes).
constexpr int kMmaByteExponent = -10;

/// The taps of a rank-1 kernel for the mma variants, whose one pass sums on tensor cores and the
/// other in f32 fma chains: the tensor-core pass's taps times 2^e (the largest in [2^6, 2^7)) as two
/// f16 halves each, `high` + `low`, and the other pass's times 2^(-kMmaByteExponent - e), `scaled`,
/// so that every power of two cancels exactly.
struct SplitTaps {
    std::vector<float> high, low;
    std::vector<float> scaled;
};
/// The split, or nullopt where two f16 halves leave a tap of `mmaPass` off by more than 2^-22 of
/// itself (taps about 2^9 or more below the largest) or a scaled tap of `fmaPass` leaves f32's
/// normal range (conv2d_separable.cu).
std::optional<SplitTaps> splitMmaTaps(const std::vector<float>& mmaPass, const std::vector<float>& fmaPass);
/// The f16 bits of tap i's `half` (0: high, 1: low) on byte plane `plane` (1: the high bytes, whose
/// taps are times 2^8), 0 outside the kernel: the mma fragments' entries (conv2d_separable.cu).
uint16_t mmaTapBits(const SplitTaps& taps, int half, int plane, int i);

/// One conv2d problem, with what the variants' checks and launches derive from it once.
struct Conv2dProblem {
    Conv2dProblem(const cv::Mat& input, const Conv2DSpec& spec, const DeviceInfo& device);  ///< validates
    const cv::Mat& input;
    const Conv2DSpec& spec;
    const DeviceInfo& device;
    cv::Mat kernel;  ///< effectiveKernel(spec), f32
    int kRows = 0, kCols = 0, outDepth = 0;
    std::optional<SeparableKernel> factors;          ///< when the kernel is rank-1
    std::optional<IntegerTaps> integer;              ///< the integer variant's taps, where it applies
    [[nodiscard]] std::string kernelSize() const;    ///< "5x3" (columns x rows)
};

/// Whether the mma variants take `p`'s border: any but a constant one whose value is not a value of the
/// u8/u16 image's depth (the bytes enter the tensor cores as f16; conv2d_separable.cu).
bool mmaBorderFits(const Conv2dProblem& p);
/// Why an mma variant does not run `p` (empty where it does): it needs `imageNeeded` (`imageFits`), a
/// rank-1 kernel of a square compiled size whose tensor-core pass's taps (the row taps for `rowPass`,
/// else the column taps) splitMmaTaps splits, a constant border value the depth holds, and device
/// code for compute capability 8.0 or newer (conv2d_separable.cu).
std::string whyNotMmaVariant(const Conv2dProblem& p, bool imageFits, const std::string& imageNeeded, bool rowPass);

/// One run's device buffers and its strips of output rows. Strip c owns a slice of the input
/// buffer holding its rows plus the kernel's halo (see conv2d.cpp).
struct Conv2dRun {
    std::byte* in = nullptr;
    std::byte* out = nullptr;
    float* mid = nullptr;   ///< separable (two passes): the row pass's f32 result per slice element
    float* taps = nullptr;  ///< naive: the taps in global memory
    uint32_t* mmaFragments = nullptr;  ///< separable-mma, rows-mma, direct-mma: the taps as mma fragments
    size_t inPitch = 0, outPitch = 0;  ///< bytes from one device row to the next
    int rows = 0, cols = 0, channels = 0, inDepth = 0, outDepth = 0, kRows = 0, kCols = 0;
    BorderMode border = BorderMode::Replicate;
    float borderValue = 0;
    /// dp4a, dp2a, integer: the kernel's common factor over its integer taps (1: none); direct-mma: the
    /// power of two that undoes its taps' and bytes' scales.
    float tapScale = 1;
    bool dyadicTaps = false;  ///< integer: IntegerTaps::dyadic (the lanes round as bytes)
    bool unitColumnTaps = false;  ///< integer: every column tap is 1, as a box's (running column sums)
    int rowsPerChunk = 0, chunks = 0;
    size_t sharedMemoryLimit = 0;  ///< per block, opted in (DeviceInfo::sharedMemoryPerBlockOptIn)
    int multiprocessors = 0;
    int stagedSlots = 0;  ///< the staged kernels (integer, separable on u8/u16, staged-rows, separable-tiles): blocks resident at once
    /// tma: the tensor map over each chunk's slice and the persistent grid's size.
    struct TmaPlan {
        CUtensorMap map;
        int blocks;
    };
    std::vector<TmaPlan> tmaPlans;

    [[nodiscard]] int halo() const { return kRows - 1; }
    [[nodiscard]] std::pair<int, int> strip(int chunk) const;  ///< output rows [first, second)
    [[nodiscard]] size_t sliceStart(int chunk) const;          ///< the slice's first row in `in`
};

/// Copies `fragments` (an mma variant's taps) into the run's device buffer for them, run.mmaFragments, on
/// `stream`; the caller keeps `fragments` until the stream has done so (conv2d_separable.cu).
void uploadMmaFragments(const std::vector<uint32_t>& fragments, Conv2dRun& run, BufferCache& cache, cudaStream_t stream);

/// What the host side calls to run a variant.
struct Conv2dLaunch {
    /// Once per run, before any chunk, on `stream`: taps into place, kernel attributes,
    /// per-chunk state, extra buffers (from `cache`).
    void (*prepare)(const Conv2dProblem& problem, Conv2dRun& run, BufferCache& cache, cudaStream_t stream) = nullptr;
    /// One chunk's kernels on `stream`.
    void (*compute)(const Conv2dRun& run, int chunk, cudaStream_t stream) = nullptr;
    /// Whether it reads taps from __constant__ memory (one copy per device: runs hold a lock).
    bool constantTaps = false;
    /// Chunks start at multiples of this many rows. separable-mma groups an output's products by
    /// its row's place in a 16-row tile; so it is the same place, and the same bits, at any stream
    /// count.
    int chunkRowMultiple = 1;
};

using Conv2dVariant = VariantDescriptor<Conv2dProblem, Conv2dLaunch>;

// The families, each defined in its own .cu beside its kernels.
Conv2dVariant naiveConv2d();      // conv2d_direct.cu
Conv2dVariant constantConv2d();   // conv2d_direct.cu
Conv2dVariant sharedConv2d();     // conv2d_tiled.cu
Conv2dVariant tmaConv2d();        // conv2d_tiled.cu
Conv2dVariant separableConv2d();  // conv2d_separable.cu
Conv2dVariant separableTilesConv2d();  // conv2d_separable.cu
Conv2dVariant separableMmaConv2d();  // conv2d_separable.cu
Conv2dVariant rowsMmaConv2d();    // conv2d_rows_mma.cu
Conv2dVariant directMmaConv2d();  // conv2d_direct_mma.cu
Conv2dVariant integerConv2d();    // conv2d_separable.cu
Conv2dVariant stagedRowsConv2d();  // conv2d_separable.cu
Conv2dVariant dp4aConv2d();       // conv2d_dp4a.cu
Conv2dVariant dp2aConv2d();       // conv2d_dp4a.cu

/// conv2d's registry (conv2d.cpp).
const VariantRegistry<Conv2dProblem, Conv2dLaunch>& conv2dVariants();

} // namespace kl::gpu
