#include "execution_panel.hpp"

#include "kernellab/cpu.hpp"
#include "kernellab/gpu/engine.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

namespace kl::gui {

ExecutionPanel::ExecutionPanel(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    layout->addLayout(form);
    cpuReference_ = new QCheckBox(tr("CPU reference (plain loops)"));
    cpuOpenCV_ = new QCheckBox(tr("CPU OpenCV (multi-threaded)"));
    gpu_ = new QCheckBox(tr("GPU (CUDA)"));
    for (QCheckBox* b : {cpuReference_, cpuOpenCV_, gpu_}) b->setChecked(true);
    cpuThreads_ = new QSpinBox;
    cpuThreads_->setRange(1, kMaxCpuThreads);
    cpuThreads_->setValue(hardwareThreads());
    cpuThreads_->setToolTip(tr("Threads of the CPU backends: cpu-opencv runs its parallel strips on them, "
                               "cpu-ref is single-threaded loops. The default is all hardware threads (%1 here).")
                                .arg(hardwareThreads()));
    threadScaling_ = new QCheckBox(tr("CPU thread scaling (run on 1, 2, 4, … threads)"));
    threadScaling_->setToolTip(tr("Also run cpu-opencv on 1, 2, 4, … up to all %1 hardware threads, each against "
                                  "the host memory bandwidth measured on as many threads")
                                   .arg(hardwareThreads()));
    gpuStatus_ = new QLabel;
    gpuStatus_->setWordWrap(true);
    memory_ = new QComboBox;
    for (gpu::HostMemory memory : gpu::kHostMemories) memory_->addItem(QString::fromStdString(gpu::toString(memory)));
    memory_->setToolTip(tr("Host buffers for GPU copies. pageable: the driver copies from your memory through its "
                           "own small buffers; staged: through a ring of pinned buffers, the host's memcpy on all "
                           "CPU threads overlapping the DMA; pinned: the data kept in pinned memory, which the DMA "
                           "engine reads and writes directly"));
    compareMemory_ = new QCheckBox(tr("Pageable vs staged vs pinned (run all three)"));
    streams_ = new QSpinBox;
    streams_->setRange(1, gpu::kMaxStreams);
    streams_->setToolTip(tr("CUDA streams the input's chunks are pipelined over, overlapping copies and kernels"));
    repetitions_ = new QSpinBox;
    repetitions_->setRange(0, 1000);
    repetitions_->setSpecialValueText(tr("default (CPU 3, GPU 10)"));
    repetitions_->setToolTip(tr("Timed runs per backend; the median, min and max are reported"));
    timing_ = new QComboBox;
    timing_->addItem(tr("End to end (copies + kernel)"));
    timing_->addItem(tr("Kernel only"));

    form->addRow(tr("Backends"), cpuReference_);
    form->addRow(QString(), cpuOpenCV_);
    form->addRow(QString(), gpu_);
    form->addRow(tr("CPU threads"), cpuThreads_);
    form->addRow(QString(), threadScaling_);
    form->addRow(tr("Host memory"), memory_);
    form->addRow(QString(), compareMemory_);
    form->addRow(tr("Streams"), streams_);
    form->addRow(tr("Repetitions"), repetitions_);
    form->addRow(tr("GPU timing"), timing_);
    // Outside the form: a wrapped label there does not get the height its text needs.
    layout->addWidget(gpuStatus_);

    for (QCheckBox* b : {cpuReference_, cpuOpenCV_, gpu_, threadScaling_, compareMemory_})
        connect(b, &QCheckBox::toggled, this, &ExecutionPanel::changed);
    for (QComboBox* c : {memory_, timing_}) connect(c, &QComboBox::currentIndexChanged, this, &ExecutionPanel::changed);
    for (QSpinBox* s : {cpuThreads_, streams_, repetitions_})
        connect(s, &QSpinBox::valueChanged, this, &ExecutionPanel::changed);
}

app::ParameterMap ExecutionPanel::parameters() const
{
    QStringList backends;
    if (cpuReference_->isChecked()) backends << app::toString(app::Backend::CpuReference);
    if (cpuOpenCV_->isChecked()) backends << app::toString(app::Backend::CpuOpenCV);
    if (gpu_->isChecked()) backends << app::toString(app::Backend::Gpu);
    app::ParameterMap p;
    p[QStringLiteral("backends")] = backends.join(QLatin1Char(','));
    p[QStringLiteral("cpu-threads")] = QString::number(cpuThreads_->value());
    p[QStringLiteral("memory")] = memory_->currentText();
    p[QStringLiteral("streams")] = QString::number(streams_->value());
    if (repetitions_->value() > 0) p[QStringLiteral("repetitions")] = QString::number(repetitions_->value());
    p[QStringLiteral("kernel-only")] = timing_->currentIndex() == 1 ? QStringLiteral("true") : QStringLiteral("false");
    return p;
}

bool ExecutionPanel::compareMemory() const
{
    return compareMemory_->isChecked();
}

bool ExecutionPanel::threadScaling() const
{
    return threadScaling_->isChecked();
}

int ExecutionPanel::cpuThreads() const
{
    return cpuThreads_->value();
}

void ExecutionPanel::setBackends(const std::vector<app::Backend>& backends)
{
    for (app::Backend b : {app::Backend::CpuReference, app::Backend::CpuOpenCV, app::Backend::Gpu})
        setBackendEnabled(b, std::find(backends.begin(), backends.end(), b) != backends.end());
}

void ExecutionPanel::setBackendEnabled(app::Backend backend, bool on)
{
    switch (backend) {
    case app::Backend::CpuReference: cpuReference_->setChecked(on); break;
    case app::Backend::CpuOpenCV: cpuOpenCV_->setChecked(on); break;
    case app::Backend::Gpu: gpu_->setChecked(on); break;
    }
}

void ExecutionPanel::setCpuThreads(int threads)
{
    cpuThreads_->setValue(threads);
}

void ExecutionPanel::setThreadScaling(bool on)
{
    threadScaling_->setChecked(on);
}

void ExecutionPanel::setHostMemory(gpu::HostMemory memory)
{
    memory_->setCurrentText(QString::fromStdString(gpu::toString(memory)));
}

void ExecutionPanel::setCompareMemory(bool on)
{
    compareMemory_->setChecked(on);
}

void ExecutionPanel::setStreams(int streams)
{
    streams_->setValue(streams);
}

void ExecutionPanel::setRepetitions(int repetitions)
{
    repetitions_->setValue(repetitions);
}

void ExecutionPanel::setKernelOnly(bool kernelOnly)
{
    timing_->setCurrentIndex(kernelOnly ? 1 : 0);
}

void ExecutionPanel::setGpuStatus(const QString& text)
{
    gpuStatus_->setText(text);
}

void ExecutionPanel::saveSettings(QSettings& settings) const
{
    settings.setValue(QStringLiteral("execution/cpuReference"), cpuReference_->isChecked());
    settings.setValue(QStringLiteral("execution/cpuOpenCV"), cpuOpenCV_->isChecked());
    settings.setValue(QStringLiteral("execution/gpu"), gpu_->isChecked());
    settings.setValue(QStringLiteral("execution/cpuThreads"), cpuThreads_->value());
    settings.setValue(QStringLiteral("execution/threadScaling"), threadScaling_->isChecked());
    settings.setValue(QStringLiteral("execution/memory"), memory_->currentIndex());
    settings.setValue(QStringLiteral("execution/compareMemory"), compareMemory_->isChecked());
    settings.setValue(QStringLiteral("execution/streams"), streams_->value());
    settings.setValue(QStringLiteral("execution/repetitions"), repetitions_->value());
    settings.setValue(QStringLiteral("execution/kernelOnly"), timing_->currentIndex() == 1);
}

void ExecutionPanel::restoreSettings(const QSettings& settings)
{
    cpuReference_->setChecked(settings.value(QStringLiteral("execution/cpuReference"), true).toBool());
    cpuOpenCV_->setChecked(settings.value(QStringLiteral("execution/cpuOpenCV"), true).toBool());
    gpu_->setChecked(settings.value(QStringLiteral("execution/gpu"), true).toBool());
    cpuThreads_->setValue(settings.value(QStringLiteral("execution/cpuThreads"), hardwareThreads()).toInt());
    threadScaling_->setChecked(settings.value(QStringLiteral("execution/threadScaling"), false).toBool());
    memory_->setCurrentIndex(settings.value(QStringLiteral("execution/memory"), 0).toInt());
    compareMemory_->setChecked(settings.value(QStringLiteral("execution/compareMemory"), false).toBool());
    streams_->setValue(settings.value(QStringLiteral("execution/streams"), 1).toInt());
    repetitions_->setValue(settings.value(QStringLiteral("execution/repetitions"), 0).toInt());
    setKernelOnly(settings.value(QStringLiteral("execution/kernelOnly"), false).toBool());
}

} // namespace kl::gui
