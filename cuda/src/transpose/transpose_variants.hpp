#pragma once
// What transpose's host side (transpose.cpp: the registry, the chunked run) and its variant
// families (one .cu each, owning their kernels) share: the problem a variant is asked to run,
// one strip of it, and the descriptors each family registers. Host code only: no kernels here.
#include "../engine_internal.hpp"
#include "../variant_registry.hpp"

#include <cuda_runtime.h>

#include <cstddef>

namespace kl::gpu {

/// One strip of the problem, untyped: the launches pick the element type from pixelBytes.
struct TransposeStrip {
    const std::byte* in;
    std::byte* out;
    int rows, cols;
    size_t inPitch, outPitch;  ///< in pixels
    size_t pixelBytes;
};

/// What a transpose variant is asked to run.
struct TransposeProblem {
    size_t pixelBytes;
    const DeviceInfo& device;
};

/// A variant's launch: its kernels for one strip.
struct TransposeLaunch {
    void (*launch)(const TransposeStrip& strip, cudaStream_t stream) = nullptr;
};

using TransposeVariant = VariantDescriptor<TransposeProblem, TransposeLaunch>;

// The families, each defined in its own .cu beside its kernels.
TransposeVariant naiveTranspose();        // transpose_tutorial.cu
TransposeVariant tiledTranspose();        // transpose_tutorial.cu
TransposeVariant tiledPaddedTranspose();  // transpose_tutorial.cu
TransposeVariant optimizedTranspose();    // transpose_optimized.cu

/// tiled-padded's launch, which optimized runs for 12- and 16-byte pixels (transpose_tutorial.cu).
void launchTiledPadded(const TransposeStrip& strip, cudaStream_t stream);

/// transpose's registry (transpose.cpp).
const VariantRegistry<TransposeProblem, TransposeLaunch>& transposeVariants();

} // namespace kl::gpu
