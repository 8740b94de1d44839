// Stand-alone model (not part of the project; runs without a GPU): rows-mma's and separable-mma's u8/u16
// sums under a model of the H200's mma (f16 in, f32 sums), on tie_probe's cases, printed as tie_probe
// prints them, so that the two outputs can be compared line for line.
//
// The mma model: the products are exact; each is aligned to the largest exponent among them and the
// accumulator, and cut toward zero at 2^(top - 23 - g); the sum is rounded toward zero to f32. An f16
// subnormal input counts with the smallest normal's exponent, 2^-14. `subnormal` feeds the bytes as
// their own bits (b * 2^-24, as the variants did up to 6ab55a1), `normal` as b * 2^-10 (normalBytes).
// The variants' structure as in cuda/src/conv2d: which products each mma sums, in which order (the
// taps' low halves first), the f32 fma chain of the other pass, taps split as splitMmaTaps splits them.
//
// mma_variants_model G subnormal|normal IMAGES SIDE U16_TOP U8_TOP [gaussian]: kernel sizes 3, 9, 15, 1
// and 4 channels (tie_probe's `few`); tie_probe's random positive kernels, or with `gaussian` the
// preset's Gaussians (OpenCV's default sigma).
#include "kernellab/acceptance.hpp"
#include "kernellab/conv2d.hpp"
#include "../bench-h200-2026-12-04e/positive_kernel.hpp"
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

int g = 2;
bool subnormalBytes = true;

float roundTowardZero(double v)
{
    float f = float(v);
    if (std::fabs(double(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
    return f;
}

/// One mma's column: acc plus the products of `bytes` and `taps` (f16 values; 0 where outside the kernel).
float mmaStep(float acc, const std::vector<int>& bytes, const std::vector<double>& taps)
{
    const double byteScale = std::ldexp(1.0, subnormalBytes ? -24 : -10);
    int top = acc != 0 ? std::ilogb(acc) : INT32_MIN;
    std::vector<double> products(bytes.size());
    for (size_t i = 0; i < bytes.size(); ++i) {
        products[i] = bytes[i] * byteScale * taps[i];
        if (products[i] == 0) continue;
        const int exponent = subnormalBytes ? -14 + std::ilogb(taps[i]) : std::ilogb(products[i]);
        top = std::max(top, exponent);
    }
    if (top == INT32_MIN) return 0;
    const double unit = std::ldexp(1.0, top - 23 - g);
    double sum = std::trunc(double(acc) / unit) * unit;
    for (double p : products) sum += std::trunc(p / unit) * unit;
    return roundTowardZero(sum);
}

/// splitMmaTaps: the mma pass's taps times 2^e as two f16 halves, the other pass's scaled to match.
struct Split {
    std::vector<double> high, low;
    std::vector<float> scaled;
};
Split split(const std::vector<float>& mmaPass, const std::vector<float>& fmaPass)
{
    double largest = 0;
    for (float t : mmaPass) largest = std::max(largest, double(std::fabs(t)));
    const int e = 6 - std::ilogb(largest);
    Split s;
    for (float t : mmaPass) {
        const float scaled = std::ldexp(t, e), high = float(cv::float16_t(scaled));
        s.high.push_back(high);
        s.low.push_back(float(cv::float16_t(scaled - high)));
    }
    for (float t : fmaPass) s.scaled.push_back(std::ldexp(t, (subnormalBytes ? 24 : 10) - e));
    return s;
}

/// The f32 pass: sum_j taps[j] * values[j], a multiply then an fma chain, taps in order.
float fmaChain(const std::vector<float>& taps, const std::vector<float>& values)
{
    float sum = taps[0] * values[0];
    for (size_t j = 1; j < taps.size(); ++j) sum = std::fmaf(taps[j], values[j], sum);
    return sum;
}

/// One channel of an image, bordered by `margin` (reflect), as int.
struct Plane {
    cv::Mat values;
    int margin;
    int at(int y, int x) const { return values.at<int>(y + margin, x + margin); }
};

/// rows-mma's row sum of output column x on row y: u16 blocks of 8 pixels' low and high bytes at
/// tile offsets -1, 0, 1 (rowPass); u8 blocks of 16 pixels, from the tile's pixel -16 and 0 (even
/// tiles) or -8 and 8 (byteRowPass). Tiles of 8 pixels from column 0.
float rowsMmaRowSum(const Plane& in, int y, int x, const Split& taps, bool u8)
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
float separableMmaColumnSum(const Plane& in, int y, int x, const Split& taps, bool u8)
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

} // namespace

int main(int argc, char** argv)
{
    if (argc < 7) {
        std::fprintf(stderr, "usage: mma_variants_model G subnormal|normal IMAGES SIDE U16_TOP U8_TOP [gaussian]\n");
        return 2;
    }
    g = std::atoi(argv[1]);
    subnormalBytes = std::string(argv[2]) == "subnormal";
    const int images = std::atoi(argv[3]), side = std::atoi(argv[4]), topU16 = std::atoi(argv[5]), topU8 = std::atoi(argv[6]);
    const bool gaussian = argc > 7 && std::string(argv[7]) == "gaussian";
    for (const std::string variant : {"rows-mma", "separable-mma"})
        for (int depth : {CV_16U, CV_8U})
            for (int channels : {1, 4})
                for (int k : {3, 9, 15}) {
                    const bool u8 = depth == CV_8U;
                    long elements = 0, differ = 0, outside = 0;
                    double worst = 0;
                    for (int n = 0; n < images; ++n) {
                        const uint64_t seed = 1000 * k + 100 * channels + n + (u8 ? 50000 : 0);
                        cv::Mat input(side + n, side - n, CV_MAKETYPE(depth, channels));
                        cv::RNG rng(seed);
                        rng.fill(input, cv::RNG::UNIFORM, 0, u8 ? topU8 : topU16);
                        kl::Conv2DSpec spec;
                        const cv::Mat gaussianFactor = cv::getGaussianKernel(k, 0, CV_32F);
                        spec.kernel = gaussian ? cv::Mat(gaussianFactor * gaussianFactor.t())
                                               : cv::Mat(positiveRandomKernel(k, 1, seed) * positiveRandomKernel(1, k, seed + 7));
                        spec.border = kl::BorderMode::Reflect;
                        const cv::Mat ref = kl::conv2dReference(input, spec);
                        const auto factors = kl::separateKernel(kl::effectiveKernel(spec));
                        const bool rows = variant == "rows-mma";
                        const Split taps = rows ? split(factors->row, factors->column) : split(factors->column, factors->row);
                        std::vector<cv::Mat> planes;
                        cv::split(input, planes);
                        for (int c = 0; c < channels; ++c) {
                            Plane in{cv::Mat(), k / 2 + 24};
                            cv::Mat bordered;
                            cv::copyMakeBorder(planes[c], bordered, in.margin, in.margin, in.margin, in.margin, cv::BORDER_REFLECT);
                            bordered.convertTo(in.values, CV_32S);
                            // The mma pass for every row (rows-mma) or column (separable-mma) the other pass reads.
                            const int radius = k / 2;
                            cv::Mat mid(input.rows + (rows ? k - 1 : 0), input.cols + (rows ? 0 : k - 1), CV_32F);
                            for (int y = 0; y < mid.rows; ++y)
                                for (int x = 0; x < mid.cols; ++x)
                                    mid.at<float>(y, x) = rows ? rowsMmaRowSum(in, y - radius, x, taps, u8)
                                                               : separableMmaColumnSum(in, y, x - radius, taps, u8);
                            for (int y = 0; y < input.rows; ++y)
                                for (int x = 0; x < input.cols; ++x) {
                                    std::vector<float> values(k);
                                    for (int i = 0; i < k; ++i)
                                        values[i] = rows ? mid.at<float>(y + i, x) : mid.at<float>(y, x + i);
                                    const float sum = fmaChain(taps.scaled, values);
                                    const int got = int(std::clamp(std::nearbyint(sum), 0.0f, u8 ? 255.0f : 65535.0f));
                                    const int expected = u8 ? ref.ptr<uint8_t>(y)[x * channels + c] : ref.ptr<uint16_t>(y)[x * channels + c];
                                    ++elements;
                                    if (got == expected) continue;
                                    ++differ;
                                    double magnitude = 0;
                                    const double s = kl::conv2dReferenceSumAt(input, spec, y, x, c, &magnitude);
                                    const double rel = std::fabs(s - (std::floor(s) + 0.5)) / magnitude;
                                    worst = std::max(worst, rel);
                                    if (rel > kl::kTieRelTolerance) ++outside;
                                }
                        }
                    }
                    std::printf("range %d: %s %s x%d k=%d: %ld elements, %ld differ, %ld outside the band, worst %.3g of sum|K in|\n",
                                u8 ? topU8 : topU16, variant.c_str(), u8 ? "u8" : "u16", channels, k, elements, differ, outside, worst);
                    std::fflush(stdout);
                }
}
