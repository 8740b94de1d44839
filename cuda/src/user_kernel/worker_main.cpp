// kernellab-worker JOB_DIR: runs the user-kernel job in JOB_DIR (written by writeJob) and writes
// its outcome there. The app and the CLI start one per run and kill it when it overruns, so a
// kernel that hangs, faults or corrupts memory takes only this process with it.
#include "kernellab/gpu/user_kernel.hpp"

#include <cstdio>
#include <exception>

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: kernellab-worker JOB_DIR (the app and kernellab-cli start it)\n");
        return 2;
    }
    try {
        const kl::gpu::UserKernelOutcome outcome = kl::gpu::runUserKernel(kl::gpu::readJob(argv[1]), argv[1]);
        kl::gpu::writeOutcome(outcome, argv[1]);
        return outcome.error.empty() ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kernellab-worker: %s\n", e.what());
        return 2;
    }
}
