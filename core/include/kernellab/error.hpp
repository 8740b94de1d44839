#pragma once
// Exceptions thrown by KernelLab. Messages are written for the user: they name
// the file, field or value at fault and the reason.
#include <stdexcept>
#include <string>

namespace kl {

/// A spec, argument or input that is not valid (bad field value, wrong depth...).
class InvalidArgument : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

/// A file that cannot be read or written; the message names the file.
class IoError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Work that would need more memory than the machine (or the GPU) has.
class OutOfMemory : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Work stopped at the user's request (Esc in the GUI, Ctrl-C in the CLI).
class Cancelled : public std::runtime_error {
public:
    Cancelled() : std::runtime_error("cancelled") {}
};

} // namespace kl
