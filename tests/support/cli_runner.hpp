#pragma once
// Running kernellab-cli from a test. Include only in tests registered with
// kl_uses_cli() (tests/CMakeLists.txt), which defines KL_CLI_PATH.
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace kltest {

struct CliRun {
    int exitCode = -1;  ///< -1 when the process crashed or timed out
    QString out, err;
};

inline QString cliPath() { return QStringLiteral(KL_CLI_PATH); }

inline CliRun runCli(const QStringList& arguments, const QString& workingDir = {}, int timeoutMs = 600000)
{
    QProcess process;
    if (!workingDir.isEmpty()) process.setWorkingDirectory(workingDir);
    process.start(cliPath(), arguments);
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
    }
    CliRun run;
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.out = QString::fromUtf8(process.readAllStandardOutput());
    run.err = QString::fromUtf8(process.readAllStandardError());
    return run;
}

/// Exit code and both streams, for QVERIFY2 messages.
inline QByteArray describe(const CliRun& run)
{
    return QStringLiteral("exit %1\nstdout:\n%2\nstderr:\n%3").arg(run.exitCode).arg(run.out, run.err).toUtf8();
}

/// The JSON object in a file (empty when missing or malformed).
inline QJsonObject readJson(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(file.readAll()).object() : QJsonObject();
}

} // namespace kltest
