#pragma once
// 1D convolution of each channel of a Signal with one set of taps.
//
// Semantics: true convolution, numpy.convolve conventions. With signal length N
// and M taps, full[n] = sum_k x[k] * h[n - k] for n in [0, N + M - 1);
//   Full  -> full                               (length N + M - 1)
//   Same  -> full[(min(N,M)-1)/2, + max(N,M))   (length max(N, M))
//   Valid -> full[min(N,M)-1, max(N,M))         (length max(N,M) - min(N,M) + 1)
// Samples outside the signal are zero. float32 in and out; the sample rate is kept.
#include "kernellab/cpu.hpp"
#include "kernellab/signal.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace kl {

constexpr size_t kMaxConv1DTaps = 1u << 20;  // 1 048 576

enum class Conv1DMode { Full, Same, Valid };

struct Conv1DSpec {
    std::vector<float> taps;  ///< 1 .. kMaxConv1DTaps finite values
    Conv1DMode mode = Conv1DMode::Same;
};

/// Throws kl::InvalidArgument naming the bad field (taps count, non-finite tap) or signal.
void validateConv1D(const Signal& input, const Conv1DSpec& spec);
/// Output length for the mode (table above).
size_t conv1dOutputLength(size_t signalLength, size_t taps, Conv1DMode mode);
/// Index into the full convolution where the mode's output starts.
size_t conv1dOutputOffset(size_t signalLength, size_t taps, Conv1DMode mode);

std::string toString(Conv1DMode mode);            // "full", "same", "valid"
Conv1DMode parseConv1DMode(const std::string& name);
std::vector<Conv1DMode> allConv1DModes();

/// Plain single-threaded loop accumulating in float, as the naive GPU kernel does, into `output`
/// (its buffer reused).
void conv1dReference(const Signal& input, const Conv1DSpec& spec, Signal& output);
Signal conv1dReference(const Signal& input, const Conv1DSpec& spec);
/// What an expert OpenCV user writes, into `output` with `scratch` kept between calls: the
/// longer of signal and taps filtered by the shorter (convolution commutes), in pieces of about
/// 2^16 outputs (fixed by the sizes, never by the thread count) under cv::parallel_for_. Under
/// 128 taps a direct loop sums 64 outputs at a time in registers, compiled for AVX-512, AVX2 and
/// baseline x86-64 and picked at load time (faster than cv::filter2D without IPP);
/// it reads the signal in place, and a zero-padded copy only at its ends. From 128 taps on, each
/// piece is a block of rows with their halo that goes through cv::dft, cv::mulSpectrums with the
/// taps' spectrum and back (overlap-save).
void conv1dOpenCV(const Signal& input, const Conv1DSpec& spec, Signal& output, CpuScratch& scratch);
Signal conv1dOpenCV(const Signal& input, const Conv1DSpec& spec);

// ---- presets -------------------------------------------------------------

enum class Conv1DPreset { MovingAverage, Gaussian, LowPass, HighPass, BandPass, Derivative, Custom };
enum class Window { Rectangular, Hann, Hamming, Blackman };

struct Conv1DPresetParams {
    size_t taps = 31;           ///< odd for high-pass and band-pass (type I FIR)
    double sigma = 0.0;         ///< gaussian, in samples; <= 0 gives taps / 6
    double lowHz = 0.0;         ///< low-pass cut-off, band-pass lower edge, high-pass cut-off
    double highHz = 0.0;        ///< band-pass upper edge
    double sampleRate = 0.0;    ///< Hz, from the signal
    Window window = Window::Hamming;
    std::vector<float> custom;  ///< Custom taps
    bool normalize = false;     ///< Custom: divide by the sum of taps (when non-zero)
};

/// Windowed-sinc FIR designs and the simple kernels; throws kl::InvalidArgument
/// for bad parameters (cut-off at or beyond Nyquist, even taps for a high-pass...).
///   moving-average: taps x 1/taps.   gaussian: exp(-t^2 / 2 sigma^2) about the centre, sum 1.
///   low-pass: sinc at lowHz times the symmetric window, scaled to DC gain 1.
///   high-pass: spectral inversion of that low-pass (delta - low-pass), DC gain 0.
///   band-pass: low-pass at highHz minus low-pass at lowHz (DC gain 0, ~1 in the band).
///   derivative: {0.5, 0, -0.5}, the central difference (x[n+1] - x[n-1]) / 2 per sample
///               in Same mode; `taps` is ignored.
std::vector<float> makeConv1DKernel(Conv1DPreset preset, const Conv1DPresetParams& params);
/// "moving-average", "gaussian", "low-pass", "high-pass", "band-pass", "derivative", "custom".
std::string toString(Conv1DPreset preset);
Conv1DPreset parseConv1DPreset(const std::string& name);
std::vector<Conv1DPreset> allConv1DPresets();
std::string toString(Window window);  // "rectangular", "hann", "hamming", "blackman"
Window parseWindow(const std::string& name);
std::vector<Window> allWindows();

} // namespace kl
