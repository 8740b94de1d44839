#pragma once
// Building a RunRequest from named parameters: the one place where inputs, presets, specs
// and backend options are parsed, for the CLI's options and the GUI's fields alike.
#include "session.hpp"

#include <QMap>
#include <QString>

#include <optional>
#include <vector>

namespace kl::app {

/// Parameter name (the CLI's long option without "--") -> value as text.
/// Flags hold "true" or "false"; a flag that is absent keeps its default.
using ParameterMap = QMap<QString, QString>;

struct ParameterInfo {
    QString name;         ///< "sigma"
    QString valueName;    ///< "SIGMA"; empty for a flag
    QString help;
    std::vector<Op> ops;  ///< the ops it applies to; empty: every op (or not op-specific)
};
/// Every parameter loadInput and configureRequest understand, in the order help lists them.
const std::vector<ParameterInfo>& inputParameterInfo();    ///< input, generate, rate, channels
const std::vector<ParameterInfo>& opParameterInfo();       ///< op, preset ... no-luminance
const std::vector<ParameterInfo>& backendParameterInfo();  ///< backends, variant ... kernel-only

/// Loads "input" (image or signal by extension; "rate" and "channels" for signal files that
/// lack them) or generates "generate" (generators.hpp) into request.image / request.signal
/// and sets request.inputName. Throws kl::InvalidArgument (bad value, neither or both given)
/// or kl::IoError (unreadable file).
void loadInput(RunRequest& request, const ParameterMap& parameters);

/// The "op" parameter (conv2d when absent); kl::InvalidArgument for an unknown op.
Op requestedOp(const ParameterMap& parameters);
/// The "backends" parameter (RunRequest's default set when absent); kl::InvalidArgument for an
/// unknown backend.
std::vector<Backend> requestedBackends(const ParameterMap& parameters);

/// Sets op, the op's spec, opParameters, backends and CPU/GPU options from `parameters`
/// (what is not given takes RunRequest's default). The input must be loaded first (conv1d filter designs need its sample rate).
/// Throws kl::InvalidArgument naming the parameter and why (unknown name, bad value, a
/// parameter that does not apply to the op) or kl::IoError for an unreadable kernel file.
void configureRequest(RunRequest& request, const ParameterMap& parameters);

/// The user-kernel parameters of backendParameterInfo(): kernel-source, kernel-name, block, tile,
/// shared-bytes, kernel-timeout.
std::vector<ParameterInfo> customKernelParameterInfo();
/// The user kernel they give (the source read, its launch line and the options applied); nullopt
/// without kernel-source. Throws like configureRequest.
std::optional<CustomKernel> customKernelFrom(const ParameterMap& parameters);

} // namespace kl::app
