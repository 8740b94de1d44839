// kernellab: block 32x8 tile 32x32
// Tiled and padded: transpose_tiled with one spare element per tile row. The reads down
// a tile column then fall in 32 different banks instead of one (for f32; narrower
// elements share banks differently), so the shared-memory side no longer serializes.
#include <kernellab.cuh>

constexpr int kMaxChannels = 4;

__global__ void transpose_padded(kl::TransposeArgs a)
{
    __shared__ kl::In tile[KL_TILE_Y][KL_TILE_X * kMaxChannels + 1];
    const int x0 = blockIdx.x * KL_TILE_X, y0 = blockIdx.y * KL_TILE_Y;
    const int channels = a.channels;

    for (int dy = threadIdx.y; dy < KL_TILE_Y; dy += KL_BLOCK_Y) {
        const int x = x0 + threadIdx.x, y = y0 + dy;
        if (x < a.cols && y < a.rows)
            for (int c = 0; c < channels; ++c) tile[dy][threadIdx.x * channels + c] = a.in[y * a.inPitch + x * channels + c];
    }
    __syncthreads();

    // Output row x0 + dx holds input column x0 + dx; its pixels y0 .. y0 + 31 come from tile column dx.
    for (int dx = threadIdx.y; dx < KL_TILE_X; dx += KL_BLOCK_Y) {
        const int outRow = x0 + dx, outColumn = y0 + threadIdx.x;
        if (outRow < a.cols && outColumn < a.rows)
            for (int c = 0; c < channels; ++c)
                a.out[outRow * a.outPitch + outColumn * channels + c] = tile[threadIdx.x][dx * channels + c];
    }
}
