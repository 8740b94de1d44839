#pragma once
// What each op is to the session: one descriptor per op, read by execute(), the variant
// checks and the comparison instead of switching on the op. Adding an op means adding a
// descriptor here (and its spec to RunRequest), not editing every switch.
#include "session.hpp"

#include <QJsonObject>

namespace kl::app {

/// What an op's output is, for the files it may be saved as (output_files.cpp).
enum class OutputKind { Image, Signal, Histogram };

/// How two backends' outputs of an op must agree (core's acceptance rule, acceptance.hpp).
enum class Agreement {
    Identical,      ///< histogram, transpose: every element equal
    Conv2dRule,     ///< acceptConv2D: f32 within tolerance, integers equal except at ties
    FloatRelative,  ///< within kBackendsRelTolerance of the largest |reference|
};

struct OpDescriptor {
    Op op;
    const char* name;  ///< as the CLI, reports and the engine name it
    /// Throws kl::InvalidArgument naming what is wrong with the request's input or spec.
    void (*validate)(const RunRequest& request);
    /// One call on a CPU backend (cpu-ref when `reference`, else cpu-opencv), writing into `out`'s
    /// output, which is reused across calls, with `scratch` kept between them.
    void (*runCpu)(const RunRequest& request, bool reference, BackendResult& out, CpuScratch& scratch);
    /// The GPU run under `options` (the request's, with the run's cancel flag), its output into `out`.
    gpu::GpuReport (*runGpu)(const RunRequest& request, const gpu::RunOptions& options, gpu::Engine& engine,
                             BackendResult& out);
    /// Why GPU variant `variant` cannot run the request on `device`; empty when it can.
    std::string (*whyNotApplicable)(const RunRequest& request, const std::string& variant,
                                    const gpu::DeviceInfo& device);
    Agreement agreement;
    /// The request's output kind (transpose: an image or, for a signal, interleaved samples).
    OutputKind (*outputKind)(const RunRequest& request);
    /// The depth (CV_8U, CV_16U, CV_32F) of an Image output; -1 for the other kinds.
    int (*outputDepth)(const RunRequest& request);
    /// The report's "spec" object: the op's parameters as run (docs/report-format.md).
    QJsonObject (*reportSpec)(const RunResult& result);
};

/// Every op's descriptor, in the order the GUI's tabs and the CLI list them.
const std::vector<const OpDescriptor*>& opDescriptors();
/// The descriptor of `op`.
const OpDescriptor& describe(Op op);

} // namespace kl::app
