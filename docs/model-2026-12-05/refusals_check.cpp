// Stand-alone check (not part of the project; runs without a GPU): which kernels rows-mma and
// separable-mma refuse, as the model decides (its copy of splitMmaTaps' rule, variantTaps in
// mma_variants_model.hpp) and as the project does (kl::gpu::whyNotApplicable on an H200's description, which needs
// no GPU):
// 1. the probe's kernel classes, 50 seeds each at every compiled size: the two must agree;
// 2. the kernels of tst_conv2d_gpu's checkSignedAndWideTaps (signedFactor and wideFactor are
//    probe_kernels.hpp's signedRandomKernel and wideRandomKernel) over seeds 50000 .. 53999: how many
//    the project refuses (the test expects none).
//
// Built against build-h200:
//   g++ -std=c++17 -O2 -Icore/include -Icuda/include -I/usr/include/opencv4 docs/model-2026-12-05/refusals_check.cpp
//     -Lbuild-h200/core -Lbuild-h200/cuda -lkernellab_cuda -lkernellab_core -lopencv_core -lopencv_imgproc -o refusals_check
#include "../bench-h200-2026-12-04e/probe_case.hpp"
#include "../bench-h200-2026-12-04f/mma_variants_model.hpp"
#include "kernellab/gpu/engine.hpp"
#include <cstdio>
#include <string>

int main()
{
    variants_model::subnormalBytes = false;  // the code since 2cc7ace
    kl::gpu::DeviceInfo h200;
    h200.name = "NVIDIA H200 (description only)";
    h200.computeMajor = 9;
    h200.multiprocessors = 132;
    h200.globalMemoryBytes = 150ull << 30;
    h200.l2CacheBytes = 60ull << 20;
    h200.sharedMemoryPerBlockOptIn = 232448;
    h200.deviceCodeArchitecture = 900;
    const auto projectTakes = [&](const char* variant, const cv::Mat& input, const kl::Conv2DSpec& spec) {
        return kl::gpu::whyNotApplicable(variant, input, spec, h200).empty();
    };

    long agree = 0, disagree = 0, refused = 0;
    for (const char* kernels : {"random", "gaussian", "signed", "wide"})
        for (const char* variant : {"rows-mma", "separable-mma"})
            for (int depth : {CV_16U, CV_8U})
                for (int k : kl::gpu::kConv2dCompiledSizes)
                    for (int n = 0; n < 50; ++n) {
                        const ProbeCase c = probeCase(depth, 1, k, n, 64, 100, parseProbeKernels(kernels));
                        const bool model = variants_model::variantTaps(c.spec, std::string(variant) == "rows-mma").has_value();
                        const bool project = projectTakes(variant, c.input, c.spec);
                        (model == project ? agree : disagree)++;
                        refused += !project;
                        if (model != project) std::printf("differ: %s %s k=%d image %d\n", kernels, variant, k, n);
                    }
    std::printf("probe classes: the model and the project agree on %ld kernels, differ on %ld; %ld refused\n", agree,
                disagree, refused);

    long kernelsChecked = 0, refusedByRows = 0, refusedBySeparable = 0;
    for (int depth : {CV_8U, CV_16U}) {
        const cv::Mat input(64, 64, CV_MAKETYPE(depth, 3), cv::Scalar::all(1));
        for (uint64_t seed = 50000; seed < 54000; ++seed)
            for (int k : {3, 15})
                for (const auto factor : {signedRandomKernel, wideRandomKernel}) {
                    kl::Conv2DSpec spec;
                    spec.kernel = factor(k, 1, seed) * factor(1, k, seed + 1);
                    spec.border = kl::BorderMode::Reflect101;
                    spec.flipKernel = seed % 2 == 0;
                    ++kernelsChecked;
                    refusedByRows += !projectTakes("rows-mma", input, spec);
                    refusedBySeparable += !projectTakes("separable-mma", input, spec);
                }
    }
    std::printf("the tests' signed and wide kernels: %ld checked, rows-mma refuses %ld, separable-mma %ld\n",
                kernelsChecked, refusedByRows, refusedBySeparable);
}
