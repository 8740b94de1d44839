// Stand-alone probe (not part of the project; fifty-ninth step, call 1): one mma.m16n8k16 (f16 in, f32
// sums, C = 0) whose A holds random bytes b either as f16 subnormals (the byte's bits: b * 2^-24, as
// the mma variants fed them) or as normal f16 integers (b), and whose B holds random f16 taps of
// exponents -6 .. 6. For each D element: its error against the exact sum, in units of 2^(e - 23), e the
// exponent of its largest product (the subnormal results scaled back by 2^24 first); worst and mean
// over 4000 products of 16 x 8 sums, for bytes from 0 to 255, 127, 31, 15 and 3.
// Build: nvcc -O2 -arch=sm_90 -o mma_subnormal mma_subnormal.cu
#include <cuda_fp16.h>
#include <cstdio>
#include <cstdint>
#include <cmath>
#include <random>
#include <vector>
#include <algorithm>

__global__ void mmaOnce(const uint16_t* a, const uint16_t* b, float* d)
{
    const int lane = threadIdx.x, g = lane / 4, q = lane % 4;
    auto A = [&](int r, int k) { return uint32_t(a[r * 16 + k]); };
    auto B = [&](int k, int n) { return uint32_t(b[k * 8 + n]); };
    uint32_t ra[4], rb[2];
    ra[0] = A(g, 2 * q) | A(g, 2 * q + 1) << 16;
    ra[1] = A(g + 8, 2 * q) | A(g + 8, 2 * q + 1) << 16;
    ra[2] = A(g, 2 * q + 8) | A(g, 2 * q + 9) << 16;
    ra[3] = A(g + 8, 2 * q + 8) | A(g + 8, 2 * q + 9) << 16;
    rb[0] = B(2 * q, g) | B(2 * q + 1, g) << 16;
    rb[1] = B(2 * q + 8, g) | B(2 * q + 9, g) << 16;
    float c[4] = {0, 0, 0, 0};
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
    d[g * 8 + 2 * q] = c[0], d[g * 8 + 2 * q + 1] = c[1], d[(g + 8) * 8 + 2 * q] = c[2], d[(g + 8) * 8 + 2 * q + 1] = c[3];
}

int main()
{
    uint16_t *a, *b; float* d;
    cudaMallocManaged(&a, 256 * 2); cudaMallocManaged(&b, 128 * 2); cudaMallocManaged(&d, 128 * 4);
    std::mt19937 rng(7);
    for (int maxByte : {255, 127, 31, 15, 3}) {
        for (int normal = 0; normal < 2; ++normal) {
            double worst = 0, meanAbs = 0; long n = 0;
            for (int trial = 0; trial < 4000; ++trial) {
                std::vector<int> bytes(256);
                for (int i = 0; i < 256; ++i) {
                    bytes[i] = std::uniform_int_distribution<int>(0, maxByte)(rng);
                    a[i] = normal ? __half_as_ushort(__float2half(float(bytes[i]))) : uint16_t(bytes[i]);
                }
                std::vector<float> taps(128);
                for (int i = 0; i < 128; ++i) {
                    const float t = __half2float(__float2half(std::ldexp(std::uniform_real_distribution<float>(0.5f, 1.0f)(rng),
                                                                 std::uniform_int_distribution<int>(-6, 6)(rng))));
                    taps[i] = t;
                    b[i] = __half_as_ushort(__float2half(t));
                }
                mmaOnce<<<1, 32>>>(a, b, d);
                cudaDeviceSynchronize();
                for (int m = 0; m < 16; ++m)
                    for (int nn = 0; nn < 8; ++nn) {
                        double exact = 0, largest = 0;
                        for (int k = 0; k < 16; ++k) {
                            const double p = double(bytes[m * 16 + k]) * taps[k * 8 + nn];
                            exact += p; largest = std::max(largest, std::fabs(p));
                        }
                        if (largest == 0) continue;
                        const double got = normal ? d[m * 8 + nn] : std::ldexp(double(d[m * 8 + nn]), 24);
                        const double ulps = std::fabs(got - exact) / std::ldexp(1.0, std::ilogb(largest) - 23);
                        worst = std::max(worst, ulps); meanAbs += ulps; ++n;
                    }
            }
            std::printf("bytes 0..%3d, %s: error in units of 2^-23 of the largest product: worst %.2f, mean %.3f\n", maxByte,
                        normal ? "normal f16 integers" : "f16 subnormals    ", worst, meanAbs / n);
        }
    }
}
