#pragma once
// The files a run writes, the same from the CLI and the GUI: its output (--output, "Save
// output") and its report (--report and --csv, "Save report").
#include "op_config.hpp"
#include "session.hpp"

#include <QByteArray>
#include <QString>

#include <optional>

namespace kl::app {

/// Throws kl::InvalidArgument, naming the extensions that would do, unless `path`'s extension
/// suits the op's output: an image file for conv2d and image transpose, a writable signal
/// file (.wav .csv .npy) for conv1d and signal transpose, .csv for a histogram.
void checkOutputPath(const QString& path, const RunRequest& request);

/// Where a batch run (kernellab-cli run --output-dir DIR) writes the output of each input file:
/// DIR/<the input's base name><extension>. The extension is the input's own where its format can
/// hold the output, else: .csv for a histogram, .wav for a signal (32-bit float, the sample rate
/// kept), .tif for an image (every depth). It is decided from the input's name and `parameters`
/// (configureRequest's) before the input is read, so that every output is known before any work:
/// an image result keeps the input's depth, which its own format holds, unless conv2d's float
/// output makes it f32. One per batch: what the parameters say is the same for every input, so it
/// is worked out once (configuring may read a --kernel-source file).
class BatchOutputPaths {
public:
    /// Throws kl::InvalidArgument for an unknown op.
    BatchOutputPaths(const QString& dir, const ParameterMap& parameters);
    /// The output of `input`. Throws kl::InvalidArgument for parameters configureRequest refuses.
    QString pathFor(const QString& input);

private:
    bool imageOutputIsFloat();

    QString dir_;
    ParameterMap parameters_;
    Op op_;
    /// Configured at the first image output, not before: a batch with none is configured per file
    /// as it runs, where a parameter the op refuses fails that file, not the batch.
    std::optional<bool> imageOutputIsFloat_;
};

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
