// One run of a user's compiled kernel (user_kernel.hpp): load, lay the op's buffers out as the
// contract says (docs/custom-kernels.md), a first run whose output is checked for writes outside
// it, then the engine's timing method. Meant for kernellab-worker's process: a launch that does
// not finish in time ends it.
#include "kernellab/gpu/user_kernel.hpp"

#include "../cuda_check.hpp"
#include "../resources.hpp"
#include "../stream_gate.hpp"

#include "kernellab/error.hpp"
#include "kernellab/user_kernel_args.hpp"

#include <opencv2/core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace kl::gpu {

namespace {

/// Bytes on each side of every output, filled with kGuardByte: a kernel that writes there wrote
/// outside its output (further out it may fault, which the run reports too).
constexpr size_t kGuardBytes = 64 << 10;
constexpr unsigned char kGuardByte = 0xA5;
/// A failure of the user's kernel itself, worded for its author.
[[noreturn]] void kernelFailed(const UserKernelJob& job, cudaError_t error)
{
    throw std::runtime_error("kernel '" + job.entry + "' failed: " + cudaGetErrorString(error) + " (" +
                             cudaGetErrorName(error) + ")");
}

class Library {
public:
    Library(const std::string& cubin, const std::string& symbol)
    {
        KL_CUDA_TRY(cudaLibraryLoadData(&library_, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
        KL_CUDA_TRY(cudaLibraryGetKernel(&kernel_, library_, symbol.c_str()));
    }
    ~Library() { KL_CUDA_TRY_NOTHROW(cudaLibraryUnload(library_)); }
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;
    [[nodiscard]] const void* function() const { return reinterpret_cast<const void*>(kernel_); }
    [[nodiscard]] cudaKernel_t kernel() const { return kernel_; }

private:
    cudaLibrary_t library_ = nullptr;
    cudaKernel_t kernel_ = nullptr;
};

/// A device buffer between two guard zones.
class GuardedBuffer {
public:
    explicit GuardedBuffer(size_t bytes) : bytes_(bytes), storage_(allocateDevice<unsigned char>(bytes + 2 * kGuardBytes))
    {
        KL_CUDA_TRY(cudaMemset(storage_.get(), kGuardByte, bytes + 2 * kGuardBytes));
    }
    [[nodiscard]] void* data() const { return storage_.get() + kGuardBytes; }
    [[nodiscard]] size_t bytes() const { return bytes_; }
    /// "" when both guards are intact, else where the first changed byte before and after is.
    [[nodiscard]] std::string damage(const std::string& what) const
    {
        std::vector<unsigned char> before(kGuardBytes), after(kGuardBytes);
        KL_CUDA_TRY(cudaMemcpy(before.data(), storage_.get(), kGuardBytes, cudaMemcpyDeviceToHost));
        KL_CUDA_TRY(cudaMemcpy(after.data(), storage_.get() + kGuardBytes + bytes_, kGuardBytes, cudaMemcpyDeviceToHost));
        const auto changed = [](unsigned char b) { return b != kGuardByte; };
        std::string text;
        const auto lastBefore = std::find_if(before.rbegin(), before.rend(), changed);
        if (lastBefore != before.rend())
            text = std::to_string(std::count_if(before.begin(), before.end(), changed)) + " bytes before " + what +
                   " (the nearest " + std::to_string(lastBefore - before.rbegin() + 1) + " bytes before its start)";
        const auto firstAfter = std::find_if(after.begin(), after.end(), changed);
        if (firstAfter != after.end())
            text += (text.empty() ? "" : " and ") + std::to_string(std::count_if(after.begin(), after.end(), changed)) +
                    " bytes after " + what + " (the first " + std::to_string(firstAfter - after.begin()) +
                    " bytes past its end)";
        return text;
    }

private:
    size_t bytes_;
    DevicePtr<unsigned char> storage_;
};

/// The op's device buffers and the argument struct its kernel takes.
struct Buffers {
    DevicePtr<unsigned char> input, taps;
    size_t inputPitch = 0;  ///< bytes; 0 for conv1d's planar signal
    std::unique_ptr<GuardedBuffer> output;
    size_t outputPitch = 0, outputRows = 0, outputRowBytes = 0;
    int width = 0, height = 0;  ///< the work domain the grid covers
    bool counters = false;      ///< histogram: output is counters, zeroed before every launch
    std::vector<unsigned char> arguments;
};

template <typename Args> void setArguments(Buffers& b, const Args& args)
{
    b.arguments.resize(sizeof args);
    std::memcpy(b.arguments.data(), &args, sizeof args);
}

Buffers prepareBuffers(const UserKernelJob& job)
{
    Buffers b;
    const cv::Mat& in = job.input;
    const size_t rowBytes = in.cols * in.elemSize(), elem = in.elemSize1();
    if (job.op == "conv1d") {
        b.input = allocateDevice<unsigned char>(in.total() * elem);
        b.inputPitch = 0;
    } else {
        b.inputPitch = rowPitch(rowBytes);
        b.input = allocateDevice<unsigned char>(b.inputPitch * size_t(in.rows));
    }
    if (!job.taps.empty()) {
        b.taps = allocateDevice<unsigned char>(job.taps.total() * sizeof(float));
        KL_CUDA_TRY(cudaMemcpy(b.taps.get(), job.taps.data, job.taps.total() * sizeof(float), cudaMemcpyHostToDevice));
    }
    const auto pitchElements = [](size_t pitch, size_t elemBytes) { return (long long)(pitch / elemBytes); };
    if (job.op == "conv2d") {
        const size_t outElem = CV_ELEM_SIZE1(job.outputDepth);
        b.outputRowBytes = size_t(in.cols) * in.channels() * outElem;
        b.outputPitch = rowPitch(b.outputRowBytes);
        b.outputRows = size_t(in.rows);
        b.output = std::make_unique<GuardedBuffer>(b.outputPitch * b.outputRows);
        Conv2dArgsOf<void, void> a{b.input.get(), b.output->data(), pitchElements(b.inputPitch, elem),
                                   pitchElements(b.outputPitch, outElem), in.rows, in.cols, in.channels(),
                                   reinterpret_cast<const float*>(b.taps.get()), job.taps.rows, job.taps.cols,
                                   job.border, job.borderValue};
        setArguments(b, a);
        b.width = in.cols;
        b.height = in.rows;
    } else if (job.op == "transpose") {
        b.outputRowBytes = size_t(in.rows) * in.elemSize();
        b.outputPitch = rowPitch(b.outputRowBytes);
        b.outputRows = size_t(in.cols);
        b.output = std::make_unique<GuardedBuffer>(b.outputPitch * b.outputRows);
        TransposeArgsOf<void> a{b.input.get(), b.output->data(), pitchElements(b.inputPitch, elem),
                                pitchElements(b.outputPitch, elem), in.rows, in.cols, in.channels()};
        setArguments(b, a);
        b.width = in.cols;
        b.height = in.rows;
    } else if (job.op == "conv1d") {
        b.outputRowBytes = size_t(job.outFrames) * sizeof(float);
        b.outputPitch = b.outputRowBytes;
        b.outputRows = size_t(in.rows);
        b.output = std::make_unique<GuardedBuffer>(b.outputPitch * b.outputRows);
        Conv1dArgs a{reinterpret_cast<const float*>(b.input.get()), static_cast<float*>(b.output->data()),
                     (long long)in.cols, (long long)job.outFrames, (long long)job.offset, in.rows,
                     reinterpret_cast<const float*>(b.taps.get()), int(job.taps.total())};
        setArguments(b, a);
        b.width = int(job.outFrames);
        b.height = in.rows;
    } else if (job.op == "histogram") {
        const int entries = in.channels() + (job.luminance ? 1 : 0);
        const size_t counters = size_t(entries) * size_t(job.binning.bins + 2);
        b.outputRowBytes = b.outputPitch = counters * sizeof(uint64_t);
        b.outputRows = 1;
        b.output = std::make_unique<GuardedBuffer>(b.outputRowBytes);
        b.counters = true;
        auto* counts = static_cast<unsigned long long*>(b.output->data());
        const size_t binCounters = size_t(entries) * size_t(job.binning.bins);
        HistogramArgsOf<void> a{b.input.get(), pitchElements(b.inputPitch, elem), in.rows, in.cols, in.channels(),
                                job.binning.bins, job.binning.lo, job.binning.hi, job.binning.scale,
                                job.binning.offset, entries, job.luminance, counts, counts + binCounters,
                                counts + binCounters + entries};
        setArguments(b, a);
        b.width = in.cols;
        b.height = in.rows;
    } else {
        throw InvalidArgument("op: '" + job.op + "' has no user kernels");
    }
    return b;
}

void upload(const UserKernelJob& job, const Buffers& b, const void* host, cudaStream_t stream)
{
    const cv::Mat& in = job.input;
    if (b.inputPitch == 0)
        KL_CUDA_TRY(cudaMemcpyAsync(b.input.get(), host, in.total() * in.elemSize(), cudaMemcpyHostToDevice, stream));
    else
        KL_CUDA_TRY(cudaMemcpy2DAsync(b.input.get(), b.inputPitch, host, in.cols * in.elemSize(), in.cols * in.elemSize(),
                                      size_t(in.rows), cudaMemcpyHostToDevice, stream));
}

void download(const Buffers& b, void* host, cudaStream_t stream)
{
    KL_CUDA_TRY(cudaMemcpy2DAsync(host, b.outputRowBytes, b.output->data(), b.outputPitch, b.outputRowBytes,
                                  b.outputRows, cudaMemcpyDeviceToHost, stream));
}

/// Waits for `stream`; a kernel still running after the job's time-out ends the process once the
/// outcome saying so is written (the context is lost to it).
void waitOrGiveUp(const UserKernelJob& job, cudaStream_t stream, const std::string& outcomeDir)
{
    const auto start = std::chrono::steady_clock::now();
    const auto limit = std::chrono::duration<double>(job.timeoutSeconds);
    cudaError_t status;
    while ((status = cudaStreamQuery(stream)) == cudaErrorNotReady) {
        if (std::chrono::steady_clock::now() - start > limit) {
            UserKernelOutcome outcome;
            char seconds[32];
            std::snprintf(seconds, sizeof seconds, "%g", job.timeoutSeconds);
            outcome.error = "kernel '" + job.entry + "' did not finish within " + seconds +
                            " s (--kernel-timeout); it was stopped";
            writeOutcome(outcome, outcomeDir);
            std::_Exit(3);
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (status != cudaSuccess) kernelFailed(job, status);
}

void runJob(const UserKernelJob& job, const std::string& outcomeDir, UserKernelOutcome& outcome)
{
    validateLaunch(job.launch);
    KL_CUDA_TRY(cudaSetDevice(job.device));
    const Library library(job.cubin, job.loweredName);
    Buffers b = prepareBuffers(job);

    const UserKernelLaunch& l = job.launch;
    const long long gridX = (b.width + l.tileWidth() - 1) / l.tileWidth();
    const long long gridY = (b.height + l.tileHeight() - 1) / l.tileHeight();
    if (gridY > 65535 || gridX > 0x7fffffffLL)
        throw InvalidArgument("tile: " + std::to_string(l.tileWidth()) + "x" + std::to_string(l.tileHeight()) +
                              " needs a grid of " + std::to_string(gridX) + "x" + std::to_string(gridY) +
                              " blocks; CUDA allows at most 65535 in y: use a taller tile");
    const dim3 grid{unsigned(gridX), unsigned(gridY)}, block{unsigned(l.blockX), unsigned(l.blockY)};

    KernelResources& r = outcome.resources;
    cudaFuncAttributes attributes{};
    KL_CUDA_TRY(cudaFuncGetAttributes(&attributes, library.function()));
    if (l.sharedBytes > 48 << 10)
        KL_CUDA_TRY(cudaKernelSetAttributeForDevice(library.kernel(), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                    l.sharedBytes, job.device));
    r.registers = attributes.numRegs;
    r.staticSharedBytes = int(attributes.sharedSizeBytes);
    r.localBytes = int(attributes.localSizeBytes);
    r.dynamicSharedBytes = l.sharedBytes;
    r.blockThreads = l.blockX * l.blockY;
    r.gridX = int(gridX);
    r.gridY = int(gridY);
    if (r.blockThreads > attributes.maxThreadsPerBlock)
        throw InvalidArgument("block: " + std::to_string(r.blockThreads) + " threads, but '" + job.entry + "' allows " +
                              std::to_string(attributes.maxThreadsPerBlock) + " (its registers: " +
                              std::to_string(r.registers) + " per thread)");
    KL_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.activeBlocksPerSM, library.function(), r.blockThreads,
                                                              size_t(l.sharedBytes)));
    int maxThreadsPerSM = 0;
    KL_CUDA_TRY(cudaDeviceGetAttribute(&maxThreadsPerSM, cudaDevAttrMaxThreadsPerMultiProcessor, job.device));
    r.occupancy = maxThreadsPerSM > 0 ? double(r.activeBlocksPerSM * r.blockThreads) / maxThreadsPerSM : 0;

    const Stream stream;
    const cudaStream_t s = stream.get();
    void* arguments[] = {b.arguments.data()};
    const auto launch = [&] {
        return cudaLaunchKernel(library.function(), grid, block, arguments, size_t(l.sharedBytes), s);
    };
    // Histogram counters start at zero in every run; the memset is queued before the timed span.
    const auto resetCounters = [&] {
        if (b.counters) KL_CUDA_TRY(cudaMemsetAsync(b.output->data(), 0, b.output->bytes(), s));
    };

    // The first run: its output is what the caller verifies. Unwritten output keeps the guard
    // pattern, so a kernel that skips pixels cannot pass by leaving zeros where zeros belong.
    upload(job, b, job.input.data, s);
    if (!b.counters) KL_CUDA_TRY(cudaMemsetAsync(b.output->data(), kGuardByte, b.output->bytes(), s));
    resetCounters();
    if (const cudaError_t launched = launch(); launched != cudaSuccess) kernelFailed(job, launched);
    waitOrGiveUp(job, s, outcomeDir);
    if (const std::string damage = b.output->damage("the output"); !damage.empty())
        throw std::runtime_error("kernel '" + job.entry + "' wrote outside its output: " + damage);
    std::vector<unsigned char> result(b.outputRowBytes * b.outputRows);
    download(b, result.data(), s);
    stream.synchronize();

    if (job.op == "histogram") {
        const int entries = job.input.channels() + (job.luminance ? 1 : 0), bins = job.binning.bins;
        const auto* device = reinterpret_cast<const uint64_t*>(result.data());
        for (int e = 0; e < entries; ++e) {
            outcome.counts.insert(outcome.counts.end(), device + size_t(e) * bins, device + size_t(e + 1) * bins);
            outcome.counts.push_back(device[size_t(entries) * bins + e]);            // out of range
            outcome.counts.push_back(device[size_t(entries) * bins + entries + e]);  // NaN
        }
    } else {
        const int type = job.op == "conv2d" ? CV_MAKETYPE(job.outputDepth, job.input.channels())
                                            : job.input.type();
        const cv::Mat wrapped = job.op == "transpose" ? cv::Mat(job.input.cols, job.input.rows, type, result.data())
                              : job.op == "conv1d"    ? cv::Mat(job.input.rows, int(job.outFrames), CV_32F, result.data())
                                                      : cv::Mat(job.input.rows, job.input.cols, type, result.data());
        outcome.output = wrapped.clone();
    }

    // Timed runs, as the engine times its own variants (pipeline.cpp).
    std::vector<double> h2d, kernel, d2h, total;
    Event e0, e1, e2, e3;
    if (job.endToEnd) {
        PinnedPtr<unsigned char> pinnedIn, pinnedOut;
        const void* hostIn = job.input.data;
        void* hostOut = result.data();
        if (job.pinned) {
            pinnedIn = allocatePinned<unsigned char>(job.input.total() * job.input.elemSize());
            pinnedOut = allocatePinned<unsigned char>(result.size());
            std::memcpy(pinnedIn.get(), job.input.data, job.input.total() * job.input.elemSize());
            hostIn = pinnedIn.get();
            hostOut = pinnedOut.get();
        }
        for (int i = 0; i < job.warmup + job.repetitions; ++i) {
            resetCounters();
            e0.record(s);
            upload(job, b, hostIn, s);
            e1.record(s);
            if (const cudaError_t launched = launch(); launched != cudaSuccess) kernelFailed(job, launched);
            e2.record(s);
            download(b, hostOut, s);
            e3.record(s);
            waitOrGiveUp(job, s, outcomeDir);
            if (i < job.warmup) continue;
            h2d.push_back(e1.millisecondsSince(e0));
            kernel.push_back(e2.millisecondsSince(e1));
            d2h.push_back(e3.millisecondsSince(e2));
            total.push_back(e3.millisecondsSince(e0));
        }
    } else {
        StreamGate gate;
        for (int i = 0; i < job.warmup + job.repetitions; ++i) {
            resetCounters();
            gate.hold(s);  // so the events bracket the kernel, not its launch
            e0.record(s);
            const cudaError_t launched = launch();
            e1.record(s);
            gate.release();
            if (launched != cudaSuccess) kernelFailed(job, launched);
            waitOrGiveUp(job, s, outcomeDir);
            if (gate.timedOut())
                throw std::runtime_error("kernel '" + job.entry + "': the stream gate timed out, so this time would "
                                         "include the launch; run again");
            if (i >= job.warmup) kernel.push_back(e1.millisecondsSince(e0));
        }
        total = kernel;
    }
    outcome.h2d = summarize(h2d);
    outcome.kernel = summarize(kernel);
    outcome.d2h = summarize(d2h);
    outcome.total = summarize(total);
}

} // namespace

UserKernelOutcome runUserKernel(const UserKernelJob& job, const std::string& outcomeDir)
{
    UserKernelOutcome outcome;
    try {
        runJob(job, outcomeDir, outcome);
    } catch (const std::exception& e) {
        outcome = UserKernelOutcome();
        outcome.error = e.what();
    }
    return outcome;
}

} // namespace kl::gpu
