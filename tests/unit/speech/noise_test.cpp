// Noise generators and mixing at a target SNR, against closed forms.
#include "engine/speech/noise.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mavg {
namespace {

TEST(Noise, MixAtSnrHitsTheTargetExactly) {
  Rng rng(1);
  std::vector<float> speech(16000);
  for (size_t i = 0; i < speech.size(); ++i) speech[i] = 0.3f * std::sin(0.05f * i);
  const std::vector<float> noise = WhiteNoise(speech.size(), rng);
  for (double snr : {-5.0, 0.0, 10.0, 30.0}) {
    std::vector<float> mixed = speech;
    MixAtSnr(mixed, noise, snr, {});
    std::vector<float> added(mixed.size());
    for (size_t i = 0; i < mixed.size(); ++i) added[i] = mixed[i] - speech[i];
    const double got = 10 * std::log10(Power(speech, {}) / Power(added, {}));
    EXPECT_NEAR(got, snr, 1e-3) << snr;
  }
}

TEST(Noise, SpeechPowerIsMeasuredOnTheVoicedRanges) {
  // Half silence, half signal: measured on the voiced half, the signal is twice as strong.
  std::vector<float> speech(2000, 0.0f);
  for (size_t i = 1000; i < 2000; ++i) speech[i] = (i % 2) ? 0.5f : -0.5f;
  Rng rng(2);
  const std::vector<float> noise = WhiteNoise(speech.size(), rng);
  std::vector<float> a = speech, b = speech;
  MixAtSnr(a, noise, 10.0, {});
  MixAtSnr(b, noise, 10.0, {{1000, 2000}});
  EXPECT_NEAR(Power(speech, {{1000, 2000}}), 2 * Power(speech, {}), 1e-9);
  std::vector<float> na(a.size()), nb(b.size());
  for (size_t i = 0; i < a.size(); ++i) na[i] = a[i] - speech[i], nb[i] = b[i] - speech[i];
  EXPECT_NEAR(Power(nb, {}) / Power(na, {}), 2.0, 1e-6);
}

double BandPower(const std::vector<float>& x, double lo, double hi) {
  // Power in [lo, hi) (fractions of the sampling rate) by a direct DFT on a few bins.
  double p = 0;
  const size_t n = 4096;
  for (size_t k = static_cast<size_t>(lo * n); k < static_cast<size_t>(hi * n); ++k) {
    double re = 0, im = 0;
    for (size_t t = 0; t < n; ++t) {
      re += x[t] * std::cos(2 * M_PI * k * t / n);
      im -= x[t] * std::sin(2 * M_PI * k * t / n);
    }
    p += re * re + im * im;
  }
  return p;
}

TEST(Noise, PinkNoiseFallsAboutThreeDecibelsPerOctave) {
  Rng rng(3);
  const std::vector<float> pink = PinkNoise(4096, rng);
  Rng rng2(3);
  const std::vector<float> white = WhiteNoise(4096, rng2);
  // Octave bands: an equal-width power density (white) doubles per octave band; pink stays flat.
  const double w_ratio = BandPower(white, 0.1, 0.2) / BandPower(white, 0.05, 0.1);
  const double p_ratio = BandPower(pink, 0.1, 0.2) / BandPower(pink, 0.05, 0.1);
  EXPECT_NEAR(w_ratio, 2.0, 0.5);
  EXPECT_NEAR(p_ratio, 1.0, 0.35);
}

TEST(Noise, BrownNoiseFallsAboutSixDecibelsPerOctave) {
  Rng rng(5);
  const std::vector<float> brown = BrownNoise(4096, rng);
  // A 1/f^2 density over octave bands twice as wide: half the power per octave up (its corner,
  // (1 - 0.995) / 2 pi of the sampling rate, lies far below these bands).
  const double ratio = BandPower(brown, 0.1, 0.2) / BandPower(brown, 0.05, 0.1);
  EXPECT_NEAR(ratio, 0.5, 0.2);
  const double pink_like = BandPower(brown, 0.2, 0.4) / BandPower(brown, 0.05, 0.1);
  EXPECT_NEAR(pink_like, 0.25, 0.12);  // two octaves: a quarter
}

TEST(Noise, BabbleSumsLoopedSources) {
  Rng rng(4);
  const std::vector<float> a(10, 1.0f), b(7, 2.0f);
  const std::vector<float> babble = Babble(25, {&a, &b}, rng);
  ASSERT_EQ(babble.size(), 25u);
  for (float v : babble) EXPECT_EQ(v, 3.0f);
}

}  // namespace
}  // namespace mavg
