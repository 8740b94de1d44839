// conv2d's tiled variants (kernels in conv2d_tiled.cuh).
//   shared  a block stages its input tile (output tile plus the kernel's halo) in shared
//           memory as f32, the border resolved while loading, with one vector load per 4
//           elements inside the row. Each thread computes 4 adjacent outputs in M adjacent
//           rows: per input row it loads the values its window needs into registers once and
//           feeds every output row and tap from them. Compiled sizes (conv2dFixed): the tile
//           keeps the channels interleaved as the image does, so a thread's 4 outputs are 4
//           adjacent elements and tap j sits j * channels elements along (one pass, vector
//           stores, for any channel count); loops fully unrolled, every tap at a constant
//           address (the uniform datapath loads two per ULDC and the FFMAs read them from
//           uniform registers). Other sizes (conv2dAny) stage one channel plane at a time and
//           keep the taps in shared memory, walking each kernel row in quads of taps.
//   tma     f32 single-channel images, square compiled sizes, compute capability 9.0+
//           (conv2dTma): shared's tiles and arithmetic, but the tiles arrive by the Tensor
//           Memory Accelerator. Persistent blocks walk the tiles; a ninth warp issues one
//           cp.async.bulk.tensor per tile into a ring of tile buffers (mbarrier completion), so
//           each block's next tiles load while it computes.
#include "conv2d_tiled.cuh"

#include "kernellab/image.hpp"

#include <cudaTypedefs.h>

namespace kl::gpu {
namespace {

/// The shared variant's kernel for a problem, its dynamic shared memory and output rows per block.
template <typename In, typename Out> struct SharedKernel {
    void (*kernel)(StripArgs<In, Out>) = nullptr;
    size_t bytes = 0;
    int rowsPerBlock = 0;
    int elementsPerPixel = 1;  ///< what a block's 128 columns count: pixels (1) or interleaved elements (CN)
};

/// conv2dFixed for square compiled sizes whose tile fits the device, else conv2dAny with the
/// tallest tile (4, 2 or 1 rows per thread) that fits.
template <typename In, typename Out, int CN> SharedKernel<In, Out> sharedKernel(int kRows, int kCols, size_t optInLimit)
{
    SharedKernel<In, Out> chosen;
    if (kRows == kCols)
        withFixedSize(kRows, [&](auto k) {
            constexpr int M = kFixedRowsPerThread;
            using T = FixedTile<decltype(k)::value, CN, M>;
            if (T::bytes <= optInLimit)
                chosen = {conv2dFixed<In, Out, CN, decltype(k)::value, M>, T::bytes, T::outRows, CN};
        });
    if (chosen.kernel) return chosen;
    const auto any = [&](auto m) {
        return SharedKernel<In, Out>{conv2dAny<In, Out, CN, decltype(m)::value>,
                                     anyTile(kRows, kCols, decltype(m)::value).bytes, kBlockY * decltype(m)::value};
    };
    for (const SharedKernel<In, Out>& k : {any(std::integral_constant<int, 4>{}), any(std::integral_constant<int, 2>{}),
                                           any(std::integral_constant<int, 1>{})})
        if (k.bytes <= optInLimit) return k;
    throw InvalidArgument("conv2d shared: a " + std::to_string(kCols) + "x" + std::to_string(kRows) +
                          " kernel needs " + formatBytes(any(std::integral_constant<int, 1>{}).bytes) +
                          " of shared memory per block; the device allows " + formatBytes(optInLimit));
}

void copyTaps(const Conv2dProblem& problem, cudaStream_t stream)
{
    copyToSymbol(cTaps, std::vector<float>(problem.kernel.begin<float>(), problem.kernel.end<float>()), stream);
    KL_CUDA_TRY(cudaStreamSynchronize(stream));  // the taps are pageable and about to go
}

void prepareShared(const Conv2dProblem& problem, Conv2dRun& run, BufferCache&, cudaStream_t stream)
{
    copyTaps(problem, stream);
    withElementTypes(run.inDepth, run.outDepth, [&](auto in, auto out) {
        withChannels(run.channels, [&](auto cn) {
            const auto k = sharedKernel<decltype(in), decltype(out), decltype(cn)::value>(
                run.kRows, run.kCols, problem.device.sharedMemoryPerBlockOptIn);
            optInSharedMemory(k.kernel, k.bytes, kBlockX * kBlockY);
        });
    });
}

void computeShared(const Conv2dRun& run, int chunk, cudaStream_t stream)
{
    withStrip(run, chunk, [&](const auto& a, auto cn) {
        using A = std::decay_t<decltype(a)>;
        const auto k = sharedKernel<typename A::InType, typename A::OutType, decltype(cn)::value>(
            a.kRows, a.kCols, run.sharedMemoryLimit);
        k.kernel<<<gridFor(a.cols * k.elementsPerPixel, a.rows, kTileCols, k.rowsPerBlock), dim3(kBlockX, kBlockY),
                   k.bytes, stream>>>(a);
    });
    KL_CHECK_LAUNCH();
}

// ---- tma --------------------------------------------------------------------------------------------

/// The driver's cuTensorMapEncodeTiled, reached through the runtime (nothing links libcuda).
PFN_cuTensorMapEncodeTiled_v12000 tensorMapEncoder()
{
    static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
        void* function = nullptr;
        cudaDriverEntryPointQueryResult found{};
        KL_CUDA_TRY(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault,
                                                     &found));
        if (found != cudaDriverEntryPointSuccess || !function)
            throw CudaError("conv2d tma: the CUDA driver has no cuTensorMapEncodeTiled", int(cudaErrorNotSupported));
        return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
    }();
    return encode;
}

/// Opts conv2dTma<K> in to its shared memory; returns the persistent grid's size.
template <int K> int configureTma(int multiprocessors)
{
    optInSharedMemory(conv2dTma<K>, TmaShape<K>::bytes, kTmaConsumers + 32, kTmaBlocksPerSM);
    return residentBlocks(conv2dTma<K>, kTmaConsumers + 32, TmaShape<K>::bytes, multiprocessors, kTmaBlocksPerSM);
}

/// A tensor map over a `cols` x `sliceRows` f32 slice at `slice` (rows `pitchBytes` apart) whose
/// box is conv2dTma<K>'s tile.
template <int K> CUtensorMap sliceTensorMap(const float* slice, int cols, int sliceRows, size_t pitchBytes)
{
    using T = typename TmaShape<K>::Tile;
    CUtensorMap map;
    const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(sliceRows)}, strides[1] = {cuuint64_t(pitchBytes)};
    const cuuint32_t box[2] = {cuuint32_t(T::cols), cuuint32_t(T::rows)}, elementStrides[2] = {1, 1};
    const CUresult r = tensorMapEncoder()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(slice), dims,
                                          strides, box, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                          CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        throw CudaError("conv2d tma: cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ")", int(r));
    return map;
}

std::string whyNotTma(const Conv2dProblem& p)
{
    const bool applies = p.input.depth() == CV_32F && p.outDepth == CV_32F && p.input.channels() == 1 &&
                         isCompiledSize(p.kRows, p.kCols) && p.device.deviceCodeArchitecture >= 900;
    if (applies) return {};
    return "needs a 32-bit float single-channel image with float output, a square " + compiledSizesText("or") +
           " kernel and a GPU of compute capability 9.0 or newer running device code built for 9.0 or newer; this is " +
           describeImage(p.input) + ", a " + p.kernelSize() + " kernel, " + describeCompute(p.device);
}

void prepareTma(const Conv2dProblem& problem, Conv2dRun& run, BufferCache&, cudaStream_t stream)
{
    copyTaps(problem, stream);
    withFixedSize(run.kRows, [&](auto k) {
        constexpr int K = decltype(k)::value;
        const int blocks = configureTma<K>(problem.device.multiprocessors);
        run.tmaPlans.clear();
        for (int c = 0; c < run.chunks; ++c) {
            const auto [r0, r1] = run.strip(c);
            const auto* slice = reinterpret_cast<const float*>(run.in + run.sliceStart(c) * run.inPitch);
            run.tmaPlans.push_back({sliceTensorMap<K>(slice, run.cols, r1 - r0 + run.halo(), run.inPitch), blocks});
        }
    });
}

void computeTma(const Conv2dRun& run, int chunk, cudaStream_t stream)
{
    const StripArgs<float, float> a = stripArgs<float, float>(run, chunk);
    const Conv2dRun::TmaPlan& plan = run.tmaPlans[size_t(chunk)];
    withFixedSize(a.kRows, [&](auto k) {
        constexpr int K = decltype(k)::value;
        using T = typename TmaShape<K>::Tile;
        const int tilesX = (a.cols + kTileCols - 1) / kTileCols, tiles = tilesX * ((a.rows + T::outRows - 1) / T::outRows);
        conv2dTma<K><<<std::min(tiles, plan.blocks), dim3(kBlockX, kBlockY + 1), TmaShape<K>::bytes, stream>>>(
            plan.map, a, tilesX, tiles);
    });
    KL_CHECK_LAUNCH();
}

} // namespace

Conv2dVariant sharedConv2d()
{
    return {"shared",
            "input tiles staged in shared memory; 4 pixels x 2 rows per thread, unrolled for " +
                compiledSizesText("and"),
            nullptr,
            {prepareShared, computeShared, true}};
}

Conv2dVariant tmaConv2d()
{
    return {"tma", "shared's tiles fetched by the Tensor Memory Accelerator into a ring of buffers (f32, 1 channel, sm_90+)",
            whyNotTma, {prepareTma, computeTma, true}};
}

} // namespace kl::gpu
