#pragma once
// kernellab-cli run over several input files: the inputs (--input ..., --input-list, --shard),
// where their outputs go (--output-dir) and the batch report (docs/report-format.md "Batch report").
#include "cli.hpp"

#include <QJsonObject>

#include <optional>
#include <vector>

namespace kl::cli {

/// --shard K/N: this process takes inputs K, K + N, K + 2N ... (1-based) of the list.
struct Shard {
    int index = 1;
    int count = 1;
};
/// "K/N" with whole numbers 1 <= K <= N; CliError(2) naming the value otherwise.
Shard parseShard(const QString& text);
/// The items of `shard`, in their order.
QStringList shardOf(const QStringList& items, const Shard& shard);

/// The paths an --input-list file names: one per line, blank lines and lines starting with '#'
/// skipped, surrounding spaces trimmed. A relative path is relative to the list file's folder, so
/// that a list means the same files from any working directory (a Slurm job's, say). CliError(2)
/// when the list cannot be read or names no file.
QStringList readInputList(const QString& path);

/// Each input's output in `dir` (app::BatchOutputPaths), in the inputs' order. CliError(2) when two
/// inputs would write one file or an output is one of the inputs (by any spelling, symlinks
/// resolved). Checked over every input, not one shard's, so that the shards of a list agree.
QStringList batchOutputs(const QStringList& inputs, const QString& dir, const app::ParameterMap& parameters);
/// CliError(2) naming the first of `outputs` that exists, and how many do.
void refuseExistingOutputs(const QStringList& outputs);

/// One input file of a batch: what became of it, and its run's report when it ran (kept instead of
/// the RunResult, whose images a long batch cannot hold).
struct BatchFile {
    QString input;
    QString output;                    ///< the file written; empty when none was
    QString error;                     ///< why the file failed; empty when it succeeded
    QJsonObject report;                ///< the run report (app::toJson); empty when it failed before running
    std::vector<QStringList> csvRows;  ///< the run's CSV rows (app::csvRows); none when it failed before running
};

struct BatchReport {
    QString date;                 ///< ISO 8601 UTC, when the batch started
    QString op;
    int listed = 0;               ///< the inputs given, before --shard
    std::optional<Shard> shard;
    std::vector<BatchFile> files; ///< the shard's files in order (those finished, when cancelled)
    bool complete = true;         ///< false when Ctrl-C stopped the batch
    [[nodiscard]] int failed() const;
};
QJsonObject toJson(const BatchReport& batch);
/// The run CSV's columns and rows for every file, each row followed by output, file_ok, file_error;
/// a file that failed before running has one row, its backend empty.
QString toCsv(const BatchReport& batch);

} // namespace kl::cli
