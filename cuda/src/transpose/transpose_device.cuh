#pragma once
// What the transpose kernel families share: a strip's typed arguments, the tiled kernel
// (tiled and tiled-padded; optimized for 8-byte pixels), and the host-side
// dispatch from a strip's pixel size to an element type. Each family's .cu includes it.
#include "transpose_variants.hpp"

#include "kernellab/error.hpp"

#include <cstdint>
#include <string>
#include <type_traits>

namespace kl::gpu {
namespace {

/// A strip of `rows` input rows (pitch `inPitch` elements) transposed into `out`
/// (pitch `outPitch` elements): out[x * outPitch + y] = in[y * inPitch + x].
template <typename T> struct StripArgs {
    using Element = T;
    const T* in;
    T* out;
    int rows, cols;
    size_t inPitch, outPitch;
};

// Grids cap gridDim.y at 65535, so kernels stride over row blocks: any row count works.
constexpr unsigned kMaxGridY = 65535;

/// Tile of TILE x TILE elements, PAD extra elements per shared row, block TILE x ROWS threads.
template <typename T, int TILE, int ROWS, int PAD> __global__ void transposeTiled(StripArgs<T> a)
{
    __shared__ T tile[TILE][TILE + PAD];
    const int x0 = blockIdx.x * TILE;
    const int tx = threadIdx.x;
    for (int y0 = blockIdx.y * TILE; y0 < a.rows; y0 += gridDim.y * TILE) {
#pragma unroll
        for (int j = threadIdx.y; j < TILE; j += ROWS) {
            const int x = x0 + tx, y = y0 + j;
            if (x < a.cols && y < a.rows) tile[j][tx] = a.in[size_t(y) * a.inPitch + x];
        }
        __syncthreads();
#pragma unroll
        for (int j = threadIdx.y; j < TILE; j += ROWS) {
            const int outRow = x0 + j, outCol = y0 + tx;
            if (outRow < a.cols && outCol < a.rows) a.out[size_t(outRow) * a.outPitch + outCol] = tile[tx][j];
        }
        __syncthreads();  // the tile is refilled on the next row block
    }
}

/// Pixel-sized element types: each pixel moves as one T of the same size.
template <typename F> void withElementType(size_t pixelBytes, F&& f)
{
    switch (pixelBytes) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 3: f(uchar3{}); break;
    case 4: f(uint32_t{}); break;
    case 6: f(ushort3{}); break;
    case 8: f(uint2{}); break;
    case 12: f(uint3{}); break;
    case 16: f(uint4{}); break;
    default: throw InvalidArgument("transpose: pixel size " + std::to_string(pixelBytes) + " bytes is not supported");
    }
}

/// Calls launch(StripArgs<T>) with the strip's element type, then checks the launch.
template <typename F> void withTypedStrip(const TransposeStrip& s, F&& launch)
{
    if (s.rows == 0 || s.cols == 0) return;
    withElementType(s.pixelBytes, [&](auto tag) {
        using T = decltype(tag);
        launch(StripArgs<T>{reinterpret_cast<const T*>(s.in), reinterpret_cast<T*>(s.out), s.rows, s.cols, s.inPitch,
                            s.outPitch});
    });
    KL_CHECK_LAUNCH();
}

} // namespace
} // namespace kl::gpu
