#pragma once
// A user's kernel as one more GPU variant, "custom:<entry>": compiled for the request's op, depths
// and device, run by kernellab-worker in its own process (killed when it overruns), its output
// and timings returned as any variant's. docs/custom-kernels.md is the contract.
#include "session.hpp"

#include <QString>

#include <atomic>
#include <string>

namespace kl::app {

/// The environment variable naming a command to run the worker under, e.g.
/// "compute-sanitizer --tool memcheck --log-file memcheck.%p.txt": the user kernel is checked by it.
inline constexpr const char* kWorkerWrapperVariable = "KERNELLAB_WORKER_WRAPPER";

/// Whether `variant` names a user kernel ("custom:<entry>").
bool isCustomVariant(const std::string& variant);
/// The source as the request compiles it: its op, the input's depth as kl::In, the op's output
/// depth as kl::Out. Throws kl::InvalidArgument when the request has no custom kernel.
gpu::UserKernelSource userKernelSource(const RunRequest& request);
/// Why the request's custom kernel cannot run it; empty when it can. User kernels run the whole
/// input on one stream from pageable or pinned memory, and transpose images only.
QString whyCustomKernelCannotRun(const RunRequest& request);
/// Compiles (or finds in the cache) the request's kernel for `device`, runs it in the worker under
/// `options` and fills `out` with its output. Compile errors, a kernel that faults, overruns its
/// time-out or writes outside its output throw std::runtime_error saying so; `cancel` kills the
/// worker and throws kl::Cancelled.
gpu::GpuReport runCustomKernel(const RunRequest& request, const gpu::RunOptions& options,
                               const gpu::DeviceInfo& device, BackendResult& out);

} // namespace kl::app
