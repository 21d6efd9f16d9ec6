#include "engine/speech/fbank.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <new>
#include <numbers>

#include "engine/core/error.h"

namespace mavg {
namespace {

// FFTW's planner is not thread-safe (only fftwf_execute* is): plan creation and destruction
// in this file go through this mutex.
std::mutex& FftwPlannerMutex() {
  static std::mutex mutex;
  return mutex;
}

// Buffers for FFTW, 64-byte aligned (enough for any SIMD width FFTW uses), so that a plan made
// on one such buffer may be executed on any other (fftwf_execute_dft_r2c requires the same
// alignment as at planning time).
constexpr std::align_val_t kFftAlignment{64};
struct AlignedFree {
  void operator()(float* p) const { ::operator delete[](p, kFftAlignment); }
};
static_assert(sizeof(fftwf_complex) == 2 * sizeof(float));
using AlignedFloats = std::unique_ptr<float[], AlignedFree>;
AlignedFloats AllocateFloats(size_t n) { return AlignedFloats(new (kFftAlignment) float[n]()); }

// Kaldi's mel scale, in float as mel-computations.h computes it.
float MelScale(float freq) { return 1127.0f * std::log(1.0f + freq / 700.0f); }

int RoundUpToPowerOfTwo(int n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

std::vector<float> MakeWindow(const std::string& type, int length) {
  std::vector<float> window(static_cast<size_t>(length));
  const double a = 2.0 * std::numbers::pi / (length - 1);
  for (int i = 0; i < length; ++i) {
    const double c = std::cos(a * i);
    double w = 1.0;
    if (type == "povey") {
      w = std::pow(0.5 - 0.5 * c, 0.85);  // like hanning, but not quite reaching zero inside
    } else if (type == "hamming") {
      w = 0.54 - 0.46 * c;
    } else if (type == "hanning") {
      w = 0.5 - 0.5 * c;
    }  // "rectangular": 1
    window[static_cast<size_t>(i)] = static_cast<float>(w);
  }
  return window;
}

}  // namespace

void FbankComputer::PlanDeleter::operator()(fftwf_plan_s* plan) const {
  std::lock_guard<std::mutex> lock(FftwPlannerMutex());
  fftwf_destroy_plan(plan);
}

FbankComputer::FbankComputer(const FbankOptions& opts) : opts_(opts) {
  // Frame sizes exactly as Kaldi's FrameExtractionOptions::WindowSize()/WindowShift().
  frame_length_ = static_cast<int>(opts.sample_rate * 0.001 * opts.frame_length_ms);
  frame_shift_ = static_cast<int>(opts.sample_rate * 0.001 * opts.frame_shift_ms);
  const double nyquist = 0.5 * opts.sample_rate;
  const double high_freq = opts.high_freq > 0 ? opts.high_freq : nyquist + opts.high_freq;

  std::vector<std::string> problems;
  if (opts.sample_rate <= 0) problems.push_back(fmt::format("sample_rate {}", opts.sample_rate));
  if (frame_length_ < 2) {
    problems.push_back(fmt::format("frame_length_ms {} gives {} samples per frame (need >= 2)",
                                   opts.frame_length_ms, frame_length_));
  }
  if (frame_shift_ < 1) {
    problems.push_back(fmt::format("frame_shift_ms {} gives {} samples (need >= 1)",
                                   opts.frame_shift_ms, frame_shift_));
  }
  if (!(opts.preemph >= 0 && opts.preemph <= 1)) {
    problems.push_back(fmt::format("preemph {} outside [0, 1]", opts.preemph));
  }
  if (opts.num_bins < 3) problems.push_back(fmt::format("num_bins {} < 3", opts.num_bins));
  if (!(opts.low_freq >= 0 && opts.low_freq < nyquist && high_freq > opts.low_freq &&
        high_freq <= nyquist)) {
    problems.push_back(
        fmt::format("need 0 <= low_freq < high_freq <= Nyquist ({} Hz); got "
                    "low_freq {}, high_freq {} (-> {})",
                    nyquist, opts.low_freq, opts.high_freq, high_freq));
  }
  if (opts.window != "povey" && opts.window != "hamming" && opts.window != "hanning" &&
      opts.window != "rectangular") {
    problems.push_back(
        fmt::format("unknown window '{}' (valid: povey, hamming, hanning, "
                    "rectangular)",
                    opts.window));
  }
  if (!(opts.energy_floor >= 0)) {
    problems.push_back(fmt::format("energy_floor {} < 0", opts.energy_floor));
  }
  if (!(opts.log_floor > 0)) problems.push_back(fmt::format("log_floor {} <= 0", opts.log_floor));
  if (!problems.empty()) MAVG_FAIL("fbank options: {}", fmt::join(problems, "; "));

  padded_length_ = RoundUpToPowerOfTwo(frame_length_);
  window_ = MakeWindow(opts.window, frame_length_);

  // Mel weights, in float arithmetic as Kaldi's MelBanks constructor (so that an FFT bin on a
  // triangle's edge falls on the same side).
  const int num_fft_bins = padded_length_ / 2;
  const auto sample_freq = static_cast<float>(opts.sample_rate);
  const float fft_bin_width = sample_freq / static_cast<float>(padded_length_);
  const float mel_low = MelScale(static_cast<float>(opts.low_freq));
  const float mel_high = MelScale(static_cast<float>(high_freq));
  const float mel_delta = (mel_high - mel_low) / static_cast<float>(opts.num_bins + 1);
  mel_bins_.resize(static_cast<size_t>(opts.num_bins));
  for (int bin = 0; bin < opts.num_bins; ++bin) {
    const float left = mel_low + static_cast<float>(bin) * mel_delta;
    const float center = mel_low + static_cast<float>(bin + 1) * mel_delta;
    const float right = mel_low + static_cast<float>(bin + 2) * mel_delta;
    std::vector<float> weights(static_cast<size_t>(num_fft_bins), 0.0f);
    int first = -1, last = -1;
    for (int i = 0; i < num_fft_bins; ++i) {
      const float mel = MelScale(fft_bin_width * static_cast<float>(i));
      if (mel > left && mel < right) {
        weights[static_cast<size_t>(i)] =
            mel <= center ? (mel - left) / (center - left) : (right - mel) / (right - center);
        if (first < 0) first = i;
        last = i;
      }
    }
    MAVG_CHECK(first >= 0,
               "fbank options: mel bin {} of {} contains no FFT bin ({}-point FFT "
               "at {} Hz): use fewer bins or longer frames",
               bin, opts.num_bins, padded_length_, opts.sample_rate);
    mel_bins_[static_cast<size_t>(bin)].first = first;
    mel_bins_[static_cast<size_t>(bin)].weights.assign(weights.begin() + first,
                                                       weights.begin() + last + 1);
  }

  AlignedFloats in = AllocateFloats(static_cast<size_t>(padded_length_));
  AlignedFloats out = AllocateFloats(static_cast<size_t>(padded_length_ + 2));
  {
    std::lock_guard<std::mutex> lock(FftwPlannerMutex());
    plan_.reset(fftwf_plan_dft_r2c_1d(padded_length_, in.get(),
                                      reinterpret_cast<fftwf_complex*>(out.get()), FFTW_ESTIMATE));
  }
  MAVG_CHECK(plan_ != nullptr, "fbank: FFTW could not plan a {}-point real FFT", padded_length_);
}

FbankComputer::~FbankComputer() = default;

int64_t FbankComputer::NumFrames(int64_t num_samples) const {
  if (opts_.snip_edges) {
    return num_samples < frame_length_ ? 0 : 1 + (num_samples - frame_length_) / frame_shift_;
  }
  return (num_samples + frame_shift_ / 2) / frame_shift_;
}

kaldi::HostMatrix FbankComputer::Compute(const std::vector<float>& samples) const {
  const auto num_samples = static_cast<int64_t>(samples.size());
  kaldi::HostMatrix out;
  out.rows = NumFrames(num_samples);
  out.cols = opts_.num_bins;
  out.data.resize(static_cast<size_t>(out.rows * out.cols));
  if (out.rows == 0) return out;

  const int length = frame_length_;
  const int num_power = padded_length_ / 2 + 1;
  AlignedFloats frame = AllocateFloats(static_cast<size_t>(padded_length_));  // zero padded
  AlignedFloats spectrum = AllocateFloats(2 * static_cast<size_t>(num_power));
  std::vector<float> power(static_cast<size_t>(num_power));
  const auto preemph = static_cast<float>(opts_.preemph);
  float* x = frame.get();

  for (int64_t r = 0; r < out.rows; ++r) {
    const int64_t start = opts_.snip_edges
                              ? r * frame_shift_
                              : r * frame_shift_ + frame_shift_ / 2 - frame_length_ / 2;
    if (start >= 0 && start + length <= num_samples) {
      std::memcpy(x, samples.data() + start, static_cast<size_t>(length) * sizeof(float));
    } else {
      // Reflect around the ends (only with snip_edges = false): -1 -> 0, N -> N - 1.
      for (int i = 0; i < length; ++i) {
        int64_t s = start + i;
        while (s < 0 || s >= num_samples) s = s < 0 ? -s - 1 : 2 * num_samples - 1 - s;
        x[i] = samples[static_cast<size_t>(s)];
      }
    }
    if (opts_.remove_dc) {
      double sum = 0;
      for (int i = 0; i < length; ++i) sum += x[i];
      const auto mean = static_cast<float>(sum / length);
      for (int i = 0; i < length; ++i) x[i] -= mean;
    }
    if (preemph != 0.0f) {
      for (int i = length - 1; i > 0; --i) x[i] -= preemph * x[i - 1];
      x[0] -= preemph * x[0];
    }
    for (int i = 0; i < length; ++i) x[i] *= window_[static_cast<size_t>(i)];
    std::fill(x + length, x + padded_length_, 0.0f);

    fftwf_execute_dft_r2c(plan_.get(), x, reinterpret_cast<fftwf_complex*>(spectrum.get()));
    const float* c = spectrum.get();
    for (int k = 0; k < num_power; ++k)
      power[k] = c[2 * k] * c[2 * k] + c[2 * k + 1] * c[2 * k + 1];

    float* row = out.Row(r);
    for (size_t b = 0; b < mel_bins_.size(); ++b) {
      const MelBin& bin = mel_bins_[b];
      const float* p = power.data() + bin.first;
      float energy = 0.0f;
      for (size_t i = 0; i < bin.weights.size(); ++i) energy += bin.weights[i] * p[i];
      row[b] = std::log(std::max(energy, opts_.log_floor));
    }
  }
  return out;
}

}  // namespace mavg
