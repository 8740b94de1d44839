// histogram's tutorial variants, the first steps of the classic privatized histogram:
//   global-atomics  one thread per pixel, one 64-bit atomicAdd into the global
//                   histogram per value: every thread of the GPU contends for the
//                   same few hundred counters.
//   shared          each block counts a fixed span of pixels into its own 32-bit
//                   histogram in shared memory and adds it to the global one at the end.
// global-atomics is also what shared and optimized count with where one histogram does not fit
// a block's shared memory (globalAtomicsHistogramPlan).
#include "histogram_device.cuh"

#include <algorithm>

namespace kl::gpu {
namespace {

template <typename F>
__global__ void __launch_bounds__(kThreads)
    histogramGlobalAtomics(const typename F::T* __restrict__ image, PixelSpan span, BinRule rule,
                           unsigned long long* __restrict__ counts)
{
    const size_t p = span.first + size_t(blockIdx.x) * kThreads + threadIdx.x;
    if (p >= span.last) return;
    const int stride = rule.stride();
    forEachEntry<F>(image + p * F::channels, rule,
                    [&](int entry, int slot) { atomicAdd(counts + entry * stride + slot, 1ull); });
}

template <typename F>
__global__ void __launch_bounds__(kThreads)
    histogramShared(const typename F::T* __restrict__ image, PixelSpan span, BinRule rule, size_t pixelsPerBlock,
                    unsigned long long* __restrict__ counts)
{
    extern __shared__ unsigned hist[];
    const int stride = rule.stride(), slots = F::entries * stride;
    for (int i = threadIdx.x; i < slots; i += kThreads) hist[i] = 0;
    __syncthreads();
    const size_t begin = span.first + blockIdx.x * pixelsPerBlock;
    const size_t end = span.last - begin < pixelsPerBlock ? span.last : begin + pixelsPerBlock;
    for (size_t p = begin + threadIdx.x; p < end; p += kThreads)
        forEachEntry<F>(image + p * F::channels, rule,
                        [&](int entry, int slot) { atomicAdd(hist + entry * stride + slot, 1u); });
    __syncthreads();
    addToGlobal(hist, slots, 1, counts);
}

template <typename F>
void launchGlobalAtomics(const LaunchPlan&, const void* image, PixelSpan span, const BinRule& rule,
                         unsigned long long* counts, cudaStream_t stream)
{
    const size_t pixels = span.last - span.first;
    histogramGlobalAtomics<F><<<blocksFor(pixels, kThreads), kThreads, 0, stream>>>(
        static_cast<const typename F::T*>(image), span, rule, counts);
    KL_CHECK_LAUNCH();
}

template <typename F>
void launchShared(const LaunchPlan& plan, const void* image, PixelSpan span, const BinRule& rule,
                  unsigned long long* counts, cudaStream_t stream)
{
    const size_t pixels = span.last - span.first;
    histogramShared<F><<<blocksFor(pixels, plan.pixelsPerBlock), kThreads, plan.sharedBytes, stream>>>(
        static_cast<const typename F::T*>(image), span, rule, plan.pixelsPerBlock, counts);
    KL_CHECK_LAUNCH();
}

template <typename F> LaunchPlan globalAtomicsPlan(const HistogramProblem&, const BinRule&, const cudaDeviceProp&)
{
    LaunchPlan plan;
    plan.launch = launchGlobalAtomics<F>;
    return plan;
}

template <typename F>
LaunchPlan sharedPlan(const HistogramProblem& problem, const BinRule& rule, const cudaDeviceProp& device)
{
    if (histogramBytes<F>(rule) > device.sharedMemPerBlockOptin) return globalAtomicsPlan<F>(problem, rule, device);
    LaunchPlan plan;
    plan.launch = launchShared<F>;
    plan.sharedBytes = histogramBytes<F>(rule);
    // At least 8 pixels per counter the block has to zero and merge.
    plan.pixelsPerBlock = std::max<size_t>(16 * kThreads, 8 * (plan.sharedBytes / sizeof(unsigned)));
    allowSharedMemory(histogramShared<F>, plan.sharedBytes);
    return plan;
}

} // namespace

LaunchPlan globalAtomicsHistogramPlan(const HistogramProblem& problem, const BinRule& rule,
                                      const cudaDeviceProp& device)
{
    return KL_HISTOGRAM_PLAN(globalAtomicsPlan)(problem, rule, device);
}

HistogramVariant globalAtomicsHistogram()
{
    return {"global-atomics", "one 64-bit atomicAdd per value into the global histogram", nullptr,
            {globalAtomicsHistogramPlan}};
}

HistogramVariant sharedHistogram()
{
    return {"shared", "a 32-bit histogram per block in shared memory, merged into the global one at the end", nullptr,
            {KL_HISTOGRAM_PLAN(sharedPlan)}};
}

} // namespace kl::gpu
