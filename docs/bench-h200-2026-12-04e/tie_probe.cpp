// Stand-alone probe (not part of the project): how far from a tie the u8/u16 outputs of the tensor-core
// variants lie where they differ from the reference, relative to sum|K * in|.
// tie_probe [images [side [u16 top u8 top [few]]]]: images of values below the tops (default the full
// ranges); `few` takes kernel sizes 3, 9, 15 and 1 and 4 channels only.
#include "kernellab/acceptance.hpp"
#include "kernellab/conv2d.hpp"
#include "kernellab/gpu/engine.hpp"
#include "positive_kernel.hpp"
#include <opencv2/core.hpp>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>


int main(int argc, char** argv)
{
    const int images = argc > 1 ? std::atoi(argv[1]) : 4, side = argc > 2 ? std::atoi(argv[2]) : 1024;
    const int topU16 = argc > 4 ? std::atoi(argv[3]) : 65536, topU8 = argc > 4 ? std::atoi(argv[4]) : 256;
    const bool few = argc > 5 && std::string(argv[5]) == "few";
    const std::vector<int> sizes = few ? std::vector<int>{3, 9, 15} : std::vector<int>{3, 5, 9, 15};
    const std::vector<int> channelCounts = few ? std::vector<int>{1, 4} : std::vector<int>{1, 3, 4};
    kl::gpu::Engine engine;
    for (const char* variant : {"rows-mma", "separable-mma"})
        for (int depth : {CV_16U, CV_8U})
            for (int channels : channelCounts)
                for (int k : sizes) {
                    long elements = 0, differ = 0, outside = 0;
                    double worst = 0;  // max |s - tie| / sum|K in| over differing elements
                    for (int n = 0; n < images; ++n) {
                        const uint64_t seed = 1000 * k + 100 * channels + n + (depth == CV_8U ? 50000 : 0);
                        cv::Mat input(side + n, side - n, CV_MAKETYPE(depth, channels));
                        cv::RNG rng(seed);
                        rng.fill(input, cv::RNG::UNIFORM, 0, depth == CV_8U ? topU8 : topU16);
                        kl::Conv2DSpec spec;
                        spec.kernel = positiveRandomKernel(k, 1, seed) * positiveRandomKernel(1, k, seed + 7);
                        spec.border = kl::BorderMode::Reflect;
                        kl::gpu::RunOptions options;
                        options.variant = variant;
                        options.repetitions = 1;
                        options.warmup = 0;
                        cv::Mat gpu;
                        engine.conv2d(input, spec, options, gpu);
                        const cv::Mat ref = kl::conv2dReference(input, spec);
                        cv::Mat ne;
                        cv::compare(gpu.reshape(1), ref.reshape(1), ne, cv::CMP_NE);
                        std::vector<cv::Point> where;
                        cv::findNonZero(ne, where);
                        elements += long(gpu.total()) * channels;
                        differ += long(where.size());
                        for (const cv::Point& p : where) {
                            double magnitude = 0;
                            const double s = kl::conv2dReferenceSumAt(input, spec, p.y, p.x / channels, p.x % channels, &magnitude);
                            const double rel = std::fabs(s - (std::floor(s) + 0.5)) / magnitude;
                            worst = std::max(worst, rel);
                            if (rel > kl::kTieRelTolerance) ++outside;
                        }
                    }
                    std::printf("range %d: %s %s x%d k=%d: %ld elements, %ld differ, %ld outside the band, worst %.3g of sum|K in|\n",
                                depth == CV_8U ? topU8 : topU16, variant,
                                depth == CV_8U ? "u8" : "u16", channels, k, elements, differ, outside, worst);
                    std::fflush(stdout);
                }
}
