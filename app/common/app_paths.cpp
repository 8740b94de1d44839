#include "app_paths.hpp"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace kl::app {

QString sampleDataDir()
{
    const QString installed = QCoreApplication::applicationDirPath() + QStringLiteral("/../share/kernellab/sample_data");
    if (QFileInfo(installed).isDir()) return QDir(installed).canonicalPath();
    return QStringLiteral(KL_SOURCE_SAMPLE_DATA_DIR);
}

QString workerExecutable()
{
    const QString beside = QCoreApplication::applicationDirPath() + QStringLiteral("/kernellab-worker");
    return QFileInfo(beside).isExecutable() ? beside : QStringLiteral(KL_BUILD_WORKER_PATH);
}

} // namespace kl::app
