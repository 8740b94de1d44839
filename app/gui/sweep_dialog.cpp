#include "sweep_dialog.hpp"

#include "chart_series.hpp"

#include "kernellab/image.hpp"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QSpinBox>
#include <QThread>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace kl::gui {
namespace {

constexpr int kProgressSteps = 1000;
constexpr int kEngineWaitMs = 10;

double elements(const app::SweepRow& row)
{
    return double(1ull << row.log2Elements);
}

} // namespace

SweepDialog::SweepDialog(app::Op op, std::function<bool()> engineBusy, QWidget* parent)
    : QDialog(parent)
    , engineBusy_(std::move(engineBusy))
{
    setWindowTitle(tr("Size sweep"));
    auto* layout = new QVBoxLayout(this);

    fields_ = new QWidget;
    auto* form = new QFormLayout(fields_);
    op_ = new QComboBox;
    for (app::Op o : app::allOps()) op_->addItem(app::toString(o));
    depth_ = new QComboBox;
    depth_->addItems({QStringLiteral("u8"), QStringLiteral("u16"), QStringLiteral("f32")});
    depth_->setToolTip(tr("Of the generated images; conv1d's signals are f32"));
    auto* range = new QHBoxLayout;
    from_ = new QSpinBox;
    to_ = new QSpinBox;
    for (QSpinBox* s : {from_, to_}) {
        s->setRange(0, app::kMaxSweepLog2);
        s->setPrefix(QStringLiteral("2^"));
        range->addWidget(s);
    }
    from_->setValue(app::SweepSettings{}.fromLog2);
    to_->setValue(20);  // 2^26, the CLI's default, takes minutes on cpu-ref
    range->insertWidget(1, new QLabel(tr("to")));
    range->addWidget(new QLabel(tr("elements")), 1);
    auto* backends = new QHBoxLayout;
    cpuRef_ = new QCheckBox(app::toString(app::Backend::CpuReference));
    cpuOpenCV_ = new QCheckBox(app::toString(app::Backend::CpuOpenCV));
    gpu_ = new QCheckBox(tr("gpu (kernel alone, end to end pageable and pinned)"));
    cpuOpenCV_->setChecked(true);
    gpu_->setChecked(true);
    for (QCheckBox* c : {cpuRef_, cpuOpenCV_, gpu_}) backends->addWidget(c);
    backends->addStretch(1);
    auto* repetitions = new QHBoxLayout;
    cpuRepetitions_ = new QSpinBox;
    gpuRepetitions_ = new QSpinBox;
    cpuRepetitions_->setRange(1, 1000);
    gpuRepetitions_->setRange(1, 1000);
    cpuRepetitions_->setValue(app::SweepSettings{}.cpuRepetitions);
    gpuRepetitions_->setValue(app::SweepSettings{}.gpuRepetitions);
    repetitions->addWidget(new QLabel(tr("CPU")));
    repetitions->addWidget(cpuRepetitions_);
    repetitions->addWidget(new QLabel(tr("GPU")));
    repetitions->addWidget(gpuRepetitions_);
    repetitions->addStretch(1);
    form->addRow(tr("Operation"), op_);
    form->addRow(tr("Depth"), depth_);
    form->addRow(tr("Sizes"), range);
    form->addRow(tr("Backends"), backends);
    form->addRow(tr("Repetitions"), repetitions);
    layout->addWidget(fields_);
    connect(op_, &QComboBox::currentTextChanged, this,
            [this](const QString& name) { depth_->setEnabled(app::parseOp(name) != app::Op::Conv1D); });
    setOp(op);

    chart_ = new QChart;
    chart_->legend()->setAlignment(Qt::AlignRight);
    chart_->setTitle(tr("Median time per size (log-log); dashed: where the GPU starts to win"));
    chartView_ = new QChartView(chart_);
    chartView_->setRenderHint(QPainter::Antialiasing);
    chartView_->setMinimumSize(640, 360);
    layout->addWidget(chartView_, 1);
    crossover_ = new QLabel;
    crossover_->setWordWrap(true);
    crossover_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(crossover_);

    auto* bottom = new QHBoxLayout;
    status_ = new QLabel;
    status_->setWordWrap(true);
    progress_ = new QProgressBar;
    progress_->setRange(0, kProgressSteps);
    progress_->setMaximumWidth(260);
    bottom->addWidget(status_, 1);
    bottom->addWidget(progress_);
    layout->addLayout(bottom);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    run_ = buttons->addButton(tr("Run"), QDialogButtonBox::ActionRole);
    cancel_ = buttons->addButton(tr("Cancel sweep"), QDialogButtonBox::ActionRole);
    exportCsv_ = buttons->addButton(tr("Export CSV…"), QDialogButtonBox::ActionRole);
    exportPng_ = buttons->addButton(tr("Export PNG…"), QDialogButtonBox::ActionRole);
    layout->addWidget(buttons);
    connect(run_, &QPushButton::clicked, this, &SweepDialog::start);
    connect(cancel_, &QPushButton::clicked, this, &SweepDialog::cancel);
    connect(exportCsv_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export CSV"), QStringLiteral("sweep.csv"), tr("CSV (*.csv)"));
        if (!path.isEmpty()) exportCsv(path);
    });
    connect(exportPng_, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export PNG"), QStringLiteral("sweep.png"), tr("PNG (*.png)"));
        if (!path.isEmpty()) exportPng(path);
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &SweepDialog::reject);
    connect(&watcher_, &QFutureWatcher<SweepEnd>::finished, this, &SweepDialog::finish);

    setRunning(false);
    status_->setText(tr("Choose an operation, sizes and backends, then Run"));
    plot();
}

SweepDialog::~SweepDialog()
{
    cancelFlag_ = true;
    watcher_.waitForFinished();
}

void SweepDialog::setOp(app::Op op)
{
    op_->setCurrentText(app::toString(op));
}

void SweepDialog::setRange(int fromLog2, int toLog2)
{
    from_->setValue(fromLog2);
    to_->setValue(toLog2);
}

void SweepDialog::setCpuBackends(const std::vector<app::Backend>& backends)
{
    const auto has = [&](app::Backend b) { return std::find(backends.begin(), backends.end(), b) != backends.end(); };
    cpuRef_->setChecked(has(app::Backend::CpuReference));
    cpuOpenCV_->setChecked(has(app::Backend::CpuOpenCV));
}

void SweepDialog::setGpu(bool on)
{
    gpu_->setChecked(on);
}

app::SweepSettings SweepDialog::settings() const
{
    app::SweepSettings s;
    s.op = app::parseOp(op_->currentText());
    s.depth = parseDepth(depth_->currentText().toStdString());
    s.fromLog2 = from_->value();
    s.toLog2 = to_->value();
    s.cpuBackends.clear();
    if (cpuRef_->isChecked()) s.cpuBackends.push_back(app::Backend::CpuReference);
    if (cpuOpenCV_->isChecked()) s.cpuBackends.push_back(app::Backend::CpuOpenCV);
    s.gpu = gpu_->isChecked();
    s.cpuRepetitions = cpuRepetitions_->value();
    s.gpuRepetitions = gpuRepetitions_->value();
    return s;
}

void SweepDialog::start()
{
    if (isRunning()) return;
    const app::SweepSettings s = settings();
    try {
        app::validate(s);
    } catch (const std::exception& e) {
        status_->setText(tr("Not run: %1").arg(QString::fromUtf8(e.what())));
        return;
    }
    swept_ = s;
    rows_.clear();
    cancelFlag_ = false;
    plot();
    setRunning(true);
    status_->setText(tr("Sweeping %1…").arg(app::toString(s.op)));
    watcher_.setFuture(QtConcurrent::run([this, s] { return sweepInBackground(s); }));
}

void SweepDialog::cancel()
{
    cancelFlag_ = true;
}

void SweepDialog::reject()
{
    cancel();
    QDialog::reject();
}

SweepDialog::SweepEnd SweepDialog::sweepInBackground(app::SweepSettings settings)
{
    SweepEnd end;
    // The window's run was cancelled when this dialog opened; it may still be draining.
    while (engineBusy_ && engineBusy_()) {
        if (cancelFlag_) {
            end.cancelled = true;
            return end;
        }
        QThread::msleep(kEngineWaitMs);
    }
    if (settings.gpu && !app::sharedEngine(&end.noGpu)) settings.gpu = false;
    app::SweepControl control;
    control.cancel = &cancelFlag_;
    control.progress = [this](double fraction, const QString& what) {
        QMetaObject::invokeMethod(this, [this, fraction, what] {
            progress_->setValue(int(fraction * kProgressSteps));
            progress_->setFormat(what + QStringLiteral(" %p%"));
        }, Qt::QueuedConnection);
    };
    control.rowFinished = [this](const app::SweepRow& row) {
        QMetaObject::invokeMethod(this, [this, row] { addRow(row); }, Qt::QueuedConnection);
    };
    try {
        app::runSweep(settings, control);
    } catch (const kl::Cancelled&) {
        end.cancelled = true;
    } catch (const std::bad_alloc&) {
        end.error = tr("out of memory");
    } catch (const std::exception& e) {
        end.error = QString::fromUtf8(e.what());
    }
    return end;
}

void SweepDialog::addRow(const app::SweepRow& row)
{
    rows_.push_back(row);
    status_->setText(tr("Sweeping %1: %2 of %3 sizes")
                         .arg(app::toString(swept_.op))
                         .arg(rows_.size())
                         .arg(swept_.toLog2 - swept_.fromLog2 + 1));
    plot();
}

void SweepDialog::finish()
{
    const SweepEnd end = watcher_.result();
    setRunning(false);
    const int sizes = swept_.toLog2 - swept_.fromLog2 + 1;
    QString status = end.cancelled        ? tr("Cancelled after %1 of %2 sizes").arg(rows_.size()).arg(sizes)
                     : !end.error.isEmpty() ? tr("Failed: %1").arg(end.error)
                                            : tr("Done: %1 sizes").arg(rows_.size());
    const auto failed = std::find_if(rows_.begin(), rows_.end(), [](const app::SweepRow& r) { return !r.error.isEmpty(); });
    if (failed != rows_.end()) status += tr(" · %1 failed: %2").arg(failed->size(), failed->error);
    if (!end.noGpu.isEmpty()) status += tr(" · GPU columns are empty: %1").arg(end.noGpu);
    status_->setText(status);
    emit sweepFinished();
}

void SweepDialog::setRunning(bool running)
{
    running_ = running;
    fields_->setEnabled(!running);
    run_->setEnabled(!running);
    cancel_->setEnabled(running);
    exportCsv_->setEnabled(!running);
    exportPng_->setEnabled(!running);
    progress_->setVisible(running);
    progress_->setValue(0);
}

void SweepDialog::plot()
{
    clearChart(chart_);
    auto* xAxis = new QLogValueAxis;
    xAxis->setBase(2);
    xAxis->setLabelFormat(QStringLiteral("%g"));
    xAxis->setTitleText(tr("elements (log)"));
    auto* yAxis = new QLogValueAxis;
    yAxis->setLabelFormat(QStringLiteral("%g"));
    yAxis->setTitleText(tr("median ms (log)"));
    chart_->addAxis(xAxis, Qt::AlignBottom);
    chart_->addAxis(yAxis, Qt::AlignLeft);

    double lo = 0, hi = 0;
    const auto line = [&](const QString& name, const QColor& colour, const auto& ms) {
        QList<QPointF> points;
        for (const app::SweepRow& r : rows_) {
            const double v = ms(r);
            if (!(v > 0)) continue;  // not measured: a log axis has no zero
            points.append({elements(r), v});
            lo = lo > 0 ? std::min(lo, v) : v;
            hi = std::max(hi, v);
        }
        if (points.isEmpty()) return;
        auto* series = new QLineSeries;
        series->setName(name);
        series->setColor(colour);
        series->setPointsVisible(true);
        chart_->addSeries(series);
        series->attachAxis(xAxis);
        series->attachAxis(yAxis);
        replacePoints(series, points);
    };
    for (size_t i = 0; i < swept_.cpuBackends.size(); ++i)
        line(app::toString(swept_.cpuBackends[i]), cpuBackendColour(swept_.cpuBackends[i]),
             [i](const app::SweepRow& r) { return r.cpuMs[i]; });
    const std::vector<app::SweepGpuMeasure>& measures = app::sweepGpuMeasures();
    for (size_t m = 0; m < measures.size(); ++m)
        line(measures[m].label, gpuMeasureColour(m), [&measure = measures[m]](const app::SweepRow& r) { return r.*measure.ms; });

    const double padding = 1.25;  // keeps the end points off the frame
    xAxis->setRange(double(1ull << swept_.fromLog2) / padding, double(1ull << swept_.toLog2) * padding);
    const auto [yFrom, yTo] = hi > 0 ? wholeDecades(lo, hi) : std::pair{1e-3, 1.0};
    yAxis->setRange(yFrom, yTo);

    // The crossovers: a dashed vertical line in the measure's colour, and the CLI's sentence.
    QStringList crossovers;
    const bool anyGpu = std::any_of(rows_.begin(), rows_.end(), [](const app::SweepRow& r) { return r.kernelMs > 0; });
    for (size_t m = 0; anyGpu && m < measures.size(); ++m) {
        crossovers << app::crossoverText(swept_, rows_, measures[m]);
        const int i = app::crossover(rows_, measures[m]);
        if (i < 0) continue;
        auto* mark = new QLineSeries;
        mark->setName(tr("%1 wins from here").arg(measures[m].label));
        QPen pen(gpuMeasureColour(m));
        pen.setStyle(Qt::DashLine);
        pen.setWidthF(1.5);
        mark->setPen(pen);
        chart_->addSeries(mark);
        mark->attachAxis(xAxis);
        mark->attachAxis(yAxis);
        const double x = elements(rows_[size_t(i)]);
        replacePoints(mark, {{x, yAxis->min()}, {x, yAxis->max()}});
    }
    crossover_->setText(crossovers.join(QLatin1Char('\n')));
}

QString SweepDialog::statusText() const
{
    return status_->text();
}

QString SweepDialog::crossoverText() const
{
    return crossover_->text();
}

QXYSeries* SweepDialog::findSeries(const QString& name) const
{
    return gui::findSeries(chart_, name);
}

bool SweepDialog::exportCsv(const QString& path)
{
    QSaveFile file(path);
    const QByteArray csv = app::sweepCsv(swept_, rows_).toUtf8();
    if (!file.open(QIODevice::WriteOnly) || file.write(csv) != csv.size() || !file.commit()) {
        status_->setText(tr("Cannot write %1: %2").arg(path, file.errorString()));
        return false;
    }
    status_->setText(tr("Saved %1").arg(path));
    return true;
}

bool SweepDialog::exportPng(const QString& path)
{
    if (!chartView_->grab().save(path, "PNG")) {
        status_->setText(tr("Cannot write %1").arg(path));
        return false;
    }
    status_->setText(tr("Saved %1").arg(path));
    return true;
}

} // namespace kl::gui
