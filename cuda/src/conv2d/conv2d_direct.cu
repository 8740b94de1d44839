// conv2d's direct variants: one output pixel per thread, all its channels, every tap read
// through borderIndex.
//   naive     taps and input from global memory.
//   constant  the taps in __constant__ memory: all threads of a warp read the same tap,
//             which the constant cache broadcasts.
#include "conv2d_device.cuh"

namespace kl::gpu {
namespace {

__constant__ float cTaps[kMaxTaps];  // constant: row-major kRows x kCols

template <bool ConstantTaps> __device__ float tapAt(const float* taps, int t)
{
    if constexpr (ConstantTaps) return cTaps[t];
    else return taps[t];
}

template <typename In, typename Out, int CN, bool ConstantTaps> __global__ void conv2dDirect(StripArgs<In, Out> a)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= a.cols) return;
    const int rx = a.kCols / 2;
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < a.rows; y += gridDim.y * blockDim.y) {
        float sum[CN] = {};
        for (int i = 0; i < a.kRows; ++i) {
            const bool borderRow = a.borderRow(y + i);
            const In* row = a.inRow(y + i);
            float rowSum[CN] = {};
            for (int j = 0; j < a.kCols; ++j) {
                const float tap = tapAt<ConstantTaps>(a.taps, i * a.kCols + j);
                const int sx = borderIndex(x + j - rx, a.cols, a.border);
#pragma unroll
                for (int c = 0; c < CN; ++c)
                    rowSum[c] = fmaf(tap, borderRow || sx < 0 ? a.borderValue : float(row[size_t(sx) * CN + c]), rowSum[c]);
            }
#pragma unroll
            for (int c = 0; c < CN; ++c) sum[c] += rowSum[c];
        }
        storePixel<Out, CN>(a.outRow(y) + x * CN, sum);
    }
}

std::vector<float> tapsOf(const Conv2dProblem& problem)
{
    return std::vector<float>(problem.kernel.begin<float>(), problem.kernel.end<float>());
}

template <bool ConstantTaps> void computeDirect(const Conv2dRun& run, int chunk, cudaStream_t stream)
{
    withStrip(run, chunk, [&](const auto& a, auto cn) {
        using A = std::decay_t<decltype(a)>;
        conv2dDirect<typename A::InType, typename A::OutType, decltype(cn)::value, ConstantTaps>
            <<<gridFor(a.cols, a.rows, kBlockX, kBlockY), dim3(kBlockX, kBlockY), 0, stream>>>(a);
    });
    KL_CHECK_LAUNCH();
}

void prepareNaive(const Conv2dProblem& problem, Conv2dRun& run, BufferCache& cache, cudaStream_t stream)
{
    const std::vector<float> taps = tapsOf(problem);
    run.taps = static_cast<float*>(cache.device("conv2d.taps", taps.size() * sizeof(float)));
    KL_CUDA_TRY(cudaMemcpyAsync(run.taps, taps.data(), taps.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
    KL_CUDA_TRY(cudaStreamSynchronize(stream));  // `taps` is pageable and about to go
}

void prepareConstant(const Conv2dProblem& problem, Conv2dRun&, BufferCache&, cudaStream_t stream)
{
    const std::vector<float> taps = tapsOf(problem);
    copyToSymbol(cTaps, taps, stream);
    KL_CUDA_TRY(cudaStreamSynchronize(stream));
}

} // namespace

Conv2dVariant naiveConv2d()
{
    return {"naive", "one pixel per thread; taps and input from global memory", nullptr,
            {prepareNaive, computeDirect<false>, false}};
}

Conv2dVariant constantConv2d()
{
    return {"constant", "naive with the taps in constant memory (one broadcast read per tap per warp)", nullptr,
            {prepareConstant, computeDirect<true>, true}};
}

} // namespace kl::gpu
