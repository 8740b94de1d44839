#pragma once
// Border handling, written once for the CPU reference and the GPU kernels.
//
// For an index p outside [0, len) the modes give (len = 8, "abcdefgh"):
//   Constant    iiiiii|abcdefgh|iiiiiii   (i = the spec's border value)
//   Replicate   aaaaaa|abcdefgh|hhhhhhh
//   Reflect     fedcba|abcdefgh|hgfedcb
//   Reflect101  gfedcb|abcdefgh|gfedcba   (OpenCV's default)
//   Wrap        cdefgh|abcdefgh|abcdefg
// These are OpenCV's cv::BorderTypes; reflection repeats as often as needed, so a
// 63-tap kernel over a 1-pixel image is well defined.
#include "kernellab/host_device.hpp"

#ifndef __CUDACC_RTC__
#include <cmath>
#endif

namespace kl {

enum class BorderMode { Constant, Replicate, Reflect, Reflect101, Wrap };

/// The source index that p maps to, or -1 where the constant border value applies.
KL_HD inline int borderIndex(int p, int len, BorderMode mode)
{
    if (p >= 0 && p < len) return p;
    switch (mode) {
    case BorderMode::Constant: return -1;
    case BorderMode::Replicate: return p < 0 ? 0 : len - 1;
    case BorderMode::Reflect:
    case BorderMode::Reflect101: {
        if (len == 1) return 0;
        const int delta = mode == BorderMode::Reflect101 ? 1 : 0;
        do {
            p = p < 0 ? -p - 1 + delta : 2 * len - 1 - p - delta;
        } while (p < 0 || p >= len);
        return p;
    }
    case BorderMode::Wrap: {
        p %= len;
        return p < 0 ? p + len : p;
    }
    }
    return -1;
}

/// Whether a constant border value is one an element of an integer image holds: a whole number in
/// [0, largest] (255 for u8, 65535 for u16). Paths that handle the border as image elements (padded
/// copies, tiles staged in the image's own type) need it so; other values take their general path.
template <typename V> KL_HD inline bool isImageValue(V value, V largest)
{
#ifdef __CUDA_ARCH__
    return value >= 0 && value <= largest && value == trunc(value);
#else
    return value >= 0 && value <= largest && value == std::trunc(value);
#endif
}

} // namespace kl
