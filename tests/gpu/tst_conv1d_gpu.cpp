// GPU conv1d against the CPU reference (kl::conv1dReference) and a double-precision
// direct sum: every variant, mode and channel count 1..3 on random signals, kernels
// longer than the signal, taps across the constant-memory and tap-tile limits, one
// 2^20-tap fft run, output independence from streams and host memory, kernel-only
// mode, the variant-name error, and kernel-only timings that set the auto crossover.
// Criteria (kernellab/acceptance.hpp): max|gpu - ref| / max|ref| within kFloatRelTolerance for
// the direct variants, kFftRelTolerance for fft.
#include "kernellab/conv1d.hpp"
#include "kernellab/error.hpp"
#include "kernellab/gpu/engine.hpp"
#include "gpu_skip.hpp"
#include "test_support.hpp"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using kl::Conv1DMode;
using kl::gpu::HostMemory;
using kltest::msg;

namespace {

constexpr double kRate = 1000.0;
const Conv1DMode kModes[] = {Conv1DMode::Full, Conv1DMode::Same, Conv1DMode::Valid};

double tolerance(const std::string& variant)
{
    return variant == "fft" ? kl::kFftRelTolerance : kl::kFloatRelTolerance;
}

kl::Conv1DSpec randomSpec(size_t taps, Conv1DMode mode, uint64_t seed)
{
    kl::Conv1DSpec spec;
    spec.taps = kltest::randomSignal(taps, 1, kRate, seed).data;
    spec.mode = mode;
    return spec;
}

/// The first `channels` channels (planar: a prefix of the data).
kl::Signal firstChannels(const kl::Signal& s, int channels)
{
    kl::Signal out(channels, s.frames, s.sampleRate);
    std::copy_n(s.data.begin(), out.data.size(), out.data.begin());
    return out;
}

/// full[offset + i] of channel c, summed in double straight from the definition.
double exactSample(const kl::Signal& s, int c, const kl::Conv1DSpec& spec, size_t i)
{
    const size_t n = s.frames, m = spec.taps.size();
    const size_t t = kl::conv1dOutputOffset(n, m, spec.mode) + i;
    const size_t first = t >= m - 1 ? t - (m - 1) : 0, last = std::min(t, n - 1);
    double sum = 0;
    for (size_t k = first; k <= last; ++k) sum += double(s.channel(c)[k]) * double(spec.taps[t - k]);
    return sum;
}

std::vector<double> exactConvolution(const kl::Signal& s, const kl::Conv1DSpec& spec)
{
    const size_t length = kl::conv1dOutputLength(s.frames, spec.taps.size(), spec.mode);
    std::vector<double> out(size_t(s.channels) * length);
    for (int c = 0; c < s.channels; ++c)
        for (size_t i = 0; i < length; ++i) out[size_t(c) * length + i] = exactSample(s, c, spec, i);
    return out;
}

/// max|a - ref| / max|ref| over the first `count` samples.
template <typename Ref> double relativeError(const std::vector<float>& a, const std::vector<Ref>& ref, size_t count)
{
    double diff = 0, scale = 0;
    for (size_t i = 0; i < count; ++i) {
        diff = std::max(diff, std::abs(double(a[i]) - double(ref[i])));
        scale = std::max(scale, std::abs(double(ref[i])));
    }
    return diff / std::max(scale, 1e-30);
}

std::string describe(size_t frames, size_t taps, Conv1DMode mode, int channels, const std::string& variant)
{
    return variant + " " + kl::toString(mode) + " frames " + std::to_string(frames) + " taps " + std::to_string(taps) +
           " x" + std::to_string(channels);
}

} // namespace

class TestConv1dGpu : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<kl::gpu::Engine> engine_;
    double worstFftError_ = 0;

    kl::Signal run(const kl::Signal& in, const kl::Conv1DSpec& spec, const std::string& variant, int streams = 1,
                   HostMemory memory = HostMemory::Pageable, bool endToEnd = true, kl::gpu::GpuReport* report = nullptr)
    {
        kl::gpu::RunOptions options;
        options.variant = variant;
        options.streams = streams;
        options.minChunkBytes = 0;  // 4 chunks per stream on small inputs too: chunk boundaries
        options.memory = memory;
        options.endToEnd = endToEnd;
        options.repetitions = 1;
        options.warmup = 0;
        kl::Signal out;
        const kl::gpu::GpuReport r = engine_->conv1d(in, spec, options, out);
        if (report) *report = r;
        return out;
    }

    /// Runs every variant on `signal` and checks it against the reference (and the exact sums when given).
    void checkAllVariants(const kl::Signal& signal, const kl::Conv1DSpec& spec, const kl::Signal& ref,
                          const std::vector<double>& exact, int channels)
    {
        const kl::Signal in = firstChannels(signal, channels);
        const size_t count = size_t(channels) * ref.frames;
        for (const std::string& variant : kl::gpu::variants("conv1d")) {
            const kl::Signal out = run(in, spec, variant);
            const std::string what = describe(signal.frames, spec.taps.size(), spec.mode, channels, variant);
            QVERIFY2(out.channels == channels && out.frames == ref.frames, msg(what + ": wrong output shape"));
            QCOMPARE(out.sampleRate, signal.sampleRate);
            const double err = relativeError(out.data, ref.data, count);
            if (variant == "fft") worstFftError_ = std::max(worstFftError_, err);
            QVERIFY2(err <= tolerance(variant), msg(what + ": error vs reference " + std::to_string(err)));
            if (!exact.empty()) {
                const double errExact = relativeError(out.data, exact, count);
                QVERIFY2(errExact <= tolerance(variant), msg(what + ": error vs double " + std::to_string(errExact)));
            }
        }
    }

private slots:
    void initTestCase()
    {
        KL_SKIP_WITHOUT_GPU();
        engine_ = std::make_unique<kl::gpu::Engine>();
        qInfo("device: %s", engine_->device().name.c_str());
    }

    void cleanupTestCase()
    {
        if (engine_) qInfo("worst fft error vs reference (relative to max|ref|): %.3g", worstFftError_);
    }

    void matchesReference_data()
    {
        QTest::addColumn<qulonglong>("frames");
        QTest::addColumn<qulonglong>("taps");
        for (qulonglong frames : {1ull, 2ull, 97ull, 1021ull, 100003ull})
            for (qulonglong taps : {1ull, 2ull, 15ull, 127ull, 1023ull, 8191ull})
                QTest::addRow("n%llu-m%llu", frames, taps) << frames << taps;
        // Kernels longer than the signal, and taps on both sides of the constant-memory limit.
        const std::pair<qulonglong, qulonglong> extra[] = {{97, 195}, {1021, 2043}, {1021, 16384}, {1021, 16385}, {97, 40000}};
        for (const auto& [frames, taps] : extra) QTest::addRow("n%llu-m%llu", frames, taps) << frames << taps;
    }

    void matchesReference()
    {
        QFETCH(qulonglong, frames);
        QFETCH(qulonglong, taps);
        const kl::Signal signal = kltest::randomSignal(frames, 3, kRate, frames * 31 + taps);
        for (Conv1DMode mode : kModes) {
            const kl::Conv1DSpec spec = randomSpec(taps, mode, taps * 17 + 5);
            const kl::Signal ref = kl::conv1dReference(signal, spec);
            const std::vector<double> exact = frames * taps <= 20'000'000 ? exactConvolution(signal, spec)
                                                                           : std::vector<double>{};
            for (int channels : {1, 2, 3}) {
                checkAllVariants(signal, spec, ref, exact, channels);
                if (QTest::currentTestFailed()) return;
            }
        }
    }

    /// 2^20 taps through fft only, spot-checked against double sums (scale: max|output|).
    void longKernelFft()
    {
        const size_t frames = 16'000'000, taps = kl::kMaxConv1DTaps;  // 2^23-point blocks (hop 2^23 - 2^20 + 1)
        const kl::Signal signal = kltest::randomSignal(frames, 1, kRate, 7);
        for (Conv1DMode mode : kModes) {
            const kl::Conv1DSpec spec = randomSpec(taps, mode, 11);
            const kl::Signal out = run(signal, spec, "fft");
            QCOMPARE(out.frames, kl::conv1dOutputLength(frames, taps, mode));
            double scale = 0;
            for (float v : out.data) scale = std::max(scale, double(std::abs(v)));
            double err = 0;
            const size_t n = out.frames;
            // Ends, the middle, and both sides of the first two block boundaries (hop 7'340'033).
            for (size_t i : {size_t(0), size_t(1), n / 7, n / 2, size_t(7'340'032), size_t(7'340'033), size_t(14'680'065),
                             size_t(14'680'066), n - 2, n - 1})
                if (i < n) err = std::max(err, std::abs(double(out.data[i]) - exactSample(signal, 0, spec, i)));
            err /= scale;
            worstFftError_ = std::max(worstFftError_, err);
            qInfo("2^20 taps %s: spot-check error %.3g (max|out| %.1f)", kl::toString(mode).c_str(), err, scale);
            QVERIFY2(err <= kl::kFftRelTolerance, msg(kl::toString(mode) + ": error " + std::to_string(err)));
            if (mode == Conv1DMode::Same) {
                const kl::Signal split = run(signal, spec, "fft", 2, HostMemory::Pinned);
                QVERIFY(split.data == out.data);
            }
        }
    }

    /// Streams 1 vs 2/4/16 and pinned vs pageable give bit-identical output for every variant.
    void streamsAndHostMemoryKeepOutput_data()
    {
        QTest::addColumn<qulonglong>("frames");
        QTest::addColumn<int>("channels");
        QTest::addColumn<qulonglong>("taps");
        QTest::addColumn<bool>("checkReference");
        QTest::newRow("8M-mono-m127") << 8'000'000ull << 1 << 127ull << true;  // several fft units per channel
        QTest::newRow("100003-x3-m1023") << 100'003ull << 3 << 1023ull << false;
        QTest::newRow("1000003-x2-m31") << 1'000'003ull << 2 << 31ull << false;
        QTest::newRow("5000-x20-m300") << 5000ull << 20 << 300ull << false;  // more channels than chunks
    }

    void streamsAndHostMemoryKeepOutput()
    {
        QFETCH(qulonglong, frames);
        QFETCH(int, channels);
        QFETCH(qulonglong, taps);
        QFETCH(bool, checkReference);
        const kl::Signal signal = kltest::randomSignal(frames, channels, kRate, 99);
        const kl::Conv1DSpec spec = randomSpec(taps, Conv1DMode::Same, 3);
        const kl::Signal ref = checkReference ? kl::conv1dReference(signal, spec) : kl::Signal{};
        for (const std::string& variant : kl::gpu::variants("conv1d")) {
            const kl::Signal base = run(signal, spec, variant);
            if (checkReference) {
                const double err = relativeError(base.data, ref.data, ref.data.size());
                if (variant == "fft") worstFftError_ = std::max(worstFftError_, err);
                QVERIFY2(err <= tolerance(variant), msg(variant + ": error " + std::to_string(err)));
            }
            for (int streams : {1, 2, 4, 16})
                for (HostMemory memory : {HostMemory::Pageable, HostMemory::Pinned}) {
                    if (streams == 1 && memory == HostMemory::Pageable) continue;
                    const kl::Signal out = run(signal, spec, variant, streams, memory);
                    QVERIFY2(out.data == base.data, msg(variant + " streams " + std::to_string(streams) + " " +
                                                        kl::gpu::toString(memory) + ": output differs"));
                }
        }
    }

    void kernelOnlyMode()
    {
        const kl::Signal signal = kltest::randomSignal(100'003, 2, kRate, 5);
        const kl::Conv1DSpec spec = randomSpec(255, Conv1DMode::Full, 6);
        for (const std::string& variant : kl::gpu::variants("conv1d")) {
            const kl::Signal endToEnd = run(signal, spec, variant);
            kl::gpu::GpuReport report;
            const kl::Signal kernelOnly = run(signal, spec, variant, 4, HostMemory::Pinned, false, &report);
            QVERIFY2(kernelOnly.data == endToEnd.data, msg(variant));
            QVERIFY(report.kernel.medianMs > 0);
            QCOMPARE(report.total.medianMs, 0.0);
            QCOMPARE(report.variant, variant);
            QCOMPARE(report.kernelBytes, uint64_t(signal.data.size() + endToEnd.data.size() + 255) * sizeof(float));
        }
    }

    void badVariantListsValidNames()
    {
        kl::gpu::RunOptions options;
        options.variant = "winograd";
        kl::Signal out;
        try {
            engine_->conv1d(kltest::randomSignal(10, 1, kRate, 1), randomSpec(3, Conv1DMode::Same, 2), options, out);
            QFAIL("no exception");
        } catch (const kl::InvalidArgument& e) {
            const std::string what = e.what();
            for (const char* name : {"auto", "naive", "shared", "fft", "winograd"})
                QVERIFY2(what.find(name) != std::string::npos, e.what());
        }
    }

    /// shared sums each output's taps in naive's order, so the two agree bit for bit: warp
    /// streams, block tiles with constant taps (one tap tile and several) and staged taps, odd
    /// lengths, several channels.
    void sharedEqualsNaive()
    {
        const std::pair<size_t, size_t> cases[] = {{1021, 15}, {4099, 66}, {100003, 127}, {20011, 2043}, {1021, 16385}};
        for (const auto& [frames, taps] : cases)
            for (Conv1DMode mode : {Conv1DMode::Same, Conv1DMode::Full})
                for (int channels : {1, 3}) {
                    const kl::Signal signal = kltest::randomSignal(frames, channels, kRate, frames + taps);
                    const kl::Conv1DSpec spec = randomSpec(taps, mode, taps + 1);
                    const kl::Signal naive = run(signal, spec, "naive"), shared = run(signal, spec, "shared");
                    QVERIFY2(naive.data == shared.data, msg(describe(frames, taps, mode, channels, "shared") +
                                                            ": differs from naive"));
                }
    }

    /// Small sizes through every variant and code path: the compute-sanitizer target.
    void smallRunOfEveryVariant()
    {
        struct Case { size_t frames; int channels; size_t taps; Conv1DMode mode; };
        const Case cases[] = {{1000, 2, 37, Conv1DMode::Full}, {1000, 2, 37, Conv1DMode::Same},
                              {1000, 2, 37, Conv1DMode::Valid}, {5, 1, 40, Conv1DMode::Same},
                              {3001, 2, 127, Conv1DMode::Same},        // block tiles, taps in constant memory
                              {16400, 1, 16390, Conv1DMode::Valid}};  // taps streamed through shared memory
        for (const Case& c : cases) {
            const kl::Signal signal = kltest::randomSignal(c.frames, c.channels, kRate, c.taps);
            const kl::Conv1DSpec spec = randomSpec(c.taps, c.mode, c.frames);
            const kl::Signal ref = kl::conv1dReference(signal, spec);
            for (const std::string& variant : kl::gpu::variants("conv1d")) {
                const std::string what = describe(c.frames, c.taps, c.mode, c.channels, variant);
                for (int streams : {1, 2}) {
                    const kl::Signal out = run(signal, spec, variant, streams, HostMemory::Pinned);
                    QVERIFY2(relativeError(out.data, ref.data, ref.data.size()) <= tolerance(variant), msg(what));
                }
                const kl::Signal kernelOnly = run(signal, spec, variant, 1, HostMemory::Pageable, false);
                QVERIFY2(relativeError(kernelOnly.data, ref.data, ref.data.size()) <= tolerance(variant), msg(what));
            }
        }
    }

    /// Kernel-only medians on a 16M-sample mono signal: the numbers behind the auto crossover.
    void timingForAutoCrossover()
    {
        const kl::Signal signal = kltest::randomSignal(size_t(1) << 24, 1, kRate, 1234);
        for (size_t taps : {15, 31, 63, 127, 255, 511, 1023, 8191}) {
            const kl::Conv1DSpec spec = randomSpec(taps, Conv1DMode::Same, taps);
            std::string line = "16M mono, taps " + std::to_string(taps) + ":";
            for (const std::string& variant : {std::string("naive"), std::string("shared"), std::string("fft"),
                                               std::string("auto")}) {
                kl::gpu::RunOptions options;
                options.variant = variant;
                options.endToEnd = false;
                options.repetitions = 5;
                options.warmup = 1;
                kl::Signal out;
                const kl::gpu::GpuReport r = engine_->conv1d(signal, spec, options, out);
                char cell[96];
                std::snprintf(cell, sizeof cell, " %s%s%s %.3f ms (%.0f GFLOP/s)", variant.c_str(),
                              variant == "auto" ? "=" : "", variant == "auto" ? r.variant.c_str() : "",
                              r.kernel.medianMs, r.kernelGFlops());
                line += cell;
            }
            qInfo("%s", line.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestConv1dGpu)
#include "tst_conv1d_gpu.moc"
