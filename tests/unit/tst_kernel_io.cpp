// Custom kernel files: text matrices with every separator and comments, .npy float arrays of
// one and two dimensions, and bad files giving a kl::IoError that names the file, the line
// and the reason.
#include "kernellab/error.hpp"
#include "kernellab/kernel_io.hpp"
#include "kernellab/image_io.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>

#include <QtTest>

#include <string>

namespace {

std::string npyFile(const std::string& descr, const std::string& shape, const std::string& data)
{
    std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    header.append(63 - (10 + header.size()) % 64, ' ');
    header += '\n';
    std::string bytes("\x93NUMPY\x01\x00", 8);
    bytes += char(header.size() & 0xFF);
    bytes += char(header.size() >> 8);
    return bytes + header + data;
}

std::string floats(std::initializer_list<float> values)
{
    std::string bytes;
    for (float v : values) bytes.append(reinterpret_cast<const char*>(&v), sizeof v);  // x86: little-endian
    return bytes;
}

} // namespace

class TestKernelIo : public QObject {
    Q_OBJECT

private slots:
    void textMatrixWithEverySeparator()
    {
        const std::string path = kltest::tempDir() + "/blur.txt";
        kltest::writeFile(path, "# a 3x5 blur\n1, 2, 3, 2, 1\r\n\n2 4\t6 4 2  # middle row\n1;2;3;2;1\n-0.5e1,+1,0,1e-3,7\n");
        const cv::Mat kernel = kl::loadKernelFile(path);
        QCOMPARE(kernel.type(), CV_32F);
        QCOMPARE(kernel.rows, 4);
        QCOMPARE(kernel.cols, 5);
        const float expected[4][5] = {{1, 2, 3, 2, 1}, {2, 4, 6, 4, 2}, {1, 2, 3, 2, 1}, {-5, 1, 0, 1e-3f, 7}};
        for (int r = 0; r < 4; ++r)
            for (int c = 0; c < 5; ++c) QCOMPARE(kernel.at<float>(r, c), expected[r][c]);
    }

    void npyArraysOfOneAndTwoDimensions()
    {
        const std::string dir = kltest::tempDir();
        kltest::writeFile(dir + "/row.npy", npyFile("<f4", "(3,)", floats({1.5f, -2, 3})));
        const cv::Mat row = kl::loadKernelFile(dir + "/row.npy");
        QCOMPARE(row.rows, 1);
        QCOMPARE(row.cols, 3);
        QCOMPARE(row.at<float>(0, 1), -2.f);

        const cv::Mat matrix = kltest::randomImage(5, 3, CV_32F, 1, 17);
        kl::saveImageNpy(dir + "/matrix.npy", matrix);
        QVERIFY(kltest::bitwiseEqual(kl::loadKernelFile(dir + "/matrix.npy"), matrix));
    }

    void badFilesNameTheProblem_data()
    {
        QTest::addColumn<QByteArray>("name");
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("reason");
        QTest::newRow("word") << QByteArray("k.txt") << QByteArray("1 2\n3 x\n") << "line 2: 'x' is not a number";
        QTest::newRow("ragged") << QByteArray("k.txt") << QByteArray("1 2 3\n# c\n4 5\n")
                                << "line 3 has 2 numbers, the first row 3";
        QTest::newRow("overflow") << QByteArray("k.txt") << QByteArray("1 1e999\n") << "'1e999' is not a number";
        QTest::newRow("infinity") << QByteArray("k.txt") << QByteArray("inf 1\n") << "'inf' is not a finite float";
        QTest::newRow("nan") << QByteArray("k.txt") << QByteArray("1 nan\n") << "'nan' is not a finite float";
        QTest::newRow("beyond float") << QByteArray("k.txt") << QByteArray("1e39\n") << "'1e39' is not a finite float";
        QTest::newRow("comments only") << QByteArray("k.txt") << QByteArray("# nothing\n\n ,;\n") << "no numbers in the file";
        QTest::newRow("empty") << QByteArray("k.txt") << QByteArray() << "empty";
        QTest::newRow("npy integers") << QByteArray("k.npy")
                                      << QByteArray::fromStdString(npyFile("<i2", "(2,)", std::string(4, '\1')))
                                      << "integer .npy kernels are not supported";
        QTest::newRow("npy nan") << QByteArray("k.npy")
                                 << QByteArray::fromStdString(npyFile("<f4", "(2,)", floats({1, NAN})))
                                 << "element (1, 0) is not finite";
        QTest::newRow("npy short") << QByteArray("k.npy")
                                   << QByteArray::fromStdString(npyFile("<f4", "(3,)", floats({1, 2})))
                                   << "the data is 8 bytes, but shape (3,) of <f4 needs 12 bytes";
        QTest::newRow("npy signature") << QByteArray("k.npy") << QByteArray("1 2 3\n") << "no \\x93NUMPY signature";
    }

    void badFilesNameTheProblem()
    {
        QFETCH(QByteArray, name);
        QFETCH(QByteArray, bytes);
        QFETCH(QString, reason);
        const std::string path = kltest::tempDir() + "/" + name.toStdString();
        kltest::writeFile(path, bytes.toStdString());
        kltest::expectIoError([&] { kl::loadKernelFile(path); }, name.toStdString(), reason.toStdString());
    }

    void missingFile()
    {
        kltest::expectIoError([] { kl::loadKernelFile(kltest::tempDir() + "/none.txt"); }, "none.txt", "");
    }
};

QTEST_GUILESS_MAIN(TestKernelIo)
#include "tst_kernel_io.moc"
