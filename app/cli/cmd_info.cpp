// kernellab-cli info: what this machine offers (GPU devices or why there is none, CPU, versions).
#include "cli.hpp"

#include "kernellab/image.hpp"

#include <QJsonArray>
#include <QJsonDocument>

namespace kl::cli {

namespace {

QString describeDevice(const gpu::DeviceInfo& d)
{
    return QStringLiteral("GPU %1: %2\n"
                          "  compute capability %3.%4, %5 SMs, SM clock %6 MHz\n"
                          "  memory %7, L2 cache %8, memory clock %9 MHz x %10-bit bus\n"
                          "  theoretical memory bandwidth %11 GB/s")
        .arg(d.index)
        .arg(QString::fromStdString(d.name))
        .arg(d.computeMajor)
        .arg(d.computeMinor)
        .arg(d.multiprocessors)
        .arg(d.smClockKHz / 1000)
        .arg(QString::fromStdString(formatBytes(d.globalMemoryBytes)))
        .arg(QString::fromStdString(formatBytes(d.l2CacheBytes)))
        .arg(d.memoryClockKHz / 1000)
        .arg(d.memoryBusWidthBits)
        .arg(d.theoreticalBandwidthGBs, 0, 'f', 1);
}

} // namespace

int runInfo(const QStringList& arguments)
{
    QCommandLineParser parser;
    parser.addOption({QStringLiteral("json"), QStringLiteral("Print the information as JSON.")});
    if (!parseCommandLine(parser, arguments, QStringLiteral("kernellab-cli info: GPU devices, CPU and library versions.")))
        return kExitOk;

    const gpu::GpuStatus status = gpu::gpuStatus();
    const std::vector<gpu::DeviceInfo> devices = gpu::listDevices();
    const QJsonObject environment = app::environmentJson();

    if (parser.isSet(QStringLiteral("json"))) {
        QJsonArray deviceList;
        for (const gpu::DeviceInfo& d : devices) deviceList.append(app::toJson(d));
        QJsonObject variants;
        for (app::Op op : app::allOps()) {
            variants[app::toString(op)] = QJsonArray::fromStringList(app::gpuVariants(op));
        }
        const QJsonObject info{
            {QStringLiteral("gpu_status"),
             QJsonObject{{QStringLiteral("available"), status.available},
                         {QStringLiteral("reason"), status.available ? QJsonValue(QJsonValue::Null)
                                                                     : QJsonValue(QString::fromStdString(status.reason))}}},
            {QStringLiteral("devices"), deviceList},
            {QStringLiteral("variants"), variants},
            {QStringLiteral("environment"), environment}};
        std::fputs(QJsonDocument(info).toJson(QJsonDocument::Indented).constData(), stdout);
        return kExitOk;
    }

    if (!status.available) printLine("GPU: none (no CUDA device: " + QString::fromStdString(status.reason) + ")");
    for (const gpu::DeviceInfo& d : devices) printLine(describeDevice(d));
    for (app::Op op : app::allOps()) {
        printLine(QStringLiteral("GPU variants of %1: %2")
                      .arg(app::toString(op), app::gpuVariants(op).join(QStringLiteral(", "))));
        for (const gpu::VariantInfo& v : app::gpuVariantInfo(op))
            printLine(QStringLiteral("  %1  %2").arg(QString::fromStdString(v.name), -14).arg(QString::fromStdString(v.description)));
    }
    printLine(QStringLiteral("CPU: %1").arg(environment[QStringLiteral("cpu_model")].toString()));
    printLine(QStringLiteral("CPU threads: %1 hardware threads (the CPU backends' default; --cpu-threads N sets it)")
                  .arg(environment[QStringLiteral("hardware_threads")].toInt()));
    printLine(QStringLiteral("Qt %1, OpenCV %2, CUDA runtime %3, CUDA driver %4, cuFFT %5")
                  .arg(environment[QStringLiteral("qt")].toString(), environment[QStringLiteral("opencv")].toString(),
                       environment[QStringLiteral("cuda_runtime")].toString(),
                       environment[QStringLiteral("cuda_driver")].toString(), environment[QStringLiteral("cufft")].toString()));
    printLine(QStringLiteral("OS: %1, kernel %2, compiler %3")
                  .arg(environment[QStringLiteral("os")].toString(), environment[QStringLiteral("kernel")].toString(),
                       environment[QStringLiteral("compiler")].toString()));
    return kExitOk;
}

} // namespace kl::cli
