#pragma once
// Saving a run's output (the CLI's --output, the GUI's "save output").
#include "session.hpp"

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

/// A histogram as CSV: '#' comment lines with the binning and the per-channel out-of-range
/// and NaN counts, a header "bin,lower,upper,<label>..." and one row of counts per bin.
QString histogramCsv(const HistogramResult& histogram);

} // namespace kl::app
