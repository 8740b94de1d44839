#pragma once
// The rounding rule for integer outputs, shared by CPU and GPU: round to
// nearest, ties to even (as cvRound / __float2int_rn), then saturate to the
// depth's range. NaN becomes 0.
#include "kernellab/host_device.hpp"

#ifndef __CUDACC_RTC__
#include <cmath>
#endif

namespace kl {

// unsigned char / unsigned short are uint8_t / uint16_t, spelled so that NVRTC needs no <cstdint>.
template <typename T> struct OutputLimits;
template <> struct OutputLimits<unsigned char> { static constexpr float lo = 0.f, hi = 255.f; };
template <> struct OutputLimits<unsigned short> { static constexpr float lo = 0.f, hi = 65535.f; };

namespace detail {
template <typename T> struct IsFloat { static constexpr bool value = false; };
template <> struct IsFloat<float> { static constexpr bool value = true; };
} // namespace detail

#ifdef __CUDACC__
namespace detail {
/// cvt.rni.sat is this rule in one instruction: round to nearest even, saturate to the
/// destination's range, NaN to 0 (a clamp and F2I took four, F2I at a quarter of the rate). The
/// result is in the low 8 or 16 bits of a word whose other bits are unspecified: stores that pack
/// several take those bits by byte permutes, with no masking.
__device__ inline unsigned roundSaturateLow(float v, unsigned char)
{
    unsigned r;
    asm("cvt.rni.sat.u8.f32 %0, %1;" : "=r"(r) : "f"(v));
    return r;
}
__device__ inline unsigned roundSaturateLow(float v, unsigned short)
{
    unsigned r;
    asm("cvt.rni.sat.u16.f32 %0, %1;" : "=r"(r) : "f"(v));
    return r;
}
template <typename T> __device__ inline T roundSaturate(float v, T type)
{
    return static_cast<T>(roundSaturateLow(v, type));
}

/// high and low clamped to 0..255 in bytes 1 and 0, the low half of `upper` in bytes 3 and 2: one
/// instruction (cvt.pack.sat) for two results.
__device__ inline unsigned packSaturatedBytes(int high, int low, unsigned upper)
{
    unsigned d;
    asm("cvt.pack.sat.u8.s32.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(high), "r"(low), "r"(upper));
    return d;
}

/// a, b, c and d clamped to 0..255 and packed in memory order into one word (a in byte 0): two
/// packed conversions.
__device__ inline unsigned packSaturatedWord(int a, int b, int c, int d)
{
    return packSaturatedBytes(b, a, packSaturatedBytes(d, c, 0u));
}

/// Four u8 results by this rule, packed in memory order into one word. Each is rounded to s32
/// (cvt.rni: nearest, ties to even, NaN to 0) and then clamped to 0..255 by packSaturatedWord,
/// which is the same rule; ptxas makes each pair one packed conversion (F2IP), 2 instructions for
/// four bytes where roundSaturateLow and 3 byte permutes took 7.
__device__ inline unsigned roundSaturateBytes(float a, float b, float c, float d)
{
    const auto nearest = [](float v) {
        int r;
        asm("cvt.rni.s32.f32 %0, %1;" : "=r"(r) : "f"(v));
        return r;
    };
    return packSaturatedWord(nearest(a), nearest(b), nearest(c), nearest(d));
}
} // namespace detail
#endif

/// Converts an accumulated value to the output type T (uint8_t, uint16_t or float).
template <typename T> KL_HD inline T saturateRound(float v)
{
    if constexpr (detail::IsFloat<T>::value) {
        return v;
    } else {
#ifdef __CUDA_ARCH__
        return detail::roundSaturate(v, T{});
#else
        if (!(v == v)) return T(0);
        v = v < OutputLimits<T>::lo ? OutputLimits<T>::lo : (v > OutputLimits<T>::hi ? OutputLimits<T>::hi : v);
        return T(std::nearbyint(v));  // default FE_TONEAREST: ties to even
#endif
    }
}

} // namespace kl
