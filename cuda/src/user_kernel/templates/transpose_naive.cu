// kernellab: block 32x8
// The tutorials' naive transpose: one thread per pixel. Reads along a row are coalesced;
// the writes go down a column of the output, one row apart each, so every warp's store
// touches 32 different rows.
#include <kernellab.cuh>

__global__ void transpose_naive(kl::TransposeArgs a)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= a.cols || y >= a.rows) return;
    for (int c = 0; c < a.channels; ++c)
        a.out[x * a.outPitch + y * a.channels + c] = a.in[y * a.inPitch + x * a.channels + c];
}
