#include "cli.hpp"

#include "output_files.hpp"

#include "kernellab/error.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>

#include <unistd.h>

namespace kl::cli {

namespace {

std::atomic<bool> interrupted{false};

extern "C" void onInterrupt(int)
{
    interrupted.store(true);
    std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
}

bool looksNumeric(const QString& cell)
{
    bool ok = false;
    cell.toDouble(&ok);
    return ok || cell == QLatin1String("-");
}

} // namespace

const std::atomic<bool>& cancelFlag() { return interrupted; }

void installInterruptHandler()
{
    struct sigaction action {};
    action.sa_handler = onInterrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
}

ProgressBar::ProgressBar(bool quiet) : enabled_(!quiet && isatty(STDERR_FILENO)) {}

ProgressBar::~ProgressBar() { clear(); }

void ProgressBar::update(double fraction, const QString& what)
{
    if (!enabled_) return;
    constexpr int width = 30;
    const double f = std::clamp(fraction, 0.0, 1.0);
    const int filled = int(std::lround(f * width));
    const QString bar = QString(filled, QLatin1Char('#')) + QString(width - filled, QLatin1Char('.'));
    std::fprintf(stderr, "\r\033[K[%s] %3d%% %s", qPrintable(bar), int(std::lround(f * 100)),
                 what.left(70).toUtf8().constData());
    std::fflush(stderr);
    shown_ = true;
}

void ProgressBar::clear()
{
    if (!shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
}

bool parseCommandLine(QCommandLineParser& parser, const QStringList& arguments, const QString& synopsis)
{
    parser.setApplicationDescription(synopsis);
    parser.addHelpOption();
    parser.addOption({QStringLiteral("quiet"), QStringLiteral("No progress bar on stderr.")});
    if (!parser.parse(arguments)) throw CliError(kExitBadArguments, parser.errorText());
    if (parser.isSet(QStringLiteral("help"))) {
        // Qt's usage line names the program only; ours names the command too.
        QString help = parser.helpText();
        help.replace(0, help.indexOf(QLatin1Char('\n')), "Usage: " + arguments.first() + " [options]");
        std::fputs(help.toUtf8().constData(), stdout);
        return false;
    }
    if (!parser.positionalArguments().isEmpty())
        throw CliError(kExitBadArguments,
                       "unexpected argument '" + parser.positionalArguments().first() + "' (options start with --)");
    return true;
}

void addParameterOptions(QCommandLineParser& parser, const std::vector<app::ParameterInfo>& parameters)
{
    for (const app::ParameterInfo& p : parameters) parser.addOption({p.name, p.help, p.valueName});
}

app::ParameterMap parameterMap(const QCommandLineParser& parser, const std::vector<app::ParameterInfo>& parameters)
{
    app::ParameterMap map;
    for (const app::ParameterInfo& p : parameters)
        if (parser.isSet(p.name)) map[p.name] = p.valueName.isEmpty() ? QStringLiteral("true") : parser.value(p.name);
    return map;
}

QStringList listOption(const QCommandLineParser& parser, const QString& name, const QStringList& fallback)
{
    if (!parser.isSet(name)) return fallback;
    QStringList items;
    for (const QString& item : parser.value(name).split(QLatin1Char(','), Qt::SkipEmptyParts)) items << item.trimmed();
    if (items.isEmpty()) throw CliError(kExitBadArguments, "--" + name + ": the list is empty");
    return items;
}

int intOption(const QCommandLineParser& parser, const QString& name, int fallback, int minimum)
{
    if (!parser.isSet(name)) return fallback;
    bool ok = false;
    const int value = parser.value(name).toInt(&ok);
    if (!ok || value < minimum)
        throw CliError(kExitBadArguments,
                       QStringLiteral("--%1: '%2' is not a whole number >= %3").arg(name, parser.value(name)).arg(minimum));
    return value;
}

gpu::Engine* gpuEngine(bool required, const QString& requiredBy, QString* reason)
{
    QString why;
    gpu::Engine* engine = app::sharedEngine(&why);
    if (!engine && required) throw CliError(kExitNoGpu, requiredBy + " needs the GPU, but there is " + why);
    if (reason) *reason = why;
    return engine;
}

void addDeviceOption(QCommandLineParser& parser)
{
    parser.addOption({QStringLiteral("device"),
                      QStringLiteral("The GPU to run on, as `kernellab-cli info` numbers them (default 0)."),
                      QStringLiteral("N")});
}

void selectDevice(const QCommandLineParser& parser)
{
    if (!parser.isSet(QStringLiteral("device"))) return;
    const int index = intOption(parser, QStringLiteral("device"), 0, 0);
    QString reason;
    if (app::selectGpuDevice(index, &reason)) return;
    if (!gpu::gpuStatus().available)
        throw CliError(kExitNoGpu, QStringLiteral("--device %1 needs the GPU, but there is %2").arg(index).arg(reason));
    throw CliError(kExitBadArguments, QStringLiteral("--device %1: %2").arg(index).arg(reason));
}

void writeTextFile(const QString& path, const QByteArray& contents)
{
    try {
        app::writeFile(path, contents);
    } catch (const IoError& e) {
        throw CliError(kExitFailure, QString::fromUtf8(e.what()));
    }
}

void printLine(const QString& line)
{
    std::fputs(line.toUtf8().constData(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

void printError(const QString& line)
{
    std::fputs(line.toUtf8().constData(), stderr);
    std::fputc('\n', stderr);
    std::fflush(stderr);
}

QString formatMs(double ms)
{
    if (!(ms > 0) || !std::isfinite(ms)) return QStringLiteral("-");
    return QString::number(ms, 'f', ms < 1 ? 4 : (ms < 100 ? 3 : 1));
}

QString formatRate(double value)
{
    if (!(value > 0) || !std::isfinite(value)) return QStringLiteral("-");
    return QString::number(value, 'f', value < 10 ? 2 : 1);
}

QString Table::text() const
{
    std::vector<int> widths(size_t(header.size()), 0);
    std::vector<bool> numeric(size_t(header.size()), true);
    auto measure = [&](const QStringList& row) {
        for (int c = 0; c < row.size() && c < header.size(); ++c) widths[size_t(c)] = std::max(widths[size_t(c)], int(row[c].size()));
    };
    measure(header);
    for (const QStringList& row : rows) {
        measure(row);
        for (int c = 0; c < row.size() && c < header.size(); ++c)
            numeric[size_t(c)] = numeric[size_t(c)] && looksNumeric(row[c]);
    }
    auto line = [&](const QStringList& row) {
        QStringList cells;
        for (int c = 0; c < header.size(); ++c) {
            const QString cell = row.value(c);
            cells << (numeric[size_t(c)] ? cell.rightJustified(widths[size_t(c)]) : cell.leftJustified(widths[size_t(c)]));
        }
        return cells.join(QStringLiteral("  ")).trimmed() + QLatin1Char('\n');
    };
    QString out = line(header);
    QStringList rules;
    for (int w : widths) rules << QString(w, QLatin1Char('-'));
    out += rules.join(QStringLiteral("  ")) + QLatin1Char('\n');
    for (const QStringList& row : rows) out += line(row);
    return out;
}

QString Table::markdown() const
{
    auto line = [](const QStringList& cells) { return QStringLiteral("| ") + cells.join(QStringLiteral(" | ")) + QStringLiteral(" |\n"); };
    QString out = line(header);
    QStringList rules;
    for (int i = 0; i < header.size(); ++i) rules << QStringLiteral("---");
    out += line(rules);
    for (const QStringList& row : rows) out += line(row);
    return out;
}

} // namespace kl::cli
