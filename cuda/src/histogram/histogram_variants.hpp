#pragma once
// What histogram's host side (histogram.cpp: binning, the registry, the run) and its variant
// families (one .cu each, owning their kernels) share: the problem a variant is asked to run,
// the resolved binning the kernels use, a variant's launch plan and the descriptors each
// family registers. Host code only: no kernels here.
#include "../engine_internal.hpp"
#include "../variant_registry.hpp"

#include "kernellab/histogram.hpp"
#include "kernellab/host_device.hpp"

#include <cuda_runtime.h>

#include <cstddef>

namespace kl::gpu {

constexpr int kSpecialSlots = 2;  // out-of-range, NaN

/// The resolved binning as the kernels use it.
struct BinRule {
    double scale, offset;
    int bins;
    bool u16ByShift;  ///< the default u16 binning, where histogramBin(v) == v >> 8
    FloatBinning fast;  ///< u16 and f32: histogramBinInRange's float form
    KL_HD int stride() const { return bins + kSpecialSlots; }
};

/// Pixels [first, last) of the image, counted from its start (which cudaMalloc aligns to 256 bytes).
struct PixelSpan {
    size_t first, last;
};

/// What a histogram variant is asked to run, and the image's format.
struct HistogramProblem {
    int depth, channels;
    bool luminance;
    /// Every value's bin is one of its bytes: u8, or u16 with the default 256 bins over [0, 65536).
    bool byteBins;
    const DeviceInfo& device;
};

/// The kernel a run launches and its shared-memory layout, decided once per run (prepare) so
/// that no runtime query sits between a chunk's timing events.
struct LaunchPlan {
    /// One chunk's kernel over the pixels of `span` (never empty) of `image`, whose format the
    /// plan was made for; adds into `counts`.
    using Launch = void (*)(const LaunchPlan& plan, const void* image, PixelSpan span, const BinRule& rule,
                            unsigned long long* counts, cudaStream_t stream);
    Launch launch = nullptr;
    size_t sharedBytes = 0;
    size_t pixelsPerBlock = 0;  ///< shared
    int copies = 1;             ///< warp atomics: sub-histograms per block
    int residentBlocks = 1;     ///< warp atomics, byte bins: the persistent grid
};

/// A variant's launch: its plan for the problem's format (the kernels then follow the plan).
struct HistogramLaunch {
    LaunchPlan (*plan)(const HistogramProblem& problem, const BinRule& rule, const cudaDeviceProp& device) = nullptr;
};

using HistogramVariant = VariantDescriptor<HistogramProblem, HistogramLaunch>;

// The families, each defined in its own .cu beside its kernels.
HistogramVariant globalAtomicsHistogram();  // histogram_atomics.cu
HistogramVariant sharedHistogram();         // histogram_atomics.cu
HistogramVariant optimizedHistogram();      // histogram_optimized.cu
HistogramVariant tmaHistogram();            // histogram_optimized.cu

/// global-atomics' plan, which shared and optimized fall back to where one histogram does not
/// fit a block's shared memory (histogram_atomics.cu).
LaunchPlan globalAtomicsHistogramPlan(const HistogramProblem& problem, const BinRule& rule,
                                      const cudaDeviceProp& device);

/// histogram's registry (histogram.cpp).
const VariantRegistry<HistogramProblem, HistogramLaunch>& histogramVariants();

} // namespace kl::gpu
