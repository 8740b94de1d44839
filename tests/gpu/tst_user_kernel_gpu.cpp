// Users' own kernels on the GPU (docs/custom-kernels.md), through the session as the app and
// the CLI run them: every template passes verification against cpu-ref on random inputs of odd
// and prime sizes, every depth and channel count (conv2d: every border); a wrong kernel is flagged
// with its first mismatch; a kernel that never ends is stopped within its time-out and the next
// run works; writes just past the output and far outside it are reported; the report carries the
// kernel's registers and occupancy. Skipped ("no CUDA device: <reason>") without a GPU.
#include "kernellab/gpu/user_kernel.hpp"
#include "custom_kernel.hpp"
#include "gpu_skip.hpp"
#include "session.hpp"
#include "test_support.hpp"

#include <QElapsedTimer>
#include <QtTest>

using namespace kl;

namespace {

app::CustomKernel customKernel(const std::string& source, double timeoutSeconds = 5)
{
    app::CustomKernel k;
    k.source = source;
    k.entry = gpu::firstKernelName(source);
    k.launch = gpu::launchFromSource(source);
    k.timeoutSeconds = timeoutSeconds;
    return k;
}

app::RunRequest imageRequest(app::Op op, const cv::Mat& image, const app::CustomKernel& kernel)
{
    app::RunRequest r;
    r.op = op;
    r.image = image;
    r.inputName = "random";
    r.backends = {app::Backend::CpuReference, app::Backend::Gpu};
    r.customKernel = kernel;
    r.gpu.variant = kernel.variant().toStdString();
    r.gpu.repetitions = 2;
    r.gpu.warmup = 1;
    r.gpu.endToEnd = false;
    r.cpuRepetitions = 1;
    r.measureRoofs = false;
    return r;
}

/// The GPU result, failing the test with its error when it has none.
const app::BackendResult& gpuResult(const app::RunResult& run)
{
    const app::BackendResult* g = run.find(app::Backend::Gpu);
    if (!g) qFatal("no GPU result");
    return *g;
}

QString verdict(const app::RunResult& run)
{
    const app::BackendResult& g = gpuResult(run);
    if (!g.ok()) return "failed: " + g.error;
    for (const app::BackendComparison& c : run.comparisons)
        if (c.backend == app::Backend::Gpu) return c.disagreement;
    return QStringLiteral("no comparison");
}

const std::string kTransposeNaive = gpu::kernelTemplate("transpose", "naive").source;

} // namespace

class TestUserKernelGpu : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { KL_SKIP_WITHOUT_GPU(); }

    void imageTemplatesAgreeWithTheReference_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("name");
        for (const gpu::KernelTemplate& t : gpu::kernelTemplates())
            if (t.op != "conv1d")
                QTest::newRow((t.op + " " + t.name).c_str()) << QString::fromStdString(t.op) << QString::fromStdString(t.name);
    }
    void imageTemplatesAgreeWithTheReference()
    {
        QFETCH(QString, op);
        QFETCH(QString, name);
        const app::CustomKernel kernel = customKernel(gpu::kernelTemplate(op.toStdString(), name.toStdString()).source);
        const app::Op appOp = app::parseOp(op);
        uint64_t seed = 7;
        for (int depth : {CV_8U, CV_16U, CV_32F})
            for (int channels : {1, 3, 4}) {
                app::RunRequest r = imageRequest(appOp, kltest::randomImage(131, 257, depth, channels, ++seed), kernel);
                // Every border once (on u16, 3 channels); the default elsewhere.
                const bool everyBorder = appOp == app::Op::Conv2D && depth == CV_16U && channels == 3;
                const std::vector<BorderMode> borders = everyBorder ? allBorderModes() : std::vector<BorderMode>{BorderMode::Reflect101};
                // 5 wide, 3 tall and lopsided: a kernel read upside down or transposed shows.
                r.conv2d.kernel = (cv::Mat_<float>(3, 5) << 0.05f, 0.1f, -0.02f, 0.2f, 0.01f, 0.1f, 0.3f, 0.07f, -0.1f,
                                   0.02f, 0.03f, 0.04f, 0.15f, 0.05f, 0.0f);
                for (BorderMode border : borders) {
                    r.conv2d.border = border;
                    r.conv2d.borderValue = 17;
                    const app::RunResult run = app::execute(r);
                    const QString problem = verdict(run);
                    QVERIFY2(problem.isEmpty(), qPrintable(QStringLiteral("%1 %2, depth %3, %4 channel(s), %5: %6")
                                                               .arg(op, name)
                                                               .arg(depth)
                                                               .arg(channels)
                                                               .arg(QString::fromStdString(toString(border)), problem)));
                    const gpu::GpuReport& report = *gpuResult(run).gpu;
                    QCOMPARE(report.variant, kernel.variant().toStdString());
                    QVERIFY(report.kernel.medianMs > 0);
                    QVERIFY(report.resources && report.resources->registers > 0 &&
                            report.resources->activeBlocksPerSM > 0);
                }
            }
    }

    void conv1dTemplateAgreesWithTheReference()
    {
        const app::CustomKernel kernel = customKernel(gpu::kernelTemplate("conv1d", "naive").source);
        for (Conv1DMode mode : allConv1DModes())
            for (size_t taps : {size_t(1), size_t(31), size_t(1009)}) {
                app::RunRequest r;
                r.op = app::Op::Conv1D;
                r.signal = kltest::randomSignal(100003, 2, 48000, taps);
                r.conv1d.taps.assign(taps, 0.f);
                for (size_t i = 0; i < taps; ++i) r.conv1d.taps[i] = float(i % 7) - 3.f;
                r.conv1d.mode = mode;
                r.backends = {app::Backend::CpuReference, app::Backend::Gpu};
                r.customKernel = kernel;
                r.gpu.variant = kernel.variant().toStdString();
                r.gpu.repetitions = 2;
                r.measureRoofs = false;
                const app::RunResult run = app::execute(r);  // end to end: the copies are timed too
                QVERIFY2(verdict(run).isEmpty(), qPrintable(verdict(run)));
                QVERIFY(gpuResult(run).gpu->h2d.medianMs > 0 && gpuResult(run).gpu->kernelFlops > 0);
            }
    }

    void aWrongKernelIsFlaggedAtItsFirstMismatch()
    {
        // Skips the last column: those pixels keep the poison the output was filled with.
        std::string wrong = kTransposeNaive;
        wrong.replace(wrong.find("if (x >= a.cols"), 15, "if (x >= a.cols - 1");
        const app::RunResult run =
            app::execute(imageRequest(app::Op::Transpose, kltest::randomImage(37, 53, CV_32F, 1, 3), customKernel(wrong)));
        const QString problem = verdict(run);
        QVERIFY2(problem.contains(QStringLiteral("37 of 1961 elements differ")), qPrintable(problem));
        QVERIFY2(problem.contains(QStringLiteral("first at row 52, column 0, channel 0")), qPrintable(problem));
    }

    void aKernelThatNeverEndsIsStoppedAndTheNextRunWorks()
    {
        std::string endless = kTransposeNaive;
        endless.replace(endless.find("if (x >= a.cols"), 2, "while (clock64() >= 0) {} if");
        const cv::Mat image = kltest::randomImage(64, 64, CV_32F, 1, 5);
        QElapsedTimer clock;
        clock.start();
        const app::RunResult stopped = app::execute(imageRequest(app::Op::Transpose, image, customKernel(endless, 1)));
        QVERIFY2(gpuResult(stopped).error.contains(QStringLiteral("did not finish within 1 s")),
                 qPrintable(gpuResult(stopped).error));
        QVERIFY2(clock.elapsed() < 20000, qPrintable(QStringLiteral("stopped after %1 ms").arg(clock.elapsed())));
        const app::RunResult next = app::execute(imageRequest(app::Op::Transpose, image, customKernel(kTransposeNaive)));
        QVERIFY2(verdict(next).isEmpty(), qPrintable(verdict(next)));
    }

    void writesOutsideTheOutputAreReported()
    {
        const cv::Mat image = kltest::randomImage(61, 67, CV_8U, 1, 9);
        // Just past the end: into the guard zone.
        std::string pastTheEnd = kTransposeNaive;
        pastTheEnd.replace(pastTheEnd.find("    for (int c"), 4, "    if (x == 0 && y == 0) a.out[a.cols * a.outPitch + 5] = 1;\n    ");
        const app::RunResult guarded = app::execute(imageRequest(app::Op::Transpose, image, customKernel(pastTheEnd)));
        QVERIFY2(gpuResult(guarded).error.contains(QStringLiteral("wrote outside its output: 1 bytes after the output")),
                 qPrintable(gpuResult(guarded).error));
        // Far away: the device reports the fault, and the next run works.
        std::string far = kTransposeNaive;
        far.replace(far.find("    for (int c"), 4, "    if (x == 0 && y == 0) a.out[-(1ll << 40)] = 1;\n    ");
        const app::RunResult faulted = app::execute(imageRequest(app::Op::Transpose, image, customKernel(far)));
        QVERIFY2(gpuResult(faulted).error.contains(QStringLiteral("illegal memory access")) ||
                     gpuResult(faulted).error.contains(QStringLiteral("illegal address")),
                 qPrintable(gpuResult(faulted).error));
        const app::RunResult next = app::execute(imageRequest(app::Op::Transpose, image, customKernel(kTransposeNaive)));
        QVERIFY2(verdict(next).isEmpty(), qPrintable(verdict(next)));
    }

    void compileErrorsFailTheGpuBackendAlone()
    {
        std::string broken = kTransposeNaive;
        broken.replace(broken.find("const int y"), 11, "const int y y");
        const app::RunResult run =
            app::execute(imageRequest(app::Op::Transpose, kltest::randomImage(8, 8, CV_8U, 1, 1), customKernel(broken)));
        QVERIFY(run.find(app::Backend::CpuReference)->ok());
        QVERIFY2(gpuResult(run).error.contains(QStringLiteral("kernel.cu:")), qPrintable(gpuResult(run).error));
    }
};

QTEST_GUILESS_MAIN(TestUserKernelGpu)
#include "tst_user_kernel_gpu.moc"
