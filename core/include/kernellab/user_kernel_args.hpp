#pragma once
// What KernelLab passes to a user's kernel, one struct per op, by value
// (docs/custom-kernels.md). The host side that fills them and the kernel that
// reads them (through kernellab.cuh, where In and Out are the run's element
// types) use these same definitions, so their layouts agree. Pitches count
// elements, not bytes. No standard header: NVRTC compiles this file too.
#include "kernellab/border_rule.hpp"

namespace kl {

/// out(y, x, c) = saturateRound<Out>(sum over i, j of taps[i * kCols + j] *
///                in(borderIndex(y + i - kRows / 2), borderIndex(x + j - kCols / 2), c))
/// (a correlation, anchor at the centre; the constant border reads borderValue).
/// Channels are interleaved: element (y, x, c) is at [y * pitch + x * channels + c].
template <typename In, typename Out> struct Conv2dArgsOf {
    const In* in;
    Out* out;
    long long inPitch, outPitch;
    int rows, cols, channels;
    const float* taps;  ///< kRows x kCols, row-major, in device memory
    int kRows, kCols;
    BorderMode border;
    float borderValue;
};

/// Each channel c of a planar f32 signal (frames samples at in + c * frames) convolved with the
/// taps (numpy.convolve): out[c * outFrames + n] = sum over k of in[c][k] * taps[n + offset - k],
/// for the k where both indices are in range (samples outside the signal are zero). offset is
/// where the mode (full, same, valid) starts in the full convolution.
struct Conv1dArgs {
    const float* in;
    float* out;
    long long frames, outFrames, offset;
    int channels;
    const float* taps;
    int tapCount;
};

/// One histogram per channel and, when `luminance`, one more of the luminance (entries in all).
/// counts[entry * bins + bin]; a value outside [lo, hi) adds to outOfRange[entry], NaN to
/// nanCount[entry]. kl::histogramBin(v, lo, hi, scale, offset, bins) is the binning rule. Every
/// counter is zero when the kernel starts.
template <typename In> struct HistogramArgsOf {
    const In* in;
    long long pitch;
    int rows, cols, channels;
    int bins;
    double lo, hi, scale, offset;
    int entries;
    bool luminance;
    unsigned long long* counts;
    unsigned long long* outOfRange;
    unsigned long long* nanCount;
};

/// out(x, y, c) = in(y, x, c): the output has `cols` rows of `rows` pixels.
template <typename In> struct TransposeArgsOf {
    const In* in;
    In* out;
    long long inPitch, outPitch;
    int rows, cols, channels;
};

} // namespace kl
