// kernellab-cli template / compile: users' own kernels (docs/custom-kernels.md). Neither needs a GPU.
#include "cli.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"
#include "kernellab/gpu/user_kernel.hpp"

#include <opencv2/core.hpp>

#include <QFile>

#include <cstdio>

namespace kl::cli {

namespace {

/// The depths --depth names, or every depth the op takes.
std::vector<int> depthsToCompile(const QCommandLineParser& parser, const std::string& op)
{
    if (op == "conv1d") return {CV_32F};
    if (!parser.isSet(QStringLiteral("depth"))) return {CV_8U, CV_16U, CV_32F};
    return {parseDepth(parser.value(QStringLiteral("depth")).toStdString())};
}

} // namespace

int runTemplate(const QStringList& arguments)
{
    QCommandLineParser parser;
    parser.addOptions({
        {QStringLiteral("op"), QStringLiteral("conv2d, conv1d, histogram or transpose."), QStringLiteral("OP")},
        {QStringLiteral("name"), QStringLiteral("Which of the op's templates (default: its first)."), QStringLiteral("NAME")},
        {QStringLiteral("list"), QStringLiteral("List every template with a line on what it teaches.")},
    });
    if (!parseCommandLine(parser, arguments,
                          QStringLiteral("kernellab-cli template: prints a kernel to start from, e.g.\n"
                                         "  kernellab-cli template --op histogram --name shared > mine.cu")))
        return kExitOk;
    if (parser.isSet(QStringLiteral("list"))) {
        Table table{{QStringLiteral("op"), QStringLiteral("name"), QStringLiteral("what it does")}, {}};
        for (const gpu::KernelTemplate& t : gpu::kernelTemplates())
            table.rows.push_back({QString::fromStdString(t.op), QString::fromStdString(t.name),
                                  QString::fromStdString(t.description)});
        std::fputs(table.text().toUtf8().constData(), stdout);
        return kExitOk;
    }
    if (!parser.isSet(QStringLiteral("op"))) throw CliError(kExitBadArguments, QStringLiteral("--op is required (or --list)"));
    const gpu::KernelTemplate& t =
        gpu::kernelTemplate(parser.value(QStringLiteral("op")).toStdString(), parser.value(QStringLiteral("name")).toStdString());
    std::fputs(t.source.c_str(), stdout);
    return kExitOk;
}

int runCompile(const QStringList& arguments)
{
    QCommandLineParser parser;
    parser.addOptions({
        {QStringLiteral("op"), QStringLiteral("conv2d, conv1d, histogram or transpose."), QStringLiteral("OP")},
        {QStringLiteral("kernel-source"), QStringLiteral("The kernel to compile."), QStringLiteral("FILE")},
        {QStringLiteral("kernel-name"), QStringLiteral("Its __global__ function (default: the first it defines)."),
         QStringLiteral("NAME")},
        {QStringLiteral("arch"),
         QStringLiteral("Target, e.g. sm_75 or sm_90 (default: the GPU's, or sm_90 without one)."), QStringLiteral("ARCH")},
        {QStringLiteral("depth"), QStringLiteral("Compile for one input depth: u8, u16 or f32 (default: each the op takes)."),
         QStringLiteral("DEPTH")},
        {QStringLiteral("block"), QStringLiteral("Threads per block as KL_BLOCK_X/Y (default: the source's line)."),
         QStringLiteral("XxY")},
        {QStringLiteral("tile"), QStringLiteral("Elements per block as KL_TILE_X/Y (default: the source's line)."),
         QStringLiteral("XxY")},
    });
    if (!parseCommandLine(parser, arguments,
                          QStringLiteral("kernellab-cli compile: compiles a kernel with NVRTC and checks it against the "
                                         "op's contract, without a GPU. Exit 0 when it compiles; exit 2 with the "
                                         "compiler's messages (FILE:LINE:COL: ...) on stderr when not.\n"
                                         "  kernellab-cli compile --op histogram --kernel-source mine.cu --arch sm_90")))
        return kExitOk;
    for (const char* required : {"op", "kernel-source"})
        if (!parser.isSet(QString::fromLatin1(required)))
            throw CliError(kExitBadArguments, QStringLiteral("--%1 is required").arg(QString::fromLatin1(required)));

    gpu::UserKernelSource source;
    source.op = parser.value(QStringLiteral("op")).toStdString();
    gpu::kernelTemplate(source.op);  // an unknown op is named here, before the file is read
    const QString path = parser.value(QStringLiteral("kernel-source"));
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw CliError(kExitBadArguments, "--kernel-source: cannot read " + path + ": " + file.errorString());
    source.code = file.readAll().toStdString();
    source.fileName = path.toStdString();
    source.launch = gpu::launchFromSource(source.code);
    if (parser.isSet(QStringLiteral("block")))
        gpu::parseDimensions(parser.value(QStringLiteral("block")).toStdString(), source.launch.blockX, source.launch.blockY, "--block");
    if (parser.isSet(QStringLiteral("tile")))
        gpu::parseDimensions(parser.value(QStringLiteral("tile")).toStdString(), source.launch.tileX, source.launch.tileY, "--tile");
    source.entry = parser.isSet(QStringLiteral("kernel-name")) ? parser.value(QStringLiteral("kernel-name")).toStdString()
                                                               : gpu::firstKernelName(source.code);
    if (source.entry.empty()) throw CliError(kExitBadArguments, path + " defines no __global__ function");

    std::string arch = parser.value(QStringLiteral("arch")).toStdString();
    if (arch.empty()) {
        const std::vector<gpu::DeviceInfo> devices = gpu::listDevices();
        arch = devices.empty() ? "sm_90" : gpu::archOf(devices.front());
    }
    QStringList compiled, printed;  // a warning every depth gives is printed once
    for (int depth : depthsToCompile(parser, source.op)) {
        source.inputDepth = source.outputDepth = depth;
        const gpu::UserKernelBinary binary = gpu::compileUserKernel(source, arch);
        for (const gpu::Diagnostic& d : binary.diagnostics) {
            const QString line = QString::fromStdString(d.text());
            if (!printed.contains(line)) printError(line);
            printed << line;
        }
        if (!binary.ok)
            throw CliError(kExitBadArguments, QStringLiteral("'%1' does not compile for %2 with kl::In = %3")
                                                  .arg(QString::fromStdString(source.entry), QString::fromStdString(arch),
                                                       QString::fromStdString(depthName(depth))));
        compiled << QString::fromStdString(depthName(depth));
    }
    printLine(QStringLiteral("%1: '%2' compiles for %3 (%4)")
                  .arg(path, QString::fromStdString(source.entry), QString::fromStdString(arch),
                       compiled.join(QStringLiteral(", "))));
    return kExitOk;
}

} // namespace kl::cli
