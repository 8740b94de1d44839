// Stand-alone model run (not part of the project; runs without a GPU): tst_conv2d_gpu's cases for
// rows-mma and separable-mma with signed and wide taps (checkSignedAndWideTaps, the same seeds,
// images, kernels, borders and flips), their outputs from the variants' model with the bytes as normal
// f16 (the code since 2cc7ace), judged by the acceptance rule as the test judges the GPU's.
// Prints each case's verdict and, per variant and depth, the differences near ties against the
// random-input bound.
//
// Built against build-h200 and the tests' support library (randomImage):
//   g++ -std=c++17 -O2 -Icore/include -Itests/support -I/usr/include/opencv4 $(pkg-config --cflags Qt6Test)
//     docs/model-2026-12-05/test_cases_model.cpp build-h200/tests/libkl_test_support.a -Lbuild-h200/core
//     -lkernellab_io -lkernellab_core -lopencv_core -lopencv_imgproc -lopencv_imgcodecs -lsndfile
//     $(pkg-config --libs Qt6Test) -o test_cases_model
#include "../bench-h200-2026-12-04e/probe_kernels.hpp"
#include "../bench-h200-2026-12-04f/mma_variants_model.hpp"
#include "kernellab/acceptance.hpp"
#include "kernellab/image.hpp"
#include "test_support.hpp"
#include <cstdio>
#include <string>

namespace {

/// The seed before each test's first signed-or-wide case: separable-mma draws 243 images a depth before
/// them (u8 first), rows-mma 134 for each depth and channel count, then the u16 cases, then the u8 ones.
uint64_t firstSeed(bool rows, int depth)
{
    if (rows) return 52000 + 6 * 134 + (depth == CV_8U ? 24 : 0);
    return 50000 + 243 + (depth == CV_16U ? 243 + 24 : 0);
}

} // namespace

int main()
{
    variants_model::subnormalBytes = false;
    for (const bool rows : {true, false})
        for (int depth : {CV_16U, CV_8U}) {
            uint64_t seed = firstSeed(rows, depth);
            kl::Verdict total;
            for (int k : {3, 15})
                for (int channels : {1, 3, 4})
                    for (const auto factor : {signedRandomKernel, wideRandomKernel})
                        for (bool floatOutput : {false, true}) {
                            const cv::Mat input = kltest::randomImage(1021, 263, depth, channels, ++seed);
                            kl::Conv2DSpec spec;
                            spec.kernel = factor(k, 1, seed) * factor(1, k, seed + 1);
                            spec.border = kl::BorderMode::Reflect101;
                            spec.flipKernel = seed % 2 == 0;
                            spec.floatOutput = floatOutput;
                            const auto taps = variants_model::variantTaps(spec, rows);
                            std::printf("%s %s x%d k=%d %s %s output: ", rows ? "rows-mma" : "separable-mma",
                                        kl::depthName(depth).c_str(), channels, k, factor == signedRandomKernel ? "signed" : "wide",
                                        floatOutput ? "f32" : "integer");
                            if (!taps) {
                                std::printf("refused\n");
                                continue;
                            }
                            const cv::Mat sums = variants_model::variantSums(input, spec, *taps, rows);
                            cv::Mat output = sums;
                            if (!floatOutput) sums.convertTo(output, depth);
                            const kl::Verdict v = kl::acceptConv2D(output, kl::conv2dReference(input, spec), input, spec);
                            if (floatOutput)
                                std::printf("%s, error %.3g of max|r|\n", v.passed() ? "passed" : v.failure.c_str(), v.relativeError);
                            else
                                std::printf("%s, %lu exact and %lu near ties of %lu\n", v.passed() ? "passed" : v.failure.c_str(),
                                            (unsigned long)v.exactTies, (unsigned long)v.nearTies, (unsigned long)v.elements);
                            if (!floatOutput) total.elements += v.elements, total.nearTies += v.nearTies;
                        }
            kl::applyRandomInputNearTieBound(total, depth);
            std::printf("%s %s, these cases together: %lu near ties of %lu elements, the random-input bound %s\n",
                        rows ? "rows-mma" : "separable-mma", kl::depthName(depth).c_str(), (unsigned long)total.nearTies,
                        (unsigned long)total.elements, total.passed() ? "holds" : total.failure.c_str());
        }
}
