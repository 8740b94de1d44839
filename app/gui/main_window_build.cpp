// MainWindow's construction: the docks, the menus and the toolbar, and the Open Recent and
// Samples menus, which change as files are opened.
#include "main_window.hpp"

#include "app_paths.hpp"
#include "execution_panel.hpp"
#include "generate_dialog.hpp"
#include "histogram_panel.hpp"
#include "kernel_source_panel.hpp"
#include "operation_panel.hpp"
#include "roofline_panel.hpp"
#include "streams_panel.hpp"
#include "timings_panel.hpp"

#include "kernellab/image_io.hpp"
#include "kernellab/signal_io.hpp"

#include <QAction>
#include <QActionGroup>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QStackedWidget>
#include <QStyle>
#include <QToolBar>
#include <QVBoxLayout>

namespace kl::gui {
namespace {

constexpr int kMaxRecentFiles = 10;

QStringList extensionPatterns(const std::vector<std::string>& extensions)
{
    QStringList patterns;
    for (const std::string& e : extensions) patterns << QStringLiteral("*") + QString::fromStdString(e);
    return patterns;
}

} // namespace

void MainWindow::buildDocks()
{
    operation_ = new OperationPanel;
    execution_ = new ExecutionPanel;
    timings_ = new TimingsPanel;
    streams_ = new StreamsPanel;
    histogram_ = new HistogramPanel;
    roofline_ = new RooflinePanel;
    kernelSource_ = new KernelSourcePanel;
    log_ = new QPlainTextEdit;
    log_->setReadOnly(true);
    log_->setMaximumBlockCount(2000);  // the last few hundred runs; the soak test holds memory to this

    const auto dock = [this](const QString& title, const QString& name, QWidget* content, Qt::DockWidgetArea area) {
        auto* d = new QDockWidget(title, this);
        d->setObjectName(name);
        d->setWidget(content);
        addDockWidget(area, d);
        return d;
    };
    auto* scroll = new QScrollArea;
    scroll->setWidget(operation_);
    scroll->setWidgetResizable(true);
    scroll->setMinimumWidth(340);
    QDockWidget* operationDock = dock(tr("Operation"), QStringLiteral("operationDock"), scroll, Qt::RightDockWidgetArea);

    auto* executionBox = new QWidget;
    auto* executionLayout = new QVBoxLayout(executionBox);
    executionLayout->setContentsMargins(0, 0, 0, 0);
    executionLayout->addWidget(execution_);
    auto* runButton = new QPushButton(style()->standardIcon(QStyle::SP_MediaPlay), tr("Run (F5)"));
    connect(runButton, &QPushButton::clicked, this, &MainWindow::runNow);
    executionLayout->addWidget(runButton);
    QDockWidget* executionDock = dock(tr("Execution"), QStringLiteral("executionDock"), executionBox, Qt::RightDockWidgetArea);
    splitDockWidget(operationDock, executionDock, Qt::Vertical);

    QDockWidget* timingsDock = dock(tr("Timings"), QStringLiteral("timingsDock"), timings_, Qt::BottomDockWidgetArea);
    QDockWidget* streamsDock = dock(tr("Streams"), QStringLiteral("streamsDock"), streams_, Qt::BottomDockWidgetArea);
    QDockWidget* histogramDock = dock(tr("Histogram"), QStringLiteral("histogramDock"), histogram_, Qt::BottomDockWidgetArea);
    QDockWidget* rooflineDock = dock(tr("Roofline"), QStringLiteral("rooflineDock"), roofline_, Qt::BottomDockWidgetArea);
    QDockWidget* logDock = dock(tr("Log"), QStringLiteral("logDock"), log_, Qt::BottomDockWidgetArea);
    QDockWidget* kernelDock = dock(tr("Kernel source"), QStringLiteral("kernelDock"), kernelSource_, Qt::BottomDockWidgetArea);
    tabifyDockWidget(timingsDock, streamsDock);
    tabifyDockWidget(streamsDock, histogramDock);
    tabifyDockWidget(histogramDock, rooflineDock);
    tabifyDockWidget(rooflineDock, logDock);
    tabifyDockWidget(logDock, kernelDock);
    timingsDock->raise();
    resizeDocks({timingsDock}, {280}, Qt::Vertical);
    resizeDocks({operationDock, executionDock}, {600, 300}, Qt::Vertical);
    resizeDocks({operationDock}, {420}, Qt::Horizontal);
}

void MainWindow::buildActions()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(style()->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open…"), this, [this] {
        const QString filter = tr("Images and signals (%1 %2);;All files (*)")
                                   .arg(extensionPatterns(imageExtensions()).join(QLatin1Char(' ')),
                                        extensionPatterns(signalExtensions()).join(QLatin1Char(' ')));
        const QString path = QFileDialog::getOpenFileName(this, tr("Open image or signal"), lastFolder_, filter);
        if (!path.isEmpty()) openFile(path);
    });
    open->setShortcut(QKeySequence::Open);
    recentMenu_ = file->addMenu(tr("Open &Recent"));
    samplesMenu_ = file->addMenu(tr("&Samples"));
    connect(samplesMenu_, &QMenu::aboutToShow, this, &MainWindow::rebuildSamplesMenu);
    rebuildSamplesMenu();
    QAction* generate = file->addAction(QIcon(QStringLiteral(":/icons/generate.png")), tr("&Generate test input…"), this, [this] {
        GenerateDialog dialog(this);
        if (dialog.exec() == QDialog::Accepted) generateInput(dialog.spec());
    });
    generate->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
    file->addSeparator();
    QAction* saveCpu = file->addAction(style()->standardIcon(QStyle::SP_DialogSaveButton), tr("Save &CPU output…"), this,
                                       [this] { saveOutputAs(app::Backend::CpuReference); });
    saveCpu->setShortcut(QKeySequence::Save);
    file->addAction(tr("Save &GPU output…"), this, [this] { saveOutputAs(app::Backend::Gpu); });
    file->addAction(tr("Save report as &JSON…"), this, [this] { saveReportAs(true); });
    file->addAction(tr("Save report as CS&V…"), this, [this] { saveReportAs(false); });
    QMenu* png = file->addMenu(tr("Save as &PNG"));
    png->addAction(tr("Views…"), this, [this] { saveWidgetPngAs(views_, QStringLiteral("views.png")); });
    png->addAction(tr("Timings…"), this, [this] { saveWidgetPngAs(timings_, QStringLiteral("timings.png")); });
    png->addAction(tr("Streams…"), this, [this] { saveWidgetPngAs(streams_, QStringLiteral("streams.png")); });
    png->addAction(tr("Histogram…"), this, [this] { saveWidgetPngAs(histogram_, QStringLiteral("histogram.png")); });
    png->addAction(tr("Roofline…"), this, [this] { saveWidgetPngAs(roofline_, QStringLiteral("roofline.png")); });
    png->addAction(tr("Whole window…"), this, [this] { saveWidgetPngAs(this, QStringLiteral("kernellab.png")); });
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    QAction* runAction = run->addAction(style()->standardIcon(QStyle::SP_MediaPlay), tr("&Run"), this, &MainWindow::runNow);
    runAction->setShortcut(QKeySequence(Qt::Key_F5));
    QAction* cancel = run->addAction(style()->standardIcon(QStyle::SP_MediaStop), tr("&Cancel"), this, &MainWindow::cancelRun);
    cancel->setShortcut(QKeySequence(Qt::Key_Escape));
    run->addAction(tr("Size &sweep…"), this, &MainWindow::openSweep);
    // A choice only on a host with several GPUs; one GPU is shown checked, none says why.
    QMenu* device = run->addMenu(tr("&Device"));
    auto* devices = new QActionGroup(device);
    for (const gpu::DeviceInfo& d : gpu::listDevices()) {
        QAction* choice = devices->addAction(tr("GPU %1: %2").arg(d.index).arg(QString::fromStdString(d.name)));
        choice->setCheckable(true);
        choice->setChecked(d.index == app::selectedGpuDevice());
        connect(choice, &QAction::triggered, this, [this, index = d.index] {
            QString reason;
            if (app::selectGpuDevice(index, &reason)) logLine(tr("Runs use GPU %1 from now on").arg(index));
            else reportError(reason);
        });
    }
    device->addActions(devices->actions());
    if (devices->actions().size() == 1) devices->actions().first()->setEnabled(false);
    if (devices->actions().isEmpty())
        device->addAction(tr("No GPU: %1").arg(QString::fromStdString(gpu::gpuStatus().reason)))->setEnabled(false);

    QMenu* kernel = menuBar()->addMenu(tr("&Kernel"));
    QAction* compile = kernel->addAction(tr("&Compile"), this, &MainWindow::compileKernel);
    compile->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    kernel->addAction(tr("&Edit your own kernel"), this, [this] { showPanel(QStringLiteral("kernel")); });

    QMenu* view = menuBar()->addMenu(tr("&View"));
    QAction* fit = view->addAction(tr("&Fit"), this, [this] { images_->sync()->fit(); });
    fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    QAction* actual = view->addAction(tr("&100 %"), this, [this] { images_->sync()->setScale(1); });
    actual->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_1));
    QAction* zoomIn = view->addAction(tr("Zoom &in"), this, [this] { images_->sync()->zoomBy(1.25); });
    zoomIn->setShortcut(QKeySequence::ZoomIn);
    QAction* zoomOut = view->addAction(tr("Zoom &out"), this, [this] { images_->sync()->zoomBy(0.8); });
    zoomOut->setShortcut(QKeySequence::ZoomOut);
    view->addSeparator();
    view->addAction(tr("&Roofline"), this, [this] { showPanel(QStringLiteral("roofline")); });
    QMenu* panels = view->addMenu(tr("&Panels"));
    for (QDockWidget* d : findChildren<QDockWidget*>()) panels->addAction(d->toggleViewAction());

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About KernelLab"), this, [this] {
        QMessageBox::about(this, tr("About KernelLab"),
                           tr("<b>KernelLab</b><p>2D and 1D convolution, histogram and transpose on the CPU "
                              "(plain loops and OpenCV) and on a CUDA GPU, side by side, with where the time went.</p>"));
    });

    QToolBar* tools = addToolBar(tr("Main"));
    tools->setObjectName(QStringLiteral("mainToolBar"));
    tools->addAction(open);
    tools->addAction(generate);
    tools->addAction(saveCpu);
    tools->addSeparator();
    tools->addAction(runAction);
    tools->addAction(cancel);
    tools->addSeparator();
    tools->addAction(fit);
    tools->addAction(actual);
}

void MainWindow::addRecentFile(const QString& path)
{
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recentFiles_.removeAll(absolute);
    recentFiles_.prepend(absolute);
    while (recentFiles_.size() > kMaxRecentFiles) recentFiles_.removeLast();
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    recentMenu_->clear();
    for (const QString& path : recentFiles_) recentMenu_->addAction(path, this, [this, path] { openFile(path); });
    recentMenu_->setEnabled(!recentFiles_.isEmpty());
}

void MainWindow::rebuildSamplesMenu()
{
    samplesMenu_->clear();
    QStringList patterns = extensionPatterns(imageExtensions()) + extensionPatterns(signalExtensions());
    const QDir samples(app::sampleDataDir());
    for (const QFileInfo& f : samples.entryInfoList(patterns, QDir::Files, QDir::Name)) {
        const QString path = f.absoluteFilePath();
        samplesMenu_->addAction(f.fileName(), this, [this, path] { openFile(path); });
    }
    if (samplesMenu_->isEmpty()) samplesMenu_->addAction(tr("No samples in %1").arg(samples.path()))->setEnabled(false);
}

} // namespace kl::gui
