// conv1d on the CPU: both backends against a double-precision direct sum in every
// mode, for signal / kernel lengths from 1 up (prime lengths, kernels longer than the
// signal, 2^20 taps); the OpenCV backend's direct loop against the reference around its
// edges; numpy.convolve's known values; the validation messages.
#include "kernellab/conv1d.hpp"
#include "kernellab/error.hpp"
#include "test_support.hpp"

#include <QtTest>

#include <limits>
#include <set>
#include <string>
#include <vector>

using kl::Conv1DMode;
using kl::Conv1DSpec;

Q_DECLARE_METATYPE(kl::Signal)
Q_DECLARE_METATYPE(std::vector<float>)

namespace {

constexpr double kRate = 8000.0;
const Conv1DMode kModes[] = {Conv1DMode::Full, Conv1DMode::Same, Conv1DMode::Valid};

kl::Signal signalOf(std::initializer_list<float> samples)
{
    kl::Signal s(1, samples.size(), kRate);
    s.data.assign(samples);
    return s;
}

Conv1DSpec specOf(std::vector<float> taps, Conv1DMode mode)
{
    Conv1DSpec spec;
    spec.taps = std::move(taps);
    spec.mode = mode;
    return spec;
}

} // namespace

class TestConv1dCpu : public QObject {
    Q_OBJECT

private slots:
    void bothBackendsMatchDirectSum_data()
    {
        QTest::addColumn<qulonglong>("frames");
        QTest::addColumn<qulonglong>("taps");
        QTest::addColumn<int>("channels");
        QTest::addColumn<int>("mode");
        const struct {
            size_t frames, taps;
            int channels;
        } cases[] = {
            {1, 1, 1},     {1, 7, 2},       {7, 1, 1},         {2, 3, 1},        {13, 31, 3},
            {97, 97, 1},   {101, 7, 2},     {1009, 61, 3},     {61, 1009, 1},    {4099, 257, 1},
            {10007, 4096, 1}, {64, size_t(1) << 20, 1},
        };
        for (const auto& c : cases)
            for (Conv1DMode mode : kModes) {
                const std::string name = std::to_string(c.frames) + " frames x" + std::to_string(c.channels) + ", " +
                                         std::to_string(c.taps) + " taps, " + kl::toString(mode);
                QTest::newRow(name.c_str()) << qulonglong(c.frames) << qulonglong(c.taps) << c.channels << int(mode);
            }
    }

    void bothBackendsMatchDirectSum()
    {
        QFETCH(qulonglong, frames);
        QFETCH(qulonglong, taps);
        QFETCH(int, channels);
        QFETCH(int, mode);
        const kl::Signal input = kltest::randomSignal(frames, channels, kRate, frames * 7 + taps);
        const Conv1DSpec spec = specOf(kltest::randomSignal(taps, 1, kRate, taps).data, Conv1DMode(mode));
        for (const auto& [backend, output] :
             {std::pair{"reference", kl::conv1dReference(input, spec)}, std::pair{"opencv", kl::conv1dOpenCV(input, spec)}}) {
            const kl::Verdict verdict = kltest::checkConv1D(output, input, spec);
            QVERIFY2(verdict.passed(), kltest::msg(std::string(backend) + ": " + verdict.failure));
        }
    }

    // Under 128 taps the OpenCV backend sums groups of 64 outputs, reading the signal in place
    // except where a group's inputs cross the signal's ends or the group passes the output's end.
    // Lengths below, at and one past the taps, the group and two groups; primes leaving a partial
    // last group, one across pieces of 2^16 outputs.
    void directLoopMatchesReference_data()
    {
        QTest::addColumn<qulonglong>("frames");
        QTest::addColumn<qulonglong>("taps");
        QTest::addColumn<int>("mode");
        for (size_t taps : {1, 2, 3, 31, 32, 33, 127}) {
            std::set<size_t> lengths = {taps, taps + 1, 63, 64, 65, 127, 128, 129, 131, 1031, 65543};
            if (taps > 1) lengths.insert(taps - 1);
            for (size_t frames : lengths)
                for (Conv1DMode mode : kModes) {
                    const std::string name = std::to_string(frames) + " frames, " + std::to_string(taps) + " taps, " +
                                             kl::toString(mode);
                    QTest::newRow(name.c_str()) << qulonglong(frames) << qulonglong(taps) << int(mode);
                }
        }
    }

    void directLoopMatchesReference()
    {
        QFETCH(qulonglong, frames);
        QFETCH(qulonglong, taps);
        QFETCH(int, mode);
        const int channels = 2;
        const kl::Signal input = kltest::randomSignal(frames, channels, kRate, frames * 131 + taps);
        const Conv1DSpec spec = specOf(kltest::randomSignal(taps, 1, kRate, taps + 7).data, Conv1DMode(mode));
        const kl::Signal reference = kl::conv1dReference(input, spec), actual = kl::conv1dOpenCV(input, spec);
        QCOMPARE(actual.channels, channels);
        QCOMPARE(actual.frames, reference.frames);
        const auto samples = [](const kl::Signal& s, int c) {
            return std::vector<double>(s.channel(c), s.channel(c) + s.frames);
        };
        kl::Verdict verdict;
        for (int c = 0; c < channels; ++c)
            kl::applyFloatRule(samples(actual, c), samples(reference, c), kl::kBackendsRelTolerance, verdict,
                               "channel " + std::to_string(c) + ": ");
        QVERIFY2(verdict.passed(), kltest::msg(verdict.failure));
    }

    // numpy.convolve([1, 2, 3], [0, 1, 0.5]) and numpy.convolve([1, 2], [1, 1, 1, 1]).
    void knownValues_data()
    {
        QTest::addColumn<kl::Signal>("input");
        QTest::addColumn<std::vector<float>>("taps");
        QTest::addColumn<int>("mode");
        QTest::addColumn<std::vector<float>>("expected");
        const kl::Signal a = signalOf({1, 2, 3});
        const std::vector<float> h = {0, 1, 0.5f};
        QTest::newRow("full") << a << h << int(Conv1DMode::Full) << std::vector<float>{0, 1, 2.5f, 4, 1.5f};
        QTest::newRow("same") << a << h << int(Conv1DMode::Same) << std::vector<float>{1, 2.5f, 4};
        QTest::newRow("valid") << a << h << int(Conv1DMode::Valid) << std::vector<float>{2.5f};
        const kl::Signal shortSignal = signalOf({1, 2});
        const std::vector<float> ones = {1, 1, 1, 1};
        QTest::newRow("long kernel full") << shortSignal << ones << int(Conv1DMode::Full)
                                          << std::vector<float>{1, 3, 3, 3, 2};
        QTest::newRow("long kernel same") << shortSignal << ones << int(Conv1DMode::Same)
                                          << std::vector<float>{1, 3, 3, 3};
        QTest::newRow("long kernel valid") << shortSignal << ones << int(Conv1DMode::Valid)
                                           << std::vector<float>{3, 3, 3};
        QTest::newRow("one sample") << signalOf({2}) << std::vector<float>{3} << int(Conv1DMode::Same)
                                    << std::vector<float>{6};
    }

    void knownValues()
    {
        QFETCH(kl::Signal, input);
        QFETCH(std::vector<float>, taps);
        QFETCH(int, mode);
        QFETCH(std::vector<float>, expected);
        const Conv1DSpec spec = specOf(taps, Conv1DMode(mode));
        QCOMPARE(kl::conv1dOutputLength(input.frames, taps.size(), spec.mode), expected.size());
        QCOMPARE(kl::conv1dReference(input, spec).data, expected);
        QCOMPARE(kl::conv1dOpenCV(input, spec).data, expected);
    }

    void outputLengthAndOffset()
    {
        // N = 10, M = 4 and the swapped case: numpy's table.
        QCOMPARE(kl::conv1dOutputLength(10, 4, Conv1DMode::Full), size_t(13));
        QCOMPARE(kl::conv1dOutputLength(10, 4, Conv1DMode::Same), size_t(10));
        QCOMPARE(kl::conv1dOutputLength(10, 4, Conv1DMode::Valid), size_t(7));
        QCOMPARE(kl::conv1dOutputLength(4, 10, Conv1DMode::Valid), size_t(7));
        QCOMPARE(kl::conv1dOutputOffset(10, 4, Conv1DMode::Full), size_t(0));
        QCOMPARE(kl::conv1dOutputOffset(10, 4, Conv1DMode::Same), size_t(1));
        QCOMPARE(kl::conv1dOutputOffset(10, 5, Conv1DMode::Same), size_t(2));
        QCOMPARE(kl::conv1dOutputOffset(10, 4, Conv1DMode::Valid), size_t(3));
        QCOMPARE(kl::conv1dOutputOffset(4, 10, Conv1DMode::Valid), size_t(3));
    }

    void channelsAreIndependentAndRateKept()
    {
        kl::Signal input(2, 50, 44100.0);
        const kl::Signal mono = kltest::randomSignal(50, 1, 44100.0, 3);
        std::copy(mono.data.begin(), mono.data.end(), input.channel(0));
        for (size_t i = 0; i < 50; ++i) input.channel(1)[i] = 2 * mono.data[i];
        const Conv1DSpec spec = specOf({0.25f, 0.5f, 0.25f}, Conv1DMode::Full);
        for (const kl::Signal& out : {kl::conv1dReference(input, spec), kl::conv1dOpenCV(input, spec)}) {
            QCOMPARE(out.sampleRate, 44100.0);
            QCOMPARE(out.channels, 2);
            QCOMPARE(out.frames, size_t(52));
            const kl::Signal alone = kl::conv1dReference(mono, spec);
            for (size_t i = 0; i < out.frames; ++i) {
                QCOMPARE(out.channel(0)[i], alone.data[i]);
                QCOMPARE(out.channel(1)[i], 2 * alone.data[i]);  // doubling is exact in float
            }
        }
    }

    void modeNames()
    {
        for (Conv1DMode mode : kModes) QVERIFY(kl::parseConv1DMode(kl::toString(mode)) == mode);
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv1d mode: 'middle'", kl::parseConv1DMode("middle"));
    }

    void rejectsBadInput()
    {
        const kl::Signal good = signalOf({1, 2, 3});
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv1d taps: none given",
                         kl::conv1dReference(good, specOf({}, Conv1DMode::Same)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv1d taps: 1048577 exceed the maximum of 1048576",
                         kl::conv1dOpenCV(good, specOf(std::vector<float>(kl::kMaxConv1DTaps + 1, 0.f), Conv1DMode::Same)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv1d taps: tap 1 is nan",
                         kl::conv1dReference(good, specOf({1, std::numeric_limits<float>::quiet_NaN()}, Conv1DMode::Same)));
        KL_VERIFY_THROWS(kl::InvalidArgument, "tap 0 is inf",
                         kl::conv1dOpenCV(good, specOf({std::numeric_limits<float>::infinity()}, Conv1DMode::Same)));
        const Conv1DSpec spec = specOf({1}, Conv1DMode::Same);
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv1d input: the signal has no samples",
                         kl::conv1dReference(kl::Signal(1, 0, kRate), spec));
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv1d input: sample rate 0 Hz must be positive",
                         kl::conv1dReference(kl::Signal(1, 4, 0.0), spec));
        kl::Signal truncated = signalOf({1, 2, 3});
        truncated.data.pop_back();
        KL_VERIFY_THROWS(kl::InvalidArgument, "conv1d input: holds 2 samples, expected 1 channels x 3 frames",
                         kl::conv1dOpenCV(truncated, spec));
    }
};

QTEST_GUILESS_MAIN(TestConv1dCpu)
#include "tst_conv1d_cpu.moc"
