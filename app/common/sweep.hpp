#pragma once
// A size sweep: one op over sizes 2^from .. 2^to elements on the CPU backends and the GPU (the
// kernel alone, and end to end from pageable and from pinned memory), and where the GPU starts
// to win. The one engine path of kernellab-cli sweep and the GUI's Run → Size sweep….
#include "bench_request.hpp"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace kl::app {

constexpr int kMaxSweepLog2 = 34;

struct SweepSettings {
    Op op = Op::Conv2D;
    int fromLog2 = 10, toLog2 = 26;  ///< sizes 2^from .. 2^to elements, from <= to <= kMaxSweepLog2
    int depth = 0;                   ///< of the images, a CV_ depth (signals are f32)
    /// At least one: the GPU is checked against the first that succeeds, and wins where it beats the fastest.
    std::vector<Backend> cpuBackends = {Backend::CpuOpenCV};
    bool gpu = true;                 ///< also the GPU (the caller checks that there is one)
    std::string variant = "auto";
    int streams = 1;                 ///< of the end-to-end runs
    int gpuRepetitions = 10;
    int cpuRepetitions = 3;
    BenchOpSettings opSettings;
};
/// Throws kl::InvalidArgument naming what is wrong (the range, no CPU backend).
void validate(const SweepSettings& settings);

/// One size. Times are medians in ms; 0 where not measured (a failure, no GPU).
struct SweepRow {
    int log2Elements = 0;
    int cols = 0, rows = 0;      ///< images: cols x rows = 2^k, cols the larger
    size_t frames = 0;           ///< signals (conv1d)
    std::vector<double> cpuMs;   ///< per SweepSettings::cpuBackends
    double kernelMs = 0, pageableMs = 0, pinnedMs = 0;
    QString error;               ///< what failed here ("; "-separated); empty when all ran and agreed
    [[nodiscard]] QString size() const;        ///< "64x32", or the frames of a signal
    [[nodiscard]] double fastestCpuMs() const;  ///< 0 when no CPU backend ran
};

/// The GPU columns, as tables, plots and crossover lines name them.
struct SweepGpuMeasure {
    QString label;  ///< "GPU kernel alone", "GPU end to end (pageable)", "GPU end to end (pinned)"
    double SweepRow::*ms;
};
const std::vector<SweepGpuMeasure>& sweepGpuMeasures();

struct SweepControl {
    std::function<void(double fraction, const QString& what)> progress;  ///< before each size
    std::function<void(const SweepRow& row)> rowFinished;                ///< after each size
    const std::atomic<bool>* cancel = nullptr;
};

/// Runs every size in order, each as bench requests (bench_request.hpp): the CPU backends, then
/// the GPU kernel alone, checked against the first CPU result, and, when it agrees, end to end
/// from pageable and from pinned memory. A failure is recorded in its row, never thrown.
/// Throws kl::InvalidArgument for bad settings and kl::Cancelled when `cancel` becomes true (the
/// rows finished before it have been given to rowFinished).
void runSweep(const SweepSettings& settings, const SweepControl& control);

/// The first row from which `measure` beats the fastest CPU backend at every larger size too; -1 if none.
int crossover(const std::vector<SweepRow>& rows, const SweepGpuMeasure& measure);
/// "GPU kernel alone beats the CPU (cpu-opencv) from 2^14 elements (128x128) upwards", or that it does not.
QString crossoverText(const SweepSettings& settings, const std::vector<SweepRow>& rows, const SweepGpuMeasure& measure);

/// log2_elements, elements, width, height, frames, one <backend>_ms column per CPU backend
/// (cpu_opencv_ms), gpu_kernel_ms, gpu_end_to_end_pageable_ms, gpu_end_to_end_pinned_ms, ok, error.
QString sweepCsv(const SweepSettings& settings, const std::vector<SweepRow>& rows);

} // namespace kl::app
