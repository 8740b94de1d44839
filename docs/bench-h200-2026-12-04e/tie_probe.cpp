// Stand-alone probe (not part of the project): how far from a tie the u8/u16 outputs of the tensor-core
// variants lie where they differ from the reference, relative to sum|K * in|.
// tie_probe [images [side [u16 top u8 top [few|all [KERNELS [float|int [VARIANTS]]]]]]]: images of values
// below the tops (default the full ranges); `few` takes kernel sizes 3, 9, 15 and 1 and 4 channels only;
// KERNELS as probe_case.hpp's (random, the default; gaussian; signed; wide; dense, dense-signed,
// dense-wide), kernels a variant refuses counted; `float` also runs each case with f32 output and checks
// it by the float rule; VARIANTS a comma list (default rows-mma,separable-mma; direct-mma takes u8 up to
// 9x9 and dense kernels too).
#include "kernellab/gpu/engine.hpp"
#include "probe_case.hpp"
#include <opencv2/core.hpp>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
    const int images = argc > 1 ? std::atoi(argv[1]) : 4, side = argc > 2 ? std::atoi(argv[2]) : 1024;
    const int topU16 = argc > 4 ? std::atoi(argv[3]) : 65536, topU8 = argc > 4 ? std::atoi(argv[4]) : 256;
    const bool few = argc > 5 && std::string(argv[5]) == "few";
    const ProbeKernels kernels = parseProbeKernels(argc > 6 ? argv[6] : "random");
    const bool floatOutput = argc > 7 && std::string(argv[7]) == "float";
    std::vector<std::string> variants;
    std::istringstream list(argc > 8 ? argv[8] : "rows-mma,separable-mma");
    for (std::string name; std::getline(list, name, ',');) variants.push_back(name);
    const std::vector<int> sizes = few ? std::vector<int>{3, 9, 15} : std::vector<int>{3, 5, 9, 15};
    const std::vector<int> channelCounts = few ? std::vector<int>{1, 4} : std::vector<int>{1, 3, 4};
    kl::gpu::Engine engine;
    for (const std::string& variant : variants)
        for (int depth : {CV_16U, CV_8U})
            for (int channels : channelCounts)
                for (int k : sizes) {
                    const int top = depth == CV_8U ? topU8 : topU16;
                    ProbeTally tally;
                    for (int n = 0; n < images; ++n) {
                        ProbeCase c = probeCase(depth, channels, k, n, side, top, kernels);
                        if (!kl::gpu::whyNotApplicable(variant, c.input, c.spec, engine.device()).empty()) {
                            ++tally.refused;
                            continue;
                        }
                        kl::gpu::RunOptions options;
                        options.variant = variant;
                        options.repetitions = 1;
                        options.warmup = 0;
                        cv::Mat gpu;
                        engine.conv2d(c.input, c.spec, options, gpu);
                        const cv::Mat ref = kl::conv2dReference(c.input, c.spec);
                        cv::Mat ne;
                        cv::compare(gpu.reshape(1), ref.reshape(1), ne, cv::CMP_NE);
                        std::vector<cv::Point> where;
                        cv::findNonZero(ne, where);
                        tally.elements += long(gpu.total()) * channels;
                        for (const cv::Point& p : where) tally.addDiffering(c, p.y, p.x / channels, p.x % channels);
                        if (floatOutput) {
                            c.spec.floatOutput = true;
                            engine.conv2d(c.input, c.spec, options, gpu);
                            tally.addFloat(gpu, kl::conv2dReference(c.input, c.spec));
                        }
                    }
                    tally.print(top, variant.c_str(), depth, channels, k);
                }
}
