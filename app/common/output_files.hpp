#pragma once
// The files a run writes, the same from the CLI and the GUI: its output (--output, "Save
// output") and its report (--report and --csv, "Save report").
#include "session.hpp"

#include <QByteArray>
#include <QString>

namespace kl::app {

/// Throws kl::InvalidArgument, naming the extensions that would do, unless `path`'s extension
/// suits the op's output: an image file for conv2d and image transpose, a writable signal
/// file (.wav .csv .npy) for conv1d and signal transpose, .csv for a histogram.
void checkOutputPath(const QString& path, const RunRequest& request);

/// Writes `result`'s output to `path` (see checkOutputPath). A transposed signal is written
/// as the frames x channels matrix, which signal files store row by row (interleaved).
/// Throws kl::IoError naming the file when it cannot be written.
void saveOutput(const QString& path, const BackendResult& result, const RunRequest& request);

enum class ReportFormat { Json, Csv };

/// The report of `result` (docs/report-format.md): toJson indented, or toCsv.
QByteArray reportBytes(const RunResult& result, ReportFormat format);
/// Writes reportBytes to `path`; kl::IoError naming the file when it cannot be written.
void saveReport(const QString& path, const RunResult& result, ReportFormat format);

/// Writes `contents` to `path` through a temporary file renamed over it, so that a failure
/// leaves no half-written file; kl::IoError "cannot write '<path>': <reason>" otherwise.
void writeFile(const QString& path, const QByteArray& contents);

/// A histogram as CSV: '#' comment lines with the binning and the per-channel out-of-range
/// and NaN counts, a header "bin,lower,upper,<label>..." and one row of counts per bin.
QString histogramCsv(const HistogramResult& histogram);

} // namespace kl::app
