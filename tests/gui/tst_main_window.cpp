// The desktop window driven through its API, offscreen, on the CPU backends (and the GPU
// where there is one): every view holds what the engine computed, the panels' numbers
// are the engine's, options reach the request, and errors keep the window's state.
#include "execution_panel.hpp"
#include "histogram_panel.hpp"
#include "histogram_view.hpp"
#include "image_grid.hpp"
#include "kernel_editor.hpp"
#include "kernel_source_panel.hpp"
#include "main_window.hpp"
#include "operation_panel.hpp"
#include "output_files.hpp"
#include "roofline_panel.hpp"
#include "signal_view.hpp"
#include "streams_panel.hpp"
#include "sweep_dialog.hpp"
#include "timeline_widget.hpp"
#include "timings_panel.hpp"

#include "kernellab/conv1d.hpp"
#include "kernellab/conv2d.hpp"
#include "kernellab/cpu.hpp"
#include "kernellab/histogram.hpp"
#include "kernellab/image_io.hpp"
#include "kernellab/metrics.hpp"
#include "kernellab/signal_io.hpp"
#include "kernellab/transpose.hpp"
#include "test_support.hpp"

#include <opencv2/core.hpp>

#include <limits>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineSeries>
#include <QProgressBar>
#include <QSignalSpy>
#include <QTableWidget>
#include <QAction>
#include <QComboBox>
#include <QCheckBox>
#include <QListWidget>
#include <QRegularExpression>
#include <QStandardItemModel>
#include <QLabel>
#include <QtTest>

using kl::app::Backend;
using kl::app::Op;
using kl::gui::ImageGrid;
using kl::gui::MainWindow;
using kl::gui::SignalView;

namespace {

constexpr int kRunTimeoutMs = 30000;

QString sample(const char* name)
{
    return QString::fromStdString(kltest::samplePath(name));
}

bool gpuAvailable()
{
    static const bool available = kl::gpu::gpuStatus().available;
    return available;
}

/// Waits until `runs` outcomes have been shown and nothing more is loading, pending or running.
bool settles(MainWindow& window, QSignalSpy& finished, int runs = 1)
{
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < kRunTimeoutMs) {
        if (finished.count() >= runs && !window.isBusy()) return true;
        QTest::qWait(20);
    }
    return false;
}

/// A window on the CPU backends (plus the GPU where there is one), shown offscreen, with `path` open and run.
struct OpenWindow {
    MainWindow window{false};
    QSignalSpy finished{&window, &MainWindow::runFinished};

    explicit OpenWindow(const QString& path)
    {
        window.executionPanel()->setRepetitions(1);
        window.show();
        window.openFile(path);
    }

    /// `spec` generated and run on the CPU backends only.
    explicit OpenWindow(const kl::app::GenerateSpec& spec)
    {
        window.executionPanel()->setRepetitions(1);
        window.executionPanel()->setBackends({Backend::CpuReference, Backend::CpuOpenCV});
        window.show();
        window.generateInput(spec);
    }
};

/// A small 8-bit image: quick runs on the CPU backends.
kl::app::GenerateSpec smallImage()
{
    kl::app::GenerateSpec spec;
    spec.cols = 256;
    spec.rows = 192;
    spec.depth = CV_8U;
    spec.imagePattern = kl::app::ImagePattern::Gradient;
    return spec;
}

std::vector<uint64_t> seriesCounts(const QLineSeries* series)
{
    std::vector<uint64_t> counts;
    for (const QPointF& p : series->points()) counts.push_back(uint64_t(p.y()));
    return counts;
}

kl::Conv2DSpec gaussian5x5()
{
    kl::Conv2DSpec spec;
    kl::Conv2DPresetParams params;
    params.width = params.height = 5;
    spec.kernel = kl::makeConv2DKernel(kl::Conv2DPreset::Gaussian, params);
    return spec;
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT

private slots:
    void imageConv2DViewsHoldTheEngineOutputs();
    void histogramPanelShowsTheEngineHistogram();
    void histogramOpResultIsPlotted();
    void histogramOpCountsWhatItDidNotBin();
    void transposeShowsTheTransposedImage();
    void signalConv1DShowsTheEngineOutput();
    void signalTransposeShowsInterleavedSamples();
    void optionsReachTheRequest();
    void cpuThreadsReachTheRequest();
    void cpuRowsShowTheirShareOfHostBandwidth();
    void timingsGoLogarithmicWhenBarsSpanMoreThan20x();
    void sweepDialogTimesTheCpuBackends();
    void sweepDialogCancels();
    void sweepDialogOnTheGpu();
    void rooflineShowsEachRunAgainstItsRoofs();
    void threadScalingRunsEachThreadCount();
    void badFileKeepsThePreviousInput();
    void invalidKernelIsReportedNotRun();
    void customKernelFromTheEditorIsRun();
    void generatedSixteenBitInputIsWindowed();
    void savesOutputsReportsAndPictures();
    void cancelStopsALongRun();
    void escapeStopsALongGpuRun();
    void gpuOutOfMemoryKeepsTheCpuResults();
    void variantComboExplainsApplicability();
    void timelineDrawsEveryEntry();
    void gpuComparisonsAndTimeline();
    void kernelSourceCompilesFixesAndRuns();
};

void TestMainWindow::imageConv2DViewsHoldTheEngineOutputs()
{
    OpenWindow w(sample("camera.png"));
    QVERIFY(settles(w.window, w.finished));
    const cv::Mat input = kl::loadImage(kltest::samplePath("camera.png"));
    const cv::Mat expected = kl::conv2dReference(input, gaussian5x5());

    ImageGrid* grid = w.window.imageGrid();
    const cv::Mat shownInput = grid->view(ImageGrid::Pane::Input)->source();
    QCOMPARE(cv::norm(shownInput, input, cv::NORM_INF), 0.0);
    const cv::Mat cpu = grid->view(ImageGrid::Pane::Cpu)->source();
    QVERIFY(!cpu.empty());
    QCOMPARE(cv::norm(cpu, expected, cv::NORM_INF), 0.0);
    QVERIFY(grid->caption(ImageGrid::Pane::Cpu).contains(QLatin1String("cpu-ref")));

    const cv::Mat gpu = grid->view(ImageGrid::Pane::Gpu)->source();
    if (gpuAvailable()) {
        QVERIFY(!gpu.empty());
        QVERIFY(cv::norm(gpu, expected, cv::NORM_INF) <= 1.0);  // rounding ties only
    } else {
        QVERIFY(gpu.empty());
        QVERIFY2(grid->view(ImageGrid::Pane::Gpu)->message().contains(QLatin1String("no CUDA device")),
                 qPrintable(grid->view(ImageGrid::Pane::Gpu)->message()));
        // Without a GPU the difference view compares the two CPU backends.
        QVERIFY(grid->caption(ImageGrid::Pane::Difference).contains(QLatin1String("cpu-opencv")));
    }
    const cv::Mat difference = grid->view(ImageGrid::Pane::Difference)->source();
    QCOMPARE(difference.type(), CV_32F);
    QCOMPARE(difference.size(), input.size());

    // The value under the cursor is the true value of every view.
    grid->showValuesAt(QPoint(10, 20));
    QVERIFY(grid->valueText(ImageGrid::Pane::Input).endsWith(QString::number(input.at<uint8_t>(20, 10))));
    QVERIFY(grid->valueText(ImageGrid::Pane::Cpu).endsWith(QString::number(expected.at<uint8_t>(20, 10))));

    // Timings: one row and one bar per backend; the CPU medians are the engine's.
    const auto outcome = w.window.lastOutcome();
    QVERIFY(outcome);
    QTableWidget* table = w.window.timingsPanel()->table();
    QCOMPARE(table->rowCount(), 3);
    QCOMPARE(w.window.timingsPanel()->barLabels().size(), 3);
    w.window.timingsPanel()->setLogScale(true);
    QCOMPARE(w.window.timingsPanel()->barLabels(), (QStringList{QStringLiteral("cpu-ref"), QStringLiteral("cpu-opencv"),
                                                               gpuAvailable() ? w.window.timingsPanel()->barLabels().last()
                                                                              : QStringLiteral("gpu (failed)")}));
    const kl::app::BackendResult* ref = outcome->main.find(Backend::CpuReference);
    QVERIFY(ref && ref->ok());
    QCOMPARE(table->item(0, kl::gui::TimingsPanel::MedianColumn)->text().toDouble(),
             QString::number(ref->time.medianMs, 'f', ref->time.medianMs < 1 ? 4 : 3).toDouble());
    if (!gpuAvailable()) {
        QVERIFY(table->item(2, kl::gui::TimingsPanel::ErrorColumn)->text().contains(QLatin1String("no CUDA device")));
        QVERIFY(w.window.streamsPanel()->summary().contains(QLatin1String("no CUDA device")));
    }
}

void TestMainWindow::histogramPanelShowsTheEngineHistogram()
{
    OpenWindow w(sample("coffee.png"));
    QVERIFY(settles(w.window, w.finished));
    const cv::Mat input = kl::loadImage(kltest::samplePath("coffee.png"));
    const kl::HistogramResult expected = kl::histogramReference(input, {});
    const auto outcome = w.window.lastOutcome();
    QVERIFY(outcome && outcome->histograms.input);
    const QString source = outcome->histograms.backend;
    QCOMPARE(source, gpuAvailable() ? QStringLiteral("gpu") : QStringLiteral("cpu-opencv"));
    for (size_t c = 0; c < expected.counts.size(); ++c) {
        const QString name = source + QLatin1Char(' ') + QString::fromStdString(expected.labels[c]);
        QLineSeries* series = w.window.histogramPanel()->findSeries(QStringLiteral("input"), name);
        QVERIFY2(series, qPrintable(name));
        QVERIFY(seriesCounts(series) == expected.counts[c]);
    }
    // The output chart holds the histogram of the CPU output image.
    const cv::Mat cpuOutput = kl::conv2dReference(input, gaussian5x5());
    const kl::HistogramResult outputExpected = kl::histogramReference(cpuOutput, {});
    QLineSeries* luminance = w.window.histogramPanel()->findSeries(QStringLiteral("output"), QStringLiteral("cpu Y"));
    QVERIFY(luminance);
    QVERIFY(seriesCounts(luminance) == outputExpected.counts.back());

    // Log scale plots log10(1 + count) of the same counts.
    w.window.histogramPanel()->setLogScale(true);
    luminance = w.window.histogramPanel()->findSeries(QStringLiteral("output"), QStringLiteral("cpu Y"));
    QVERIFY(luminance);
    QCOMPARE(luminance->points().size(), qsizetype(outputExpected.counts.back().size()));
    for (int i = 0; i < luminance->points().size(); ++i)
        QCOMPARE(luminance->points()[i].y(), std::log10(1.0 + double(outputExpected.counts.back()[size_t(i)])));
}

void TestMainWindow::histogramOpResultIsPlotted()
{
    OpenWindow w(sample("astronaut.png"));
    QVERIFY(settles(w.window, w.finished));
    QCOMPARE(w.window.mainView(), static_cast<QWidget*>(w.window.imageGrid()));
    w.window.operationPanel()->setOp(Op::Histogram);
    QVERIFY(settles(w.window, w.finished, 2));
    const cv::Mat input = kl::loadImage(kltest::samplePath("astronaut.png"));
    const kl::HistogramResult expected = kl::histogramReference(input, {});

    // The op's histograms take the main area, with the input small beside them.
    kl::gui::HistogramView* view = w.window.histogramView();
    QCOMPARE(w.window.mainView(), static_cast<QWidget*>(view));
    QCOMPARE(cv::norm(view->input()->source(), input, cv::NORM_INF), 0.0);
    QVERIFY(view->inputCaption().contains(QLatin1String("astronaut.png")));
    QVERIFY2(view->input()->width() * 2 < view->histograms()->width(),
             qPrintable(QStringLiteral("%1 vs %2").arg(view->input()->width()).arg(view->histograms()->width())));
    for (size_t c = 0; c < expected.counts.size(); ++c) {
        QLineSeries* series = view->histograms()->findSeries(
            QStringLiteral("output"), QStringLiteral("cpu ") + QString::fromStdString(expected.labels[c]));
        QVERIFY(series);
        QVERIFY(seriesCounts(series) == expected.counts[c]);
    }
    if (gpuAvailable()) {
        QCOMPARE(view->histograms()->mismatchText(), QStringLiteral("CPU and GPU histograms match"));
        QLineSeries* gpuLuminance = view->histograms()->findSeries(QStringLiteral("output"), QStringLiteral("gpu Y"));
        QVERIFY(gpuLuminance);
        QCOMPARE(gpuLuminance->pen().style(), Qt::DashLine);
    } else {
        QVERIFY2(view->failuresText().startsWith(QLatin1String("gpu: no CUDA device")), qPrintable(view->failuresText()));
    }
    // u8 values are their bins: nothing is left out.
    QVERIFY2(view->histograms()->notBinnedText().contains(QStringLiteral("cpu: B 0 / 0 · G 0 / 0 · R 0 / 0 · Y 0 / 0")),
             qPrintable(view->histograms()->notBinnedText()));
    view->histograms()->setLogScale(true);
    QLineSeries* luminance = view->histograms()->findSeries(QStringLiteral("output"), QStringLiteral("cpu Y"));
    QVERIFY(luminance);
    QCOMPARE(luminance->points().at(100).y(), std::log10(1.0 + double(expected.counts.back()[100])));
    QVERIFY(w.window.histogramPanel()->mismatchText().contains(QLatin1String("main area")));

    // Saved as the CLI's --output writes a histogram; an image extension is refused with its message.
    const QString saved = QString::fromStdString(kltest::tempDir()) + QStringLiteral("/histogram.csv");
    QVERIFY(w.window.saveOutput(Backend::CpuReference, saved));
    QCOMPARE(QString::fromStdString(kltest::readFile(saved.toStdString())), kl::app::histogramCsv(expected));
    QVERIFY(!w.window.saveOutput(Backend::CpuReference, saved + QStringLiteral(".png")));
    QVERIFY(w.window.statusText().contains(QLatin1String("a histogram output needs one of .csv")));

    // Another op gives the main area back to the image views.
    w.window.operationPanel()->setOp(Op::Transpose);
    QVERIFY(settles(w.window, w.finished, 3));
    QCOMPARE(w.window.mainView(), static_cast<QWidget*>(w.window.imageGrid()));
}

/// An f32 image with NaNs: they are not binned but counted per channel, and the view shows the counts.
void TestMainWindow::histogramOpCountsWhatItDidNotBin()
{
    cv::Mat image(64, 48, CV_32FC3);
    cv::randu(image, 0.0, 1.0);
    for (int i = 0; i < 7; ++i) image.at<cv::Vec3f>(i * 5, i * 3)[1] = std::numeric_limits<float>::quiet_NaN();
    image.at<cv::Vec3f>(3, 3)[2] = std::numeric_limits<float>::quiet_NaN();
    const std::string path = kltest::tempDir() + "/with_nan.tif";
    kl::saveImage(path, image);
    const kl::HistogramResult expected = kl::histogramReference(image, {});
    QCOMPARE(expected.nanCount[1], uint64_t(7));

    OpenWindow w(QString::fromStdString(path));
    QVERIFY(settles(w.window, w.finished));
    w.window.operationPanel()->setOp(Op::Histogram);
    QVERIFY(settles(w.window, w.finished, 2));
    QStringList channels;
    for (size_t c = 0; c < expected.counts.size(); ++c)
        channels << QStringLiteral("%1 %2 / %3")
                        .arg(QString::fromStdString(expected.labels[c]))
                        .arg(expected.outOfRange[c])
                        .arg(expected.nanCount[c]);
    const QString shown = w.window.histogramView()->histograms()->notBinnedText();
    QVERIFY2(shown.contains(QStringLiteral("cpu: ") + channels.join(QStringLiteral(" · "))), qPrintable(shown));
    if (gpuAvailable()) QVERIFY2(shown.contains(QStringLiteral("gpu: ") + channels.join(QStringLiteral(" · "))), qPrintable(shown));
}

void TestMainWindow::transposeShowsTheTransposedImage()
{
    OpenWindow w(sample("coffee.png"));
    QVERIFY(settles(w.window, w.finished));
    w.window.operationPanel()->setOp(Op::Transpose);
    QVERIFY(settles(w.window, w.finished, 2));
    const cv::Mat expected = kl::transposeReference(kl::loadImage(kltest::samplePath("coffee.png")));
    const cv::Mat cpu = w.window.imageGrid()->view(ImageGrid::Pane::Cpu)->source();
    QCOMPARE(cpu.size(), expected.size());
    QCOMPARE(cv::norm(cpu, expected, cv::NORM_INF), 0.0);
}

void TestMainWindow::signalConv1DShowsTheEngineOutput()
{
    OpenWindow w(sample("speech_22k.wav"));
    QVERIFY(settles(w.window, w.finished));
    QVERIFY(w.window.operationPanel()->op() == Op::Conv1D);
    const kl::Signal input = kl::loadSignal(kltest::samplePath("speech_22k.wav"));
    const kl::app::RunRequest& request = w.window.lastOutcome()->main.request;
    const kl::Signal expected = kl::conv1dReference(input, request.conv1d);
    SignalView* view = w.window.signalView();
    const kl::Signal& cpu = view->signal(SignalView::Trace::Cpu);
    QCOMPARE(cpu.frames, expected.frames);
    QVERIFY(cpu.data == expected.data);
    QCOMPARE(view->signal(SignalView::Trace::Input).frames, input.frames);
    // A long signal is drawn decimated: two points per pixel column at most.
    QVERIFY(view->series(SignalView::Trace::Cpu)->count() > 0);
    QVERIFY(size_t(view->series(SignalView::Trace::Cpu)->count()) < expected.frames);
    if (!gpuAvailable()) QVERIFY(view->caption(SignalView::Trace::Gpu).contains(QLatin1String("no CUDA device")));
    else
        QVERIFY(kl::compare(view->signal(SignalView::Trace::Gpu), expected).normRelError <= kl::kFftBackendsRelTolerance);
    QVERIFY(w.window.histogramPanel()->findSeries(QStringLiteral("input"), QStringLiteral("cpu-opencv 0")) == nullptr);

    const QString saved = QString::fromStdString(kltest::tempDir()) + QStringLiteral("/filtered.wav");
    QVERIFY(w.window.saveOutput(Backend::CpuReference, saved));
    QVERIFY(kl::loadSignal(saved.toStdString()).data == expected.data);
}

void TestMainWindow::signalTransposeShowsInterleavedSamples()
{
    OpenWindow w(sample("chirp_noise_48k_stereo.wav"));
    QVERIFY(settles(w.window, w.finished));
    w.window.operationPanel()->setOp(Op::Transpose);
    QVERIFY(settles(w.window, w.finished, 2));
    const kl::Signal input = kl::loadSignal(kltest::samplePath("chirp_noise_48k_stereo.wav"));
    const kl::Signal& cpu = w.window.signalView()->signal(SignalView::Trace::Cpu);
    QCOMPARE(cpu.channels, 1);
    QVERIFY(cpu.data == kl::toInterleaved(input));
    QCOMPARE(cpu.sampleRate, input.sampleRate * 2);

    // The channel selector: every point drawn for the input is a sample of channel 1.
    SignalView* view = w.window.signalView();
    view->setChannel(1);
    const QList<QPointF> points = view->series(SignalView::Trace::Input)->points();
    QVERIFY(!points.isEmpty());
    for (const QPointF& p : points)
        QCOMPARE(float(p.y()), input.channel(1)[size_t(std::llround(p.x() * input.sampleRate))]);

    // Saved as the CLI's --output writes it: the frames x channels matrix, which .npy stores row by row.
    const QString saved = QString::fromStdString(kltest::tempDir()) + QStringLiteral("/interleaved.npy");
    QVERIFY(w.window.saveOutput(Backend::CpuReference, saved));
    kl::SignalLoadOptions options;
    options.sampleRate = input.sampleRate;
    QVERIFY(kl::loadSignal(saved.toStdString(), options).data == input.data);
}

void TestMainWindow::optionsReachTheRequest()
{
    OpenWindow w(sample("camera.png"));
    QVERIFY(settles(w.window, w.finished));
    QCOMPARE(w.window.worker()->lastJob().request.backends.size(), size_t(3));

    kl::gui::ExecutionPanel* execution = w.window.executionPanel();
    execution->setBackendEnabled(Backend::Gpu, false);
    execution->setHostMemory(kl::gpu::HostMemory::Pinned);
    execution->setStreams(4);
    execution->setKernelOnly(true);
    execution->setRepetitions(2);
    QVERIFY(settles(w.window, w.finished, 2));
    // The changes came within the re-run delay: one run took them all.
    QCOMPARE(w.finished.count(), 2);
    const kl::app::RunRequest request = w.window.worker()->lastJob().request;
    QVERIFY((request.backends == std::vector<Backend>{Backend::CpuReference, Backend::CpuOpenCV}));
    QVERIFY(request.gpu.memory == kl::gpu::HostMemory::Pinned);
    QCOMPARE(request.gpu.streams, 4);
    QCOMPARE(request.gpu.endToEnd, false);
    QCOMPARE(request.cpuRepetitions, 2);
    QCOMPARE(w.window.lastOutcome()->main.results.size(), size_t(2));
    QCOMPARE(w.window.timingsPanel()->table()->rowCount(), 2);
    QVERIFY(w.window.imageGrid()->view(ImageGrid::Pane::Gpu)->message().contains(QLatin1String("not selected")));

    execution->setBackends({Backend::CpuOpenCV});
    QVERIFY(settles(w.window, w.finished, 3));
    QVERIFY((w.window.worker()->lastJob().request.backends == std::vector<Backend>{Backend::CpuOpenCV}));
    QCOMPARE(w.window.imageGrid()->caption(ImageGrid::Pane::Cpu).contains(QLatin1String("cpu-opencv")), true);
}

void TestMainWindow::cpuThreadsReachTheRequest()
{
    OpenWindow w(smallImage());
    QVERIFY(settles(w.window, w.finished));
    kl::gui::ExecutionPanel* execution = w.window.executionPanel();
    QCOMPARE(execution->cpuThreads(), kl::hardwareThreads());
    QCOMPARE(w.window.lastOutcome()->main.cpuThreads, kl::hardwareThreads());

    execution->setCpuThreads(1);
    w.window.runNow();  // on a one-thread host 1 is no change, so nothing re-runs by itself
    QVERIFY(settles(w.window, w.finished, 2));
    QCOMPARE(w.window.worker()->lastJob().request.cpuThreads, 1);
    QCOMPARE(w.window.lastOutcome()->main.cpuThreads, 1);
    QVERIFY2(w.window.timingsPanel()->summary().contains(QLatin1String("Host: 1 CPU thread,")),
             qPrintable(w.window.timingsPanel()->summary()));
}

void TestMainWindow::cpuRowsShowTheirShareOfHostBandwidth()
{
    OpenWindow w(smallImage());
    QVERIFY(settles(w.window, w.finished));
    const kl::app::RunResult& main = w.window.lastOutcome()->main;
    QVERIFY(main.hostBandwidthGBs > 0);
    const kl::app::BackendResult* opencv = main.find(Backend::CpuOpenCV);
    QVERIFY(opencv && opencv->ok());
    QTableWidget* table = w.window.timingsPanel()->table();
    QCOMPARE(table->item(1, kl::gui::TimingsPanel::BackendColumn)->text(), QStringLiteral("cpu-opencv"));
    const QTableWidgetItem* gbs = table->item(1, kl::gui::TimingsPanel::KernelGBsColumn);
    QVERIFY(gbs);
    QCOMPARE(gbs->text(), QString::number(kl::app::cpuGBs(main.request, *opencv), 'f', 1));
    const QTableWidgetItem* percent = table->item(1, kl::gui::TimingsPanel::RoofPercentColumn);
    QVERIFY(percent);
    QCOMPARE(percent->text(), QString::number(kl::app::hostBandwidthPercent(main, *opencv), 'f', 1));
    QVERIFY(percent->text().toDouble() > 0);
    QVERIFY2(w.window.timingsPanel()->summary().contains(
                 QStringLiteral("memory bandwidth %1 GB/s measured (read + write)").arg(main.hostBandwidthGBs, 0, 'f', 1)),
             qPrintable(w.window.timingsPanel()->summary()));
    QVERIFY(w.window.timingsPanel()->scalingTable()->isHidden());
}

/// A GPU bar beside cpu-ref's is a sliver on a linear axis: bars spanning more than 20x get the
/// log axis by default, until the user picks one. (Outcomes with set times: what is tested is the
/// rule, not how fast this machine's backends are.)
void TestMainWindow::timingsGoLogarithmicWhenBarsSpanMoreThan20x()
{
    const auto outcome = [](std::vector<std::pair<Backend, double>> times) {
        kl::gui::RunOutcome o;
        o.main.request.op = Op::Conv2D;
        o.main.request.image = cv::Mat(8, 8, CV_8U, cv::Scalar(1));
        for (const auto& [backend, ms] : times) {
            kl::app::BackendResult r;
            r.backend = backend;
            r.time = {ms, ms, ms, 1};
            if (backend == Backend::Gpu) {
                kl::gpu::GpuReport g;
                g.h2d = {ms / 4, ms / 4, ms / 4, 1};
                g.kernel = {ms / 2, ms / 2, ms / 2, 1};
                g.d2h = {ms / 4, ms / 4, ms / 4, 1};
                g.total = r.time;
                r.gpu = g;
            }
            r.image = o.main.request.image;
            o.main.results.push_back(r);
        }
        return o;
    };
    kl::gui::TimingsPanel timings;
    timings.showOutcome(outcome({{Backend::CpuReference, 13.5}, {Backend::Gpu, 0.08}}));
    QVERIFY(timings.logScale());
    timings.showOutcome(outcome({{Backend::CpuOpenCV, 1.0}, {Backend::Gpu, 0.2}}));  // 5x: linear
    QVERIFY(!timings.logScale());
    timings.showOutcome(outcome({{Backend::CpuOpenCV, 2.0}}));  // one bar spans nothing
    QVERIFY(!timings.logScale());
    timings.showOutcome(outcome({{Backend::CpuReference, 13.5}, {Backend::Gpu, 0.08}}));
    QVERIFY(timings.logScale());

    // The user's choice stands for the outcomes after it.
    QCheckBox* logScale = timings.findChild<QCheckBox*>();
    QVERIFY(logScale);
    timings.show();
    QTest::mouseClick(logScale, Qt::LeftButton);
    QVERIFY(!timings.logScale());
    timings.showOutcome(outcome({{Backend::CpuReference, 13.5}, {Backend::Gpu, 0.08}}));
    QVERIFY(!timings.logScale());
}

/// Run → Size sweep… on the CPU backends: every size timed by the CLI's sweep (same rows, same CSV),
/// plotted log-log, exported.
void TestMainWindow::sweepDialogTimesTheCpuBackends()
{
    MainWindow window{false};
    window.show();
    bool inRunMenu = false;
    for (QAction* action : window.findChildren<QAction*>()) inRunMenu = inRunMenu || action->text() == QStringLiteral("Size &sweep…");
    QVERIFY(inRunMenu);
    kl::gui::SweepDialog* sweep = window.openSweep();
    QVERIFY(sweep->isVisible());
    sweep->setOp(Op::Histogram);
    sweep->setRange(8, 10);
    sweep->setCpuBackends({Backend::CpuReference, Backend::CpuOpenCV});
    sweep->setGpu(false);
    QSignalSpy done(sweep, &kl::gui::SweepDialog::sweepFinished);
    sweep->start();
    QVERIFY(sweep->isRunning());
    QVERIFY(done.wait(kRunTimeoutMs));
    QCOMPARE(sweep->statusText(), QStringLiteral("Done: 3 sizes"));

    const std::vector<kl::app::SweepRow>& rows = sweep->rows();
    QCOMPARE(rows.size(), size_t(3));
    for (size_t i = 0; i < rows.size(); ++i) {
        const kl::app::SweepRow& r = rows[i];
        QCOMPARE(r.log2Elements, int(8 + i));
        QCOMPARE(qint64(r.cols) * r.rows, qint64(1) << r.log2Elements);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.cpuMs.size(), size_t(2));
        QVERIFY(r.cpuMs[0] > 0 && r.cpuMs[1] > 0);
        QCOMPARE(r.kernelMs, 0.0);
    }
    // Each CPU backend is a line through its medians at 2^k elements.
    for (size_t b = 0; b < 2; ++b) {
        QXYSeries* series = sweep->findSeries(kl::app::toString(sweep->sweptSettings().cpuBackends[b]));
        QVERIFY(series);
        QCOMPARE(series->points().size(), qsizetype(3));
        for (size_t i = 0; i < rows.size(); ++i)
            QCOMPARE(series->points()[qsizetype(i)], QPointF(double(1 << rows[i].log2Elements), rows[i].cpuMs[b]));
    }
    QVERIFY(!sweep->findSeries(QStringLiteral("GPU kernel alone")));
    QVERIFY(sweep->crossoverText().isEmpty());

    const QString dir = QString::fromStdString(kltest::tempDir());
    QVERIFY(sweep->exportCsv(dir + QStringLiteral("/sweep.csv")));
    const QString csv = QString::fromStdString(kltest::readFile((dir + QStringLiteral("/sweep.csv")).toStdString()));
    QCOMPARE(csv, kl::app::sweepCsv(sweep->sweptSettings(), rows));
    const QStringList lines = csv.trimmed().split(QLatin1Char('\n'));
    QCOMPARE(lines.size(), 4);
    QVERIFY(lines[0].startsWith(QLatin1String("log2_elements,elements,width,height,frames,cpu_ref_ms,cpu_opencv_ms,gpu_kernel_ms,")));
    QVERIFY(lines[1].startsWith(QLatin1String("8,256,16,16,0,")));
    QVERIFY(sweep->exportPng(dir + QStringLiteral("/sweep.png")));
    QVERIFY(!QImage(dir + QStringLiteral("/sweep.png")).isNull());
    sweep->reject();
}

void TestMainWindow::sweepDialogCancels()
{
    MainWindow window{false};
    window.show();
    kl::gui::SweepDialog* sweep = window.openSweep();
    sweep->setOp(Op::Conv2D);
    sweep->setRange(14, 26);  // minutes of cpu-ref uncancelled
    sweep->setCpuBackends({Backend::CpuReference});
    sweep->setGpu(false);
    QSignalSpy done(sweep, &kl::gui::SweepDialog::sweepFinished);
    sweep->start();
    QTRY_VERIFY_WITH_TIMEOUT(!sweep->rows().empty(), kRunTimeoutMs);
    QVERIFY(sweep->progressBar()->isVisible());
    // The next size's progress is queued after the first row, so it may arrive a moment later.
    QTRY_VERIFY_WITH_TIMEOUT(sweep->progressBar()->value() > 0, kRunTimeoutMs);
    sweep->cancel();
    QVERIFY(done.wait(kRunTimeoutMs));
    QVERIFY(!sweep->isRunning());
    QVERIFY(!sweep->progressBar()->isVisible());
    QVERIFY(sweep->rows().size() < 13);
    QCOMPARE(sweep->statusText(), QStringLiteral("Cancelled after %1 of 13 sizes").arg(sweep->rows().size()));
    QVERIFY(sweep->findSeries(QStringLiteral("cpu-ref")));
}

void TestMainWindow::sweepDialogOnTheGpu()
{
    if (!gpuAvailable()) QSKIP("the GPU columns need a CUDA GPU");
    MainWindow window{false};
    window.show();
    kl::gui::SweepDialog* sweep = window.openSweep();
    sweep->setOp(Op::Transpose);
    sweep->setRange(10, 22);
    sweep->setCpuBackends({Backend::CpuOpenCV});
    sweep->setGpu(true);
    QSignalSpy done(sweep, &kl::gui::SweepDialog::sweepFinished);
    sweep->start();
    QVERIFY(done.wait(120000));
    QCOMPARE(sweep->statusText(), QStringLiteral("Done: 13 sizes"));
    for (const kl::app::SweepRow& r : sweep->rows()) {
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QVERIFY(r.kernelMs > 0 && r.pageableMs > 0 && r.pinnedMs > 0);
    }
    for (const kl::app::SweepGpuMeasure& m : kl::app::sweepGpuMeasures()) {
        QXYSeries* series = sweep->findSeries(m.label);
        QVERIFY2(series, qPrintable(m.label));
        QCOMPARE(series->points().size(), qsizetype(13));
        QVERIFY(sweep->crossoverText().contains(kl::app::crossoverText(sweep->sweptSettings(), sweep->rows(), m)));
    }
}

/// Each backend's run is a point by the documented bytes and FLOPs, against the roofs measured in
/// the session; histogram and transpose (no FLOPs) by GB/s against the bandwidth roofs.
void TestMainWindow::rooflineShowsEachRunAgainstItsRoofs()
{
    OpenWindow w(smallImage());
    QVERIFY(settles(w.window, w.finished));
    kl::gui::RooflinePanel* roofline = w.window.rooflinePanel();
    const kl::app::RunResult* main = &w.window.lastOutcome()->main;
    QVERIFY(main->hostBandwidthGBs > 0);
    QVERIFY(roofline->plotsFlops());
    QCOMPARE(roofline->points().size(), size_t(2));
    QCOMPARE(roofline->table()->rowCount(), 2);
    const double flops = 2.0 * 25 * 256 * 192;  // a 5x5 Gaussian on each of 256x192 pixels
    for (size_t i = 0; i < 2; ++i) {
        const kl::gui::RooflinePanel::Point& p = roofline->points()[i];
        const kl::app::BackendResult& r = main->results[i];
        QCOMPARE(p.label, kl::app::toString(r.backend));
        QVERIFY(!p.gpu());
        QCOMPARE(p.flops, flops);
        QCOMPARE(p.bytes, 2.0 * 256 * 192);
        QCOMPARE(p.gflops, flops / (r.time.medianMs * 1e6));
        QCOMPARE(p.gbs, kl::app::cpuGBs(main->request, r));
        QCOMPARE(p.roof, QStringLiteral("host memory"));
        QCOMPARE(p.roofPercent, kl::app::hostBandwidthPercent(*main, r));
        QXYSeries* dot = roofline->findSeries(p.label);
        QVERIFY(dot);
        QCOMPARE(dot->points(), QList<QPointF>{QPointF(p.flops / p.bytes, p.gflops)});
    }
    // The CPU roof: host memory bandwidth times FLOP/byte (no CPU compute roof is measured).
    QXYSeries* cpuRoof = roofline->findSeries(QStringLiteral("CPU roof"));
    QVERIFY(cpuRoof);
    for (const QPointF& at : cpuRoof->points()) QCOMPARE(at.y(), main->hostBandwidthGBs * at.x());
    QVERIFY(!roofline->findSeries(QStringLiteral("GPU roof")));
    // The roof as the summary rounds it (to 0-2 decimals, by its size).
    const QRegularExpressionMatch hostRoof =
        QRegularExpression(QStringLiteral("CPU roof: host memory ([0-9.]+) GB/s")).match(roofline->summary());
    QVERIFY2(hostRoof.hasMatch(), qPrintable(roofline->summary()));
    QVERIFY2(qAbs(hostRoof.captured(1).toDouble() - main->hostBandwidthGBs) <= 0.5, qPrintable(roofline->summary()));

    // Transpose does no arithmetic: GB/s over the bytes moved, under the host bandwidth.
    w.window.operationPanel()->setOp(Op::Transpose);
    QVERIFY(settles(w.window, w.finished, 2));
    main = &w.window.lastOutcome()->main;
    QVERIFY(!roofline->plotsFlops());
    QCOMPARE(roofline->points().size(), size_t(2));
    for (size_t i = 0; i < 2; ++i) {
        const kl::gui::RooflinePanel::Point& p = roofline->points()[i];
        QCOMPARE(p.flops, 0.0);
        QCOMPARE(roofline->findSeries(p.label)->points(), QList<QPointF>{QPointF(p.bytes, kl::app::cpuGBs(main->request, main->results[i]))});
    }
    cpuRoof = roofline->findSeries(QStringLiteral("CPU roof"));
    QVERIFY(cpuRoof);
    for (const QPointF& at : cpuRoof->points()) QCOMPARE(at.y(), main->hostBandwidthGBs);
    QVERIFY(roofline->summary().contains(QLatin1String("transpose does no floating-point arithmetic")));

    if (!gpuAvailable()) QSKIP("the GPU's point and roofs need a CUDA GPU");
    w.window.executionPanel()->setBackends({Backend::CpuOpenCV, Backend::Gpu});
    w.window.operationPanel()->setOp(Op::Conv2D);
    QVERIFY(settles(w.window, w.finished, 3));
    const auto outcome = w.window.lastOutcome();
    const kl::gpu::GpuReport& g = *outcome->main.find(Backend::Gpu)->gpu;
    QVERIFY(outcome->fmaPeakGFlops > 0 && outcome->main.copyBandwidthGBs > 0);
    QCOMPARE(roofline->points().size(), size_t(2));
    const kl::gui::RooflinePanel::Point& gpuPoint = roofline->points()[1];
    QVERIFY(gpuPoint.gpu());
    QCOMPARE(gpuPoint.bytes, double(g.kernelBytes));
    QCOMPARE(gpuPoint.flops, flops);
    QCOMPARE(gpuPoint.gflops, g.kernelGFlops());
    const double copyShare = 100 * g.kernelGBs() / outcome->main.copyBandwidthGBs;
    const double fmaShare = 100 * g.kernelGFlops() / outcome->fmaPeakGFlops;
    QCOMPARE(gpuPoint.roofPercent, std::max(copyShare, fmaShare));
    QXYSeries* gpuRoof = roofline->findSeries(QStringLiteral("GPU roof"));
    QVERIFY(gpuRoof);
    for (const QPointF& at : gpuRoof->points())
        QCOMPARE(at.y(), std::min(outcome->fmaPeakGFlops, outcome->main.copyBandwidthGBs * at.x()));
    QVERIFY(roofline->summary().contains(QLatin1String("fp32 FMA")));
}

void TestMainWindow::threadScalingRunsEachThreadCount()
{
    OpenWindow w(smallImage());
    QVERIFY(settles(w.window, w.finished));
    w.window.executionPanel()->setThreadScaling(true);
    QVERIFY(settles(w.window, w.finished, 2));
    const std::vector<int> counts = kl::threadScalingCounts(kl::hardwareThreads());
    QCOMPARE(counts.front(), 1);
    QCOMPARE(counts.back(), kl::hardwareThreads());
    const auto outcome = w.window.lastOutcome();
    QCOMPARE(outcome->threadScaling.size(), counts.size());
    QTableWidget* scaling = w.window.timingsPanel()->scalingTable();
    QVERIFY(!scaling->isHidden());
    QCOMPARE(scaling->rowCount(), int(counts.size()));
    for (int i = 0; i < scaling->rowCount(); ++i) {
        const kl::app::RunResult& run = outcome->threadScaling[size_t(i)];
        QCOMPARE(run.cpuThreads, counts[size_t(i)]);
        QVERIFY((run.request.backends == std::vector<Backend>{Backend::CpuOpenCV}));
        QVERIFY2(run.results.front().ok(), qPrintable(run.results.front().error));
        QCOMPARE(scaling->item(i, kl::gui::TimingsPanel::ThreadsColumn)->text(), QString::number(counts[size_t(i)]));
        QVERIFY(scaling->item(i, kl::gui::TimingsPanel::ScalingMedianColumn));
        QVERIFY(scaling->item(i, kl::gui::TimingsPanel::ScalingGBsColumn));
        QVERIFY(run.hostBandwidthGBs > 0);  // each thread count has its own roof
        QCOMPARE(scaling->item(i, kl::gui::TimingsPanel::HostPercentColumn)->text(),
                 QString::number(kl::app::hostBandwidthPercent(run, run.results.front()), 'f', 1));
    }
    QCOMPARE(scaling->item(0, kl::gui::TimingsPanel::ScalingSpeedupColumn)->text(), QStringLiteral("1.00×"));

    w.window.executionPanel()->setThreadScaling(false);
    QVERIFY(settles(w.window, w.finished, 3));
    QVERIFY(w.window.lastOutcome()->threadScaling.empty());
    QVERIFY(scaling->isHidden());
}

void TestMainWindow::badFileKeepsThePreviousInput()
{
    OpenWindow w(sample("camera.png"));
    QVERIFY(settles(w.window, w.finished));
    const cv::Mat camera = kl::loadImage(kltest::samplePath("camera.png"));
    QSignalSpy failed(&w.window, &MainWindow::inputFailed);

    const QString broken = QString::fromStdString(kltest::tempDir()) + QStringLiteral("/broken.png");
    QFile file(broken);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("this is not a PNG");
    file.close();
    w.window.openFile(broken);
    QVERIFY(failed.wait(kRunTimeoutMs));
    QVERIFY(w.window.logText().contains(QLatin1String("Cannot open ") + broken));
    QVERIFY(w.window.statusText().contains(QLatin1String("broken.png")));

    w.window.openFile(QStringLiteral("/nonexistent/missing.wav"));
    QVERIFY(failed.wait(kRunTimeoutMs));
    QVERIFY(w.window.logText().contains(QLatin1String("missing.wav")));

    // The previous input and its results stay.
    QCOMPARE(cv::norm(w.window.input().image, camera, cv::NORM_INF), 0.0);
    QVERIFY(w.window.input().name.endsWith(QLatin1String("camera.png")));
    QCOMPARE(cv::norm(w.window.imageGrid()->view(ImageGrid::Pane::Input)->source(), camera, cv::NORM_INF), 0.0);
    QVERIFY(!w.window.imageGrid()->view(ImageGrid::Pane::Cpu)->source().empty());
    QCOMPARE(w.finished.count(), 1);
}

void TestMainWindow::invalidKernelIsReportedNotRun()
{
    OpenWindow w(sample("camera.png"));
    QVERIFY(settles(w.window, w.finished));
    kl::gui::KernelEditor* editor = w.window.operationPanel()->kernelEditor();
    editor->table()->item(1, 2)->setText(QStringLiteral("abc"));
    QTRY_VERIFY_WITH_TIMEOUT(w.window.logText().contains(QLatin1String("Not run: Kernel row 2, column 3: 'abc'")),
                             kRunTimeoutMs);
    QVERIFY(w.window.statusText().contains(QLatin1String("'abc' is not a finite number")));
    QCOMPARE(w.finished.count(), 1);
    QVERIFY(!w.window.imageGrid()->view(ImageGrid::Pane::Cpu)->source().empty());
}

void TestMainWindow::customKernelFromTheEditorIsRun()
{
    OpenWindow w(sample("camera.png"));
    QVERIFY(settles(w.window, w.finished));
    kl::gui::KernelEditor* editor = w.window.operationPanel()->kernelEditor();
    editor->table()->item(0, 0)->setText(QStringLiteral("-0.5"));
    QVERIFY(settles(w.window, w.finished, 2));
    const cv::Mat kernel = editor->kernel();
    QCOMPARE(kernel.at<float>(0, 0), -0.5f);
    kl::Conv2DSpec spec;
    spec.kernel = kernel;
    const cv::Mat expected = kl::conv2dReference(kl::loadImage(kltest::samplePath("camera.png")), spec);
    QCOMPARE(cv::norm(w.window.imageGrid()->view(ImageGrid::Pane::Cpu)->source(), expected, cv::NORM_INF), 0.0);
    QCOMPARE(w.window.lastOutcome()->main.request.opParameters.value(QStringLiteral("preset")).toString(),
             QStringLiteral("custom"));
}

void TestMainWindow::generatedSixteenBitInputIsWindowed()
{
    MainWindow window(false);
    QSignalSpy finished(&window, &MainWindow::runFinished);
    window.executionPanel()->setRepetitions(1);
    window.show();
    kl::app::GenerateSpec spec;
    spec.cols = 96;
    spec.rows = 64;
    spec.depth = CV_16U;
    spec.channels = 3;
    spec.imagePattern = kl::app::ImagePattern::Gradient;
    window.generateInput(spec);
    QVERIFY(settles(window, finished));
    const cv::Mat input = kl::app::generateImage(64, 96, CV_16U, 3, kl::app::ImagePattern::Gradient);
    QVERIFY(window.imageGrid()->caption(ImageGrid::Pane::Input).contains(QLatin1String("window [")));
    const cv::Mat cpu = window.imageGrid()->view(ImageGrid::Pane::Cpu)->source();
    QCOMPARE(cpu.type(), CV_16UC3);
    QCOMPARE(cv::norm(cpu, kl::conv2dReference(input, gaussian5x5()), cv::NORM_INF), 0.0);
    window.imageGrid()->showValuesAt(QPoint(5, 7));
    const cv::Vec3w px = input.at<cv::Vec3w>(7, 5);
    QVERIFY(window.imageGrid()->valueText(ImageGrid::Pane::Input)
                .endsWith(QStringLiteral("B %1  G %2  R %3").arg(px[0]).arg(px[1]).arg(px[2])));
}

void TestMainWindow::savesOutputsReportsAndPictures()
{
    OpenWindow w(sample("camera.png"));
    QVERIFY(settles(w.window, w.finished));
    const QString dir = QString::fromStdString(kltest::tempDir());
    const cv::Mat cpu = w.window.imageGrid()->view(ImageGrid::Pane::Cpu)->source();

    QVERIFY(w.window.saveOutput(Backend::CpuReference, dir + QStringLiteral("/cpu.png")));
    QCOMPARE(cv::norm(kl::loadImage((dir + QStringLiteral("/cpu.png")).toStdString()), cpu, cv::NORM_INF), 0.0);
    if (!gpuAvailable()) {
        QVERIFY(!w.window.saveOutput(Backend::Gpu, dir + QStringLiteral("/gpu.png")));
        QVERIFY(w.window.statusText().contains(QLatin1String("No GPU output")));
        QVERIFY(!QFile::exists(dir + QStringLiteral("/gpu.png")));
    }
    QVERIFY(!w.window.saveOutput(Backend::CpuReference, QStringLiteral("/nonexistent/dir/cpu.png")));
    QVERIFY(w.window.logText().contains(QLatin1String("Cannot save: cannot write '/nonexistent/dir/cpu.png'")));
    QVERIFY(!w.window.saveOutput(Backend::CpuReference, dir + QStringLiteral("/cpu.wav")));
    QVERIFY(w.window.statusText().contains(QLatin1String("a conv2d output needs one of .png")));

    // The report is the CLI's: same schema, from the same RunResult.
    QVERIFY(w.window.saveReport(dir + QStringLiteral("/report.json")));
    QFile json(dir + QStringLiteral("/report.json"));
    QVERIFY(json.open(QIODevice::ReadOnly));
    const QJsonObject report = QJsonDocument::fromJson(json.readAll()).object();
    QCOMPARE(report.value(QStringLiteral("schema")).toString(), QStringLiteral("kernellab-report"));
    QCOMPARE(report.value(QStringLiteral("op")).toObject().value(QStringLiteral("name")).toString(), QStringLiteral("conv2d"));
    QCOMPARE(report.value(QStringLiteral("results")).toArray().size(), 3);
    QVERIFY(w.window.saveReport(dir + QStringLiteral("/report.csv")));

    // Every file holds the bytes the CLI's writers (output_files) give for the same result.
    const kl::app::RunResult& main = w.window.lastOutcome()->main;
    kl::app::saveOutput(dir + QStringLiteral("/cli.png"), *kl::gui::shownCpuResult(main), main.request);
    kl::app::saveReport(dir + QStringLiteral("/cli.json"), main, kl::app::ReportFormat::Json);
    kl::app::saveReport(dir + QStringLiteral("/cli.csv"), main, kl::app::ReportFormat::Csv);
    for (const auto& [gui, cli] : {std::pair{"cpu.png", "cli.png"}, std::pair{"report.json", "cli.json"},
                                   std::pair{"report.csv", "cli.csv"}}) {
        const std::string folder = dir.toStdString() + '/';
        QVERIFY2(kltest::readFile(folder + gui) == kltest::readFile(folder + cli), gui);
    }

    QVERIFY(w.window.saveWidgetPng(w.window.timingsPanel(), dir + QStringLiteral("/timings.png")));
    QVERIFY(!QImage(dir + QStringLiteral("/timings.png")).isNull());
}

void TestMainWindow::cancelStopsALongRun()
{
    OpenWindow w(sample("camera.png"));
    QVERIFY(settles(w.window, w.finished));
    QSignalSpy cancelled(w.window.worker(), &kl::gui::RunWorker::cancelled);
    w.window.executionPanel()->setRepetitions(1000);  // about a minute of cpu-ref
    w.window.runNow();
    QTest::qWait(300);
    QVERIFY(w.window.isBusy());
    w.window.cancelRun();
    QVERIFY(cancelled.wait(5000));
    QTRY_VERIFY_WITH_TIMEOUT(!w.window.isBusy(), 5000);
    QCOMPARE(w.window.statusText(), QStringLiteral("Cancelled"));
    QCOMPARE(w.finished.count(), 1);
}

// Esc during a long 8192^2 GPU run (end to end, pageable, one stream: one chunk per repetition)
// returns promptly: the engine checks the flag before every stage. Prints "Esc to cancelled: X ms".
void TestMainWindow::escapeStopsALongGpuRun()
{
    if (!gpuAvailable()) QSKIP("needs a CUDA GPU");
    MainWindow window{false};
    QSignalSpy finished(&window, &MainWindow::runFinished);
    window.executionPanel()->setBackends({Backend::Gpu});
    window.executionPanel()->setRepetitions(1);
    window.show();
    kl::app::GenerateSpec spec;
    spec.cols = spec.rows = 8192;
    spec.depth = CV_32F;
    window.generateInput(spec);
    QVERIFY(settles(window, finished));

    QSignalSpy cancelled(window.worker(), &kl::gui::RunWorker::cancelled);
    window.executionPanel()->setRepetitions(500);  // tens of seconds uncancelled
    window.runNow();
    QTest::qWait(1500);
    QVERIFY(window.isBusy());
    QAction* escape = nullptr;
    for (QAction* action : window.findChildren<QAction*>())
        if (action->shortcut() == QKeySequence(Qt::Key_Escape)) escape = action;
    QVERIFY(escape);
    QElapsedTimer clock;
    clock.start();
    escape->trigger();
    QVERIFY(cancelled.wait(5000));
    qInfo("Esc to cancelled: %lld ms", static_cast<long long>(clock.elapsed()));
    QVERIFY2(clock.elapsed() < 1000, qPrintable(QString::number(clock.elapsed())));
}

// The device running out of memory in the middle of a run (the engine's cap, set by the ctest entry
// tst_main_window_device_memory_limit): the GPU pane and its timings row say which buffer did not
// fit, the CPU panes keep their results, and the window stays usable.
void TestMainWindow::gpuOutOfMemoryKeepsTheCpuResults()
{
    if (!gpuAvailable()) QSKIP("needs a CUDA GPU");
    if (qgetenv(kl::gpu::kDeviceMemoryLimitVariable) != "1M")
        QSKIP("runs as ctest's tst_main_window_device_memory_limit, with KERNELLAB_DEVICE_MEMORY_LIMIT=1M");
    kl::app::GenerateSpec spec = smallImage();
    spec.cols = 1031;
    spec.rows = 677;
    spec.channels = 3;
    MainWindow window{false};
    QSignalSpy finished(&window, &MainWindow::runFinished);
    window.executionPanel()->setRepetitions(1);
    window.executionPanel()->setBackends({Backend::CpuReference, Backend::Gpu});
    window.show();
    window.generateInput(spec);
    QVERIFY(settles(window, finished));

    ImageGrid* grid = window.imageGrid();
    QVERIFY(!grid->view(ImageGrid::Pane::Cpu)->source().empty());
    QVERIFY(grid->view(ImageGrid::Pane::Gpu)->source().empty());
    const QString expected = QStringLiteral("GPU out of memory: the device buffer 'conv2d.in' needs");
    QVERIFY2(grid->view(ImageGrid::Pane::Gpu)->message().contains(expected),
             qPrintable(grid->view(ImageGrid::Pane::Gpu)->message()));
    QVERIFY(window.timingsPanel()->table()->item(1, kl::gui::TimingsPanel::ErrorColumn)->text().contains(expected));
    QVERIFY(window.logText().contains(QStringLiteral("gpu: ERROR: ") + expected));

    // A smaller input fits under the cap and runs on the same engine.
    spec.cols = 97;
    spec.rows = 61;
    window.generateInput(spec);
    QVERIFY(settles(window, finished, 2));
    QVERIFY(!grid->view(ImageGrid::Pane::Gpu)->source().empty());
}

// The GPU variant combo: every variant's description as its tooltip; those that cannot run the
// input disabled, with the registry's reason (a device description is enough: no GPU needed).
void TestMainWindow::variantComboExplainsApplicability()
{
    kl::gui::OperationPanel panel;
    panel.setInput(false, 0);
    panel.setOp(kl::app::Op::Conv2D);
    QComboBox* combo = nullptr;
    for (QComboBox* c : panel.findChildren<QComboBox*>())
        if (c->findText(QStringLiteral("tma")) >= 0) combo = c;
    QVERIFY(combo);
    const auto* model = qobject_cast<const QStandardItemModel*>(combo->model());
    const auto item = [&](const char* name) { return model->item(combo->findText(QLatin1String(name))); };
    QVERIFY(item("naive")->toolTip().contains(QLatin1String("global memory")));

    kl::app::RunRequest request;
    request.op = kl::app::Op::Conv2D;
    request.image = kltest::randomImage(33, 47, CV_8U, 3, 7);
    kl::Conv2DPresetParams gaussian;
    gaussian.width = gaussian.height = 5;
    request.conv2d.kernel = kl::makeConv2DKernel(kl::Conv2DPreset::Gaussian, gaussian);
    kl::gpu::DeviceInfo hopper;
    hopper.computeMajor = 9;
    panel.showVariantApplicability(request, hopper);
    QVERIFY(!item("tma")->isEnabled());
    QVERIFY2(item("tma")->toolTip().startsWith(QLatin1String("Not for this input: needs a 32-bit float")),
             qPrintable(item("tma")->toolTip()));
    QVERIFY(item("integer")->isEnabled());
    QVERIFY(item("separable")->isEnabled());
    QVERIFY(item("dp4a")->isEnabled());  // the default Gaussian's taps are integers / 256
    QVERIFY(!item("dp2a")->isEnabled());  // a u8 image
    QVERIFY(item("dp2a")->toolTip().contains(QLatin1String("needs a 16-bit image")));

    request.conv2d.kernel = kl::makeConv2DKernel(kl::Conv2DPreset::Sharpen);  // not rank-1
    panel.showVariantApplicability(request, hopper);
    QVERIFY(!item("separable")->isEnabled());
    QVERIFY(item("separable")->toolTip().contains(QLatin1String("not separable")));
    QVERIFY(!item("integer")->isEnabled());
    for (const char* name : {"naive", "constant", "shared", "dp4a"}) QVERIFY(item(name)->isEnabled());
}

void TestMainWindow::timelineDrawsEveryEntry()
{
    using kl::gpu::Stage;
    std::vector<kl::gpu::TimelineEntry> entries;
    for (int chunk = 0; chunk < 4; ++chunk) {
        const int stream = chunk % 2;
        const double start = chunk * 1.0;
        entries.push_back({stream, chunk, Stage::H2D, start, start + 0.5});
        entries.push_back({stream, chunk, Stage::Kernel, start + 0.5, start + 1.2});
        entries.push_back({stream, chunk, Stage::D2H, start + 1.2, start + 1.5});
    }
    kl::gui::TimelineWidget timeline;
    timeline.resize(600, 140);
    timeline.setTimeline(entries);
    QCOMPARE(timeline.entries().size(), entries.size());
    const QImage picture = timeline.grab().toImage();
    for (Stage stage : {Stage::H2D, Stage::Kernel, Stage::D2H}) {
        const QRgb colour = kl::gui::TimelineWidget::stageColor(stage).rgb();
        bool found = false;
        for (int y = 30; y < picture.height() && !found; ++y)
            for (int x = 80; x < picture.width() && !found; ++x) found = picture.pixel(x, y) == colour;
        QVERIFY2(found, "a stage's bars are not drawn");
    }
}

void TestMainWindow::gpuComparisonsAndTimeline()
{
    if (!gpuAvailable()) QSKIP("needs a CUDA GPU");
    OpenWindow w(sample("camera.png"));
    QVERIFY(settles(w.window, w.finished));
    w.window.executionPanel()->setStreams(4);
    w.window.executionPanel()->setCompareMemory(true);
    w.window.operationPanel()->setCompareVariants(true);
    QVERIFY(settles(w.window, w.finished, 2));
    const auto outcome = w.window.lastOutcome();
    const kl::app::BackendResult* gpu = outcome->main.find(Backend::Gpu);
    QVERIFY2(gpu && gpu->ok(), gpu ? qPrintable(gpu->error) : "no gpu result");
    QVERIFY(outcome->singleStream);
    QCOMPARE(outcome->singleStream->find(Backend::Gpu)->gpu->streams, 1);
    const size_t variants = kl::gpu::variants("conv2d").size();
    // The two other memory kinds (the main run is pageable), then every variant but the one the main run used.
    QCOMPARE(outcome->gpuComparisons.size(), 2 + variants - 1);
    QVERIFY(outcome->gpuComparisons[0].find(Backend::Gpu)->gpu->memory == kl::gpu::HostMemory::Staged);
    QVERIFY(outcome->gpuComparisons[1].find(Backend::Gpu)->gpu->memory == kl::gpu::HostMemory::Pinned);
    // camera.png is one chunk on any number of streams: launched on a stream, and the report says why.
    QCOMPARE(outcome->gpuComparisons[1].find(Backend::Gpu)->gpu->launch,
             std::string("streams: one chunk, whose few calls run faster on a stream than as a graph"));
    for (size_t i = 0; i < 2; ++i)  // the same bits from every memory kind
        QCOMPARE(cv::norm(outcome->gpuComparisons[i].find(Backend::Gpu)->image, gpu->image, cv::NORM_INF), 0.0);
    QCOMPARE(w.window.timingsPanel()->table()->rowCount(), int(3 + outcome->gpuComparisons.size()));
    QCOMPARE(w.window.timingsPanel()->barLabels().size(), int(3 + outcome->gpuComparisons.size()));

    const std::vector<kl::gpu::TimelineEntry>& timeline = w.window.streamsPanel()->timeline()->entries();
    QCOMPARE(timeline.size(), gpu->gpu->timeline.size());
    QVERIFY(!timeline.empty());
    // camera.png (0.5 MB in and out) is too small for chunks to pay: one chunk, on stream 0, and
    // the panel says why.
    QCOMPARE(gpu->gpu->chunks, 1);
    for (const kl::gpu::TimelineEntry& e : timeline) QCOMPARE(e.stream, 0);
    QVERIFY(w.window.streamsPanel()->summary().contains(QLatin1String("1 stream")));
    const QString summary = w.window.streamsPanel()->summary();
    QVERIFY2(summary.contains(QLatin1String("1 chunk(s): 512.0 KiB in and out")), qPrintable(summary));
    // With one chunk nothing overlaps: the limit is the one-stream run's stages end to end.
    QVERIFY2(summary.contains(QLatin1String("Physical limit for 1 chunk(s)")), qPrintable(summary));
}

/// The Kernel source dock as a student uses it: a template with a mistake, Compile lists the
/// error at its line and a click goes there; fixed, it compiles and is offered as a variant; on a
/// GPU it runs, agrees with the CPU and lands in the timings table.
void TestMainWindow::kernelSourceCompilesFixesAndRuns()
{
    OpenWindow w(smallImage());
    QVERIFY(settles(w.window, w.finished));
    w.window.operationPanel()->setOp(kl::app::Op::Transpose);
    kl::gui::KernelSourcePanel* panel = w.window.kernelSourcePanel();
    QVERIFY(panel->op() == kl::app::Op::Transpose);
    panel->loadTemplate(QStringLiteral("tiled"));
    const QString good = panel->editor()->toPlainText();
    QStringList lines = good.split(QLatin1Char('\n'));
    const int broken = int(lines.indexOf(QRegularExpression(QStringLiteral(".*__syncthreads.*")))) + 1;
    QVERIFY(broken > 0);
    lines[broken - 1].replace(QStringLiteral("__syncthreads();"), QStringLiteral("__syncthreads(); tile_count = 1;"));
    panel->editor()->setPlainText(lines.join(QLatin1Char('\n')));

    QVERIFY(!w.window.compileKernel());
    QVERIFY(panel->diagnostics()->count() > 0);
    const QString first = panel->diagnostics()->item(0)->text();
    QVERIFY2(first.startsWith(QStringLiteral("kernel.cu:%1:").arg(broken)) && first.contains(QLatin1String("tile_count")),
             qPrintable(first));
    panel->diagnostics()->setCurrentRow(0);
    QCOMPARE(panel->editor()->textCursor().blockNumber(), broken - 1);

    panel->editor()->setPlainText(good);
    QVERIFY(w.window.compileKernel());
    QVERIFY2(panel->status()->text().startsWith(QLatin1String("Compiles for")), qPrintable(panel->status()->text()));
    panel->useInRuns()->setChecked(true);
    QComboBox* variants = nullptr;
    for (QComboBox* c : w.window.operationPanel()->findChildren<QComboBox*>())
        if (c->findText(QStringLiteral("custom:transpose_tiled")) >= 0) variants = c;
    QVERIFY2(variants, "the kernel is not offered as a GPU variant");

    if (!gpuAvailable()) QSKIP("running it needs a CUDA GPU (compiling did not)");
    variants->setCurrentIndex(variants->findText(QStringLiteral("custom:transpose_tiled")));
    w.window.executionPanel()->setBackends({Backend::CpuReference, Backend::Gpu});
    w.window.runNow();
    QVERIFY(settles(w.window, w.finished, w.finished.count() + 1));
    const kl::app::BackendResult* gpu = w.window.lastOutcome()->main.find(Backend::Gpu);
    QVERIFY2(gpu && gpu->ok(), gpu ? qPrintable(gpu->error) : "no gpu result");
    QCOMPARE(gpu->gpu->variant, std::string("custom:transpose_tiled"));
    for (const kl::app::BackendComparison& c : w.window.lastOutcome()->main.comparisons)
        QVERIFY2(c.disagreement.isEmpty(), qPrintable(c.disagreement));
    bool listed = false;
    const QTableWidget* table = w.window.timingsPanel()->table();
    for (int r = 0; r < table->rowCount(); ++r)
        for (int c = 0; c < table->columnCount(); ++c)
            listed = listed || (table->item(r, c) && table->item(r, c)->text().contains(QLatin1String("custom:transpose_tiled")));
    QVERIFY2(listed, "the run is not in the timings table");
}

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
