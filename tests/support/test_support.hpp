#pragma once
// Shared helpers for the Qt Test suites: sample paths, random inputs, and the
// comparison rules the README states (exact for integer depths away from
// rounding ties, relative error for f32).
#include "kernellab/signal.hpp"

#include <opencv2/core/mat.hpp>

#include <QString>

#include <cstdint>
#include <string>

namespace kltest {

/// Absolute path of a file in sample_data/.
std::string samplePath(const std::string& name);

/// A fresh temporary directory path (created) for one test.
std::string tempDir();

/// Uniform random image: u8 [0,255], u16 [0,65535], f32 [-1,1) (exactly representable values).
cv::Mat randomImage(int rows, int cols, int depth, int channels, uint64_t seed);
/// Uniform random signal in [-1, 1).
kl::Signal randomSignal(size_t frames, int channels, double rate, uint64_t seed);

/// QString for QVERIFY2 messages.
inline QByteArray msg(const std::string& s) { return QByteArray::fromStdString(s); }

} // namespace kltest
