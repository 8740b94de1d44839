#include "run_batch.hpp"

#include "csv.hpp"
#include "output_files.hpp"
#include "report.hpp"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonArray>

#include <algorithm>

namespace kl::cli {

Shard parseShard(const QString& text)
{
    const QStringList parts = text.split(QLatin1Char('/'));
    bool okIndex = false, okCount = false;
    const Shard shard{parts.value(0).toInt(&okIndex), parts.value(1).toInt(&okCount)};
    if (parts.size() != 2 || !okIndex || !okCount || shard.index < 1 || shard.index > shard.count)
        throw CliError(kExitBadArguments,
                       "--shard: '" + text + "' is not K/N with whole numbers 1 <= K <= N (e.g. 2/8: the second of 8 shards)");
    return shard;
}

QStringList shardOf(const QStringList& items, const Shard& shard)
{
    QStringList mine;
    for (qsizetype i = shard.index - 1; i < items.size(); i += shard.count) mine << items[i];
    return mine;
}

QStringList readInputList(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text))
        throw CliError(kExitBadArguments, "--input-list: cannot read '" + path + "': " + file.errorString());
    const QDir folder = QFileInfo(path).absoluteDir();
    QStringList inputs;
    while (!file.atEnd()) {
        const QString line = QString::fromUtf8(file.readLine()).trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#'))) continue;
        inputs << QDir::cleanPath(folder.filePath(line));  // filePath keeps an absolute line as it is
    }
    if (inputs.isEmpty()) throw CliError(kExitBadArguments, "--input-list: '" + path + "' names no input file");
    return inputs;
}

QStringList batchOutputs(const QStringList& inputs, const QString& dir, const app::ParameterMap& parameters)
{
    QHash<QString, QString> canonicalInputs;  // canonical path -> the input as given
    for (const QString& input : inputs) {
        const QString canonical = QFileInfo(input).canonicalFilePath();  // empty for a missing file
        if (!canonical.isEmpty()) canonicalInputs.insert(canonical, input);
    }
    app::BatchOutputPaths outputPaths(dir, parameters);
    QStringList outputs;
    QHash<QString, QString> writers;  // output -> the input that writes it
    for (const QString& input : inputs) {
        const QString output = outputPaths.pathFor(input);
        const QString clean = QDir::cleanPath(QFileInfo(output).absoluteFilePath());
        if (writers.contains(clean))
            throw CliError(kExitBadArguments, QStringLiteral("inputs '%1' and '%2' would both write '%3'; give each "
                                                             "input file once, and distinct base names")
                                                  .arg(writers[clean], input, output));
        writers.insert(clean, input);
        const QString canonical = QFileInfo(output).canonicalFilePath();
        if (canonicalInputs.contains(canonical))
            throw CliError(kExitBadArguments, QStringLiteral("the output '%1' of '%2' is the input file '%3'; choose "
                                                             "another --output-dir")
                                                  .arg(output, input, canonicalInputs[canonical]));
        outputs << output;
    }
    return outputs;
}

void refuseExistingOutputs(const QStringList& outputs)
{
    const auto exists = [](const QString& o) { return QFileInfo::exists(o); };
    const auto first = std::find_if(outputs.begin(), outputs.end(), exists);
    if (first == outputs.end()) return;
    const qsizetype existing = std::count_if(first, outputs.end(), exists);
    throw CliError(kExitBadArguments, QStringLiteral("the output '%1' exists (%2 of the %3 outputs do); pass --overwrite "
                                                     "to replace them")
                                          .arg(*first)
                                          .arg(existing)
                                          .arg(outputs.size()));
}

int BatchReport::failed() const
{
    return int(std::count_if(files.begin(), files.end(), [](const BatchFile& f) { return !f.error.isEmpty(); }));
}

QJsonObject toJson(const BatchReport& batch)
{
    QJsonArray files;
    for (const BatchFile& f : batch.files)
        files.append(QJsonObject{
            {QStringLiteral("input"), f.input},
            {QStringLiteral("output"), app::textOrNull(f.output)},
            {QStringLiteral("ok"), f.error.isEmpty()},
            {QStringLiteral("error"), app::textOrNull(f.error)},
            {QStringLiteral("report"), f.report.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(f.report)},
        });
    return {
        {QStringLiteral("schema"), QStringLiteral("kernellab-batch-report")},
        {QStringLiteral("schema_version"), 1},
        {QStringLiteral("date"), batch.date},
        {QStringLiteral("op"), batch.op},
        {QStringLiteral("listed"), batch.listed},
        {QStringLiteral("shard"), batch.shard ? QJsonValue(QJsonObject{{QStringLiteral("index"), batch.shard->index},
                                                                       {QStringLiteral("count"), batch.shard->count}})
                                              : QJsonValue(QJsonValue::Null)},
        {QStringLiteral("complete"), batch.complete},
        {QStringLiteral("failed"), batch.failed()},
        {QStringLiteral("files"), files},
    };
}

QString toCsv(const BatchReport& batch)
{
    const QStringList fileColumns = {QStringLiteral("output"), QStringLiteral("file_ok"), QStringLiteral("file_error")};
    QString csv = (app::csvColumns() + fileColumns).join(QLatin1Char(',')) + QLatin1Char('\n');
    for (const BatchFile& f : batch.files) {
        const QStringList fileCells = {app::csvField(f.output), f.error.isEmpty() ? QStringLiteral("true") : QStringLiteral("false"),
                                       app::csvField(f.error)};
        std::vector<QStringList> rows = f.csvRows;
        if (rows.empty()) {
            // Failed before running: the run columns say which file and why, the backend columns stay empty.
            QStringList row(app::csvColumns().size());
            const auto set = [&](const char* column, const QString& value) {
                row[app::csvColumns().indexOf(QLatin1String(column))] = value;
            };
            set("op", batch.op);
            set("input", app::csvField(f.input));
            set("ok", QStringLiteral("false"));
            set("error", app::csvField(f.error));
            rows.push_back(row);
        }
        for (const QStringList& row : rows) csv += (row + fileCells).join(QLatin1Char(',')) + QLatin1Char('\n');
    }
    return csv;
}

} // namespace kl::cli
