// kernellab: block 256x1
// The tutorials' naive 1D convolution: one thread per output sample (x), one grid row per
// channel (y); every tap and sample read from global memory.
#include <kernellab.cuh>

__global__ void conv1d_naive(kl::Conv1dArgs a)
{
    const long long n = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int c = blockIdx.y;
    if (n >= a.outFrames || c >= a.channels) return;
    const long long full = n + a.offset;  // index into the full convolution
    const long long first = full - (a.tapCount - 1) > 0 ? full - (a.tapCount - 1) : 0;
    const long long last = full < a.frames - 1 ? full : a.frames - 1;
    const float* x = a.in + c * a.frames;
    float sum = 0.f;
    for (long long k = first; k <= last; ++k) sum += x[k] * a.taps[full - k];
    a.out[c * a.outFrames + n] = sum;
}
