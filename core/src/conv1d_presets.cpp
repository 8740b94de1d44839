#include "kernellab/conv1d.hpp"
#include "kernellab/error.hpp"

#include "text.hpp"

#include <cmath>
#include <cstdio>
#include <numeric>

namespace kl {

namespace {

constexpr double kPi = 3.14159265358979323846;

constexpr Conv1DPreset kAllPresets[] = {Conv1DPreset::MovingAverage, Conv1DPreset::Gaussian,
                                        Conv1DPreset::LowPass,       Conv1DPreset::HighPass,
                                        Conv1DPreset::BandPass,      Conv1DPreset::Derivative,
                                        Conv1DPreset::Custom};
constexpr Window kAllWindows[] = {Window::Rectangular, Window::Hann, Window::Hamming, Window::Blackman};

void requireTapCount(const std::string& preset, size_t taps, bool odd)
{
    if (taps < 1 || taps > kMaxConv1DTaps)
        throw InvalidArgument(preset + " taps: " + std::to_string(taps) + " must be in 1.." +
                              std::to_string(kMaxConv1DTaps));
    if (odd && taps % 2 == 0)
        throw InvalidArgument(preset + " taps: " + std::to_string(taps) +
                              " must be odd (a type I FIR, symmetric about its centre tap)");
}

/// Checks a cut-off frequency against (0, Nyquist).
void requireCutoff(const std::string& field, double hz, double sampleRate)
{
    const double nyquist = sampleRate / 2;
    if (!(hz > 0 && hz < nyquist))
        throw InvalidArgument(field + ": " + detail::formatNumber(hz) + " Hz must be in (0, " + detail::formatNumber(nyquist) +
                              ") Hz, below Nyquist for a sample rate of " + detail::formatNumber(sampleRate) + " Hz");
}

void requireSampleRate(const std::string& preset, double sampleRate)
{
    if (!(std::isfinite(sampleRate) && sampleRate > 0))
        throw InvalidArgument(preset + " sampleRate: " + detail::formatNumber(sampleRate) + " Hz must be positive");
}

/// Symmetric window of `taps` points.
double windowValue(Window window, size_t n, size_t taps)
{
    if (taps == 1) return 1.0;
    const double phase = 2 * kPi * double(n) / double(taps - 1);
    switch (window) {
    case Window::Rectangular: return 1.0;
    case Window::Hann: return 0.5 - 0.5 * std::cos(phase);
    case Window::Hamming: return 0.54 - 0.46 * std::cos(phase);
    case Window::Blackman: return 0.42 - 0.5 * std::cos(phase) + 0.08 * std::cos(2 * phase);
    }
    return 1.0;
}

/// Windowed-sinc low-pass with cut-off `cutoff` cycles per sample, scaled to DC gain 1.
std::vector<double> lowPassTaps(const std::string& preset, size_t taps, double cutoff, Window window)
{
    std::vector<double> h(taps);
    const double centre = double(taps - 1) / 2;
    for (size_t n = 0; n < taps; ++n) {
        const double t = double(n) - centre;
        const double sinc = t == 0 ? 2 * cutoff : std::sin(2 * kPi * cutoff * t) / (kPi * t);
        h[n] = sinc * windowValue(window, n, taps);
    }
    const double gain = std::accumulate(h.begin(), h.end(), 0.0);
    if (!(gain > 0))  // e.g. 2 taps under a window that is zero at both ends
        throw InvalidArgument(preset + " taps: " + std::to_string(taps) + " taps under a " + toString(window) +
                              " window pass nothing; use more taps");
    for (double& v : h) v /= gain;
    return h;
}

std::vector<float> toFloat(const std::vector<double>& taps)
{
    return {taps.begin(), taps.end()};
}

std::vector<float> customTaps(const Conv1DPresetParams& params)
{
    requireTapCount("custom", params.custom.size(), false);
    for (size_t i = 0; i < params.custom.size(); ++i)
        if (!std::isfinite(params.custom[i]))
            throw InvalidArgument("custom taps: tap " + std::to_string(i) + " is " + detail::formatNumber(params.custom[i]) +
                                  "; every tap must be finite");
    std::vector<float> taps = params.custom;
    if (params.normalize) {
        const double sum = std::accumulate(taps.begin(), taps.end(), 0.0);
        if (sum != 0)
            for (float& v : taps) v = float(v / sum);
    }
    return taps;
}

} // namespace

std::vector<float> makeConv1DKernel(Conv1DPreset preset, const Conv1DPresetParams& params)
{
    const std::string name = toString(preset);
    switch (preset) {
    case Conv1DPreset::MovingAverage:
        requireTapCount(name, params.taps, false);
        return std::vector<float>(params.taps, float(1.0 / double(params.taps)));
    case Conv1DPreset::Gaussian: {
        requireTapCount(name, params.taps, false);
        if (!std::isfinite(params.sigma)) throw InvalidArgument("gaussian sigma: must be finite");
        const double sigma = params.sigma > 0 ? params.sigma : double(params.taps) / 6;
        const double centre = double(params.taps - 1) / 2;
        std::vector<double> g(params.taps);
        for (size_t n = 0; n < g.size(); ++n) {
            const double t = (double(n) - centre) / sigma;
            g[n] = std::exp(-0.5 * t * t);
        }
        const double sum = std::accumulate(g.begin(), g.end(), 0.0);
        for (double& v : g) v /= sum;
        return toFloat(g);
    }
    case Conv1DPreset::LowPass:
        requireTapCount(name, params.taps, false);
        requireSampleRate(name, params.sampleRate);
        requireCutoff("low-pass lowHz", params.lowHz, params.sampleRate);
        return toFloat(lowPassTaps(name, params.taps, params.lowHz / params.sampleRate, params.window));
    case Conv1DPreset::HighPass: {
        requireTapCount(name, params.taps, true);
        requireSampleRate(name, params.sampleRate);
        requireCutoff("high-pass lowHz", params.lowHz, params.sampleRate);
        // Spectral inversion: delta - low-pass.
        std::vector<double> h = lowPassTaps(name, params.taps, params.lowHz / params.sampleRate, params.window);
        for (double& v : h) v = -v;
        h[params.taps / 2] += 1.0;
        return toFloat(h);
    }
    case Conv1DPreset::BandPass: {
        requireTapCount(name, params.taps, true);
        requireSampleRate(name, params.sampleRate);
        requireCutoff("band-pass lowHz", params.lowHz, params.sampleRate);
        requireCutoff("band-pass highHz", params.highHz, params.sampleRate);
        if (!(params.lowHz < params.highHz))
            throw InvalidArgument("band-pass lowHz: " + detail::formatNumber(params.lowHz) + " Hz must be below highHz " +
                                  detail::formatNumber(params.highHz) + " Hz");
        // The band between two low-passes: passes highHz, minus what passes lowHz.
        std::vector<double> h = lowPassTaps(name, params.taps, params.highHz / params.sampleRate, params.window);
        const std::vector<double> below = lowPassTaps(name, params.taps, params.lowHz / params.sampleRate, params.window);
        for (size_t n = 0; n < h.size(); ++n) h[n] -= below[n];
        return toFloat(h);
    }
    case Conv1DPreset::Derivative:
        // Central difference (x[n+1] - x[n-1]) / 2 per sample, written as convolution taps.
        return {0.5f, 0.f, -0.5f};
    case Conv1DPreset::Custom: return customTaps(params);
    }
    throw InvalidArgument("conv1d preset: invalid value " + std::to_string(int(preset)));
}

std::string toString(Conv1DPreset preset)
{
    switch (preset) {
    case Conv1DPreset::MovingAverage: return "moving-average";
    case Conv1DPreset::Gaussian: return "gaussian";
    case Conv1DPreset::LowPass: return "low-pass";
    case Conv1DPreset::HighPass: return "high-pass";
    case Conv1DPreset::BandPass: return "band-pass";
    case Conv1DPreset::Derivative: return "derivative";
    case Conv1DPreset::Custom: return "custom";
    }
    return "unknown";
}

Conv1DPreset parseConv1DPreset(const std::string& name)
{
    return detail::parseName(name, kAllPresets, "conv1d preset");
}

std::vector<Conv1DPreset> allConv1DPresets()
{
    return {std::begin(kAllPresets), std::end(kAllPresets)};
}

std::string toString(Window window)
{
    switch (window) {
    case Window::Rectangular: return "rectangular";
    case Window::Hann: return "hann";
    case Window::Hamming: return "hamming";
    case Window::Blackman: return "blackman";
    }
    return "unknown";
}

Window parseWindow(const std::string& name)
{
    return detail::parseName(name, kAllWindows, "window");
}

std::vector<Window> allWindows()
{
    return {std::begin(kAllWindows), std::end(kAllWindows)};
}

} // namespace kl
