// Stand-alone model (not part of the project; runs without a GPU): direct-mma's u8 sums under the model
// of the H200's mma (../bench-h200-2026-12-04e/mma_sum_model.hpp, bytes as normal f16), on
// tie_probe's cases, printed as `tie_probe IMAGES SIDE 65536 U8_TOP all KERNELS [float] direct-mma`
// prints them, so that the two outputs can be compared line for line.
//
// direct-mma (cuda/src/conv2d/conv2d_direct_mma.cu): output pixel x of a row lies in the tile of 8 from
// x / 8 * 8; kernel row i is two mma over the 16 pixels from the tile's pixel -4 of input row y - K/2 + i,
// the taps' low halves first, each row in an accumulator of its own; the rows' sums are added in order in
// f32 and multiplied by splitMmaTaps' scale (the f32 pass of one tap of 1).
//
// direct_mma_model IMAGES SIDE U8_TOP KERNELS [float|int [G [ORDER [SIZES]]]]: G the cut (default 2, the H200's
// fit); ORDER direct-mma's (chained, the default) or a candidate (Order); SIZES the kernel sizes, comma-separated
// (default 3,5,9,15)
//   g++ -std=c++17 -O2 -fopenmp -Icore/include -I/usr/include/opencv4 docs/model-2026-12-05b/direct_mma_model.cpp
//     -Lbuild-h200/core -lkernellab_core -lopencv_core -lopencv_imgproc -o direct_mma_model
#include "../bench-h200-2026-12-04e/probe_case.hpp"
#include "../bench-h200-2026-12-04f/mma_variants_model.hpp"
#include <opencv2/core.hpp>
#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr int kMaxSize = 9, kMargin = 4;

/// direct-mma's split: every tap of the kernel (row-major) in the mma, the f32 pass one tap of 1;
/// nullopt where the variant refuses the case.
std::optional<SplitTaps> directTaps(const ProbeCase& c)
{
    const cv::Mat_<float> kernel = kl::effectiveKernel(c.spec);
    if (c.input.depth() != CV_8U || kernel.rows != kernel.cols || kernel.rows > kMaxSize) return std::nullopt;
    return splitTaps(std::vector<float>(kernel.begin(), kernel.end()), {1.0f}, variants_model::byteExponent());
}

/// How the sums are ordered: `chained` is direct-mma's (each kernel row an accumulator of its own, low
/// halves then high, the rows added in f32); the others are candidates with fewer dependent or fewer
/// instructions. `split`: each row's low and high halves in two accumulators, added in f32, then the rows
/// in order. `one-halves`: one accumulator through every row's low half, then every row's high half.
/// `one-rows`: one accumulator, row by row, low half then high.
enum class Order { Chained, Split, OneHalves, OneRows };
Order order = Order::Chained;

Order parseOrder(const std::string& name)
{
    if (name == "chained") return Order::Chained;
    if (name == "split") return Order::Split;
    if (name == "one-halves") return Order::OneHalves;
    if (name == "one-rows") return Order::OneRows;
    throw std::invalid_argument("orders are chained, split, one-halves or one-rows, not '" + name + "'");
}

/// The `mma` of kernel row i's low or high tap halves for output (y, x) of one channel, onto acc.
float rowHalf(const variants_model::Plane& in, int y, int x, const SplitTaps& taps, int k, int i, bool low, float acc)
{
    const int radius = k / 2, tile = x / 8 * 8, n = x - tile;
    std::vector<int> bytes(16);
    std::vector<double> tapsOfBytes(16);
    const std::vector<double>& t = low ? taps.low : taps.high;
    for (int p = 0; p < 16; ++p) {
        const int j = p - kMargin - n + radius;  // B[p][n]'s tap in kernel row i
        bytes[size_t(p)] = in.at(y - radius + i, tile - kMargin + p);
        tapsOfBytes[size_t(p)] = j >= 0 && j < k ? t[size_t(i * k + j)] : 0.0;
    }
    return variants_model::mmaStep(acc, bytes, tapsOfBytes);
}

/// direct-mma's sum of output (y, x) of one channel, in `order`.
float directSum(const variants_model::Plane& in, int y, int x, const SplitTaps& taps, int k)
{
    float sum = 0;
    switch (order) {
    case Order::Chained:
    case Order::Split:
        for (int i = 0; i < k; ++i) {
            const float low = rowHalf(in, y, x, taps, k, i, true, 0);
            const float row = order == Order::Chained ? rowHalf(in, y, x, taps, k, i, false, low)
                                                      : low + rowHalf(in, y, x, taps, k, i, false, 0);
            sum = i == 0 ? row : sum + row;
        }
        break;
    case Order::OneHalves:
        for (bool low : {true, false})
            for (int i = 0; i < k; ++i) sum = rowHalf(in, y, x, taps, k, i, low, sum);
        break;
    case Order::OneRows:
        for (int i = 0; i < k; ++i)
            for (bool low : {true, false}) sum = rowHalf(in, y, x, taps, k, i, low, sum);
        break;
    }
    return sum * taps.scaled[0];
}

/// direct-mma's f32 sums of `input` under `spec` (the integer output rounds them to nearest even and
/// saturates).
cv::Mat directSums(const cv::Mat& input, const kl::Conv2DSpec& spec, const SplitTaps& taps)
{
    const int k = spec.kernel.rows, channels = input.channels();
    cv::Mat sums(input.size(), CV_32FC(channels));
    std::vector<cv::Mat> planes;
    cv::split(input, planes);
    for (int c = 0; c < channels; ++c) {
        variants_model::Plane in{cv::Mat(), k / 2 + 24};
        cv::Mat bordered;
        cv::copyMakeBorder(planes[size_t(c)], bordered, in.margin, in.margin, in.margin, in.margin,
                           kl::toOpenCvBorder(spec.border), cv::Scalar::all(spec.borderValue));
        bordered.convertTo(in.values, CV_32S);
#pragma omp parallel for schedule(dynamic, 16)
        for (int y = 0; y < input.rows; ++y)
            for (int x = 0; x < input.cols; ++x) sums.ptr<float>(y)[x * channels + c] = directSum(in, y, x, taps, k);
    }
    return sums;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 5) {
        std::fprintf(stderr, "usage: direct_mma_model IMAGES SIDE U8_TOP KERNELS [float|int [G [ORDER [SIZES]]]]\n");
        return 2;
    }
    variants_model::g = argc > 6 ? std::atoi(argv[6]) : 2;
    order = parseOrder(argc > 7 ? argv[7] : "chained");
    variants_model::subnormalBytes = false;
    const int images = std::atoi(argv[1]), side = std::atoi(argv[2]), topU8 = std::atoi(argv[3]);
    const ProbeKernels kernels = parseProbeKernels(argv[4]);
    const bool floatOutput = argc > 5 && std::string(argv[5]) == "float";
    std::vector<int> sizes;
    for (std::stringstream list(argc > 8 ? argv[8] : "3,5,9,15"); list.good();) {
        std::string size;
        std::getline(list, size, ',');
        sizes.push_back(std::stoi(size));
    }
    for (int depth : {CV_16U, CV_8U})
        for (int channels : {1, 3, 4})
            for (int k : sizes) {
                const int top = depth == CV_8U ? topU8 : 65536;
                ProbeTally tally;
                for (int n = 0; n < images; ++n) {
                    ProbeCase probe = probeCase(depth, channels, k, n, side, top, kernels);
                    const std::optional<SplitTaps> taps = directTaps(probe);
                    if (!taps) {
                        ++tally.refused;
                        continue;
                    }
                    const cv::Mat sums = directSums(probe.input, probe.spec, *taps);
                    const cv::Mat ref = kl::conv2dReference(probe.input, probe.spec);
                    for (int y = 0; y < sums.rows; ++y)
                        for (int x = 0; x < sums.cols * channels; ++x) {
                            const float sum = sums.ptr<float>(y)[x];
                            const int got = int(std::clamp(std::nearbyint(sum), 0.0f, 255.0f));
                            ++tally.elements;
                            if (got != ref.ptr<uint8_t>(y)[x]) tally.addDiffering(probe, y, x / channels, x % channels);
                        }
                    if (floatOutput) {
                        probe.spec.floatOutput = true;
                        tally.addFloat(sums, kl::conv2dReference(probe.input, probe.spec));
                    }
                }
                tally.print(top, "direct-mma", depth, channels, k);
            }
}
