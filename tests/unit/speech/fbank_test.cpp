// Filterbank features against an independent double-precision computation written from the
// formulas (naive DFT, own window / pre-emphasis / mel triangles), plus frame counts, tones,
// thread safety and option checks. No Kaldi binary is available here, so there is no
// comparison with compute-fbank-feats output itself.

#include "engine/speech/fbank.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numbers>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/rng.h"

namespace mavg {
namespace {

constexpr double kPi = std::numbers::pi;

double Mel(double f) { return 1127.0 * std::log(1.0 + f / 700.0); }
double InverseMel(double m) { return 700.0 * (std::exp(m / 1127.0) - 1.0); }

// Index into a signal of length n for position s, mirrored at both ends (-1 -> 0, n -> n-1).
int64_t Mirror(int64_t s, int64_t n) {
  while (s < 0 || s >= n) s = s < 0 ? -1 - s : 2 * n - 1 - s;
  return s;
}

// Log mel energies [frame][bin] from the textbook definitions, in double precision.
std::vector<std::vector<double>> ReferenceFbank(const std::vector<float>& signal,
                                                const FbankOptions& o) {
  const auto n = static_cast<int64_t>(signal.size());
  const int length = static_cast<int>(o.sample_rate * 0.001 * o.frame_length_ms);
  const int shift = static_cast<int>(o.sample_rate * 0.001 * o.frame_shift_ms);
  int fft = 1;
  while (fft < length) fft *= 2;

  std::vector<int64_t> starts;
  if (o.snip_edges) {
    for (int64_t s = 0; s + length <= n; s += shift) starts.push_back(s);
  } else {
    const auto frames = static_cast<int64_t>(std::floor(static_cast<double>(n) / shift + 0.5));
    for (int64_t r = 0; r < frames; ++r) starts.push_back(r * shift + shift / 2 - length / 2);
  }

  std::vector<double> window(static_cast<size_t>(length));
  for (int i = 0; i < length; ++i) {
    const double hann = 0.5 * (1 - std::cos(2 * kPi * i / (length - 1)));
    if (o.window == "povey") window[i] = std::pow(hann, 0.85);
    if (o.window == "hanning") window[i] = hann;
    if (o.window == "hamming") window[i] = 0.54 - 0.46 * std::cos(2 * kPi * i / (length - 1));
    if (o.window == "rectangular") window[i] = 1;
  }

  // Triangle corners on the mel scale: bin m rises from corner m to m+1, falls to m+2.
  const double nyquist = o.sample_rate / 2.0;
  const double high = o.high_freq > 0 ? o.high_freq : nyquist + o.high_freq;
  std::vector<double> corners;
  for (int j = 0; j <= o.num_bins + 1; ++j) {
    corners.push_back(Mel(o.low_freq) + j * (Mel(high) - Mel(o.low_freq)) / (o.num_bins + 1));
  }
  std::vector<std::vector<double>> weights(o.num_bins, std::vector<double>(fft / 2, 0.0));
  for (int m = 0; m < o.num_bins; ++m) {
    for (int k = 0; k < fft / 2; ++k) {
      const double mel = Mel(static_cast<double>(k) * o.sample_rate / fft);
      const double rise = (mel - corners[m]) / (corners[m + 1] - corners[m]);
      const double fall = (corners[m + 2] - mel) / (corners[m + 2] - corners[m + 1]);
      weights[m][k] = std::max(0.0, std::min(rise, fall));
    }
  }

  std::vector<double> cos_table(fft), sin_table(fft);
  for (int i = 0; i < fft; ++i) {
    cos_table[i] = std::cos(2 * kPi * i / fft);
    sin_table[i] = std::sin(2 * kPi * i / fft);
  }

  std::vector<std::vector<double>> out;
  for (int64_t start : starts) {
    std::vector<double> x(static_cast<size_t>(length));
    for (int i = 0; i < length; ++i) x[i] = signal[Mirror(start + i, n)];
    if (o.remove_dc) {
      double mean = 0;
      for (double v : x) mean += v / length;
      for (double& v : x) v -= mean;
    }
    std::vector<double> y(fft, 0.0);  // pre-emphasised, windowed, zero padded
    for (int i = 0; i < length; ++i) {
      const double previous = i > 0 ? x[i - 1] : x[0];
      y[i] = (x[i] - o.preemph * previous) * window[i];
    }
    std::vector<double> power(fft / 2);
    for (int k = 0; k < fft / 2; ++k) {
      double re = 0, im = 0;
      for (int i = 0; i < fft; ++i) {
        re += y[i] * cos_table[(static_cast<int64_t>(k) * i) % fft];
        im -= y[i] * sin_table[(static_cast<int64_t>(k) * i) % fft];
      }
      power[k] = re * re + im * im;
    }
    std::vector<double> row;
    for (int m = 0; m < o.num_bins; ++m) {
      double energy = 0;
      for (int k = 0; k < fft / 2; ++k) energy += weights[m][k] * power[k];
      row.push_back(std::log(std::max(energy, static_cast<double>(FLT_EPSILON))));
    }
    out.push_back(row);
  }
  return out;
}

// Two tones plus Gaussian noise, in int16 scale.
std::vector<float> TestSignal(int rate, double seconds, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> x(static_cast<size_t>(rate * seconds));
  for (size_t i = 0; i < x.size(); ++i) {
    const double t = static_cast<double>(i) / rate;
    x[i] = static_cast<float>(3000 * std::sin(2 * kPi * 440 * t) +
                              1500 * std::sin(2 * kPi * 2700 * t + 0.3) + 200 * rng.Gaussian() +
                              50);  // a DC offset for remove_dc to remove
  }
  return x;
}

struct Config {
  std::string name;
  FbankOptions opts;
};

void PrintTo(const Config& config, std::ostream* os) { *os << config.name; }

std::vector<Config> Configs() {
  std::vector<Config> configs;
  configs.push_back({"kaldi_defaults_40_bins", FbankOptions{}});
  FbankOptions a;
  a.window = "hamming";
  a.snip_edges = false;
  a.num_bins = 23;
  a.low_freq = 64;
  a.high_freq = -400;
  configs.push_back({"hamming_no_snip_23_bins", a});
  FbankOptions b;
  b.window = "hanning";
  b.remove_dc = false;
  b.preemph = 0;
  b.high_freq = 7000;
  configs.push_back({"hanning_no_dc_no_preemph", b});
  FbankOptions c;
  c.sample_rate = 8000;
  c.num_bins = 23;
  c.frame_length_ms = 20;
  c.frame_shift_ms = 7.5;
  c.window = "rectangular";
  configs.push_back({"8khz_20ms_rectangular", c});
  return configs;
}

class FbankVsReference : public ::testing::TestWithParam<Config> {};

TEST_P(FbankVsReference, LogEnergiesAgreeWithin1e3) {
  const FbankOptions& opts = GetParam().opts;
  const std::vector<float> signal = TestSignal(opts.sample_rate, 0.5, 7);
  const FbankComputer fbank(opts);
  const kaldi::HostMatrix got = fbank.Compute(signal);
  const auto expected = ReferenceFbank(signal, opts);
  ASSERT_EQ(got.rows, static_cast<int64_t>(expected.size()));
  ASSERT_EQ(got.cols, opts.num_bins);
  ASSERT_GT(got.rows, 10);
  double max_diff = 0;
  for (int64_t r = 0; r < got.rows; ++r) {
    for (int64_t b = 0; b < got.cols; ++b) {
      max_diff = std::max(max_diff, std::fabs(got.Row(r)[b] - expected[r][b]));
    }
  }
  EXPECT_LT(max_diff, 1e-3);
  RecordProperty("max_abs_diff", std::to_string(max_diff));
}

INSTANTIATE_TEST_SUITE_P(Options, FbankVsReference, ::testing::ValuesIn(Configs()),
                         [](const auto& param_info) { return param_info.param.name; });

TEST(Fbank, FrameCountFollowsKaldi) {
  FbankOptions opts;  // 400-sample frames, 160-sample shift at 16 kHz
  const FbankComputer snip(opts);
  EXPECT_EQ(snip.FrameLength(), 400);
  EXPECT_EQ(snip.FrameShift(), 160);
  EXPECT_EQ(snip.PaddedLength(), 512);
  opts.snip_edges = false;
  const FbankComputer centred(opts);
  for (int64_t n : {0, 1, 79, 80, 239, 240, 399, 400, 401, 559, 560, 16000, 16079, 16080}) {
    const int64_t expected_snip = n < 400 ? 0 : 1 + (n - 400) / 160;
    const int64_t expected_centred = (n + 80) / 160;
    EXPECT_EQ(snip.NumFrames(n), expected_snip) << n;
    EXPECT_EQ(centred.NumFrames(n), expected_centred) << n;
    const std::vector<float> x(static_cast<size_t>(n), 1.0f);
    EXPECT_EQ(snip.Compute(x).rows, expected_snip) << n;
    EXPECT_EQ(centred.Compute(x).rows, expected_centred) << n;
    EXPECT_EQ(snip.Compute(x).cols, 40);
  }
}

TEST(Fbank, SilenceGivesTheLogFloor) {
  const FbankComputer fbank(FbankOptions{});
  const kaldi::HostMatrix m = fbank.Compute(std::vector<float>(4000, 0.0f));
  ASSERT_GT(m.rows, 0);
  for (float v : m.data) EXPECT_FLOAT_EQ(v, std::log(FLT_EPSILON));
}

std::vector<double> MeanOverFrames(const kaldi::HostMatrix& m) {
  std::vector<double> mean(static_cast<size_t>(m.cols), 0.0);
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t b = 0; b < m.cols; ++b) mean[b] += m.Row(r)[b] / m.rows;
  }
  return mean;
}

std::vector<float> Tone(double freq, int rate, double seconds) {
  std::vector<float> x(static_cast<size_t>(rate * seconds));
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(10000 * std::sin(2 * kPi * freq * i / rate));
  }
  return x;
}

TEST(Fbank, ToneAtABinCentreLightsThatBin) {
  const FbankOptions opts;
  const FbankComputer fbank(opts);
  const double mel_low = Mel(opts.low_freq), mel_high = Mel(opts.sample_rate / 2.0);
  for (int bin : {4, 10, 20, 30, 38}) {
    const double freq =
        InverseMel(mel_low + (bin + 1) * (mel_high - mel_low) / (opts.num_bins + 1));
    const std::vector<double> mean = MeanOverFrames(fbank.Compute(Tone(freq, 16000, 0.3)));
    const auto peak = std::max_element(mean.begin(), mean.end()) - mean.begin();
    EXPECT_EQ(peak, bin) << freq << " Hz";
    // Far bins get only window leakage: many orders of magnitude less.
    for (int b = 0; b < opts.num_bins; ++b) {
      if (std::abs(b - bin) >= 4) {
        EXPECT_LT(mean[b], mean[bin] - 9.0) << freq << " Hz, bin " << b;
      }
    }
  }
}

TEST(Fbank, ToneLightsABinWhoseTriangleContainsIt) {
  const FbankOptions opts;
  const FbankComputer fbank(opts);
  const double mel_low = Mel(opts.low_freq), mel_high = Mel(opts.sample_rate / 2.0);
  const double delta = (mel_high - mel_low) / (opts.num_bins + 1);
  for (double freq : {300.0, 1000.0, 2500.0, 6000.0}) {
    const std::vector<double> mean = MeanOverFrames(fbank.Compute(Tone(freq, 16000, 0.3)));
    const auto peak = std::max_element(mean.begin(), mean.end()) - mean.begin();
    const double left = mel_low + peak * delta, right = left + 2 * delta;
    EXPECT_GT(Mel(freq), left) << freq << " Hz -> bin " << peak;
    EXPECT_LT(Mel(freq), right) << freq << " Hz -> bin " << peak;
  }
}

TEST(Fbank, ConcurrentComputeMatchesSerial) {
  const FbankComputer fbank(FbankOptions{});
  std::vector<std::vector<float>> signals;
  std::vector<kaldi::HostMatrix> serial;
  for (uint64_t s = 0; s < 4; ++s) {
    signals.push_back(TestSignal(16000, 1.0 + 0.1 * s, 100 + s));
    serial.push_back(fbank.Compute(signals.back()));
  }
  std::vector<kaldi::HostMatrix> parallel(signals.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < signals.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int repeat = 0; repeat < 3; ++repeat) parallel[t] = fbank.Compute(signals[t]);
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t t = 0; t < signals.size(); ++t) EXPECT_EQ(parallel[t].data, serial[t].data);
}

TEST(Fbank, TwoComputersAgreeAndWeightsAreTriangles) {
  const FbankComputer a(FbankOptions{}), b(FbankOptions{});
  const std::vector<float> x = TestSignal(16000, 0.3, 3);
  EXPECT_EQ(a.Compute(x).data, b.Compute(x).data);
  ASSERT_EQ(a.MelBins().size(), 40u);
  for (const auto& bin : a.MelBins()) {
    ASSERT_FALSE(bin.weights.empty());
    const float top = *std::max_element(bin.weights.begin(), bin.weights.end());
    EXPECT_GT(top, 0.5f);
    EXPECT_LE(top, 1.0f);
    for (float w : bin.weights) EXPECT_GE(w, 0.0f);
  }
  EXPECT_EQ(a.Window().size(), 400u);
  EXPECT_NEAR(a.Window()[0], 0.0f, 1e-7);
  EXPECT_NEAR(a.Window()[200], 1.0f, 1e-4);
}

void ExpectBadOptions(const FbankOptions& opts, const std::string& what) {
  try {
    FbankComputer fbank(opts);
    ADD_FAILURE() << "no error; expected one about '" << what << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(Fbank, RefusesBadOptions) {
  FbankOptions o;
  o.window = "blackman";
  ExpectBadOptions(o, "valid: povey, hamming, hanning");
  o = {};
  o.num_bins = 2;
  ExpectBadOptions(o, "num_bins 2");
  o = {};
  o.high_freq = 9000;
  ExpectBadOptions(o, "high_freq 9000");
  o = {};
  o.low_freq = 5000;
  o.high_freq = 4000;
  ExpectBadOptions(o, "low_freq 5000");
  o = {};
  o.num_bins = 128;  // the lowest triangles are narrower than one FFT bin
  ExpectBadOptions(o, "contains no FFT bin");
  o = {};
  o.frame_shift_ms = 0;
  o.preemph = 1.5;
  o.log_floor = 0;
  try {
    FbankComputer fbank(o);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {  // every problem in one line
    const std::string message = e.what();
    EXPECT_NE(message.find("frame_shift_ms"), std::string::npos) << message;
    EXPECT_NE(message.find("preemph"), std::string::npos) << message;
    EXPECT_NE(message.find("log_floor"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace mavg
