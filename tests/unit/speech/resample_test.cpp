// Resampling keeps a tone's frequency and amplitude and the length ratio of the signal.

#include "engine/speech/resample.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <ostream>
#include <vector>

#include "engine/core/error.h"

namespace mavg {
namespace {

std::vector<float> Sine(double freq, double amplitude, int rate, double seconds) {
  std::vector<float> x(static_cast<size_t>(rate * seconds));
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(amplitude * std::sin(2 * std::numbers::pi * freq * i / rate));
  }
  return x;
}

// Frequency (Hz) of the largest DFT magnitude of x[begin, begin + n), on a 1/(n/rate) Hz grid.
double PeakFrequency(const std::vector<float>& x, size_t begin, size_t n, int rate) {
  std::vector<double> cos_table(n), sin_table(n);
  for (size_t i = 0; i < n; ++i) {
    cos_table[i] = std::cos(2 * std::numbers::pi * static_cast<double>(i) / n);
    sin_table[i] = std::sin(2 * std::numbers::pi * static_cast<double>(i) / n);
  }
  double best = -1, best_freq = 0;
  for (size_t k = 1; k < n / 2; ++k) {
    double re = 0, im = 0;
    for (size_t i = 0; i < n; ++i) {
      re += x[begin + i] * cos_table[k * i % n];
      im -= x[begin + i] * sin_table[k * i % n];
    }
    const double magnitude = re * re + im * im;
    if (magnitude > best) {
      best = magnitude;
      best_freq = static_cast<double>(k) * rate / n;
    }
  }
  return best_freq;
}

double Rms(const std::vector<float>& x, size_t begin, size_t n) {
  double sum = 0;
  for (size_t i = begin; i < begin + n; ++i) sum += static_cast<double>(x[i]) * x[i];
  return std::sqrt(sum / n);
}

struct Case {
  int from, to;
  double freq;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.freq << " Hz, " << c.from << " -> " << c.to << " Hz";
}

class ResampleTone : public ::testing::TestWithParam<Case> {};

TEST_P(ResampleTone, KeepsFrequencyAmplitudeAndLengthRatio) {
  const Case c = GetParam();
  const double seconds = 0.6;
  const std::vector<float> in = Sine(c.freq, 0.5, c.from, seconds);
  const std::vector<float> out = Resample(in, c.from, c.to);
  const double expected_length = static_cast<double>(in.size()) * c.to / c.from;
  EXPECT_NEAR(static_cast<double>(out.size()), expected_length, 2.0);

  // 0.25 s from the middle: a 4 Hz grid on which the tone falls exactly (all test tones are
  // multiples of 4 Hz), away from the filter's start-up and tail.
  const size_t n = static_cast<size_t>(c.to / 4);
  const size_t begin = out.size() / 2 - n / 2;
  EXPECT_NEAR(PeakFrequency(out, begin, n, c.to), c.freq, 1e-9);
  EXPECT_NEAR(Rms(out, begin, n), 0.5 / std::sqrt(2.0), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Rates, ResampleTone,
                         ::testing::Values(Case{22050, 16000, 1000}, Case{22050, 16000, 3000},
                                           Case{8000, 16000, 440}, Case{48000, 16000, 6000},
                                           Case{16000, 8000, 2500}));

TEST(Resample, RemovesToneAboveTheNewNyquist) {
  // 7 kHz at 22.05 kHz has no place below 4 kHz: resampling to 8 kHz must filter it out.
  const std::vector<float> in = Sine(7000, 0.5, 22050, 0.5);
  const std::vector<float> out = Resample(in, 22050, 8000);
  EXPECT_LT(Rms(out, out.size() / 4, out.size() / 2), 1e-3);
}

TEST(Resample, EqualRatesAndEmptyInputAreIdentity) {
  const std::vector<float> in = Sine(440, 0.3, 16000, 0.01);
  EXPECT_EQ(Resample(in, 16000, 16000), in);
  EXPECT_TRUE(Resample({}, 22050, 16000).empty());
}

TEST(Resample, RefusesBadRates) {
  const std::vector<float> in(100, 0.0f);
  EXPECT_THROW(Resample(in, 0, 16000), Error);
  EXPECT_THROW(Resample(in, 16000, -1), Error);
  EXPECT_THROW(Resample(in, 1, 16000), Error);  // ratio 16000 > 256
}

}  // namespace
}  // namespace mavg
