#pragma once
// A model of rows-mma's and separable-mma's u8/u16 sums (stand-alone, not part of the project; runs
// without a GPU), shared by mma_variants_model.cpp and ../model-2026-12-05/test_cases_model.cpp.
//
// The mma model (mma_sum_model.hpp): the products are exact; each is aligned to the largest exponent
// among them and the accumulator, and cut toward zero at 2^(top - 23 - g); the sum is rounded toward
// zero to f32. An f16 subnormal input counts with the smallest normal's exponent, 2^-14.
// `subnormalBytes` feeds the bytes as their own bits (b * 2^-24, as the variants did up to 6ab55a1),
// else as b * 2^-10 (normalBytes). The variants' structure as in cuda/src/conv2d: which products each
// mma sums, in which order (the taps' low halves first), the f32 fma chain of the other pass, taps split
// as splitMmaTaps splits them.
#include "../bench-h200-2026-12-04e/mma_sum_model.hpp"
#include "kernellab/border.hpp"
#include "kernellab/conv2d.hpp"
#include <opencv2/core.hpp>
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace variants_model {

/// The cut: 2^(top - 23 - g); g = 2 fits the H200.
inline int g = 2;
/// Whether the bytes enter the mma as f16 subnormals (up to 6ab55a1) or as normal f16 (normalBytes).
inline bool subnormalBytes = true;

/// The bytes' exponent as they enter the mma: f16 subnormals (their own bits) or normal f16 (normalBytes).
inline int byteExponent() { return subnormalBytes ? -24 : -10; }

/// One mma's column: acc plus the products of `bytes` and `taps` (f16 values; 0 where outside the kernel).
inline float mmaStep(float acc, const std::vector<int>& bytes, const std::vector<double>& taps)
{
    std::vector<Term> terms;
    for (size_t i = 0; i < bytes.size(); ++i) {
        const double product = std::ldexp(double(bytes[i]), byteExponent()) * taps[i];
        terms.push_back({product, product == 0 ? 0 : subnormalBytes ? -14 + std::ilogb(taps[i]) : std::ilogb(product)});
    }
    return mmaSum(acc, terms, g);
}

/// The f32 pass: sum_j taps[j] * values[j], a multiply then an fma chain, taps in order.
inline float fmaChain(const std::vector<float>& taps, const std::vector<float>& values)
{
    float sum = taps[0] * values[0];
    for (size_t j = 1; j < taps.size(); ++j) sum = std::fmaf(taps[j], values[j], sum);
    return sum;
}

/// One channel of an image, bordered by `margin` as the spec borders it, as int.
struct Plane {
    cv::Mat values;
    int margin;
    int at(int y, int x) const { return values.at<int>(y + margin, x + margin); }
};

/// rows-mma's row sum of output column x on row y: u16 blocks of 8 pixels' low and high bytes at
/// tile offsets -1, 0, 1 (rowPass); u8 blocks of 16 pixels, from the tile's pixel -16 and 0 (even
/// tiles) or -8 and 8 (byteRowPass). Tiles of 8 pixels from column 0.
inline float rowsMmaRowSum(const Plane& in, int y, int x, const SplitTaps& taps, bool u8)
{
    const int k = int(taps.high.size()), radius = k / 2, tile = x / 8 * 8;
    float acc = 0;
    for (int half = 1; half >= 0; --half) {
        const std::vector<double>& t = half ? taps.low : taps.high;
        const auto tap = [&](int pixel) { const int j = pixel - x + radius; return j >= 0 && j < k ? t[j] : 0.0; };
        std::vector<int> bytes;
        std::vector<double> tapsOfBytes;
        if (u8) {
            const int first = tile / 8 % 2 == 0 ? tile - 16 : tile - 8;
            for (int block = 0; block < 2; ++block) {
                bytes.clear(), tapsOfBytes.clear();
                for (int q = 0; q < 16; ++q) {
                    const int pixel = first + 16 * block + q;
                    bytes.push_back(in.at(y, pixel));
                    tapsOfBytes.push_back(tap(pixel));
                }
                acc = mmaStep(acc, bytes, tapsOfBytes);
            }
            continue;
        }
        for (int offset = -1; offset <= 1; ++offset) {
            bytes.clear(), tapsOfBytes.clear();
            for (int q = 0; q < 8; ++q) {
                const int pixel = tile + 8 * offset + q, v = in.at(y, pixel);
                bytes.push_back(v & 255), tapsOfBytes.push_back(tap(pixel));
                bytes.push_back(v >> 8), tapsOfBytes.push_back(tap(pixel) * 256);
            }
            acc = mmaStep(acc, bytes, tapsOfBytes);
        }
    }
    return acc;
}

/// separable-mma's column sum of output row y, column x: tiles of 16 rows from row 0, two chunks of
/// 16 slice rows each; the taps' low halves first, then the low bytes' plane before the high bytes'
/// (mmaColumnPass).
inline float separableMmaColumnSum(const Plane& in, int y, int x, const SplitTaps& taps, bool u8)
{
    const int k = int(taps.high.size()), radius = k / 2, m = y % 16;
    float acc = 0;
    for (int half = 1; half >= 0; --half)
        for (int plane = 0; plane < (u8 ? 1 : 2); ++plane)
            for (int chunk = 0; chunk < 2; ++chunk) {
                std::vector<int> bytes;
                std::vector<double> tapsOfBytes;
                for (int row = 0; row < 16; ++row) {
                    const int j = 16 * chunk + row - m;  // the tap of slice row y - m + 16 chunk + row
                    const bool inside = j >= 0 && j < k;
                    const int v = inside ? in.at(y + j - radius, x) : 0;
                    bytes.push_back(u8 ? v : plane ? v >> 8 : v & 255);
                    tapsOfBytes.push_back(inside ? (half ? taps.low : taps.high)[j] * (plane ? 256 : 1) : 0.0);
                }
                acc = mmaStep(acc, bytes, tapsOfBytes);
            }
    return acc;
}

/// The variant's sums of `input` under `spec` (its f32 output; the integer output rounds them to nearest
/// even and saturates), rows-mma's for `rows`, else separable-mma's, with `taps` split for it.
inline cv::Mat variantSums(const cv::Mat& input, const kl::Conv2DSpec& spec, const SplitTaps& taps, bool rows)
{
    const int k = int(taps.high.size()), radius = k / 2, channels = input.channels();
    const bool u8 = input.depth() == CV_8U;
    cv::Mat sums(input.size(), CV_32FC(channels));
    std::vector<cv::Mat> planes;
    cv::split(input, planes);
    for (int c = 0; c < channels; ++c) {
        Plane in{cv::Mat(), radius + 24};
        cv::Mat bordered;
        cv::copyMakeBorder(planes[c], bordered, in.margin, in.margin, in.margin, in.margin, kl::toOpenCvBorder(spec.border),
                           cv::Scalar::all(spec.borderValue));
        bordered.convertTo(in.values, CV_32S);
        // The mma pass for every row (rows-mma) or column (separable-mma) the other pass reads.
        cv::Mat mid(input.rows + (rows ? k - 1 : 0), input.cols + (rows ? 0 : k - 1), CV_32F);
        for (int y = 0; y < mid.rows; ++y)
            for (int x = 0; x < mid.cols; ++x)
                mid.at<float>(y, x) = rows ? rowsMmaRowSum(in, y - radius, x, taps, u8) : separableMmaColumnSum(in, y, x - radius, taps, u8);
        std::vector<float> values(static_cast<size_t>(k));
        for (int y = 0; y < input.rows; ++y)
            for (int x = 0; x < input.cols; ++x) {
                for (int i = 0; i < k; ++i) values[size_t(i)] = rows ? mid.at<float>(y + i, x) : mid.at<float>(y, x + i);
                sums.ptr<float>(y)[x * channels + c] = fmaChain(taps.scaled, values);
            }
    }
    return sums;
}


/// The split of `spec`'s kernel for the variant (rows-mma's for `rows`), nullopt where it refuses it.
inline std::optional<SplitTaps> variantTaps(const kl::Conv2DSpec& spec, bool rows)
{
    const auto factors = kl::separateKernel(kl::effectiveKernel(spec));
    if (!factors) return std::nullopt;
    return rows ? splitTaps(factors->row, factors->column, byteExponent()) : splitTaps(factors->column, factors->row, byteExponent());
}

} // namespace variants_model
