#pragma once
// A model of the H200's mma.m16n8k16 (f16 in, f32 sums) and of splitMmaTaps' split, shared by
// mma_model.cpp and ../bench-h200-2026-12-04f/mma_variants_model.cpp. The products are exact; each is
// aligned to the largest exponent among them and the accumulator, and cut toward zero at
// 2^(top - 23 - g); the sum is rounded toward zero to f32. Which exponent a product counts with is the
// caller's (an f16 subnormal input's taken as 2^-14 fits the H200 at g = 2).
#include <opencv2/core.hpp>
#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <optional>
#include <vector>

inline float roundTowardZero(double v)
{
    float f = float(v);  // to nearest
    if (std::fabs(double(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
    return f;
}

/// A product and the exponent the alignment takes for it.
struct Term {
    double value;
    int exponent;
};

/// One mma's column: acc plus the terms.
inline float mmaSum(float acc, const std::vector<Term>& terms, int g)
{
    int top = acc != 0 ? std::ilogb(acc) : INT_MIN;
    for (const Term& t : terms)
        if (t.value != 0) top = std::max(top, t.exponent);
    if (top == INT_MIN) return 0;
    const double unit = std::ldexp(1.0, top - 23 - g);
    double sum = std::trunc(double(acc) / unit) * unit;
    for (const Term& t : terms) sum += std::trunc(t.value / unit) * unit;
    return roundTowardZero(sum);
}

/// splitMmaTaps: the mma pass's taps times 2^e (the largest in [2^6, 2^7)) as two f16 halves, and the
/// f32 pass's times 2^(-byteExponent - e), for bytes that enter the mma as byte * 2^byteExponent;
/// nullopt where the variants refuse the kernel: two halves leave an mma pass tap off by more than 2^-22
/// of itself, or a scaled f32 pass tap leaves f32's normal range.
struct SplitTaps {
    std::vector<double> high, low;
    std::vector<float> scaled;
};
inline std::optional<SplitTaps> splitTaps(const std::vector<float>& mmaPass, const std::vector<float>& fmaPass,
                                          int byteExponent)
{
    double largest = 0;
    for (float t : mmaPass) largest = std::max(largest, double(std::fabs(t)));
    const int e = largest == 0 ? 0 : 6 - std::ilogb(largest);
    SplitTaps s;
    for (float t : mmaPass) {
        const float scaled = std::ldexp(t, e), high = float(cv::float16_t(scaled));
        s.high.push_back(high);
        s.low.push_back(float(cv::float16_t(scaled - high)));
        if (std::fabs(double(scaled) - s.high.back() - s.low.back()) > std::ldexp(std::fabs(double(scaled)), -22))
            return std::nullopt;
    }
    for (float t : fmaPass) {
        s.scaled.push_back(std::ldexp(t, -byteExponent - e));
        if (t != 0 && !(std::fabs(s.scaled.back()) >= FLT_MIN && std::fabs(s.scaled.back()) <= FLT_MAX)) return std::nullopt;
    }
    return s;
}
