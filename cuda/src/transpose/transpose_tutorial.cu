// transpose's tutorial variants, the lessons of the classic "efficient matrix transpose":
//   naive         one element per thread; reads coalesced, writes strided by the
//                 output pitch, so every warp store touches 32 separate segments.
//   tiled         a 32x32 tile staged in shared memory so both reads and writes
//                 are coalesced; reading a tile column hits one bank 32 times.
//   tiled-padded  the same with one padding element per tile row: no bank conflicts.
#include "transpose_device.cuh"

#include <algorithm>

namespace kl::gpu {
namespace {

template <typename T> __global__ void transposeNaive(StripArgs<T> a)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < a.rows; y += gridDim.y * blockDim.y)
        if (x < a.cols) a.out[size_t(x) * a.outPitch + y] = a.in[size_t(y) * a.inPitch + x];
}

void launchNaive(const TransposeStrip& strip, cudaStream_t s)
{
    withTypedStrip(strip, [&](const auto& a) {
        using T = typename std::decay_t<decltype(a)>::Element;
        const dim3 grid((a.cols + 31) / 32, std::min((a.rows + 7u) / 8, kMaxGridY));
        transposeNaive<T><<<grid, dim3(32, 8), 0, s>>>(a);
    });
}

template <int Padding> void launchTiled(const TransposeStrip& strip, cudaStream_t s)
{
    withTypedStrip(strip, [&](const auto& a) {
        using T = typename std::decay_t<decltype(a)>::Element;
        const dim3 grid((a.cols + 31) / 32, std::min((a.rows + 31u) / 32, kMaxGridY));
        transposeTiled<T, 32, 8, Padding><<<grid, dim3(32, 8), 0, s>>>(a);
    });
}

} // namespace

void launchTiledPadded(const TransposeStrip& strip, cudaStream_t stream) { launchTiled<1>(strip, stream); }

TransposeVariant naiveTranspose()
{
    return {"naive", "one element per thread: coalesced reads, writes strided by the output pitch", nullptr,
            {launchNaive}};
}

TransposeVariant tiledTranspose()
{
    return {"tiled", "32x32 tiles through shared memory: both sides coalesced, tile columns hit one bank", nullptr,
            {launchTiled<0>}};
}

TransposeVariant tiledPaddedTranspose()
{
    return {"tiled-padded", "tiled with one padding element per tile row: no bank conflicts", nullptr,
            {launchTiledPadded}};
}

} // namespace kl::gpu
