// The variant registry without a GPU: every op's variants are listed with descriptions, unknown
// names are errors listing the valid ones, and whyNotApplicable() gives the documented reasons
// from a device's description alone (compute capability), through the engine's free functions
// and the session's per-op descriptors alike.
#include "kernellab/conv1d.hpp"
#include "kernellab/conv2d.hpp"
#include "kernellab/error.hpp"
#include "kernellab/gpu/engine.hpp"
#include "kernellab/histogram.hpp"
#include "kernellab/image.hpp"
#include "session.hpp"
#include "test_support.hpp"

#include <QtTest>
#include <opencv2/core.hpp>

#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using kl::gpu::DeviceInfo;
using kl::gpu::whyNotApplicable;

namespace {

DeviceInfo device(int major, int minor)
{
    DeviceInfo d;
    d.name = "test device";
    d.computeMajor = major;
    d.computeMinor = minor;
    d.deviceCodeArchitecture = 100 * major + 10 * minor;  // a build with machine code for it
    d.multiprocessors = 132;
    d.sharedMemoryPerBlockOptIn = 227 * 1024;
    return d;
}

kl::Conv2DSpec spec(kl::Conv2DPreset preset, int size, double sigma = 0)
{
    kl::Conv2DPresetParams params;
    params.width = params.height = size;
    params.sigma = sigma;
    kl::Conv2DSpec s;
    s.kernel = kl::makeConv2DKernel(preset, params);
    return s;
}

} // namespace

class TestVariantRegistry : public QObject {
    Q_OBJECT
private slots:
    void everyOpListsDescribedVariants()
    {
        const std::vector<std::pair<std::string, std::vector<std::string>>> expected = {
            {"conv2d", {"naive", "constant", "shared", "tma", "separable", "separable-tiles", "separable-mma", "rows-mma",
                        "direct-mma", "integer", "dp4a", "dp2a", "staged-rows"}},
            {"conv1d", {"naive", "shared", "fft"}},
            {"histogram", {"global-atomics", "shared", "optimized", "tma"}},
            {"transpose", {"naive", "tiled", "tiled-padded", "optimized"}}};
        for (const auto& [op, names] : expected) {
            QCOMPARE(kl::gpu::variants(op), names);
            for (const kl::gpu::VariantInfo& v : kl::gpu::variantInfo(op))
                QVERIFY2(v.description.size() > 20, qPrintable(QString::fromStdString(op + " " + v.name)));
        }
        KL_VERIFY_THROWS(kl::InvalidArgument, "op: 'blur' is not one of", kl::gpu::variantInfo("blur"));
        // The session lists the same registry.
        for (kl::app::Op op : kl::app::allOps())
            QCOMPARE(kl::app::gpuVariants(op).size(), qsizetype(kl::gpu::variants(kl::app::toString(op).toStdString()).size()));
    }

    void unknownVariantListsTheValidOnes()
    {
        const cv::Mat image = kltest::randomImage(17, 13, CV_8U, 1, 1);
        KL_VERIFY_THROWS(kl::InvalidArgument,
                         "conv2d variant: 'warp' is not one of auto, naive, constant, shared, tma, separable, separable-tiles, "
                         "separable-mma, rows-mma, direct-mma, integer, dp4a, dp2a, staged-rows",
                         whyNotApplicable("warp", image, spec(kl::Conv2DPreset::Gaussian, 5), device(9, 0)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "histogram variant: 'fast' is not one of auto, global-atomics",
                         whyNotApplicable("fast", image, kl::HistogramSpec{}, device(9, 0)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "transpose variant: 'x' is not one of auto, naive, tiled",
                         whyNotApplicable("x", image, device(9, 0)));
        const kl::Signal signal = kltest::randomSignal(101, 2, 8000, 2);
        kl::Conv1DSpec taps;
        taps.taps = {0.25f, 0.5f, 0.25f};
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv1d variant: 'slow' is not one of auto, naive, shared, fft",
                         whyNotApplicable("slow", signal, taps, device(9, 0)));
    }

    void conv2dReasons()
    {
        const DeviceInfo hopper = device(9, 0), ampere = device(8, 0);
        const cv::Mat f32 = kltest::randomImage(31, 29, CV_32F, 1, 3);
        const cv::Mat u8 = kltest::randomImage(31, 29, CV_8U, 3, 4);
        const kl::Conv2DSpec gaussian5 = spec(kl::Conv2DPreset::Gaussian, 5);
        const kl::Conv2DSpec sharpen = spec(kl::Conv2DPreset::Sharpen, 3);  // not rank-1
        kl::Conv2DSpec box11 = spec(kl::Conv2DPreset::Box, 11);  // rank-1, not a compiled size

        for (const std::string& v : kl::gpu::variants("conv2d"))
            QCOMPARE(whyNotApplicable(v, f32, gaussian5, hopper).empty(),
                     v != "integer" && v != "dp4a" && v != "dp2a" && v != "separable-mma" && v != "rows-mma" &&
                         v != "direct-mma");
        QCOMPARE(whyNotApplicable("tma", f32, gaussian5, hopper), std::string());
        const std::string oldGpu = whyNotApplicable("tma", f32, gaussian5, ampere);
        QVERIFY2(oldGpu.find("needs a 32-bit float") == 0 && oldGpu.find("compute capability 8.0") != std::string::npos,
                 oldGpu.c_str());
        QVERIFY(whyNotApplicable("tma", u8, gaussian5, hopper).find("this is 29x31 u8 x3") != std::string::npos);
        QVERIFY(whyNotApplicable("tma", f32, box11, hopper).find("a 11x11 kernel") != std::string::npos);
        QCOMPARE(whyNotApplicable("integer", u8, gaussian5, hopper), std::string());
        QVERIFY(whyNotApplicable("integer", f32, gaussian5, hopper).find("needs an 8-bit image") == 0);
        QVERIFY(whyNotApplicable("separable", u8, sharpen, hopper).find("the 3x3 kernel is not separable") !=
                std::string::npos);
        QCOMPARE(whyNotApplicable("separable", u8, box11, hopper), std::string());
        for (const char* v : {"auto", "naive", "constant", "shared", "dp4a"})
            QCOMPARE(whyNotApplicable(v, u8, sharpen, ampere), std::string());
        // The default 5x5 Gaussian's taps are integers / 256; at sigma 1.3 they have no common factor.
        QCOMPARE(whyNotApplicable("dp4a", u8, gaussian5, hopper), std::string());
        kl::Conv2DSpec sigma13 = gaussian5;
        kl::Conv2DPresetParams params;
        params.width = params.height = 5;
        params.sigma = 1.3;
        sigma13.kernel = kl::makeConv2DKernel(kl::Conv2DPreset::Gaussian, params);
        QVERIFY(whyNotApplicable("dp4a", u8, sigma13, hopper).find("a 5x5 kernel with other taps") != std::string::npos);
        const cv::Mat u16 = kltest::randomImage(31, 29, CV_16U, 1, 5);
        QCOMPARE(whyNotApplicable("dp2a", u16, sharpen, ampere), std::string());
        // direct-mma: u8 square kernels up to 9x9 from compute capability 8.0.
        QCOMPARE(whyNotApplicable("direct-mma", u8, sharpen, ampere), std::string());
        QVERIFY(whyNotApplicable("direct-mma", u16, sharpen, hopper)
                    .find("needs a u8 image, a square kernel of size 3, 5, 7 or 9 whose") == 0);
        QVERIFY(whyNotApplicable("direct-mma", u8, sharpen, device(7, 5)).find("compute capability 7.5") != std::string::npos);
        QVERIFY(whyNotApplicable("direct-mma", u8, spec(kl::Conv2DPreset::Gaussian, 15), hopper).find("a 15x15 kernel") !=
                std::string::npos);
        QVERIFY(whyNotApplicable("dp2a", u8, sharpen, hopper).find("needs a 16-bit image") == 0);
        // Taps whose magnitudes sum past 64 could take a u16 sum past 2^22, where f32 is no longer exact;
        // 8 times ones is ones with a factor of 8, 8s around a 9 neither.
        kl::Conv2DSpec heavy = sharpen;
        heavy.kernel = cv::Mat::ones(3, 3, CV_32F) * 8;
        QCOMPARE(whyNotApplicable("dp2a", u16, heavy, hopper), std::string());
        heavy.kernel.at<float>(1, 1) = 9;
        QVERIFY(whyNotApplicable("dp2a", u16, heavy, hopper).find("a 3x3 kernel with other taps") != std::string::npos);
        QCOMPARE(whyNotApplicable("dp4a", u8, heavy, hopper), std::string());
        QCOMPARE(whyNotApplicable("dp4a", u8, spec(kl::Conv2DPreset::Box, 5), hopper), std::string());  // ones / 25
        // An invalid spec is the op's own error, not a variant's.
        kl::Conv2DSpec even = gaussian5;
        even.kernel = cv::Mat::ones(4, 4, CV_32F);
        QVERIFY_THROWS_EXCEPTION(kl::InvalidArgument, whyNotApplicable("naive", u8, even, hopper));
    }

    // auto's choice for conv2d (conv2d.cpp's autoConv2d), case by case as docs/performance.md
    // measured them: box kernels are rank 1, and integer taps times 1/k^2.
    void conv2dAutoRule()
    {
        const DeviceInfo hopper = device(9, 0), ampere = device(8, 0), turing = device(7, 5);
        // Real taps of full rank, 5x5, 7x7 and 9x9; at 7x7 and 9x9 from 0.25 to 1.25, which direct-mma's
        // two f16 halves hold.
        kl::Conv2DSpec rankFive, sevenBySeven, nineByNine;
        rankFive.kernel = kltest::randomImage(5, 5, CV_32F, 1, 11);
        sevenBySeven.kernel = kltest::randomImage(7, 7, CV_32F, 1, 13) * 0.5 + 0.75;
        nineByNine.kernel = kltest::randomImage(9, 9, CV_32F, 1, 12) * 0.5 + 0.75;
        for (int depth : {CV_8U, CV_16U, CV_32F})
            for (int channels : {1, 3, 4}) {
                const cv::Mat image = kltest::randomImage(37, 23, depth, channels, uint64_t(depth * 10 + channels));
                for (int k : {3, 5, 7, 9, 15}) {
                    std::string expected;
                    // Ones times 1/k^2: the integer variant's lanes on u8; on u16 the staged ring, but
                    // rows-mma at 15x15 and on 4 channels at 9x9; on f32 the staged ring up to 5x5, then
                    // separable-tiles.
                    if (depth == CV_8U) expected = "integer";
                    else if (depth == CV_16U) expected = k == 15 || (k == 9 && channels == 4) ? "rows-mma" : "separable";
                    else expected = k <= 5 ? "separable" : "separable-tiles";
                    const std::string label = kl::depthName(depth) + " x" + std::to_string(channels) + " box " +
                                              std::to_string(k);
                    QVERIFY2(kl::gpu::resolvedVariant("auto", image, spec(kl::Conv2DPreset::Box, k), hopper) == expected,
                             qPrintable(QString::fromStdString(label + ": expected " + expected)));
                }
                // Rank 1 of other sizes: the ring from 500 taps on, the tiled kernels below.
                QCOMPARE(kl::gpu::resolvedVariant("auto", image, spec(kl::Conv2DPreset::Box, 11), hopper),
                         std::string("shared"));
                QCOMPARE(kl::gpu::resolvedVariant("auto", image, spec(kl::Conv2DPreset::Box, 23), hopper),
                         std::string("separable"));
                // Full rank: direct-mma on u8 at 7x7 and 9x9; else staged-rows up to 7x7 (where f32 takes
                // separable-tiles for rank 1), and at 9x9 tma on one f32 channel, else shared.
                const bool u8 = depth == CV_8U;
                QCOMPARE(kl::gpu::resolvedVariant("auto", image, rankFive, hopper), std::string("staged-rows"));
                QCOMPARE(kl::gpu::resolvedVariant("auto", image, sevenBySeven, hopper),
                         std::string(u8 ? "direct-mma" : "staged-rows"));
                QCOMPARE(kl::gpu::resolvedVariant("auto", image, nineByNine, hopper),
                         std::string(u8 ? "direct-mma" : depth == CV_32F && channels == 1 ? "tma" : "shared"));
                QCOMPARE(kl::gpu::resolvedVariant("auto", image, spec(kl::Conv2DPreset::Sharpen, 3), hopper),
                         std::string(depth == CV_8U ? "dp4a" : depth == CV_16U ? "dp2a" : "staged-rows"));
            }
        const cv::Mat f32 = kltest::randomImage(37, 23, CV_32F, 1, 7);
        QCOMPARE(kl::gpu::resolvedVariant("auto", f32, nineByNine, ampere), std::string("shared"));
        // direct-mma needs compute capability 8.0 and taps that two f16 halves hold: on Turing, or with one
        // tap 1e-7 of the largest, u8 keeps staged-rows at 7x7 and shared at 9x9.
        const cv::Mat u8One = kltest::randomImage(37, 23, CV_8U, 1, 6);
        const auto withTinyTap = [](kl::Conv2DSpec s) {
            double largest = 0;
            cv::minMaxLoc(cv::abs(s.kernel), nullptr, &largest);
            s.kernel = s.kernel.clone();
            s.kernel.at<float>(s.kernel.rows / 2, s.kernel.cols / 2) = float(largest * 1e-7);
            return s;
        };
        for (const auto& [kernelSpec, before] : {std::pair{sevenBySeven, "staged-rows"}, std::pair{nineByNine, "shared"}}) {
            QCOMPARE(kl::gpu::resolvedVariant("auto", u8One, kernelSpec, ampere), std::string("direct-mma"));
            QCOMPARE(kl::gpu::resolvedVariant("auto", u8One, kernelSpec, turing), std::string(before));
            const kl::Conv2DSpec tiny = withTinyTap(kernelSpec);
            QVERIFY(!whyNotApplicable("direct-mma", u8One, tiny, hopper).empty());
            QCOMPARE(kl::gpu::resolvedVariant("auto", u8One, tiny, hopper), std::string(before));
        }
        QCOMPARE(kl::gpu::resolvedVariant("naive", f32, spec(kl::Conv2DPreset::Box, 5), hopper), std::string("naive"));
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv2d variant 'separable-tiles' needs a rank-1 kernel",
                         kl::gpu::resolvedVariant("separable-tiles", f32, spec(kl::Conv2DPreset::Box, 11), hopper));
        // Taps of 2^100 and more pass the staged ring's scale on u8/u16 (subnormalRingTaps): separable
        // refuses them there, and auto takes separable-tiles from 9x9 and staged-rows below (a rank-1
        // 5x5 of real taps, which neither integer nor dp4a takes).
        const cv::Mat u8 = kltest::randomImage(37, 23, CV_8U, 3, 8), u16 = kltest::randomImage(37, 23, CV_16U, 3, 9);
        kl::Conv2DSpec huge;
        huge.kernel = cv::Mat(9, 9, CV_32F, cv::Scalar(0x1p100));
        QCOMPARE(kl::gpu::resolvedVariant("auto", u16, huge, hopper), std::string("separable-tiles"));
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv2d variant 'separable' needs taps below 2^100 in magnitude",
                         kl::gpu::resolvedVariant("separable", u16, huge, hopper));
        huge.kernel = cv::Mat(9, 9, CV_32F, cv::Scalar(0x1p99));
        QCOMPARE(kl::gpu::resolvedVariant("auto", u16, huge, hopper), std::string("separable"));
        const cv::Mat taps = (cv::Mat_<float>(5, 1) << 0.3f, 0.7f, 1.0f, 0.6f, 0.2f);
        huge.kernel = taps * 0x1p100 * taps.t();
        QCOMPARE(kl::gpu::resolvedVariant("auto", u8, huge, hopper), std::string("staged-rows"));
        huge.kernel = taps * 0x1p99 * taps.t();
        QCOMPARE(kl::gpu::resolvedVariant("auto", u8, huge, hopper), std::string("separable"));
        // f32's staged ring sums the elements as they are, with the taps unscaled: no such limit.
        huge.kernel = taps * 0x1p100 * taps.t();
        QCOMPARE(kl::gpu::resolvedVariant("auto", kltest::randomImage(37, 23, CV_32F, 3, 10), huge, hopper),
                 std::string("separable"));
        // ... only at the compiled sizes: a rank-1 1x1 on f32 stays with the tiles.
        huge.kernel = cv::Mat(1, 1, CV_32F, cv::Scalar(0.5));
        QCOMPARE(kl::gpu::resolvedVariant("auto", kltest::randomImage(37, 23, CV_32F, 1, 11), huge, hopper),
                 std::string("shared"));
        // Gaussian 15x15 on u8 from compute capability 8.0: rows-mma (its tensor-core row pass); before,
        // the ring on one channel and separable-tiles on several. At 9x9 rows-mma on one channel, the ring
        // on 3 and 4 and before 8.0. A kernel whose column taps split but not its row taps: separable-mma
        // (its tensor-core column pass). Not on u16 ...
        const kl::Conv2DSpec gaussian15 = spec(kl::Conv2DPreset::Gaussian, 15);
        kl::Conv2DSpec tinyRowTaps15;
        cv::Mat row(1, 15, CV_32F, cv::Scalar(1.0f / 15));
        row.at<float>(0, 3) = 1e-5f;
        tinyRowTaps15.kernel = cv::Mat(15, 1, CV_32F, cv::Scalar(1.0f / 15)) * row;
        for (int channels : {1, 3, 4}) {
            const cv::Mat image = kltest::randomImage(37, 23, CV_8U, channels, uint64_t(60 + channels));
            QCOMPARE(kl::gpu::resolvedVariant("auto", image, gaussian15, hopper), std::string("rows-mma"));
            QCOMPARE(kl::gpu::resolvedVariant("auto", image, gaussian15, ampere), std::string("rows-mma"));
            QCOMPARE(kl::gpu::resolvedVariant("auto", image, tinyRowTaps15, hopper), std::string("separable-mma"));
            QCOMPARE(kl::gpu::resolvedVariant("auto", image, gaussian15, turing),
                     std::string(channels == 1 ? "separable" : "separable-tiles"));
            QCOMPARE(kl::gpu::resolvedVariant("auto", image, spec(kl::Conv2DPreset::Gaussian, 9), hopper),
                     std::string(channels == 1 ? "rows-mma" : "separable"));
            QCOMPARE(kl::gpu::resolvedVariant("auto", image, spec(kl::Conv2DPreset::Gaussian, 9), turing), std::string("separable"));
            QCOMPARE(kl::gpu::resolvedVariant("auto", image, spec(kl::Conv2DPreset::Gaussian, 7, 1.7), hopper),
                     std::string("separable"));
        }
        // ... and on u16 rows-mma from compute capability 8.0 (its tensor-core row pass), at 9x9 on 4
        // channels only.
        QCOMPARE(kl::gpu::resolvedVariant("auto", u16, gaussian15, hopper), std::string("rows-mma"));
        QCOMPARE(kl::gpu::resolvedVariant("auto", u16, gaussian15, turing), std::string("separable-tiles"));
        QCOMPARE(kl::gpu::resolvedVariant("auto", u16, spec(kl::Conv2DPreset::Gaussian, 9), hopper), std::string("separable"));
        const cv::Mat u16Four = kltest::randomImage(37, 23, CV_16U, 4, 63);
        QCOMPARE(kl::gpu::resolvedVariant("auto", u16Four, spec(kl::Conv2DPreset::Gaussian, 9), hopper), std::string("rows-mma"));
        const cv::Mat u16Single = kltest::randomImage(37, 23, CV_16U, 1, 62);
        QCOMPARE(kl::gpu::resolvedVariant("auto", u16Single, gaussian15, hopper), std::string("rows-mma"));
        QCOMPARE(kl::gpu::resolvedVariant("auto", u16Single, gaussian15, ampere), std::string("rows-mma"));
        QCOMPARE(kl::gpu::resolvedVariant("auto", u16Single, gaussian15, turing), std::string("separable"));
        QCOMPARE(kl::gpu::resolvedVariant("auto", u16Single, spec(kl::Conv2DPreset::Gaussian, 9), hopper), std::string("separable"));
        QVERIFY(whyNotApplicable("separable-mma", u8, gaussian15, turing).find("compute capability 7.5") != std::string::npos);
        QVERIFY(whyNotApplicable("separable-mma", f32, gaussian15, hopper).find("needs a u8 or u16 image") == 0);
        // rows-mma: u8 and u16 images of any channel count, from compute capability 8.0.
        QCOMPARE(whyNotApplicable("rows-mma", u16Single, gaussian15, ampere), std::string());
        QCOMPARE(whyNotApplicable("rows-mma", u16, gaussian15, hopper), std::string());
        QCOMPARE(whyNotApplicable("rows-mma", u8, gaussian15, hopper), std::string());
        const std::string floats = whyNotApplicable("rows-mma", f32, gaussian15, hopper);
        QVERIFY2(floats.find("needs a u8 or u16 image") == 0 && floats.find("this is 23x37 f32 x") != std::string::npos,
                 floats.c_str());
        QVERIFY(whyNotApplicable("rows-mma", u16Single, gaussian15, turing).find("compute capability 7.5") != std::string::npos);
        QVERIFY(whyNotApplicable("rows-mma", u16Single, spec(kl::Conv2DPreset::Sharpen, 3), hopper).find("non-separable 3x3 kernel") !=
                std::string::npos);
    }

    // A build for sm_75 only runs on newer GPUs as PTX the driver compiles, whose code lacks the
    // sm_80 and sm_90 instructions of separable-mma and the tma variants: they refuse, and auto
    // takes the next choice.
    void variantsNeedTheirDeviceCode()
    {
        DeviceInfo hopperRunningSm75 = device(9, 0);
        hopperRunningSm75.deviceCodeArchitecture = 750;
        const cv::Mat f32 = kltest::randomImage(37, 23, CV_32F, 1, 70), u8 = kltest::randomImage(37, 23, CV_8U, 1, 71);
        const kl::Conv2DSpec nineByNine = spec(kl::Conv2DPreset::Gaussian, 9);
        const kl::Conv2DSpec fifteen = spec(kl::Conv2DPreset::Gaussian, 15);
        kl::Conv2DSpec fullRank;
        fullRank.kernel = kltest::randomImage(9, 9, CV_32F, 1, 72);
        for (const auto& [variant, image, conv] :
             {std::tuple{"tma", f32, nineByNine}, std::tuple{"separable-mma", u8, fifteen},
              std::tuple{"rows-mma", kltest::randomImage(37, 23, CV_16U, 1, 73), fifteen}}) {
            QCOMPARE(whyNotApplicable(variant, image, conv, device(9, 0)), std::string());
            const std::string reason = whyNotApplicable(variant, image, conv, hopperRunningSm75);
            QVERIFY2(reason.find("compute capability 9.0, device code 7.5") != std::string::npos, reason.c_str());
        }
        QCOMPARE(kl::gpu::resolvedVariant("auto", f32, fullRank, hopperRunningSm75), std::string("shared"));
        QCOMPARE(kl::gpu::resolvedVariant("auto", u8, fifteen, hopperRunningSm75), std::string("separable"));
        QCOMPARE(kl::gpu::resolvedVariant("auto", kltest::randomImage(37, 23, CV_16U, 1, 74), fifteen, hopperRunningSm75),
                 std::string("separable"));
        QCOMPARE(whyNotApplicable("tma", u8, kl::HistogramSpec{}, device(9, 0)), std::string());
        QVERIFY(whyNotApplicable("tma", u8, kl::HistogramSpec{}, hopperRunningSm75).find("device code 7.5") !=
                std::string::npos);
    }

    void otherOpsApplyEverywhere()
    {
        const DeviceInfo turing = device(7, 5);
        for (int depth : {CV_8U, CV_16U, CV_32F})
            for (int channels : {1, 3, 4}) {
                const cv::Mat image = kltest::randomImage(7, 11, depth, channels, uint64_t(depth * 10 + channels));
                for (const std::string& v : kl::gpu::variants("histogram"))
                    if (v != "tma") QCOMPARE(whyNotApplicable(v, image, kl::HistogramSpec{}, turing), std::string());
                for (const std::string& v : kl::gpu::variants("transpose"))
                    QCOMPARE(whyNotApplicable(v, image, turing), std::string());
            }
        const kl::Signal signal = kltest::randomSignal(97, 3, 8000, 5);
        kl::Conv1DSpec taps;
        taps.taps = std::vector<float>(301, 1.f / 301);
        for (const std::string& v : kl::gpu::variants("conv1d")) QCOMPARE(whyNotApplicable(v, signal, taps, turing), std::string());
        for (const std::string& v : kl::gpu::variants("transpose")) QCOMPARE(whyNotApplicable(v, signal, turing), std::string());
    }

    /// histogram's tma: one channel of u8, or u16 with the default bins, on compute capability 9.0+
    /// with the shared memory its ring and aligned columns take.
    void histogramTmaNeedsByteBinsAndHopper()
    {
        const DeviceInfo hopper = device(9, 0), turing = device(7, 5);
        kl::HistogramSpec sevenBins;
        sevenBins.bins = 7;
        for (int depth : {CV_8U, CV_16U, CV_32F})
            for (int channels : {1, 3, 4}) {
                const cv::Mat image = kltest::randomImage(7, 11, depth, channels, uint64_t(depth * 10 + channels));
                const bool applies = channels == 1 && depth != CV_32F;
                QCOMPARE(whyNotApplicable("tma", image, kl::HistogramSpec{}, hopper).empty(), applies);
                QVERIFY(whyNotApplicable("tma", image, kl::HistogramSpec{}, turing).find("needs a single-channel u8") == 0);
                if (depth != CV_8U) QVERIFY(!whyNotApplicable("tma", image, sevenBins, hopper).empty());
            }
        QCOMPARE(whyNotApplicable("tma", kltest::randomImage(7, 11, CV_32F, 3, 1), kl::HistogramSpec{}, turing),
                 std::string("needs a single-channel u8 image, or u16 with the default 256 bins over [0, 65536), and a "
                             "GPU of compute capability 9.0 or newer running device code built for 9.0 or newer, with "
                             "193 KB of shared memory for a block; this is f32 x3, compute capability 7.5, device code "
                             "7.5, 227 KB"));
        // A newer GPU whose blocks get less shared memory than the ring and the aligned columns need.
        DeviceInfo smallShared = device(12, 0);
        smallShared.sharedMemoryPerBlockOptIn = 99 * 1024;
        QVERIFY(whyNotApplicable("tma", kltest::randomImage(7, 11, CV_8U, 1, 2), kl::HistogramSpec{}, smallShared)
                    .find("; this is u8 x1, compute capability 12.0, device code 12.0, 99 KB") != std::string::npos);
    }

    void sessionAsksTheOpsRegistry()
    {
        kl::app::RunRequest request;
        request.op = kl::app::Op::Conv2D;
        request.image = kltest::randomImage(9, 9, CV_8U, 1, 6);
        request.conv2d = spec(kl::Conv2DPreset::Gaussian, 3);
        QCOMPARE(kl::app::whyNotApplicable(request, QStringLiteral("integer"), device(9, 0)), QString());
        QVERIFY(kl::app::whyNotApplicable(request, QStringLiteral("tma"), device(9, 0)).startsWith(QStringLiteral("needs")));
        request.op = kl::app::Op::Transpose;
        QCOMPARE(kl::app::whyNotApplicable(request, QStringLiteral("tiled"), device(9, 0)), QString());
        request.op = kl::app::Op::Conv1D;  // an image where conv1d needs a signal
        QVERIFY_THROWS_EXCEPTION(kl::InvalidArgument, kl::app::whyNotApplicable(request, QStringLiteral("fft"), device(9, 0)));
    }
};

QTEST_APPLESS_MAIN(TestVariantRegistry)
#include "tst_variant_registry.moc"
