#include "test_support.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"

#include <opencv2/core.hpp>

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

namespace kltest {

void writeFile(const std::string& path, const std::string& bytes)
{
    std::ofstream(path, std::ios::binary) << bytes;
}

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

void expectIoError(const std::function<void()>& action, const std::string& fileName, const std::string& reason)
{
    try {
        action();
    } catch (const kl::IoError& error) {
        const std::string message = error.what();
        QVERIFY2(message.find(fileName) != std::string::npos, msg("no file name in: " + message));
        QVERIFY2(message.find(reason) != std::string::npos, msg("no '" + reason + "' in: " + message));
        return;
    }
    QFAIL(msg("no kl::IoError for " + fileName));
}

const std::vector<int> kAllDepths = {CV_8U, CV_16U, CV_32F};
const std::vector<int> kAllChannelCounts = {1, 3, 4};

void addDepthChannelRows()
{
    QTest::addColumn<int>("depth");
    QTest::addColumn<int>("channels");
    for (int depth : kAllDepths)
        for (int channels : kAllChannelCounts)
            QTest::addRow("%s x%d", kl::depthName(depth).c_str(), channels) << depth << channels;
}

std::string samplePath(const std::string& name)
{
    return std::string(KL_SAMPLE_DATA_DIR) + "/" + name;
}

std::string tempDir()
{
    static QTemporaryDir root;  // removed at exit
    static int counter = 0;
    const QString path = root.path() + QStringLiteral("/t%1").arg(counter++);
    QDir().mkpath(path);
    return path.toStdString();
}

cv::Mat conv2dReferenceOnAllThreads(const cv::Mat& input, const kl::Conv2DSpec& spec)
{
    kl::validateConv2D(input, spec);
    cv::Mat output(input.rows, input.cols, CV_MAKETYPE(kl::conv2dOutputDepth(input, spec), input.channels()));
    cv::parallel_for_(cv::Range(0, input.rows),
                      [&](const cv::Range& rows) { kl::conv2dReferenceRows(input, spec, output, rows); });
    return output;
}

cv::Mat randomImage(int rows, int cols, int depth, int channels, uint64_t seed)
{
    cv::Mat img(rows, cols, CV_MAKETYPE(depth, channels));
    cv::RNG rng(seed);
    switch (depth) {
    case CV_8U: rng.fill(img, cv::RNG::UNIFORM, 0, 256); break;
    case CV_16U: rng.fill(img, cv::RNG::UNIFORM, 0, 65536); break;
    default: {
        // Multiples of 2^-12 in [-1, 1): exact in float, so sums of a few taps stay exact.
        cv::Mat ints(rows, cols, CV_MAKETYPE(CV_32S, channels));
        rng.fill(ints, cv::RNG::UNIFORM, -4096, 4096);
        ints.convertTo(img, CV_MAKETYPE(CV_32F, channels), 1.0 / 4096);
    }
    }
    return img;
}

kl::Signal randomSignal(size_t frames, int channels, double rate, uint64_t seed)
{
    kl::Signal s(channels, frames, rate);
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (float& v : s.data) v = dist(gen);
    return s;
}

bool bitwiseEqual(const cv::Mat& a, const cv::Mat& b)
{
    if (a.size() != b.size() || a.type() != b.type()) return false;
    const size_t rowBytes = size_t(a.cols) * a.elemSize();
    for (int y = 0; y < a.rows; ++y)
        if (std::memcmp(a.ptr(y), b.ptr(y), rowBytes) != 0) return false;
    return true;
}

kl::Verdict checkConv2D(const cv::Mat& actual, const cv::Mat& reference, const cv::Mat& input,
                        const kl::Conv2DSpec& spec)
{
    kl::Verdict verdict = kl::acceptConv2D(actual, reference, input, spec, kl::kFloatRelTolerance);
    kl::applyRandomInputNearTieBound(verdict, reference.depth());
    return verdict;
}

std::vector<double> convolveDirect(const float* x, size_t frames, const std::vector<float>& taps,
                                   kl::Conv1DMode mode)
{
    const size_t n = frames, m = taps.size();
    const size_t length = kl::conv1dOutputLength(n, m, mode), offset = kl::conv1dOutputOffset(n, m, mode);
    std::vector<double> out(length, 0.0);
    for (size_t i = 0; i < length; ++i) {
        // full[t] = sum of x[k] * h[t - k] over the k where both indices are in range.
        const size_t t = offset + i;
        const size_t first = t >= m ? t - m + 1 : 0, last = std::min(t, n - 1);
        for (size_t k = first; k <= last; ++k) out[i] += double(x[k]) * double(taps[t - k]);
    }
    return out;
}

kl::Verdict checkConv1D(const kl::Signal& actual, const kl::Signal& input, const kl::Conv1DSpec& spec)
{
    kl::Verdict verdict;
    const size_t length = kl::conv1dOutputLength(input.frames, spec.taps.size(), spec.mode);
    if (actual.channels != input.channels || actual.frames != length || actual.data.size() != length * size_t(input.channels) ||
        actual.sampleRate != input.sampleRate) {
        verdict.failure = "output is " + kl::describeSignal(actual) + ", expected " + std::to_string(length) +
                          " frames x" + std::to_string(input.channels) + " at the input's rate";
        return verdict;
    }
    for (int c = 0; c < input.channels; ++c) {
        const std::vector<double> expected = convolveDirect(input.channel(c), input.frames, spec.taps, spec.mode);
        const std::vector<double> got(actual.channel(c), actual.channel(c) + length);
        kl::applyFloatRule(got, expected, kl::kFloatRelTolerance, verdict, "channel " + std::to_string(c) + ": ");
    }
    return verdict;
}

std::string histogramDifference(const kl::HistogramResult& actual, const kl::HistogramResult& expected)
{
    const kl::HistogramBinning &a = actual.binning, &e = expected.binning;
    if (a.bins != e.bins || a.lo != e.lo || a.hi != e.hi || a.scale != e.scale || a.offset != e.offset)
        return "binning differs: " + std::to_string(a.bins) + " bins [" + std::to_string(a.lo) + ", " +
               std::to_string(a.hi) + ") vs " + std::to_string(e.bins) + " bins [" + std::to_string(e.lo) + ", " +
               std::to_string(e.hi) + ")";
    if (actual.hasLuminance != expected.hasLuminance) return "hasLuminance differs";
    if (actual.labels != expected.labels) return "labels differ";
    if (actual.counts.size() != expected.counts.size() || actual.outOfRange.size() != expected.outOfRange.size() ||
        actual.nanCount.size() != expected.nanCount.size())
        return "entry counts differ";
    for (size_t entry = 0; entry < expected.counts.size(); ++entry) {
        const std::string label = "entry " + expected.labels[entry] + ": ";
        if (actual.counts[entry].size() != expected.counts[entry].size()) return label + "bin count differs";
        for (size_t bin = 0; bin < expected.counts[entry].size(); ++bin)
            if (actual.counts[entry][bin] != expected.counts[entry][bin])
                return label + "bin " + std::to_string(bin) + " holds " + std::to_string(actual.counts[entry][bin]) +
                       ", expected " + std::to_string(expected.counts[entry][bin]);
        if (actual.outOfRange[entry] != expected.outOfRange[entry])
            return label + "outOfRange " + std::to_string(actual.outOfRange[entry]) + ", expected " +
                   std::to_string(expected.outOfRange[entry]);
        if (actual.nanCount[entry] != expected.nanCount[entry])
            return label + "nanCount " + std::to_string(actual.nanCount[entry]) + ", expected " +
                   std::to_string(expected.nanCount[entry]);
    }
    return {};
}

std::string histogramTotalsProblem(const kl::HistogramResult& result, uint64_t pixels)
{
    for (size_t entry = 0; entry < result.counts.size(); ++entry) {
        uint64_t total = result.outOfRange[entry] + result.nanCount[entry];
        for (uint64_t count : result.counts[entry]) total += count;
        if (total != pixels)
            return "entry " + result.labels[entry] + ": counts + outOfRange + nanCount = " + std::to_string(total) +
                   ", not the " + std::to_string(pixels) + " pixels";
    }
    return {};
}

} // namespace kltest
