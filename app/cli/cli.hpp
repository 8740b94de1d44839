#pragma once
// What the kernellab-cli commands share: exit codes, errors, option parsing, the
// progress bar on stderr and the Ctrl-C flag.
#include "op_config.hpp"
#include "session.hpp"

#include <QCommandLineParser>
#include <QString>
#include <QStringList>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace kl::cli {

enum ExitCode : int {
    kExitOk = 0,
    kExitFailure = 1,        ///< a runtime failure (a backend failed, a file could not be written...)
    kExitBadArguments = 2,   ///< bad arguments or inputs; the message says which and why
    kExitNoGpu = 3,          ///< a GPU was asked for explicitly but there is none usable
    kExitCancelled = 130,    ///< SIGINT (128 + 2, the shell convention)
};

/// An error with the exit code it should produce; main() prints what() and exits with code().
class CliError : public std::runtime_error {
public:
    CliError(int code, const QString& message) : std::runtime_error(message.toStdString()), code_(code) {}
    [[nodiscard]] int code() const noexcept { return code_; }

private:
    int code_;
};

/// Set by SIGINT; long work checks it between steps (RunControl::cancel).
const std::atomic<bool>& cancelFlag();
/// Installs the SIGINT handler: the first Ctrl-C sets cancelFlag(), a second one kills at once.
void installInterruptHandler();

/// "\r[#####.....]  45% what" on stderr, only when stderr is a terminal and not --quiet.
class ProgressBar {
public:
    explicit ProgressBar(bool quiet);
    ~ProgressBar();
    ProgressBar(const ProgressBar&) = delete;
    ProgressBar& operator=(const ProgressBar&) = delete;
    void update(double fraction, const QString& what);
    /// Erases the bar so that ordinary output can follow.
    void clear();

private:
    bool enabled_;
    bool shown_ = false;
};

/// A command's parser: its own options plus --help and --quiet; throws CliError(2) for
/// unknown options or missing values, prints help and returns false for --help.
bool parseCommandLine(QCommandLineParser& parser, const QStringList& arguments, const QString& synopsis);
/// Adds the options of a parameter list (op_config.hpp) to a parser.
void addParameterOptions(QCommandLineParser& parser, const std::vector<app::ParameterInfo>& parameters);
/// The parameter map of the options given (flags as "true").
app::ParameterMap parameterMap(const QCommandLineParser& parser, const std::vector<app::ParameterInfo>& parameters);

/// Comma-separated list option; `fallback` when absent.
QStringList listOption(const QCommandLineParser& parser, const QString& name, const QStringList& fallback);
/// Whole-number option >= minimum; throws CliError(2) naming the option otherwise.
int intOption(const QCommandLineParser& parser, const QString& name, int fallback, int minimum);

/// The GPU engine, or CliError(3) "no CUDA device: <reason>" when `required`; nullptr with
/// `reason` set when it is merely wanted.
gpu::Engine* gpuEngine(bool required, const QString& requiredBy, QString* reason);

/// --device N, the GPU a command runs on (run, bench, sweep).
void addDeviceOption(QCommandLineParser& parser);
/// Makes --device the shared engine's GPU (app::selectGpuDevice) before its first use: CliError(2)
/// naming the devices there are when N is not one of them, CliError(3) when there is no GPU.
void selectDevice(const QCommandLineParser& parser);

/// Writes a text file (temporary + rename); CliError(1) naming the file when it fails.
void writeTextFile(const QString& path, const QByteArray& contents);

/// Prints to stdout / stderr (UTF-8), a newline added.
void printLine(const QString& line = {});
void printError(const QString& line);

/// Formats milliseconds / rates for tables ("12.35", "-" when not measured).
QString formatMs(double ms);
QString formatRate(double value);

/// Plain-text table with right-aligned numeric columns, and its Markdown form.
struct Table {
    QStringList header;
    std::vector<QStringList> rows;
    [[nodiscard]] QString text() const;
    [[nodiscard]] QString markdown() const;
};

int runInfo(const QStringList& arguments);
int runRun(const QStringList& arguments);
int runBench(const QStringList& arguments);
int runSweep(const QStringList& arguments);
int runTemplate(const QStringList& arguments);
int runCompile(const QStringList& arguments);

} // namespace kl::cli
