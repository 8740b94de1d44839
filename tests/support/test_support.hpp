#pragma once
// Shared helpers for the Qt Test suites: sample paths, random inputs, and the
// comparison rules the README states (exact for integer depths away from
// rounding ties, relative error for f32).
#include "kernellab/acceptance.hpp"
#include "kernellab/conv1d.hpp"
#include "kernellab/conv2d.hpp"
#include "kernellab/histogram.hpp"
#include "kernellab/signal.hpp"

#include <opencv2/core/mat.hpp>

#include <QString>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kltest {

/// Absolute path of a file in sample_data/.
std::string samplePath(const std::string& name);

/// A fresh temporary directory path (created) for one test.
std::string tempDir();

/// Uniform random image: u8 [0,255], u16 [0,65535], f32 [-1,1) (exactly representable values).
cv::Mat randomImage(int rows, int cols, int depth, int channels, uint64_t seed);
/// Uniform random signal in [-1, 1).
kl::Signal randomSignal(size_t frames, int channels, double rate, uint64_t seed);

/// kl::conv2dReference computed in bands of rows on all of OpenCV's threads (kl::conv2dReferenceRows):
/// the same sums, so the same bytes, in a fraction of the time on the large images the GPU tests use.
cv::Mat conv2dReferenceOnAllThreads(const cv::Mat& input, const kl::Conv2DSpec& spec);

/// Writes / reads a whole file as bytes.
void writeFile(const std::string& path, const std::string& bytes);
std::string readFile(const std::string& path);
/// Verifies that `action` throws kl::IoError whose message names `fileName` and contains `reason`.
void expectIoError(const std::function<void()>& action, const std::string& fileName, const std::string& reason);

/// Same size, type and bytes (views compared row by row).
bool bitwiseEqual(const cv::Mat& a, const cv::Mat& b);

/// Every image depth (u8, u16, f32) and channel count (1, 3, 4) the ops accept.
extern const std::vector<int> kAllDepths;
extern const std::vector<int> kAllChannelCounts;
/// Adds int columns "depth" and "channels" and one row per combination, e.g. "u16 x3".
void addDepthChannelRows();

/// QString for QVERIFY2 messages.
inline QByteArray msg(const std::string& s) { return QByteArray::fromStdString(s); }

// ---- Acceptance rules: kernellab/acceptance.hpp (the README quotes them) ------

/// kl::acceptConv2D against the reference with the one-backend float tolerance, then
/// kl::applyRandomInputNearTieBound: for random inputs only.
kl::Verdict checkConv2D(const cv::Mat& actual, const cv::Mat& reference, const cv::Mat& input,
                        const kl::Conv2DSpec& spec);

/// numpy.convolve(x, taps, mode), summed in double straight from the definition.
std::vector<double> convolveDirect(const float* x, size_t frames, const std::vector<float>& taps,
                                   kl::Conv1DMode mode);
/// The float rule for a conv1d result against convolveDirect on every channel (and the
/// output shape and sample rate).
kl::Verdict checkConv1D(const kl::Signal& actual, const kl::Signal& input, const kl::Conv1DSpec& spec);

/// Empty when the two results are identical (binning, labels, counts, outOfRange,
/// nanCount), else the first difference.
std::string histogramDifference(const kl::HistogramResult& actual, const kl::HistogramResult& expected);
/// Empty when sum(counts) + outOfRange + nanCount == pixels for every entry.
std::string histogramTotalsProblem(const kl::HistogramResult& result, uint64_t pixels);

/// Evaluates the expression (the trailing arguments) and verifies that it throws
/// ExceptionType with `fragment` in what(); for QtTest functions.
#define KL_VERIFY_THROWS(ExceptionType, fragment, ...)                                                       \
    do {                                                                                                    \
        bool klThrown = false;                                                                              \
        try {                                                                                               \
            (void)(__VA_ARGS__);                                                                            \
        } catch (const ExceptionType& klError) {                                                            \
            klThrown = true;                                                                                \
            const std::string klMessage = klError.what();                                                   \
            QVERIFY2(klMessage.find(fragment) != std::string::npos,                                         \
                     ::kltest::msg("message \"" + klMessage + "\" lacks \"" + std::string(fragment) + "\"")); \
        }                                                                                                   \
        QVERIFY2(klThrown, "expected " #ExceptionType " from " #__VA_ARGS__);                               \
    } while (false)

} // namespace kltest
