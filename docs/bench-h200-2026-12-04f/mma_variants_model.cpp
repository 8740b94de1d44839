// Stand-alone model (not part of the project; runs without a GPU): rows-mma's and separable-mma's u8/u16
// sums under a model of the H200's mma (mma_variants_model.hpp), on tie_probe's cases, printed as
// tie_probe prints them, so that the two outputs can be compared line for line.
//
// mma_variants_model G subnormal|normal IMAGES SIDE U16_TOP U8_TOP [KERNELS [float]]: the cut 2^(top - 23 -
// G); the bytes as f16 subnormals or normal f16; kernel sizes 3, 9, 15, 1 and 4 channels (tie_probe's
// `few`); KERNELS as probe_case.hpp's (random, the default; gaussian, the preset's Gaussians at OpenCV's
// default sigma; signed; wide). Kernels the variants refuse are counted, not run. `float` also checks the
// f32 output (the sums unrounded) by the float rule.
#include "mma_variants_model.hpp"
#include "../bench-h200-2026-12-04e/probe_case.hpp"
#include <opencv2/core.hpp>
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

int main(int argc, char** argv)
{
    if (argc < 7) {
        std::fprintf(stderr, "usage: mma_variants_model G subnormal|normal IMAGES SIDE U16_TOP U8_TOP [KERNELS [float]]\n");
        return 2;
    }
    variants_model::g = std::atoi(argv[1]);
    variants_model::subnormalBytes = std::string(argv[2]) == "subnormal";
    const int images = std::atoi(argv[3]), side = std::atoi(argv[4]), topU16 = std::atoi(argv[5]), topU8 = std::atoi(argv[6]);
    const ProbeKernels kernels = parseProbeKernels(argc > 7 ? argv[7] : "random");
    const bool floatOutput = argc > 8 && std::string(argv[8]) == "float";
    for (const std::string variant : {"rows-mma", "separable-mma"})
        for (int depth : {CV_16U, CV_8U})
            for (int channels : {1, 4})
                for (int k : {3, 9, 15}) {
                    const bool u8 = depth == CV_8U, rows = variant == "rows-mma";
                    const int top = u8 ? topU8 : topU16;
                    ProbeTally tally;
                    for (int n = 0; n < images; ++n) {
                        ProbeCase probe = probeCase(depth, channels, k, n, side, top, kernels);
                        const std::optional<SplitTaps> taps = variants_model::variantTaps(probe.spec, rows);
                        if (!taps) {
                            ++tally.refused;
                            continue;
                        }
                        const cv::Mat sums = variants_model::variantSums(probe.input, probe.spec, *taps, rows);
                        const cv::Mat ref = kl::conv2dReference(probe.input, probe.spec);
                        for (int y = 0; y < sums.rows; ++y)
                            for (int x = 0; x < sums.cols * channels; ++x) {
                                const float sum = sums.ptr<float>(y)[x];
                                const int got = int(std::clamp(std::nearbyint(sum), 0.0f, u8 ? 255.0f : 65535.0f));
                                const int expected = u8 ? ref.ptr<uint8_t>(y)[x] : ref.ptr<uint16_t>(y)[x];
                                ++tally.elements;
                                if (got != expected) tally.addDiffering(probe, y, x / channels, x % channels);
                            }
                        if (floatOutput) {
                            probe.spec.floatOutput = true;
                            tally.addFloat(sums, kl::conv2dReference(probe.input, probe.spec));
                        }
                    }
                    tally.print(top, variant.c_str(), depth, channels, k);
                }
}
