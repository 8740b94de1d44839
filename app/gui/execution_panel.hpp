#pragma once
// Which backends run, on how many CPU threads, and how the GPU is timed, as op_config's
// backend parameters.
#include "op_config.hpp"

#include "kernellab/gpu/engine.hpp"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QSettings;
class QSpinBox;

namespace kl::gui {

class ExecutionPanel : public QWidget {
    Q_OBJECT
public:
    explicit ExecutionPanel(QWidget* parent = nullptr);

    /// backends, cpu-threads, memory, streams, repetitions, kernel-only.
    [[nodiscard]] app::ParameterMap parameters() const;
    /// Also run the GPU with the other host memory kinds ("pageable vs staged vs pinned").
    [[nodiscard]] bool compareMemory() const;
    /// Also run cpu-opencv on 1, 2, 4, … hardware threads ("CPU thread scaling").
    [[nodiscard]] bool threadScaling() const;
    [[nodiscard]] int cpuThreads() const;

    void setBackends(const std::vector<app::Backend>& backends);
    void setBackendEnabled(app::Backend backend, bool on);
    void setCpuThreads(int threads);
    void setThreadScaling(bool on);
    void setHostMemory(gpu::HostMemory memory);
    void setCompareMemory(bool on);
    void setStreams(int streams);
    void setRepetitions(int repetitions);  ///< 0: the engine's defaults
    void setKernelOnly(bool kernelOnly);
    /// What the engine said about the GPU ("available: NVIDIA H200" or why not).
    void setGpuStatus(const QString& text);

    void saveSettings(QSettings& settings) const;
    void restoreSettings(const QSettings& settings);

signals:
    void changed();

private:
    QCheckBox* cpuReference_ = nullptr;
    QCheckBox* cpuOpenCV_ = nullptr;
    QCheckBox* gpu_ = nullptr;
    QSpinBox* cpuThreads_ = nullptr;
    QCheckBox* threadScaling_ = nullptr;
    QComboBox* memory_ = nullptr;
    QCheckBox* compareMemory_ = nullptr;
    QSpinBox* streams_ = nullptr;
    QSpinBox* repetitions_ = nullptr;
    QComboBox* timing_ = nullptr;
    QLabel* gpuStatus_ = nullptr;
};

} // namespace kl::gui
