// kernellab: block 16x16
// The tutorials' first histogram: one thread per pixel, and every count an atomicAdd on
// global memory. Correct, and slow wherever many threads hit the same counter at once
// (a flat image: all of them).
#include <kernellab.cuh>

__device__ void countValue(const kl::HistogramArgs& a, int entry, double v)
{
    const int bin = kl::bin(a, v);
    if (bin >= 0) atomicAdd(&a.counts[entry * a.bins + bin], 1ull);
    else if (v != v) atomicAdd(&a.nanCount[entry], 1ull);
    else atomicAdd(&a.outOfRange[entry], 1ull);
}

__global__ void histogram_global_atomics(kl::HistogramArgs a)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= a.cols || y >= a.rows) return;
    const kl::In* pixel = a.in + y * a.pitch + x * a.channels;
    for (int c = 0; c < a.channels; ++c) countValue(a, c, double(pixel[c]));
    if (a.luminance) countValue(a, a.channels, kl::luminance(pixel));
}
