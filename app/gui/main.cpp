// kernellab: the desktop app. With --screenshot it opens, runs, saves a picture of the
// window and exits (for the docs and the tests).
#include "app_paths.hpp"
#include "execution_panel.hpp"
#include "main_window.hpp"
#include "operation_panel.hpp"
#include "sweep_dialog.hpp"
#include "timings_panel.hpp"

#include "kernellab/gpu/engine.hpp"
#include "kernellab/signal_io.hpp"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QTimer>
#include <QWidget>

#include <cstdio>
#include <memory>

namespace {

/// Longest a --screenshot run may take before it gives up.
constexpr int kScreenshotTimeoutMs = 300000;

int fail(const QString& message)
{
    std::fprintf(stderr, "kernellab: %s\n", qPrintable(message));
    return 2;
}

/// Saves a PNG of `target` to `path`, then exits with `exitCode` (with fail()'s code if the file
/// cannot be written).
void captureAndExit(QWidget* target, const QString& path, int exitCode)
{
    // One more turn of the event loop so the last results are laid out and painted.
    QTimer::singleShot(300, target, [target, path, exitCode] {
        if (!target->grab().save(path, "PNG")) {
            QCoreApplication::exit(fail(QStringLiteral("cannot write %1").arg(path)));
            return;
        }
        QCoreApplication::exit(exitCode);
    });
}

} // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("KernelLab"));
    QCoreApplication::setApplicationName(QStringLiteral("kernellab"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("CPU and GPU convolution, histogram and transpose, side by side."));
    parser.addHelpOption();
    const QCommandLineOption openOption(QStringLiteral("open"), QStringLiteral("Image or signal to open."), QStringLiteral("FILE"));
    const QCommandLineOption opOption(QStringLiteral("op"), QStringLiteral("conv2d, conv1d, histogram or transpose."), QStringLiteral("OP"));
    const QCommandLineOption presetOption(QStringLiteral("preset"), QStringLiteral("Kernel preset of the op."), QStringLiteral("NAME"));
    const QCommandLineOption backendsOption(QStringLiteral("backends"),
                                            QStringLiteral("Comma-separated: cpu-ref, cpu-opencv, gpu."), QStringLiteral("LIST"));
    const QCommandLineOption memoryOption(QStringLiteral("memory"), QStringLiteral("GPU host memory: pageable, staged or pinned."),
                                          QStringLiteral("KIND"));
    const QCommandLineOption streamsOption(QStringLiteral("streams"),
                                           QStringLiteral("GPU streams, 1..%1.").arg(kl::gpu::kMaxStreams), QStringLiteral("N"));
    const QCommandLineOption compareOption(QStringLiteral("compare"),
                                           QStringLiteral("Also run the GPU with: memory (the other host memory kinds) or "
                                                          "variants (every variant); may be repeated."),
                                           QStringLiteral("WHAT"));
    const QCommandLineOption logOption(QStringLiteral("log-timings"), QStringLiteral("Timings on a logarithmic axis."));
    const QCommandLineOption kernelOption(
        QStringLiteral("kernel-source"),
        QStringLiteral("Your own kernel (docs/custom-kernels.md) in the Kernel source dock, run as GPU variant custom:<name>."),
        QStringLiteral("FILE"));
    const QCommandLineOption sweepOption(
        QStringLiteral("sweep"),
        QStringLiteral("After the first run, Run > Size sweep over 2^FROM..2^TO elements (with --screenshot: a picture "
                       "of the sweep when it ends)."),
        QStringLiteral("FROM:TO"));
    const QCommandLineOption screenshotOption(
        QStringLiteral("screenshot"), QStringLiteral("Run, save a PNG of the window to FILE and exit."), QStringLiteral("FILE"));
    const QCommandLineOption panelOption(QStringLiteral("panel"),
                                         QStringLiteral("Panel in front: timings, streams, histogram, roofline, log or kernel."),
                                         QStringLiteral("NAME"));
    parser.addOptions({openOption, opOption, presetOption, backendsOption, memoryOption, streamsOption, compareOption,
                       logOption, kernelOption, sweepOption, panelOption, screenshotOption});
    parser.addPositionalArgument(QStringLiteral("file"), QStringLiteral("Image or signal to open (as --open)."));
    parser.process(app);

    QString input = parser.value(openOption);
    if (input.isEmpty() && !parser.positionalArguments().isEmpty()) input = parser.positionalArguments().first();
    if (input.isEmpty()) {
        // So that the first command of the README shows something real.
        const QString camera = kl::app::sampleDataDir() + QStringLiteral("/camera.png");
        if (QFileInfo::exists(camera)) input = camera;
    }
    const bool screenshot = parser.isSet(screenshotOption);

    kl::gui::MainWindow window(!screenshot);
    try {
        if (parser.isSet(opOption)) window.operationPanel()->setOp(kl::app::parseOp(parser.value(opOption)));
        else if (!input.isEmpty() && kl::isSignalFile(input.toStdString()))
            window.operationPanel()->setOp(kl::app::Op::Conv1D);
        if (parser.isSet(presetOption) && !window.operationPanel()->setPreset(parser.value(presetOption)))
            return fail(QStringLiteral("--preset: '%1' is not a preset of %2")
                            .arg(parser.value(presetOption), kl::app::toString(window.operationPanel()->op())));
        if (parser.isSet(backendsOption))
            window.executionPanel()->setBackends(kl::app::parseBackends(parser.value(backendsOption)));
        if (parser.isSet(memoryOption))
            window.executionPanel()->setHostMemory(kl::gpu::parseHostMemory(parser.value(memoryOption).toStdString()));
        if (parser.isSet(streamsOption)) {
            bool ok = false;
            const int streams = parser.value(streamsOption).toInt(&ok);
            if (!ok || streams < 1 || streams > kl::gpu::kMaxStreams)
                return fail(QStringLiteral("--streams: give a number from 1 to %1").arg(kl::gpu::kMaxStreams));
            window.executionPanel()->setStreams(streams);
        }
        for (const QString& what : parser.values(compareOption)) {
            if (what == QLatin1String("memory")) window.executionPanel()->setCompareMemory(true);
            else if (what == QLatin1String("variants")) window.operationPanel()->setCompareVariants(true);
            else return fail(QStringLiteral("--compare: '%1' is not memory or variants").arg(what));
        }
        if (parser.isSet(logOption)) window.timingsPanel()->setLogScale(true);
        if (parser.isSet(kernelOption)) {
            QString error;
            if (!window.useKernelSource(parser.value(kernelOption), &error)) return fail(error);
        }
        if (parser.isSet(panelOption) && !window.showPanel(parser.value(panelOption)))
            return fail(QStringLiteral("--panel: '%1' is not timings, streams, histogram, roofline, log or kernel")
                            .arg(parser.value(panelOption)));
    } catch (const std::exception& e) {
        return fail(QString::fromUtf8(e.what()));
    }
    int sweepFrom = 0, sweepTo = 0;
    if (parser.isSet(sweepOption)) {
        const QStringList range = parser.value(sweepOption).split(QLatin1Char(':'));
        bool okFrom = false, okTo = false;
        sweepFrom = range.value(0).toInt(&okFrom);
        sweepTo = range.value(1).toInt(&okTo);
        if (range.size() != 2 || !okFrom || !okTo) return fail(QStringLiteral("--sweep: give FROM:TO, e.g. 10:24"));
    }
    if (screenshot && input.isEmpty()) return fail(QStringLiteral("--screenshot needs an input (--open FILE)"));
    window.show();
    if (!input.isEmpty()) window.openFile(input);

    // --sweep: the sweep starts once the window's first run has finished (they share the engine).
    kl::gui::SweepDialog* sweep = nullptr;
    if (parser.isSet(sweepOption)) {
        auto connection = std::make_shared<QMetaObject::Connection>();
        *connection = QObject::connect(&window, &kl::gui::MainWindow::runFinished, &window, [&, connection] {
            if (window.isBusy()) return;
            QObject::disconnect(*connection);
            sweep = window.openSweep();
            sweep->setRange(sweepFrom, sweepTo);
            sweep->start();
            if (screenshot)
                QObject::connect(sweep, &kl::gui::SweepDialog::sweepFinished, sweep,
                                 [sweep, path = parser.value(screenshotOption)] { captureAndExit(sweep, path, 0); });
        });
    }

    if (screenshot && !parser.isSet(sweepOption)) {
        const QString path = parser.value(screenshotOption);
        QObject::connect(&window, &kl::gui::MainWindow::runFinished, &window, [&window, path] {
            if (!window.isBusy()) captureAndExit(&window, path, 0);
        });
        QObject::connect(&window, &kl::gui::MainWindow::runFailed, &window,
                         [&window, path] { captureAndExit(&window, path, 1); });
        QObject::connect(&window, &kl::gui::MainWindow::inputFailed, &window,
                         [&window, path] { captureAndExit(&window, path, 1); });
    }
    if (screenshot)
        QTimer::singleShot(kScreenshotTimeoutMs, &window, [] {
            fail(QStringLiteral("--screenshot: the run did not finish in time"));
            QCoreApplication::exit(3);
        });
    return app.exec();
}
