// kernellab-cli: the headless front end (info, run, bench, sweep, template, compile). Exit codes in cli.hpp.
#include "cli.hpp"

#include "kernellab/error.hpp"

#include <QCoreApplication>

#include <cstdio>

namespace {

const char* const kUsage =
    "Usage: kernellab-cli <command> [options]   (kernellab-cli <command> --help for its options)\n"
    "\n"
    "Commands:\n"
    "  info    GPU devices (or why there is none), CPU, library versions\n"
    "  run     one operation on the chosen backends, with a report\n"
    "  bench   a suite of ops x variants x sizes x depths x memory modes x streams\n"
    "  sweep   one op over a range of sizes: where the GPU starts to win\n"
    "  template  a kernel of your own to start from (docs/custom-kernels.md)\n"
    "  compile   compile your kernel and check it against the op's contract (no GPU needed)\n";

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("kernellab-cli"));
    using namespace kl::cli;
    installInterruptHandler();

    const QStringList arguments = QCoreApplication::arguments();
    const QString command = arguments.value(1);
    if (command.isEmpty() || command == QLatin1String("help") || command == QLatin1String("--help") ||
        command == QLatin1String("-h")) {
        std::fputs(kUsage, command.isEmpty() ? stderr : stdout);
        return command.isEmpty() ? kExitBadArguments : kExitOk;
    }
    // The command's parser sees "kernellab-cli <command>" as the program name.
    QStringList commandArguments = arguments.mid(2);
    commandArguments.prepend(arguments.value(0) + QLatin1Char(' ') + command);

    try {
        if (command == QLatin1String("info")) return runInfo(commandArguments);
        if (command == QLatin1String("run")) return runRun(commandArguments);
        if (command == QLatin1String("bench")) return runBench(commandArguments);
        if (command == QLatin1String("sweep")) return runSweep(commandArguments);
        if (command == QLatin1String("template")) return runTemplate(commandArguments);
        if (command == QLatin1String("compile")) return runCompile(commandArguments);
        printError("kernellab-cli: unknown command '" + command + "' (use info, run, bench, sweep, template or compile)");
        return kExitBadArguments;
    } catch (const CliError& e) {
        printError(QStringLiteral("kernellab-cli %1: error: %2").arg(command, QString::fromUtf8(e.what())));
        return e.code();
    } catch (const kl::Cancelled&) {
        printError(QStringLiteral("kernellab-cli %1: cancelled").arg(command));
        return kExitCancelled;
    } catch (const kl::InvalidArgument& e) {
        printError(QStringLiteral("kernellab-cli %1: error: %2").arg(command, QString::fromUtf8(e.what())));
        return kExitBadArguments;
    } catch (const kl::IoError& e) {
        // Writes are wrapped in CliError(1) where they happen; an IoError here is an unreadable input.
        printError(QStringLiteral("kernellab-cli %1: error: %2").arg(command, QString::fromUtf8(e.what())));
        return kExitBadArguments;
    } catch (const std::exception& e) {
        printError(QStringLiteral("kernellab-cli %1: error: %2").arg(command, QString::fromUtf8(e.what())));
        return kExitFailure;
    }
}
