#include "kernellab/conv1d.hpp"

#include "kernellab/error.hpp"
#include "kernellab/image.hpp"

#include "parallel.hpp"

#include "text.hpp"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

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

/// Kernels of this many taps and more are filtered through cv::dft (overlap-save). On one core the
/// direct loop costs about 0.04 ns per tap and sample (5 ns at 127 taps), the DFT rows about 7 ns
/// a sample whatever the taps; and from 130 taps filter2D itself would take its 2-D DFT (95 ns).
constexpr size_t kDftTaps = 128;
/// Outputs per row of the direct path: OpenCV's filters walk an image row by row, and a block of
/// short rows (each with its halo) runs three times faster than one long row.
constexpr size_t kDirectRow = 1024;
/// Outputs per piece of parallel work (a multiple of the row length).
constexpr size_t kPieceOutputs = size_t(1) << 16;

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
    const size_t length = conv1dOutputLength(n, m, spec.mode), offset = conv1dOutputOffset(n, m, spec.mode);
    // Convolution commutes, so the shorter of signal and taps is the filter h: a million taps
    // over a short signal then cost a short filter. full[t] = sum of h[k] x[t - k] over the
    // longer row x (zero outside it).
    const size_t longer = std::max(n, m), shorter = std::min(n, m), halo = shorter - 1;
    const bool viaDft = shorter >= kDftTaps;
    // Each piece is a block of rows, row r holding its outputs' inputs with the halo before them:
    // filter2D correlates each row with the reversed h (direct); or each row's DFT is multiplied
    // by h's (overlap-save, rows of a length cv::dft handles fast, outputs after the halo).
    const size_t rowLength = viaDft ? size_t(cv::getOptimalDFTSize(int(std::max<size_t>(2048, 4 * halo))))
                                    : kDirectRow + halo;
    if (rowLength > size_t(INT_MAX) / 2)
        throw InvalidArgument("conv1d input: " + std::to_string(shorter) + " taps exceed OpenCV's row length limit");
    const size_t rowOutputs = rowLength - halo;
    const int rowsPerPiece = int(std::max<size_t>(1, kPieceOutputs / rowOutputs));
    const size_t pieceOutputs = size_t(rowsPerPiece) * rowOutputs;
    const int pieces = int((length + pieceOutputs - 1) / pieceOutputs);
    reshapeSignal(output, input.channels, length, input.sampleRate, "conv1d output");

    // [0] h reversed (direct) or h's spectrum on every row (DFT), [1] h zero-padded to a row;
    // per task [2 + 2t] its block, [3 + 2t] the block's spectrum or filtered rows.
    const int tasks = detail::pieceTasks(pieces);
    cv::Mat* slots = scratch.buffers(0, 2 + 2 * size_t(tasks));
    for (int task = 0; task < tasks; ++task) {
        createChecked(slots[2 + 2 * task], rowsPerPiece, int(rowLength), CV_32F, "conv1d (OpenCV blocks)");
        createChecked(slots[3 + 2 * task], rowsPerPiece, int(rowLength), CV_32F, "conv1d (OpenCV blocks)");
    }
    for (int c = 0; c < input.channels; ++c) {
        const float* longRow = n >= m ? input.channel(c) : spec.taps.data();
        const float* shortRow = n >= m ? spec.taps.data() : input.channel(c);
        cv::Mat& taps = slots[0];
        if (viaDft) {
            createChecked(slots[1], 1, int(rowLength), CV_32F, "conv1d (OpenCV spectrum)");
            copyZeroPadded(shortRow, shorter, 0, rowLength, slots[1].ptr<float>());
            cv::dft(slots[1], slots[1]);
            cv::repeat(slots[1], rowsPerPiece, 1, taps);
        } else {
            createChecked(taps, 1, int(shorter), CV_32F, "conv1d (OpenCV taps)");
            std::reverse_copy(shortRow, shortRow + shorter, taps.ptr<float>());
        }
        float* out = output.channel(c);
        detail::forEachPiece(pieces, [&](int task, int piece) {
            cv::Mat& block = slots[2 + 2 * task];
            cv::Mat& result = slots[3 + 2 * task];
            const size_t first = size_t(piece) * pieceOutputs;
            for (int r = 0; r < rowsPerPiece; ++r)
                copyZeroPadded(longRow, longer, ptrdiff_t(offset + first + size_t(r) * rowOutputs) - ptrdiff_t(halo),
                               rowLength, block.ptr<float>(r));
            const float* filtered = nullptr;
            if (viaDft) {
                cv::dft(block, result, cv::DFT_ROWS);
                cv::mulSpectrums(result, taps, result, cv::DFT_ROWS);
                cv::dft(result, block, cv::DFT_ROWS | cv::DFT_INVERSE | cv::DFT_SCALE | cv::DFT_REAL_OUTPUT);
                filtered = block.ptr<float>() + halo;
            } else {
                cv::filter2D(block, result, CV_32F, taps, cv::Point(0, 0), 0, cv::BORDER_CONSTANT | cv::BORDER_ISOLATED);
                filtered = result.ptr<float>();
            }
            for (int r = 0; r < rowsPerPiece; ++r) {
                const size_t begin = first + size_t(r) * rowOutputs;
                if (begin >= length) break;
                std::copy_n(filtered + size_t(r) * (block.step1()), std::min(rowOutputs, length - begin), out + begin);
            }
        });
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
