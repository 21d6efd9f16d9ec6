#include "engine/speech/noise.h"

#include <cmath>

#include "engine/core/error.h"

namespace mavg {

std::vector<float> WhiteNoise(size_t n, Rng& rng) {
  std::vector<float> out(n);
  for (float& v : out) v = static_cast<float>(rng.Gaussian());
  return out;
}

std::vector<float> PinkNoise(size_t n, Rng& rng) {
  std::vector<float> out(n);
  double b0 = 0, b1 = 0, b2 = 0;
  for (float& v : out) {
    const double w = rng.Gaussian();
    b0 = 0.99765 * b0 + w * 0.0990460;
    b1 = 0.96300 * b1 + w * 0.2965164;
    b2 = 0.57000 * b2 + w * 1.0526913;
    v = static_cast<float>(b0 + b1 + b2 + w * 0.1848);
  }
  return out;
}

std::vector<float> BrownNoise(size_t n, Rng& rng) {
  std::vector<float> out(n);
  double y = 0.0;
  for (float& v : out) {
    y = 0.995 * y + rng.Gaussian();
    v = static_cast<float>(y);
  }
  return out;
}

std::vector<float> Babble(size_t n, const std::vector<const std::vector<float>*>& sources,
                          Rng& rng) {
  std::vector<float> out(n, 0.0f);
  for (const auto* src : sources) {
    if (src == nullptr || src->empty()) continue;
    size_t pos = static_cast<size_t>(rng.Below(src->size()));
    for (size_t i = 0; i < n; ++i) {
      out[i] += (*src)[pos];
      if (++pos == src->size()) pos = 0;
    }
  }
  return out;
}

double Power(const std::vector<float>& x, const std::vector<std::pair<size_t, size_t>>& ranges) {
  double sum = 0.0;
  size_t count = 0;
  auto add = [&](size_t b, size_t e) {
    for (size_t i = b; i < std::min(e, x.size()); ++i) sum += static_cast<double>(x[i]) * x[i];
    count += std::min(e, x.size()) - std::min(b, x.size());
  };
  if (ranges.empty()) {
    add(0, x.size());
  } else {
    for (const auto& [b, e] : ranges) add(b, e);
  }
  return count > 0 ? sum / static_cast<double>(count) : 0.0;
}

void MixAtSnr(std::vector<float>& speech, const std::vector<float>& noise, double snr_db,
              const std::vector<std::pair<size_t, size_t>>& speech_ranges) {
  MAVG_CHECK(noise.size() >= speech.size(), "noise shorter than the speech");
  const double ps = Power(speech, speech_ranges);
  const double pn = Power(noise, {{0, speech.size()}});
  if (ps <= 0.0 || pn <= 0.0) return;
  const double g = std::sqrt(ps / (pn * std::pow(10.0, snr_db / 10.0)));
  for (size_t i = 0; i < speech.size(); ++i) speech[i] += static_cast<float>(g * noise[i]);
}

}  // namespace mavg
