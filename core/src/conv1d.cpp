#include "kernellab/conv1d.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"

#include "parallel.hpp"
#include "simd_clones.hpp"

#include "text.hpp"

#include <opencv2/core.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>

namespace kl {

void validateConv1D(const Signal& input, const Conv1DSpec& spec)
{
    validateSignal(input, "conv1d input");
    if (spec.taps.empty())
        throw InvalidArgument("conv1d taps: none given; need 1.." + std::to_string(kMaxConv1DTaps));
    if (spec.taps.size() > kMaxConv1DTaps)
        throw InvalidArgument("conv1d taps: " + std::to_string(spec.taps.size()) + " exceed the maximum of " +
                              std::to_string(kMaxConv1DTaps));
    for (size_t i = 0; i < spec.taps.size(); ++i)
        if (!std::isfinite(spec.taps[i])) {
            throw InvalidArgument("conv1d taps: tap " + std::to_string(i) + " is " + detail::formatNumber(spec.taps[i]) +
                                  "; every tap must be finite");
        }
    if (spec.mode != Conv1DMode::Full && spec.mode != Conv1DMode::Same && spec.mode != Conv1DMode::Valid)
        throw InvalidArgument("conv1d mode: invalid value " + std::to_string(int(spec.mode)));
}

size_t conv1dOutputLength(size_t signalLength, size_t taps, Conv1DMode mode)
{
    const size_t shorter = std::min(signalLength, taps), longer = std::max(signalLength, taps);
    switch (mode) {
    case Conv1DMode::Full: return signalLength + taps - 1;
    case Conv1DMode::Same: return longer;
    case Conv1DMode::Valid: return longer - shorter + 1;
    }
    return 0;
}

size_t conv1dOutputOffset(size_t signalLength, size_t taps, Conv1DMode mode)
{
    const size_t shorter = std::min(signalLength, taps);
    switch (mode) {
    case Conv1DMode::Full: return 0;
    case Conv1DMode::Same: return (shorter - 1) / 2;
    case Conv1DMode::Valid: return shorter - 1;
    }
    return 0;
}

std::string toString(Conv1DMode mode)
{
    switch (mode) {
    case Conv1DMode::Full: return "full";
    case Conv1DMode::Same: return "same";
    case Conv1DMode::Valid: return "valid";
    }
    return "unknown";
}

namespace {
constexpr Conv1DMode kAllModes[] = {Conv1DMode::Full, Conv1DMode::Same, Conv1DMode::Valid};
}

Conv1DMode parseConv1DMode(const std::string& name)
{
    return detail::parseName(name, kAllModes, "conv1d mode");
}

std::vector<Conv1DMode> allConv1DModes()
{
    return {std::begin(kAllModes), std::end(kAllModes)};
}

namespace {

/// Filters of this many taps and more go through cv::dft (overlap-save): between where the DFT
/// rows overtake the direct loop with SSE2 alone and with AVX-512 (docs/performance.md).
constexpr size_t kDftTaps = 128;
/// Outputs per piece of parallel work (the DFT path rounds it to whole rows).
constexpr size_t kPieceOutputs = size_t(1) << 16;
/// Outputs the direct loop sums at once, in registers: 64 floats are 4 AVX-512 or 8 AVX2 vectors,
/// independent chains of multiply-adds that hide one another's latency.
constexpr size_t kGroup = 64;
static_assert(kPieceOutputs % kGroup == 0, "the direct path's pieces hold whole groups");

/// out[j] = sum over k of filter[k] * x[j + taps - 1 - k] for j in [0, groups * kGroup), x holding
/// groups * kGroup + taps - 1 samples. Every output adds its products tap by tap, the same
/// arithmetic wherever it falls, so results do not depend on how the outputs are split.
KL_SIMD_CLONES void convolveGroups(const float* x, const float* filter, size_t taps, size_t groups, float* out)
{
    for (size_t g = 0; g < groups; ++g, x += kGroup, out += kGroup) {
        float sums[kGroup] = {};
        for (size_t k = 0; k < taps; ++k) {
            const float tap = filter[k];
            const float* in = x + (taps - 1 - k);
            for (size_t j = 0; j < kGroup; ++j) sums[j] += tap * in[j];
        }
        std::copy(sums, sums + kGroup, out);
    }
}

/// dst[u] = row[begin + u] for u in [0, count), zero where begin + u is outside [0, length).
void copyZeroPadded(const float* row, size_t length, ptrdiff_t begin, size_t count, float* dst)
{
    const ptrdiff_t lo = std::max<ptrdiff_t>(begin, 0), hi = std::min(begin + ptrdiff_t(count), ptrdiff_t(length));
    if (lo >= hi) {
        std::fill(dst, dst + count, 0.f);
        return;
    }
    std::fill(dst, dst + (lo - begin), 0.f);
    std::copy(row + lo, row + hi, dst + (lo - begin));
    std::fill(dst + (hi - begin), dst + count, 0.f);
}

/// One channel of conv1dOpenCV: out[i] = full[offset + i] for i in [0, length), where full[t] is
/// the sum of shortRow[k] * longRow[t - k] over k, longRow being zero outside [0, longer).
struct ChannelConvolution {
    const float* longRow;
    size_t longer;
    const float* shortRow;
    size_t shorter;
    float* out;
    size_t length, offset;
};

/// Groups of kGroup outputs whose inputs lie inside the long row read it in place; the few at its
/// ends, and a last group reaching past the output, go through a zero-padded window in scratch.
void convolveDirect(const ChannelConvolution& c, CpuScratch& scratch)
{
    const size_t halo = c.shorter - 1, window = kGroup + halo;
    const size_t groups = (c.length + kGroup - 1) / kGroup, groupsPerPiece = kPieceOutputs / kGroup;
    // Group g needs the long row's samples [offset + g kGroup - halo, offset + (g + 1) kGroup):
    // groups [firstInPlace, endInPlace) find them all inside it and fill kGroup outputs.
    const size_t firstInPlace = (std::max(halo, c.offset) - c.offset + kGroup - 1) / kGroup;
    const size_t endInPlace = std::min(c.longer - c.offset, c.length) / kGroup;
    const int pieces = int((groups + groupsPerPiece - 1) / groupsPerPiece);
    // Per task: a padded window, then its kGroup outputs.
    const int tasks = detail::pieceTasks(pieces);
    cv::Mat* slots = scratch.buffers(0, size_t(tasks));
    for (int task = 0; task < tasks; ++task)
        createChecked(slots[task], 1, int(window + kGroup), CV_32F, "conv1d (padded windows)");
    detail::forEachPiece(pieces, [&](int task, int piece) {
        float* padded = slots[task].ptr<float>();
        float* sums = padded + window;
        const size_t end = std::min(groups, size_t(piece + 1) * groupsPerPiece);
        for (size_t g = size_t(piece) * groupsPerPiece; g < end;) {
            const size_t first = g * kGroup;
            if (g >= firstInPlace && g < endInPlace) {
                const size_t run = std::min(end, endInPlace) - g;
                convolveGroups(c.longRow + (c.offset + first - halo), c.shortRow, c.shorter, run, c.out + first);
                g += run;
            } else {
                copyZeroPadded(c.longRow, c.longer, ptrdiff_t(c.offset + first) - ptrdiff_t(halo), window, padded);
                convolveGroups(padded, c.shortRow, c.shorter, 1, sums);
                std::copy_n(sums, std::min(kGroup, c.length - first), c.out + first);
                ++g;
            }
        }
    });
}

/// Overlap-save: each piece is a block of rows of a length cv::dft handles fast, row r holding
/// its outputs' inputs after the halo; the rows' DFTs are multiplied by the filter's and
/// transformed back, and each row's outputs follow its halo.
void convolveViaDft(const ChannelConvolution& c, CpuScratch& scratch)
{
    const size_t halo = c.shorter - 1;
    const size_t rowLength = size_t(cv::getOptimalDFTSize(int(std::max<size_t>(2048, 4 * halo))));
    if (rowLength > size_t(INT_MAX) / 2)
        throw InvalidArgument("conv1d input: " + std::to_string(c.shorter) + " taps exceed OpenCV's row length limit");
    const size_t rowOutputs = rowLength - halo;
    const int rowsPerPiece = int(std::max<size_t>(1, kPieceOutputs / rowOutputs));
    const size_t pieceOutputs = size_t(rowsPerPiece) * rowOutputs;
    const int pieces = int((c.length + pieceOutputs - 1) / pieceOutputs);

    // [0] the filter's spectrum on every row, [1] the filter zero-padded to a row; per task
    // [2 + 2t] its block, [3 + 2t] the block's spectrum.
    const int tasks = detail::pieceTasks(pieces);
    cv::Mat* slots = scratch.buffers(0, 2 + 2 * size_t(tasks));
    for (int task = 0; task < tasks; ++task) {
        createChecked(slots[2 + 2 * task], rowsPerPiece, int(rowLength), CV_32F, "conv1d (OpenCV blocks)");
        createChecked(slots[3 + 2 * task], rowsPerPiece, int(rowLength), CV_32F, "conv1d (OpenCV blocks)");
    }
    cv::Mat& filterSpectrum = slots[0];
    createChecked(slots[1], 1, int(rowLength), CV_32F, "conv1d (OpenCV spectrum)");
    copyZeroPadded(c.shortRow, c.shorter, 0, rowLength, slots[1].ptr<float>());
    cv::dft(slots[1], slots[1]);
    cv::repeat(slots[1], rowsPerPiece, 1, filterSpectrum);
    detail::forEachPiece(pieces, [&](int task, int piece) {
        cv::Mat& block = slots[2 + 2 * task];
        cv::Mat& spectrum = slots[3 + 2 * task];
        const size_t first = size_t(piece) * pieceOutputs;
        for (int r = 0; r < rowsPerPiece; ++r)
            copyZeroPadded(c.longRow, c.longer, ptrdiff_t(c.offset + first + size_t(r) * rowOutputs) - ptrdiff_t(halo),
                           rowLength, block.ptr<float>(r));
        cv::dft(block, spectrum, cv::DFT_ROWS);
        cv::mulSpectrums(spectrum, filterSpectrum, spectrum, cv::DFT_ROWS);
        cv::dft(spectrum, block, cv::DFT_ROWS | cv::DFT_INVERSE | cv::DFT_SCALE | cv::DFT_REAL_OUTPUT);
        for (int r = 0; r < rowsPerPiece; ++r) {
            const size_t begin = first + size_t(r) * rowOutputs;
            if (begin >= c.length) break;
            std::copy_n(block.ptr<float>(r) + halo, std::min(rowOutputs, c.length - begin), c.out + begin);
        }
    });
}

} // namespace

void conv1dReference(const Signal& input, const Conv1DSpec& spec, Signal& output)
{
    validateConv1D(input, spec);
    const size_t n = input.frames, m = spec.taps.size();
    const size_t length = conv1dOutputLength(n, m, spec.mode), offset = conv1dOutputOffset(n, m, spec.mode);
    reshapeSignal(output, input.channels, length, input.sampleRate, "conv1d output");
    const float* h = spec.taps.data();
    for (int c = 0; c < input.channels; ++c) {
        const float* x = input.channel(c);
        float* y = output.channel(c);
        for (size_t i = 0; i < length; ++i) {
            // full[t] = sum over k of x[k] * h[t - k], with both indices in range.
            const size_t t = offset + i;
            const size_t first = t >= m - 1 ? t - (m - 1) : 0, last = std::min(t, n - 1);
            float sum = 0.f;
            for (size_t k = first; k <= last; ++k) sum += x[k] * h[t - k];
            y[i] = sum;
        }
    }
}

Signal conv1dReference(const Signal& input, const Conv1DSpec& spec)
{
    Signal output;
    conv1dReference(input, spec, output);
    return output;
}

void conv1dOpenCV(const Signal& input, const Conv1DSpec& spec, Signal& output, CpuScratch& scratch)
{
    validateConv1D(input, spec);
    const size_t n = input.frames, m = spec.taps.size();
    reshapeSignal(output, input.channels, conv1dOutputLength(n, m, spec.mode), input.sampleRate, "conv1d output");
    for (int c = 0; c < input.channels; ++c) {
        // Convolution commutes, so the shorter of signal and taps is the filter: a million taps
        // over a short signal then cost a short filter.
        const ChannelConvolution channel{n >= m ? input.channel(c) : spec.taps.data(),
                                         std::max(n, m),
                                         n >= m ? spec.taps.data() : input.channel(c),
                                         std::min(n, m),
                                         output.channel(c),
                                         output.frames,
                                         conv1dOutputOffset(n, m, spec.mode)};
        if (channel.shorter < kDftTaps)
            convolveDirect(channel, scratch);
        else
            convolveViaDft(channel, scratch);
    }
}

Signal conv1dOpenCV(const Signal& input, const Conv1DSpec& spec)
{
    Signal output;
    CpuScratch scratch;
    conv1dOpenCV(input, spec, output, scratch);
    return output;
}

} // namespace kl
