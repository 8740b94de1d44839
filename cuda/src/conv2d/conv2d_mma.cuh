#pragma once
// The tensor-core product and byte planes conv2d's mma variants share (separable-mma, rows-mma). Each
// variant's fragments hold exact f16 values: input bytes as f16 subnormals and taps as two f16 halves
// (splitMmaTaps), so the products are exact in the f32 sums.
#include <cstdint>

namespace kl::gpu {
namespace {

/// The low bytes of a word's two u16 elements as two f16 subnormals (byte * 2^-24), in element order.
__device__ uint32_t lowBytes(uint32_t w) { return __byte_perm(w, 0, 0x4240); }
/// The high bytes of a word's two u16 elements as two f16 subnormals, in element order.
__device__ uint32_t highBytes(uint32_t w) { return __byte_perm(w, 0, 0x4341); }

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
