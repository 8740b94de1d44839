// core's small pieces: image validation and description, memory checks, the border
// rule against border.hpp's diagram, signal validation and description.
#include "kernellab/border.hpp"
#include "kernellab/error.hpp"
#include "kernellab/image.hpp"
#include "kernellab/signal.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>

#include <QtTest>

#include <unistd.h>

#include <string>

using kl::BorderMode;

class TestCoreBasics : public QObject {
    Q_OBJECT

private slots:
    void validateImage()
    {
        kl::validateImage(cv::Mat(1, 1, CV_32FC4));
        KL_VERIFY_THROWS(kl::InvalidArgument, "photo: the image is empty", kl::validateImage(cv::Mat(), "photo"));
        KL_VERIFY_THROWS(kl::InvalidArgument, "image: 2 channels are not supported (use 1, 3 or 4)",
                         kl::validateImage(cv::Mat(2, 2, CV_8UC2)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "image: depth f64 is not supported (use u8, u16 or f32)",
                         kl::validateImage(cv::Mat(2, 2, CV_64FC1)));
        const int sizes[] = {2, 2, 2};
        KL_VERIFY_THROWS(kl::InvalidArgument, "image: 3-D arrays are not images",
                         kl::validateImage(cv::Mat(3, sizes, CV_8UC1)));
    }

    void depthNames()
    {
        for (int depth : {CV_8U, CV_16U, CV_32F}) QCOMPARE(kl::parseDepth(kl::depthName(depth)), depth);
        QCOMPARE(kl::depthName(CV_16S), std::string("s16"));
        KL_VERIFY_THROWS(kl::InvalidArgument, "depth: 'u32' is not one of u8, u16, f32", kl::parseDepth("u32"));
    }

    void describeImage()
    {
        QCOMPARE(kl::describeImage(cv::Mat(2, 4, CV_8UC3)), std::string("4x2 u8 x3 (24 B)"));
        QCOMPARE(kl::describeImage(cv::Mat(512, 512, CV_8UC3)), std::string("512x512 u8 x3 (768.0 KiB)"));
        QCOMPARE(kl::describeImage(cv::Mat(3, 5, CV_32FC1)), std::string("5x3 f32 x1 (60 B)"));
    }

    void formatBytes()
    {
        QCOMPARE(kl::formatBytes(0), std::string("0 B"));
        QCOMPARE(kl::formatBytes(1023), std::string("1023 B"));
        QCOMPARE(kl::formatBytes(1024), std::string("1.0 KiB"));
        QCOMPARE(kl::formatBytes(3ull << 29), std::string("1.5 GiB"));
        QCOMPARE(kl::formatBytes(uint64_t(1) << 62), std::string("4.0 EiB"));
    }

    void byteSizes()
    {
        QCOMPARE(kl::parseByteSize("1048577", "limit"), uint64_t(1048577));
        QCOMPARE(kl::parseByteSize(" 64M ", "limit"), uint64_t(64) << 20);
        QCOMPARE(kl::parseByteSize("64MiB", "limit"), uint64_t(64) << 20);
        QCOMPARE(kl::parseByteSize("512kb", "limit"), uint64_t(512) << 10);
        QCOMPARE(kl::parseByteSize("1.5G", "limit"), uint64_t(3) << 29);
        QCOMPARE(kl::parseByteSize("2T", "limit"), uint64_t(2) << 40);
        QCOMPARE(kl::parseByteSize("100B", "limit"), uint64_t(100));
        for (const char* bad : {"", "0", "-1", "abc", "12X", "1.5", "M", "1e30T", "nan", "inf", "5 M B"})
            KL_VERIFY_THROWS(kl::InvalidArgument, "limit: '" + std::string(bad) + "' is not a size",
                             kl::parseByteSize(bad, "limit"));
    }

    void memory()
    {
        const uint64_t available = kl::availableMemoryBytes();
        const uint64_t physical = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
        QVERIFY(available > 0);
        QVERIFY(available <= physical);
        kl::ensureMemoryAvailable(1024, "a little");
        KL_VERIFY_THROWS(kl::OutOfMemory, "huge buffer: needs about 4.0 EiB but only",
                         kl::ensureMemoryAvailable(uint64_t(1) << 62, "huge buffer"));
    }

    // border.hpp's diagram for "abcdefgh": the 6 indices left of the image and 7 right of it.
    void borderIndexMatchesDiagram_data()
    {
        QTest::addColumn<int>("mode");
        QTest::addColumn<QString>("left");
        QTest::addColumn<QString>("right");
        QTest::newRow("constant") << int(BorderMode::Constant) << "iiiiii" << "iiiiiii";
        QTest::newRow("replicate") << int(BorderMode::Replicate) << "aaaaaa" << "hhhhhhh";
        QTest::newRow("reflect") << int(BorderMode::Reflect) << "fedcba" << "hgfedcb";
        QTest::newRow("reflect101") << int(BorderMode::Reflect101) << "gfedcb" << "gfedcba";
        QTest::newRow("wrap") << int(BorderMode::Wrap) << "cdefgh" << "abcdefg";
    }

    void borderIndexMatchesDiagram()
    {
        QFETCH(int, mode);
        QFETCH(QString, left);
        QFETCH(QString, right);
        const auto letter = [&](int p) {
            const int i = kl::borderIndex(p, 8, BorderMode(mode));
            return i < 0 ? QChar('i') : QChar('a' + i);
        };
        QString gotLeft, gotRight;
        for (int p = -6; p < 0; ++p) gotLeft += letter(p);
        for (int p = 8; p < 15; ++p) gotRight += letter(p);
        QCOMPARE(gotLeft, left);
        QCOMPARE(gotRight, right);
        for (int p = 0; p < 8; ++p) QCOMPARE(kl::borderIndex(p, 8, BorderMode(mode)), p);
        // Far outside a 1-pixel image: everything but constant maps to that pixel.
        QCOMPARE(kl::borderIndex(-40, 1, BorderMode(mode)), mode == int(BorderMode::Constant) ? -1 : 0);
    }

    void borderNames()
    {
        const int expected[] = {cv::BORDER_CONSTANT, cv::BORDER_REPLICATE, cv::BORDER_REFLECT, cv::BORDER_REFLECT_101,
                                cv::BORDER_WRAP};
        for (int m = 0; m < 5; ++m) {
            QVERIFY(kl::parseBorderMode(kl::toString(BorderMode(m))) == BorderMode(m));
            QCOMPARE(kl::toOpenCvBorder(BorderMode(m)), expected[m]);
        }
        KL_VERIFY_THROWS(kl::InvalidArgument, "border: 'mirror' is not one of", kl::parseBorderMode("mirror"));
    }

    void signalValidation()
    {
        kl::Signal s(1, 108000, 360.0);
        kl::validateSignal(s);
        QCOMPARE(kl::describeSignal(s), std::string("108000 frames x1 @ 360 Hz (300.000 s)"));
        KL_VERIFY_THROWS(kl::InvalidArgument, "ecg: sample rate -1 Hz must be positive",
                         kl::validateSignal(kl::Signal(1, 4, -1.0), "ecg"));
        KL_VERIFY_THROWS(kl::InvalidArgument, "signal: 0 channels", kl::validateSignal(kl::Signal(0, 4, 1.0)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "signal: the signal has no samples", kl::validateSignal(kl::Signal(2, 0, 1.0)));
    }
};

QTEST_GUILESS_MAIN(TestCoreBasics)
#include "tst_core_basics.moc"
