#include "engine_internal.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"

#include <algorithm>
#include <cstdlib>
#include <iterator>

namespace kl::gpu {

std::string toString(HostMemory m)
{
    switch (m) {
    case HostMemory::Pageable: return "pageable";
    case HostMemory::Staged: return "staged";
    case HostMemory::Pinned: return "pinned";
    }
    return "?";
}

HostMemory parseHostMemory(const std::string& name)
{
    for (HostMemory m : kHostMemories)
        if (name == toString(m)) return m;
    throw InvalidArgument("host memory: '" + name + "' is not one of pageable, staged, pinned");
}

std::string toString(Stage s)
{
    switch (s) {
    case Stage::H2D: return "h2d";
    case Stage::Kernel: return "kernel";
    case Stage::D2H: return "d2h";
    }
    return "?";
}

double GpuReport::kernelGBs() const { return kernel.medianMs > 0 ? kernelBytes / (kernel.medianMs * 1e6) : 0; }
double GpuReport::kernelGFlops() const { return kernel.medianMs > 0 ? kernelFlops / (kernel.medianMs * 1e6) : 0; }
double GpuReport::endToEndGBs() const
{
    return total.medianMs > 0 ? double(bytesH2D + bytesD2H) / (total.medianMs * 1e6) : 0;
}

double overlapLimitMs(const GpuReport& oneStream, int chunks, double bothWaysGBs)
{
    const double stages[] = {oneStream.h2d.medianMs, oneStream.kernel.medianMs, oneStream.d2h.medianMs};
    const double slowest = *std::max_element(std::begin(stages), std::end(stages));
    const double sum = stages[0] + stages[1] + stages[2];
    if (sum <= 0 || chunks < 1) return 0;
    const double link = bothWaysGBs > 0 ? double(oneStream.bytesH2D + oneStream.bytesD2H) / (bothWaysGBs * 1e6) : 0;
    return std::max(slowest + (sum - slowest) / chunks, link);
}

std::vector<VariantInfo> variantInfo(const std::string& op)
{
    if (op == "conv2d") return conv2dVariantInfo();
    if (op == "conv1d") return conv1dVariantInfo();
    if (op == "histogram") return histogramVariantInfo();
    if (op == "transpose") return transposeVariantInfo();
    throw InvalidArgument("op: '" + op + "' is not one of conv2d, conv1d, histogram, transpose");
}

std::vector<std::string> variants(const std::string& op)
{
    std::vector<std::string> names;
    for (const VariantInfo& v : variantInfo(op)) names.push_back(v.name);
    return names;
}

void validateRunOptions(const RunOptions& o)
{
    if (o.streams < 1 || o.streams > kMaxStreams)
        throw InvalidArgument("streams: " + std::to_string(o.streams) + " is not in 1.." + std::to_string(kMaxStreams));
    if (o.repetitions < 1) throw InvalidArgument("repetitions: " + std::to_string(o.repetitions) + " must be >= 1");
    if (o.warmup < 0) throw InvalidArgument("warmup: " + std::to_string(o.warmup) + " must be >= 0");
}

void Engine::Impl::activate() const { KL_CUDA_TRY(cudaSetDevice(deviceIndex)); }

const std::vector<Stream>& Engine::Impl::ensureStreams(int count)
{
    while (int(streams.size()) < count) streams.emplace_back();
    return streams;
}

Engine::Engine(int device) : impl_(std::make_unique<Impl>())
{
    const GpuStatus status = gpuStatus();
    if (!status.available) throw CudaError("no CUDA device: " + status.reason, 0);
    const std::vector<DeviceInfo> devices = listDevices();
    if (device < 0 || device >= int(devices.size()))
        throw InvalidArgument("device: " + std::to_string(device) + " does not exist (" +
                              std::to_string(devices.size()) + " visible)");
    impl_->deviceIndex = device;
    impl_->info = devices[size_t(device)];
    KL_CUDA_TRY(cudaGetDeviceProperties(&impl_->properties, device));
    if (const char* limit = std::getenv(kDeviceMemoryLimitVariable))
        impl_->cache.setDeviceLimit(parseByteSize(limit, kDeviceMemoryLimitVariable));
    impl_->activate();
}

Engine::~Engine() = default;
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;

const DeviceInfo& Engine::device() const { return impl_->info; }

void Engine::releaseCache()
{
    impl_->activate();
    impl_->fftPlans.clear();
    impl_->cache.clear();
}

Engine::DeviceMemory Engine::deviceMemory() const
{
    impl_->activate();
    DeviceMemory memory;
    memory.heldBytes = impl_->cache.deviceBytes();
    memory.limitBytes = impl_->cache.deviceLimit();
    size_t freeBytes = 0, totalBytes = 0;
    KL_CUDA_TRY(cudaMemGetInfo(&freeBytes, &totalBytes));
    memory.freeBytes = freeBytes;
    memory.totalBytes = totalBytes;
    return memory;
}

double Engine::measureCopyBandwidthGBs(uint64_t bytes)
{
    impl_->activate();
    const size_t half = size_t(bytes / 2);
    auto* a = static_cast<std::byte*>(impl_->cache.device("bandwidth.a", half));
    auto* b = static_cast<std::byte*>(impl_->cache.device("bandwidth.b", half));
    const cudaStream_t s = impl_->ensureStreams(1)[0].get();
    KL_CUDA_TRY(cudaMemsetAsync(a, 1, half, s));
    Event start, stop;
    std::vector<double> ms;
    for (int i = 0; i < 12; ++i) {
        start.record(s);
        KL_CUDA_TRY(cudaMemcpyAsync(b, a, half, cudaMemcpyDeviceToDevice, s));
        stop.record(s);
        impl_->streams[0].synchronize();
        if (i >= 2) ms.push_back(stop.millisecondsSince(start));  // first two are warm-up
    }
    impl_->cache.release("bandwidth.a");
    impl_->cache.release("bandwidth.b");
    // Each byte copied is read once and written once.
    return 2.0 * half / (summarize(ms).medianMs * 1e6);
}

Engine::TransferRates Engine::measureTransferGBs(HostMemory memory, uint64_t bytes)
{
    impl_->activate();
    const size_t n = size_t(bytes);
    auto* dev = static_cast<std::byte*>(impl_->cache.device("bandwidth.dev", n));
    std::vector<std::byte> pageable;
    std::byte* host = nullptr;
    if (memory == HostMemory::Pinned) {
        host = static_cast<std::byte*>(impl_->cache.pinned("bandwidth.host", n));
    } else {
        pageable.assign(n, std::byte{1});
        host = pageable.data();
    }
    const cudaStream_t s = impl_->ensureStreams(1)[0].get();
    if (memory == HostMemory::Staged && !impl_->staging) impl_->staging = std::make_unique<StagingRing>();
    const CopyRegion region{n, 1, n, n};
    auto time = [&](cudaMemcpyKind kind) {
        Event start, stop;
        std::vector<double> ms;
        for (int i = 0; i < 7; ++i) {
            start.record(s);
            const bool up = kind == cudaMemcpyHostToDevice;
            if (memory == HostMemory::Staged && up) impl_->staging->toDevice(dev, host, region, s);
            else if (memory == HostMemory::Staged) impl_->staging->toHost(host, dev, region, s);
            else if (up) KL_CUDA_TRY(cudaMemcpyAsync(dev, host, n, kind, s));
            else KL_CUDA_TRY(cudaMemcpyAsync(host, dev, n, kind, s));
            stop.record(s);
            impl_->streams[0].synchronize();
            if (i >= 2) ms.push_back(stop.millisecondsSince(start));
        }
        return double(n) / (summarize(ms).medianMs * 1e6);
    };
    TransferRates rates;
    rates.h2dGBs = time(cudaMemcpyHostToDevice);
    rates.d2hGBs = time(cudaMemcpyDeviceToHost);
    impl_->cache.release("bandwidth.dev");
    impl_->cache.release("bandwidth.host");
    return rates;
}

double Engine::measureFmaPeakGFlops() { return measureFmaPeak(*impl_); }

double Engine::copyBandwidthGBs()
{
    if (impl_->copyBandwidthGBs <= 0) impl_->copyBandwidthGBs = measureCopyBandwidthGBs();
    return impl_->copyBandwidthGBs;
}

double Engine::fmaPeakGFlops()
{
    if (impl_->fmaPeakGFlops <= 0) impl_->fmaPeakGFlops = measureFmaPeakGFlops();
    return impl_->fmaPeakGFlops;
}

double Engine::linkBothWaysGBs()
{
    if (impl_->linkBothWaysGBs > 0) return impl_->linkBothWaysGBs;
    impl_->activate();
    constexpr size_t n = size_t(64) << 20;
    auto* up = static_cast<std::byte*>(impl_->cache.device("link.up", n));
    auto* down = static_cast<std::byte*>(impl_->cache.device("link.down", n));
    auto* hostUp = static_cast<std::byte*>(impl_->cache.pinned("link.hostUp", n));
    auto* hostDown = static_cast<std::byte*>(impl_->cache.pinned("link.hostDown", n));
    const auto& streams = impl_->ensureStreams(2);
    const cudaStream_t a = streams[0].get(), b = streams[1].get();
    Event start, forked{cudaEventDisableTiming}, joined{cudaEventDisableTiming}, stop;
    std::vector<double> ms;
    for (int i = 0; i < 9; ++i) {
        start.record(a);
        forked.record(a);
        KL_CUDA_TRY(cudaStreamWaitEvent(b, forked.get(), 0));
        KL_CUDA_TRY(cudaMemcpyAsync(up, hostUp, n, cudaMemcpyHostToDevice, a));
        KL_CUDA_TRY(cudaMemcpyAsync(hostDown, down, n, cudaMemcpyDeviceToHost, b));
        joined.record(b);
        KL_CUDA_TRY(cudaStreamWaitEvent(a, joined.get(), 0));
        stop.record(a);
        stop.synchronize();
        if (i >= 2) ms.push_back(stop.millisecondsSince(start));
    }
    for (const char* role : {"link.up", "link.down", "link.hostUp", "link.hostDown"}) impl_->cache.release(role);
    impl_->linkBothWaysGBs = 2.0 * n / (summarize(ms).medianMs * 1e6);
    return impl_->linkBothWaysGBs;
}

GpuReport Engine::conv2d(const cv::Mat& input, const Conv2DSpec& spec, const RunOptions& options, cv::Mat& output)
{
    return runConv2d(*impl_, input, spec, options, output);
}

GpuReport Engine::conv1d(const Signal& input, const Conv1DSpec& spec, const RunOptions& options, Signal& output)
{
    return runConv1d(*impl_, input, spec, options, output);
}

GpuReport Engine::histogram(const cv::Mat& input, const HistogramSpec& spec, const RunOptions& options,
                            HistogramResult& output)
{
    return runHistogram(*impl_, input, spec, options, output);
}

GpuReport Engine::transpose(const cv::Mat& input, const RunOptions& options, cv::Mat& output)
{
    return runTranspose(*impl_, input, options, output);
}

GpuReport Engine::transposeSignal(const Signal& input, const RunOptions& options, std::vector<float>& interleaved)
{
    return runTransposeSignal(*impl_, input, options, interleaved);
}

} // namespace kl::gpu
