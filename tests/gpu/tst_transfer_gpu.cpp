// How a GPU run moves its data: every host memory kind (pageable, staged, pinned), stream count,
// chunking and launch (CUDA graph or stream calls) gives the same bits for every op; staged
// copies cut regions that are not multiples of the staging piece (contiguous, pitched, rows
// wider than a piece) into pieces correctly; and the pinned graph follows every change of
// shape, variant, op and options (updated in place where the nodes match, instantiated anew
// where they do not), never replaying a stale one.
#include "kernellab/gpu/engine.hpp"
#include "gpu_skip.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>

#include <QtTest>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using kl::gpu::Engine;
using kl::gpu::GpuReport;
using kl::gpu::HostMemory;
using kl::gpu::RunOptions;

namespace {

/// One op's output as bytes, so that every op compares the same way.
using Run = std::function<std::vector<unsigned char>(Engine&, const RunOptions&, GpuReport&)>;

std::vector<unsigned char> bytesOf(const cv::Mat& m)
{
    const cv::Mat c = m.isContinuous() ? m : m.clone();
    return {c.datastart, c.dataend};
}

std::vector<unsigned char> bytesOf(const std::vector<float>& v)
{
    std::vector<unsigned char> out(v.size() * sizeof(float));
    if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
    return out;
}

kl::Conv2DSpec gaussian5()
{
    kl::Conv2DSpec spec;
    const cv::Mat g = (cv::Mat_<float>(1, 5) << 1, 4, 6, 4, 1) / 16.0f;
    spec.kernel = g.t() * g;
    return spec;
}

Run conv2dRun(cv::Mat input, kl::Conv2DSpec spec, std::string variant = "auto")
{
    return [=](Engine& e, RunOptions o, GpuReport& r) {
        o.variant = variant;
        cv::Mat out;
        r = e.conv2d(input, spec, o, out);
        return bytesOf(out);
    };
}

Run histogramRun(cv::Mat input)
{
    return [=](Engine& e, const RunOptions& o, GpuReport& r) {
        kl::HistogramResult h;
        r = e.histogram(input, {}, o, h);
        std::vector<unsigned char> out;
        for (const auto& counts : h.counts) {
            const auto* p = reinterpret_cast<const unsigned char*>(counts.data());
            out.insert(out.end(), p, p + counts.size() * sizeof(counts[0]));
        }
        return out;
    };
}

Run transposeRun(cv::Mat input)
{
    return [=](Engine& e, const RunOptions& o, GpuReport& r) {
        cv::Mat out;
        r = e.transpose(input, o, out);
        return bytesOf(out);
    };
}

Run conv1dRun(kl::Signal input, size_t taps)
{
    return [=](Engine& e, const RunOptions& o, GpuReport& r) {
        kl::Conv1DSpec spec;
        spec.taps.assign(taps, 1.0f / float(taps));
        kl::Signal out;
        r = e.conv1d(input, spec, o, out);
        return bytesOf(out.data);
    };
}

Run transposeSignalRun(kl::Signal input)
{
    return [=](Engine& e, const RunOptions& o, GpuReport& r) {
        std::vector<float> out;
        r = e.transposeSignal(input, o, out);
        return bytesOf(out);
    };
}

RunOptions quick(HostMemory memory, int streams, bool graph)
{
    RunOptions o;
    o.memory = memory;
    o.streams = streams;
    o.graph = graph;
    o.minChunkBytes = 0;  // 4 chunks per stream, so that the small inputs still cross chunk boundaries
    o.repetitions = 2;
    o.warmup = 1;
    return o;
}

} // namespace

Q_DECLARE_METATYPE(Run)

class TestTransferGpu : public QObject {
    Q_OBJECT

    std::unique_ptr<Engine> engine_;

    void addOpRows()
    {
        QTest::addColumn<Run>("run");
        QTest::newRow("conv2d u8x3 1021x769") << conv2dRun(kltest::randomImage(769, 1021, CV_8U, 3, 1), gaussian5());
        QTest::newRow("conv2d f32 509x263 naive")
            << conv2dRun(kltest::randomImage(263, 509, CV_32F, 1, 2), gaussian5(), "naive");
        QTest::newRow("conv2d u16x4 331x197") << conv2dRun(kltest::randomImage(197, 331, CV_16U, 4, 3), gaussian5());
        QTest::newRow("histogram u8x3 1021x769") << histogramRun(kltest::randomImage(769, 1021, CV_8U, 3, 4));
        QTest::newRow("histogram f32 997x13") << histogramRun(kltest::randomImage(13, 997, CV_32F, 1, 5));
        QTest::newRow("transpose u8x3 1021x769") << transposeRun(kltest::randomImage(769, 1021, CV_8U, 3, 6));
        QTest::newRow("transpose f32 257x1031") << transposeRun(kltest::randomImage(1031, 257, CV_32F, 1, 7));
        QTest::newRow("conv1d 2ch 100003 K=31") << conv1dRun(kltest::randomSignal(100003, 2, 48000, 8), 31);
        QTest::newRow("conv1d 1ch 65537 K=1025 (fft)") << conv1dRun(kltest::randomSignal(65537, 1, 48000, 9), 1025);
        QTest::newRow("transpose signal 3ch 50021") << transposeSignalRun(kltest::randomSignal(50021, 3, 48000, 10));
    }

private slots:
    void initTestCase()
    {
        KL_SKIP_WITHOUT_GPU();
        engine_ = std::make_unique<Engine>();
    }

    void everyWayGivesTheSameBits_data() { addOpRows(); }

    void everyWayGivesTheSameBits()
    {
        QFETCH(Run, run);
        GpuReport report;
        const std::vector<unsigned char> expected = run(*engine_, quick(HostMemory::Pageable, 1, false), report);
        QVERIFY(!expected.empty());
        for (HostMemory memory : kl::gpu::kHostMemories)
            for (int streams : {1, 3, 4})
                for (bool graph : {false, true}) {
                    const std::string what = kl::gpu::toString(memory) + ", " + std::to_string(streams) +
                                             " streams, graph " + (graph ? "on" : "off");
                    const std::vector<unsigned char> got = run(*engine_, quick(memory, streams, graph), report);
                    QVERIFY2(got == expected, kltest::msg(what + ": the output differs"));
                    QVERIFY(report.memory == memory);
                    // Only pinned end-to-end runs of several chunks are captured; the others say why not.
                    const bool expectGraph = graph && memory == HostMemory::Pinned && report.chunks > 1;
                    QVERIFY2(report.graph == expectGraph, kltest::msg(what + ": " + report.launch));
                    QVERIFY2(report.launch.rfind(expectGraph ? "graph, " : "streams: ", 0) == 0,
                             kltest::msg(what + ": " + report.launch));
                    QVERIFY2(report.total.medianMs > 0 && report.h2d.medianMs > 0 && report.d2h.medianMs > 0,
                             kltest::msg(what));
                }
    }

    /// Regions larger than the 8 MiB staging piece and not multiples of it: a contiguous one (signal),
    /// pitched rows (conv2d), and a strided download of narrow columns (transpose).
    void stagedPiecesCoverOddRegions_data()
    {
        QTest::addColumn<Run>("run");
        QTest::newRow("conv2d f32x3 2311x1723 (47.8 MB)")
            << conv2dRun(kltest::randomImage(1723, 2311, CV_32F, 3, 11), gaussian5());
        QTest::newRow("transpose f32x4 2999x1009 (48.4 MB)")
            << transposeRun(kltest::randomImage(1009, 2999, CV_32F, 4, 12));
        QTest::newRow("conv1d 1ch 5000011 K=15 (20 MB)") << conv1dRun(kltest::randomSignal(5000011, 1, 48000, 13), 15);
        QTest::newRow("histogram u8 4099x2053 (8.4 MB)") << histogramRun(kltest::randomImage(2053, 4099, CV_8U, 1, 14));
    }

    void stagedPiecesCoverOddRegions()
    {
        QFETCH(Run, run);
        GpuReport report;
        const std::vector<unsigned char> expected = run(*engine_, quick(HostMemory::Pinned, 1, false), report);
        for (int streams : {1, 2}) {
            RunOptions o = quick(HostMemory::Staged, streams, true);
            o.minChunkBytes = RunOptions{}.minChunkBytes;  // chunks as a user's run has them
            const std::vector<unsigned char> got = run(*engine_, o, report);
            QVERIFY2(got == expected, kltest::msg(std::to_string(streams) + " streams: the staged output differs"));
            QCOMPARE(report.launch, std::string("streams: staged copies need the host between their pieces"));
        }
    }

    /// A fresh engine has no graph: the first pinned run instantiates one; the same run again, or with
    /// other taps of the same size, updates it in place; a run whose nodes differ (other streams,
    /// another op) instantiates anew; and after each change the output is what stream launches give.
    void graphFollowsEveryChange()
    {
        Engine engine;
        const cv::Mat small = kltest::randomImage(769, 1021, CV_8U, 3, 21);
        const cv::Mat other = kltest::randomImage(1031, 613, CV_8U, 3, 22);
        const cv::Mat f32 = kltest::randomImage(301, 401, CV_32F, 1, 23);
        kl::Conv2DSpec halfGaussian5 = gaussian5();
        halfGaussian5.kernel *= 0.5;
        kl::Conv2DSpec box = gaussian5();
        box.kernel = cv::Mat(3, 3, CV_32F, cv::Scalar(1.0 / 9));
        struct Step {
            const char* what;
            Run run;
            int streams;
            const char* launch;  ///< expected, or nullptr where either is right
        };
        const std::vector<Step> steps = {
            {"first run", conv2dRun(small, gaussian5(), "shared"), 4, "graph, instantiated"},
            {"the same run again", conv2dRun(small, gaussian5(), "shared"), 4, "graph, updated in place"},
            {"other taps of the same size", conv2dRun(small, halfGaussian5, "shared"), 4, "graph, updated in place"},
            {"another shape", conv2dRun(other, gaussian5()), 4, nullptr},
            {"another kernel", conv2dRun(other, box), 4, nullptr},
            {"another variant", conv2dRun(other, box, "naive"), 4, nullptr},
            {"another depth", conv2dRun(f32, box), 4, nullptr},
            {"other streams", conv2dRun(f32, box), 2, "graph, instantiated"},
            {"another op", histogramRun(small), 2, "graph, instantiated"},
            {"back to the first", conv2dRun(small, gaussian5(), "shared"), 4, "graph, instantiated"},
        };
        for (const Step& step : steps) {
            GpuReport streamed, graphed;
            const std::vector<unsigned char> expected =
                step.run(engine, quick(HostMemory::Pinned, step.streams, false), streamed);
            const std::vector<unsigned char> got = step.run(engine, quick(HostMemory::Pinned, step.streams, true), graphed);
            QVERIFY2(got == expected, kltest::msg(std::string(step.what) + ": the graph's output differs"));
            QVERIFY2(graphed.graph, kltest::msg(std::string(step.what) + ": " + graphed.launch));
            if (step.launch) QCOMPARE(graphed.launch, std::string(step.launch));
            qInfo("%s: %s", step.what, graphed.launch.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestTransferGpu)
#include "tst_transfer_gpu.moc"
