// kernellab: block 16x16
// The tutorials' naive convolution: one thread per output pixel, every tap read from global
// memory. Each kernel row is summed on its own and the row sums then added, in order, as the
// built-in kernels do (docs/custom-kernels.md: why that stays within the acceptance rule).
#include <kernellab.cuh>

__global__ void conv2d_naive(kl::Conv2dArgs a)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= a.cols || y >= a.rows) return;
    for (int c = 0; c < a.channels; ++c) {
        float sum = 0.f;
        for (int i = 0; i < a.kRows; ++i) {
            const int row = kl::borderIndex(y + i - a.kRows / 2, a.rows, a.border);
            float rowSum = 0.f;
            for (int j = 0; j < a.kCols; ++j) {
                const int column = kl::borderIndex(x + j - a.kCols / 2, a.cols, a.border);
                const float v = row < 0 || column < 0 ? a.borderValue
                                                      : float(a.in[row * a.inPitch + column * a.channels + c]);
                rowSum += a.taps[i * a.kCols + j] * v;
            }
            sum += rowSum;
        }
        a.out[y * a.outPitch + x * a.channels + c] = kl::saturateRound<kl::Out>(sum);
    }
}
