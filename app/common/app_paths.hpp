#pragma once
// Where the app and CLI find their bundled data.
#include <QString>

namespace kl::app {

/// sample_data/ of the source tree (build-tree runs) or <prefix>/share/kernellab/sample_data (installed).
QString sampleDataDir();
/// kernellab-worker (runs user kernels): beside this program, else the build tree's.
QString workerExecutable();

} // namespace kl::app
