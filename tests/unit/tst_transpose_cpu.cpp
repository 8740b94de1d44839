// transpose on the CPU: reference and OpenCV identical to each other and to
// out(x, y) = in(y, x) for every depth, channel count and size (1x1 up, ROIs too);
// the signal interleaved <-> planar helpers.
#include "kernellab/error.hpp"
#include "kernellab/image.hpp"
#include "kernellab/signal.hpp"
#include "kernellab/transpose.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>

#include <QtTest>

#include <cstring>
#include <string>
#include <vector>

namespace {

/// out(x, y) == in(y, x), pixel by pixel, all channels.
bool isTransposeOf(const cv::Mat& out, const cv::Mat& in)
{
    if (out.rows != in.cols || out.cols != in.rows || out.type() != in.type()) return false;
    const size_t pixelBytes = in.elemSize();
    for (int y = 0; y < in.rows; ++y)
        for (int x = 0; x < in.cols; ++x)
            if (std::memcmp(out.ptr(x, y), in.ptr(y, x), pixelBytes) != 0) return false;
    return true;
}

} // namespace

class TestTransposeCpu : public QObject {
    Q_OBJECT

private slots:
    void bothBackendsTranspose_data()
    {
        QTest::addColumn<int>("depth");
        QTest::addColumn<int>("channels");
        QTest::addColumn<cv::Size>("size");
        // Sizes around the 16-, 8-, 4- and 2-pixel register blocks and the 128-byte tiles.
        const cv::Size sizes[] = {{1, 1}, {37, 1}, {1, 41}, {16, 16}, {17, 15}, {61, 97}, {64, 64}, {65, 129}, {1021, 769}};
        for (int depth : {CV_8U, CV_16U, CV_32F})
            for (int channels : {1, 3, 4})
                for (const cv::Size& size : sizes) {
                    const std::string name = kl::depthName(depth) + " x" + std::to_string(channels) + " " +
                                             std::to_string(size.width) + "x" + std::to_string(size.height);
                    QTest::newRow(name.c_str()) << depth << channels << size;
                }
    }

    void bothBackendsTranspose()
    {
        QFETCH(int, depth);
        QFETCH(int, channels);
        QFETCH(cv::Size, size);
        const cv::Mat input = kltest::randomImage(size.height, size.width, depth, channels, uint64_t(size.area()));
        const cv::Mat reference = kl::transposeReference(input);
        QVERIFY(isTransposeOf(reference, input));
        QVERIFY(kltest::bitwiseEqual(kl::transposeOpenCV(input), reference));
        QVERIFY(kltest::bitwiseEqual(kl::transposeReference(reference), input));  // an involution
    }

    void regionOfInterest()
    {
        const cv::Mat parent = kltest::randomImage(20, 30, CV_16U, 3, 9);
        const cv::Mat roi = parent(cv::Rect(3, 2, 17, 11));  // rows not contiguous
        QVERIFY(!roi.isContinuous());
        const cv::Mat reference = kl::transposeReference(roi);
        QVERIFY(isTransposeOf(reference, roi));
        QVERIFY(kltest::bitwiseEqual(kl::transposeOpenCV(roi), reference));
    }

    void handChecked()
    {
        const cv::Mat input = (cv::Mat_<uint8_t>(2, 3) << 1, 2, 3, 4, 5, 6);
        const cv::Mat expected = (cv::Mat_<uint8_t>(3, 2) << 1, 4, 2, 5, 3, 6);
        QVERIFY(kltest::bitwiseEqual(kl::transposeReference(input), expected));
        QVERIFY(kltest::bitwiseEqual(kl::transposeOpenCV(input), expected));
    }

    void rejectsBadInput()
    {
        KL_VERIFY_THROWS(kl::InvalidArgument, "transpose input: 2 channels", kl::transposeReference(cv::Mat(2, 2, CV_8UC2)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "transpose input: depth s16", kl::transposeOpenCV(cv::Mat(2, 2, CV_16SC1)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "transpose input: the image is empty", kl::transposeOpenCV(cv::Mat()));
    }

    void signalInterleaving()
    {
        kl::Signal planar(2, 3, 100.0);
        planar.data = {1, 2, 3, 10, 20, 30};  // channel 0 then channel 1
        const std::vector<float> interleaved = kl::toInterleaved(planar);
        QCOMPARE(interleaved, (std::vector<float>{1, 10, 2, 20, 3, 30}));
        const kl::Signal back = kl::fromInterleaved(interleaved.data(), 3, 2, 100.0);
        QCOMPARE(back.data, planar.data);
        QCOMPARE(back.channels, 2);
        QCOMPARE(back.frames, size_t(3));
        QCOMPARE(back.sampleRate, 100.0);
    }

    void signalInterleavingRoundTrip()
    {
        for (int channels : {1, 3, 4}) {
            const kl::Signal s = kltest::randomSignal(4099, channels, 48000.0, uint64_t(channels));
            const std::vector<float> interleaved = kl::toInterleaved(s);
            // Interleaved is the transpose of the channels x frames matrix.
            const cv::Mat planarMatrix(channels, int(s.frames), CV_32F, const_cast<float*>(s.data.data()));
            const cv::Mat interleavedMatrix(int(s.frames), channels, CV_32F, const_cast<float*>(interleaved.data()));
            QVERIFY(kltest::bitwiseEqual(kl::transposeOpenCV(planarMatrix), interleavedMatrix));
            QCOMPARE(kl::fromInterleaved(interleaved.data(), s.frames, channels, s.sampleRate).data, s.data);
        }
    }
};

QTEST_GUILESS_MAIN(TestTransposeCpu)
#include "tst_transpose_cpu.moc"
