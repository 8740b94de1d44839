#pragma once
// The tensor-core product and byte planes conv2d's mma variants share (separable-mma, rows-mma, direct-mma). Each
// variant's fragments hold exact f16 values: input bytes as normal f16 (normalBytes) and taps as two
// f16 halves (splitMmaTaps), so the products are exact in the f32 sums.
#include "conv2d_variants.hpp"

#include <cstdint>
#include <vector>

namespace kl::gpu {
namespace {

/// Two f16 whose bits are bytes (the subnormals byte * 2^-24) as the normal f16 byte *
/// 2^kMmaByteExponent, exactly (0 stays 0). The tensor cores align an mma's products to the largest
/// exponent, a subnormal input's taken as the smallest normal's, 2^-14: bytes as subnormals lost up to
/// 10 bits of a sum, more the darker the image (docs/performance.md, "Fifty-ninth step").
__device__ uint32_t normalBytes(uint32_t byteBits)
{
    constexpr uint32_t scale = (24 + kMmaByteExponent + 15) << 10;  // 2^(24 + kMmaByteExponent) in f16
    static_assert(24 + kMmaByteExponent >= 10 && 24 + kMmaByteExponent <= 15,
                  "every byte but 0 lands normal; the scale is an f16");
    uint32_t normal;
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(normal) : "r"(byteBits), "r"(scale | scale << 16));
    return normal;
}

/// The low bytes of a word's two u16 elements as two normal f16 (normalBytes), in element order.
__device__ uint32_t lowBytes(uint32_t w) { return normalBytes(__byte_perm(w, 0, 0x4240)); }
/// The high bytes of a word's two u16 elements as two normal f16, in element order.
__device__ uint32_t highBytes(uint32_t w) { return normalBytes(__byte_perm(w, 0, 0x4341)); }

/// Four 8 x 8 matrices of b16 from shared memory by one ldmatrix, transposed if `Transpose`: lanes
/// 8i .. 8i + 7 pass the addresses of matrix i's rows, and register i holds matrix i.
template <bool Transpose> __device__ void loadMatrices(const uint16_t* row, uint32_t (&r)[4])
{
    const unsigned address = unsigned(__cvta_generic_to_shared(row));
    if constexpr (Transpose)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(address)
                     : "memory");
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(address)
                     : "memory");
}

/// N sets of a variant's taps as mma B fragments (16 x 8, k x n), b[j][h] for set j and half h
/// (splitMmaTaps' high, then low), register 0 k 0 .. 7 and register 1 k 8 .. 15: register r of lane l
/// at index ((j * 2 + h) * 2 + r) * 32 + l of `fragments`, so that a warp loads each in one transaction.
template <int N> struct TapFragments {
    uint32_t b[N][2][2];
    __device__ explicit TapFragments(const uint32_t* fragments)
    {
        const int lane = threadIdx.x % 32;
#pragma unroll
        for (int j = 0; j < N; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int r = 0; r < 2; ++r) b[j][h][r] = __ldg(fragments + ((j * 2 + h) * 2 + r) * 32 + lane);
    }
};

/// TapFragments' registers of `sets` sets on the host, in its order: tapBits(j, h, k, n) gives the f16 bits of
/// B[k][n] of set j, half h.
template <typename TapBits> std::vector<uint32_t> tapFragments(int sets, TapBits&& tapBits)
{
    std::vector<uint32_t> fragments;
    for (int j = 0; j < sets; ++j)
        for (int h = 0; h < 2; ++h)
            for (int r = 0; r < 2; ++r)
                for (int lane = 0; lane < 32; ++lane) {
                    // register r of lane l: rows (k) 2 (l % 4) + 8r and the next of column (n) l / 4
                    const int n = lane / 4, k = 2 * (lane % 4) + 8 * r;
                    fragments.push_back(uint32_t(tapBits(j, h, k, n)) | uint32_t(tapBits(j, h, k + 1, n)) << 16);
                }
    return fragments;
}

/// d += a * b (m16n8k16, f16 in, f32 sums).
__device__ void mmaAccumulate(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
#if __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

} // namespace
} // namespace kl::gpu
