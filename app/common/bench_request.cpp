#include "bench_request.hpp"

#include "op_config.hpp"

#include "kernellab/conv2d.hpp"

#include <algorithm>

namespace kl::app {

RunRequest benchRequest(Op op, const BenchOpSettings& s, int cols, int rows, int depth, size_t frames)
{
    ParameterMap map;
    map[QStringLiteral("op")] = toString(op);
    GenerateSpec input;
    input.channels = s.channels;
    if (op == Op::Conv1D) {
        input.image = false;
        input.frames = frames;
        input.rate = s.signalRate;
        map[QStringLiteral("preset")] = QStringLiteral("low-pass");
        map[QStringLiteral("taps")] = QString::number(s.taps);
        map[QStringLiteral("cutoff")] = QString::number(s.signalRate / 8);
    } else {
        input.cols = cols;
        input.rows = rows;
        input.depth = depth;
        input.imagePattern = s.imagePattern;
        if (op == Op::Conv2D) {
            map[QStringLiteral("preset")] = QStringLiteral("gaussian");
            map[QStringLiteral("size")] = QString::number(s.kernelSize);
        }
    }
    map[QStringLiteral("generate")] = toString(input);
    RunRequest request;
    loadInput(request, map);
    configureRequest(request, map);
    request.measureRoofs = false;
    return request;
}

WorkClass workClass(const RunRequest& request)
{
    switch (request.op) {
    case Op::Conv2D: {
        const cv::Mat& k = request.conv2d.kernel;
        if (k.rows <= kMemoryBoundKernelSide && k.cols <= kMemoryBoundKernelSide) return WorkClass::Memory;
        return std::max(k.rows, k.cols) <= kMemoryBoundTaps && separateKernel(k) ? WorkClass::Memory : WorkClass::Compute;
    }
    case Op::Conv1D:
        return request.conv1d.taps.size() <= size_t(kMemoryBoundTaps) ? WorkClass::Memory : WorkClass::Compute;
    case Op::Histogram:
    case Op::Transpose:
        break;
    }
    return WorkClass::Memory;
}

QString workClassRule()
{
    return QStringLiteral("memory-bound (conv2d kernels up to %1x%1, rank-1 kernels up to %2 taps a side, conv1d up to %2 "
                          "taps, histogram, transpose) to the device copy, compute-bound (larger kernels) to the fp32 FMA "
                          "peak")
        .arg(kMemoryBoundKernelSide)
        .arg(kMemoryBoundTaps);
}

BackendResult runBackend(const RunRequest& request, Backend backend, const std::atomic<bool>* cancel)
{
    RunRequest single = request;
    single.backends = {backend};
    RunControl control;
    control.cancel = cancel;
    RunResult result = execute(single, control);
    return std::move(result.results.front());
}

QString verify(const RunRequest& request, const BackendResult& actual, const BackendResult& reference)
{
    const std::optional<Comparison> c = compareResults(actual, reference);
    if (!c) return QStringLiteral("no output to compare");
    return disagreement(request, actual, reference, *c);
}

} // namespace kl::app
