// Reproduces the u16 x4 3x3 case past the tie band and emulates rows-mma's sums under two models of the
// tensor cores' accumulation. Both: products exact; terms aligned to the largest exponent and truncated
// to 24 + g bits; the sum rounded toward zero to f32. "actual": a product's exponent is its own; "nominal"
// (added in the fifty-ninth step): a product's exponent is its inputs' sum, an f16 subnormal input's
// taken as 2^-14, the smallest normal's, as rows-mma's byte inputs then were.
#include "kernellab/conv2d.hpp"
#include "mma_sum_model.hpp"
#include "probe_kernels.hpp"
#include <opencv2/core.hpp>
#include <cmath>
#include <cstdio>
#include <vector>

int main()
{
    const uint64_t seed = 52678;
    cv::Mat input(9001, 19, CV_16UC4);
    cv::RNG rng(seed);
    rng.fill(input, cv::RNG::UNIFORM, 0, 65536);
    kl::Conv2DSpec spec;
    spec.kernel = positiveRandomKernel(3, 1, seed) * positiveRandomKernel(1, 3, seed + 1);
    spec.border = kl::BorderMode::Reflect;
    spec.flipKernel = true;
    const int y = 2413, x = 11, c = 1;
    double magnitude = 0;
    const double s = kl::conv2dReferenceSumAt(input, spec, y, x, c, &magnitude);
    std::printf("reference sum %.10f, magnitude %.6f, band %.6f\n", s, magnitude, 1e-6 * magnitude);
    const auto f = kl::separateKernel(kl::effectiveKernel(spec));
    const std::vector<float>& row = f->row;
    const std::vector<float>& col = f->column;
    const SplitTaps taps = *splitTaps(row, col, -24);  // bytes as f16 subnormals, byte * 2^-24
    const std::vector<double>&hi = taps.high, &lo = taps.low;
    const std::vector<float>& colScaled = taps.scaled;
    // f32 exact-ish reference of the factored sum
    double factored = 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) factored += double(col[i]) * row[j] * input.at<cv::Vec4w>(y + i - 1, x + j - 1)[c];
    std::printf("factored sum (f64) %.10f\n", factored);
    for (int g = -8; g <= 5; ++g) {
        float out = 0, outNominal = 0;
        for (bool nominal : {false, true}) {
            float rowSum[3];
            for (int i = 0; i < 3; ++i) {
                std::vector<Term> low, high;
                const auto add = [&](std::vector<Term>& terms, unsigned byte, double tap, int plane) {
                    const double product = std::ldexp(double(byte), -24 + 8 * plane) * tap;
                    const int exponent = nominal ? -14 + std::ilogb(tap) + 8 * plane : std::ilogb(product);
                    terms.push_back({product, exponent});
                };
                for (int j = 0; j < 3; ++j) {
                    const unsigned v = input.at<cv::Vec4w>(y + i - 1, x + j - 1)[c];
                    add(low, v & 255, lo[j], 0);
                    add(low, v >> 8, lo[j], 1);
                    add(high, v & 255, hi[j], 0);
                    add(high, v >> 8, hi[j], 1);
                }
                rowSum[i] = mmaSum(mmaSum(0.0f, low, g), high, g);
            }
            float sum = colScaled[0] * rowSum[0];
            sum = std::fmaf(colScaled[1], rowSum[1], sum);
            sum = std::fmaf(colScaled[2], rowSum[2], sum);
            (nominal ? outNominal : out) = sum;
        }
        // exact row sums (no truncation), same column pass
        float rowExact[3];
        for (int i = 0; i < 3; ++i) {
            double t = 0;
            for (int j = 0; j < 3; ++j) t += double(input.at<cv::Vec4w>(y + i - 1, x + j - 1)[c]) * (hi[j] + lo[j]);
            rowExact[i] = float(std::ldexp(t, -24));
        }
        float outExact = colScaled[0] * rowExact[0];
        outExact = std::fmaf(colScaled[1], rowExact[1], outExact);
        outExact = std::fmaf(colScaled[2], rowExact[2], outExact);
        std::printf("g=%d: actual exponents: out %.6f (rounds to %.0f); nominal: %.6f (rounds to %.0f); row sums RN-exact: out %.6f\n", g,
                    out, std::nearbyint(out), outNominal, std::nearbyint(outNominal), outExact);
    }
}
