#include "test_support.hpp"

#include <opencv2/core.hpp>

#include <QDir>
#include <QTemporaryDir>

#include <random>

namespace kltest {

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

} // namespace kltest
