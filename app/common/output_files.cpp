#include "output_files.hpp"

#include "csv.hpp"
#include "ops.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image_io.hpp"
#include "kernellab/signal_io.hpp"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSaveFile>
#include <QStringList>

#include <opencv2/core.hpp>

namespace kl::app {

namespace {

OutputKind outputKind(const RunRequest& request) { return describe(request.op).outputKind(request); }

QString extensionOf(const QString& path) { return QLatin1Char('.') + QFileInfo(path).suffix().toLower(); }

const QStringList& writableSignalExtensions()
{
    static const QStringList extensions = {QStringLiteral(".wav"), QStringLiteral(".csv"), QStringLiteral(".npy")};
    return extensions;
}

QStringList imageExtensionList()
{
    QStringList list;
    for (const std::string& e : imageExtensions()) list << QString::fromStdString(e);
    return list;
}

} // namespace

void checkOutputPath(const QString& path, const RunRequest& request)
{
    const QFileInfo output(path), input(request.inputName);
    if (input.exists() && output.exists() && output.canonicalFilePath() == input.canonicalFilePath())
        throw InvalidArgument(QStringLiteral("output: '%1' is the input file; write the result elsewhere").arg(path).toStdString());
    const QString extension = extensionOf(path);
    QStringList allowed;
    switch (outputKind(request)) {
    case OutputKind::Image: allowed = imageExtensionList(); break;
    case OutputKind::Signal: allowed = writableSignalExtensions(); break;
    case OutputKind::Histogram: allowed = QStringList{QStringLiteral(".csv")}; break;
    }
    if (!allowed.contains(extension))
        throw InvalidArgument(QStringLiteral("output: '%1' has extension '%2'; a %3 output needs one of %4")
                                  .arg(path, extension, toString(request.op), allowed.join(QLatin1Char(' ')))
                                  .toStdString());
    if (outputKind(request) == OutputKind::Image) {
        // The result's depth and channels are known before any work: refuse a format that cannot hold them.
        try {
            requireWritableImage(path.toStdString(), describe(request.op).outputDepth(request), request.image.channels());
        } catch (const IoError& e) {
            throw InvalidArgument(std::string("output: ") + e.what());
        }
    }
}

BatchOutputPaths::BatchOutputPaths(const QString& dir, const ParameterMap& parameters)
    : dir_(dir), parameters_(parameters), op_(requestedOp(parameters))
{
}

QString BatchOutputPaths::pathFor(const QString& input)
{
    // A one-pixel stand-in for an image file gives the output's kind; a signal file's outputs do not
    // depend on the spec.
    RunRequest shape;
    shape.op = op_;
    if (!isSignalFile(input.toStdString())) shape.image = cv::Mat(1, 1, CV_8U);
    const QString own = extensionOf(input);
    QString extension;
    switch (outputKind(shape)) {
    case OutputKind::Histogram: extension = QStringLiteral(".csv"); break;
    case OutputKind::Signal: extension = writableSignalExtensions().contains(own) ? own : QStringLiteral(".wav"); break;
    case OutputKind::Image: {
        const bool floatOutput = imageOutputIsFloat();  // also when unused: bad parameters fail before any work
        bool holdsOutput = imageExtensionList().contains(own);
        if (holdsOutput && floatOutput) {
            try {
                requireWritableImage(input.toStdString(), CV_32F, 1);  // the f32 formats store 1, 3 and 4 channels alike
            } catch (const IoError&) {
                holdsOutput = false;
            }
        }
        extension = holdsOutput ? own : QStringLiteral(".tif");
        break;
    }
    }
    return QDir(dir_).filePath(QFileInfo(input).completeBaseName() + extension);
}

bool BatchOutputPaths::imageOutputIsFloat()
{
    if (!imageOutputIsFloat_) {
        // A one-pixel u8 stand-in gives the depth where the op's spec sets it (conv2d's float
        // output), the same for every input: configureRequest reads nothing of the image.
        RunRequest shape;
        shape.image = cv::Mat(1, 1, CV_8U);
        configureRequest(shape, parameters_);
        imageOutputIsFloat_ = describe(shape.op).outputDepth(shape) == CV_32F;
    }
    return *imageOutputIsFloat_;
}

void saveOutput(const QString& path, const BackendResult& result, const RunRequest& request)
{
    if (!result.ok())
        throw InvalidArgument(("output: backend " + toString(result.backend) + " failed: " + result.error).toStdString());
    const std::string file = path.toStdString();
    if (result.histogram) {
        writeFile(path, histogramCsv(*result.histogram).toUtf8());
    } else if (!result.image.empty()) {
        saveImage(file, result.image);
    } else if (!result.signal.empty()) {
        saveSignal(file, result.signal);
    } else {
        const Signal& s = request.signal;
        saveSignal(file, fromInterleaved(result.interleaved.data(), s.frames, s.channels, s.sampleRate));
    }
}

QByteArray reportBytes(const RunResult& result, ReportFormat format)
{
    return format == ReportFormat::Csv ? toCsv(result).toUtf8()
                                       : QJsonDocument(toJson(result)).toJson(QJsonDocument::Indented);
}

void saveReport(const QString& path, const RunResult& result, ReportFormat format)
{
    writeFile(path, reportBytes(result, format));
}

void writeFile(const QString& path, const QByteArray& contents)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(contents) != contents.size() || !file.commit())
        throw IoError(QStringLiteral("cannot write '%1': %2").arg(path, file.errorString()).toStdString());
}

QString histogramCsv(const HistogramResult& h)
{
    QStringList labels;
    for (const std::string& l : h.labels) labels << csvField(QString::fromStdString(l));
    auto joinedCounts = [](const std::vector<uint64_t>& counts) {
        QStringList list;
        for (uint64_t c : counts) list << QString::number(c);
        return list.join(QLatin1Char(','));
    };
    QString csv = QStringLiteral("# bins=%1 lo=%2 hi=%3\n")
                      .arg(h.binning.bins)
                      .arg(h.binning.lo, 0, 'g', 17)
                      .arg(h.binning.hi, 0, 'g', 17);
    csv += QStringLiteral("# out_of_range=%1\n").arg(joinedCounts(h.outOfRange));
    csv += QStringLiteral("# nan=%1\n").arg(joinedCounts(h.nanCount));
    csv += QStringLiteral("bin,lower,upper,") + labels.join(QLatin1Char(',')) + QLatin1Char('\n');
    const double width = (h.binning.hi - h.binning.lo) / h.binning.bins;
    for (int bin = 0; bin < h.binning.bins; ++bin) {
        QStringList row = {QString::number(bin), QString::number(h.binning.lo + bin * width, 'g', 10),
                           QString::number(h.binning.lo + (bin + 1) * width, 'g', 10)};
        for (const std::vector<uint64_t>& channel : h.counts) row << QString::number(channel[size_t(bin)]);
        csv += row.join(QLatin1Char(',')) + QLatin1Char('\n');
    }
    return csv;
}

} // namespace kl::app
