#pragma once
// The rounding rule for integer outputs, shared by CPU and GPU: round to
// nearest, ties to even (as cvRound / __float2int_rn), then saturate to the
// depth's range. NaN becomes 0.
#include "kernellab/host_device.hpp"

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace kl {

template <typename T> struct OutputLimits;
template <> struct OutputLimits<uint8_t> { static constexpr float lo = 0.f, hi = 255.f; };
template <> struct OutputLimits<uint16_t> { static constexpr float lo = 0.f, hi = 65535.f; };

/// Converts an accumulated value to the output type T (uint8_t, uint16_t or float).
template <typename T> KL_HD inline T saturateRound(float v)
{
    if constexpr (std::is_same<T, float>::value) {
        return v;
    } else {
        if (!(v == v)) return T(0);
        v = v < OutputLimits<T>::lo ? OutputLimits<T>::lo : (v > OutputLimits<T>::hi ? OutputLimits<T>::hi : v);
#ifdef __CUDA_ARCH__
        return T(__float2int_rn(v));
#else
        return T(std::nearbyint(v));  // default FE_TONEAREST: ties to even
#endif
    }
}

} // namespace kl
