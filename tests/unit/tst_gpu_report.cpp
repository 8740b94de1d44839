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
