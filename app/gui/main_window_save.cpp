// MainWindow: saving outputs, reports and views to files (the File menu's Save actions).
#include "main_window.hpp"

#include "operation_panel.hpp"
#include "output_files.hpp"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QStatusBar>

namespace kl::gui {
namespace {

QString nothingToSave(app::Backend backend)
{
    return QObject::tr("No %1 output to save")
        .arg(backend == app::Backend::Gpu ? QObject::tr("GPU") : QObject::tr("CPU"));
}

} // namespace

QString MainWindow::askSavePath(const QString& title, const QString& suggestedName, const QString& filter)
{
    const QString path = QFileDialog::getSaveFileName(this, title, QDir(lastFolder_).filePath(suggestedName), filter);
    if (!path.isEmpty()) lastFolder_ = QFileInfo(path).absolutePath();
    return path;
}

const app::BackendResult* MainWindow::savableOutput(app::Backend backend) const
{
    if (!outcome_) return nullptr;
    const app::BackendResult* r =
        backend == app::Backend::Gpu ? outcome_->main.find(app::Backend::Gpu) : shownCpuResult(outcome_->main);
    return r && r->ok() ? r : nullptr;
}

void MainWindow::saveOutputAs(app::Backend backend)
{
    const app::BackendResult* r = savableOutput(backend);
    if (!r) {
        reportError(nothingToSave(backend));
        return;
    }
    const QString base = QFileInfo(input_.name).completeBaseName() + QLatin1Char('_') +
                         app::toString(outcome_->main.request.op) + QLatin1Char('_') + app::toString(r->backend);
    QString filter, suffix;
    if (r->histogram) {
        filter = tr("CSV (*.csv)");
        suffix = QStringLiteral(".csv");
    } else if (r->image.empty()) {
        filter = tr("WAV (*.wav);;CSV (*.csv);;NumPy (*.npy)");
        suffix = QStringLiteral(".wav");
    } else if (r->image.depth() == CV_32F) {
        filter = tr("TIFF (*.tif *.tiff);;OpenEXR (*.exr)");
        suffix = QStringLiteral(".tif");
    } else {
        filter = r->image.depth() == CV_16U ? tr("PNG (*.png);;TIFF (*.tif *.tiff)")
                                            : tr("PNG (*.png);;TIFF (*.tif *.tiff);;JPEG (*.jpg);;BMP (*.bmp)");
        suffix = QStringLiteral(".png");
    }
    const QString path = askSavePath(tr("Save output"), base + suffix, filter);
    if (!path.isEmpty()) saveOutput(backend, path);
}

bool MainWindow::saveOutput(app::Backend backend, const QString& path)
{
    const app::BackendResult* r = savableOutput(backend);
    if (!r) {
        reportError(nothingToSave(backend));
        return false;
    }
    const app::RunRequest& request = outcome_->main.request;
    try {
        app::checkOutputPath(path, request);
        app::saveOutput(path, *r, request);
    } catch (const std::exception& e) {
        reportError(tr("Cannot save: %1").arg(QString::fromUtf8(e.what())));
        return false;
    }
    logLine(tr("Saved the %1 output to %2").arg(app::toString(r->backend), path));
    statusBar()->showMessage(tr("Saved %1").arg(path));
    return true;
}

void MainWindow::saveReportAs(bool json)
{
    const QString base = QFileInfo(input_.name).completeBaseName() + QLatin1Char('_') + app::toString(operation_->op());
    const QString path = json ? askSavePath(tr("Save report"), base + QStringLiteral(".json"), tr("JSON (*.json)"))
                              : askSavePath(tr("Save report"), base + QStringLiteral(".csv"), tr("CSV (*.csv)"));
    if (!path.isEmpty()) saveReport(path);
}

bool MainWindow::saveReport(const QString& path)
{
    if (!outcome_) {
        reportError(tr("No run to report yet"));
        return false;
    }
    const app::ReportFormat format = path.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive) ? app::ReportFormat::Csv
                                                                                              : app::ReportFormat::Json;
    try {
        app::saveReport(path, outcome_->main, format);
    } catch (const std::exception& e) {
        reportError(tr("Cannot save: %1").arg(QString::fromUtf8(e.what())));
        return false;
    }
    logLine(tr("Saved the report to %1").arg(path));
    statusBar()->showMessage(tr("Saved %1").arg(path));
    return true;
}

void MainWindow::saveWidgetPngAs(QWidget* widget, const QString& suggestedName)
{
    const QString path = askSavePath(tr("Save as PNG"), suggestedName, tr("PNG (*.png)"));
    if (!path.isEmpty()) saveWidgetPng(widget, path);
}

bool MainWindow::saveWidgetPng(QWidget* widget, const QString& path)
{
    if (!widget->grab().save(path, "PNG")) {
        reportError(tr("Cannot save %1").arg(path));
        return false;
    }
    statusBar()->showMessage(tr("Saved %1").arg(path));
    return true;
}

} // namespace kl::gui
