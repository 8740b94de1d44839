// What a GPU report says without a GPU: the rates from its stage times, and the overlap limit
// the Streams panel holds a multi-stream run to.
#include "kernellab/gpu/engine.hpp"

#include <QtTest>

using kl::gpu::GpuReport;
using kl::gpu::overlapLimitMs;

namespace {

GpuReport oneStream(double h2d, double kernel, double d2h)
{
    GpuReport r;
    r.h2d.medianMs = h2d;
    r.kernel.medianMs = kernel;
    r.d2h.medianMs = d2h;
    r.total.medianMs = h2d + kernel + d2h;
    return r;
}

} // namespace

class TestGpuReport : public QObject {
    Q_OBJECT
private slots:
    void overlapLimit()
    {
        // 8192^2 f32 on the H200: copies ~4.9 ms each way, the kernel 0.2 ms; 16 chunks.
        QCOMPARE(overlapLimitMs(oneStream(4.9, 0.2, 4.9), 16), 4.9 + 5.1 / 16);
        // One chunk overlaps nothing: the limit is the one-stream total.
        QCOMPARE(overlapLimitMs(oneStream(1, 2, 3), 1), 6.0);
        // A kernel-bound run: the kernel whole, the copies for one chunk of 4.
        QCOMPARE(overlapLimitMs(oneStream(1, 8, 1), 4), 8.5);
        // More chunks approach the slowest stage.
        QVERIFY(overlapLimitMs(oneStream(3, 1, 2), 64) < overlapLimitMs(oneStream(3, 1, 2), 4));
        QVERIFY(overlapLimitMs(oneStream(3, 1, 2), 1 << 20) > 3.0);
        // The link carries both directions at once at 92 GB/s (the H200's): 2 x 268 MB take 5.83 ms,
        // more than the copy engines' own limit above.
        GpuReport big = oneStream(4.9, 0.2, 4.9);
        big.bytesH2D = big.bytesD2H = 268435456;
        QCOMPARE(overlapLimitMs(big, 16, 92.0), 2 * 268435456 / 92e6);
        QCOMPARE(overlapLimitMs(big, 16, 0), 4.9 + 5.1 / 16);  // unmeasured: the engines' limit alone
        QCOMPARE(overlapLimitMs(big, 16, 1e6), 4.9 + 5.1 / 16);  // a fast link: the engines' limit
        // No stages (kernel-only or failed runs): no limit.
        QCOMPARE(overlapLimitMs(GpuReport{}, 4), 0.0);
        QCOMPARE(overlapLimitMs(oneStream(1, 1, 1), 0), 0.0);
    }

    void rates()
    {
        GpuReport r = oneStream(2, 1, 2);
        r.kernelBytes = 2'000'000'000;  // GB = 1e9
        r.bytesH2D = r.bytesD2H = 1'000'000'000;
        r.kernelFlops = 4e9;
        QCOMPARE(r.kernelGBs(), 2000.0);
        QCOMPARE(r.kernelGFlops(), 4000.0);
        QCOMPARE(r.endToEndGBs(), 400.0);
        QCOMPARE(GpuReport{}.kernelGBs(), 0.0);
    }
};

QTEST_APPLESS_MAIN(TestGpuReport)
#include "tst_gpu_report.moc"
