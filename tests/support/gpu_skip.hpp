#pragma once
// The one skip rule of the gpu-labelled tests: without a usable CUDA device the test
// skips with "no CUDA device: <the runtime's reason>", which ctest's
// SKIP_REGULAR_EXPRESSION (tests/CMakeLists.txt) reports as skipped, never as passed.
#include "kernellab/gpu/engine.hpp"

#include <QtTest>

#include <string>

#define KL_SKIP_WITHOUT_GPU()                                                               \
    do {                                                                                    \
        const ::kl::gpu::GpuStatus klGpuStatus = ::kl::gpu::gpuStatus();                    \
        if (!klGpuStatus.available)                                                         \
            QSKIP(("no CUDA device: " + klGpuStatus.reason).c_str());                       \
    } while (false)
