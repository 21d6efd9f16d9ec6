#pragma once
// Additive noise for the digits corpus: white, pink (1/f), brown (1/f^2) and babble (other
// utterances summed), mixed into speech at a target signal-to-noise ratio.

#include <vector>

#include "engine/core/rng.h"

namespace mavg {

std::vector<float> WhiteNoise(size_t n, Rng& rng);
// Pink noise: white noise through Paul Kellett's economy 1/f filter (about -3 dB/octave).
std::vector<float> PinkNoise(size_t n, Rng& rng);
// Brown (red) noise: white noise through a leaky integrator, y[n] = 0.995 y[n-1] + w[n]:
// -6 dB/octave above its corner (about 13 Hz at 16 kHz), the rumble of traffic and machinery.
std::vector<float> BrownNoise(size_t n, Rng& rng);
// Babble: the sources summed, each from a random offset and looped to length n.
std::vector<float> Babble(size_t n, const std::vector<const std::vector<float>*>& sources,
                          Rng& rng);

// Mean power of x over [begin, end) sample ranges (all of x when `ranges` is empty).
double Power(const std::vector<float>& x, const std::vector<std::pair<size_t, size_t>>& ranges);
// speech += g * noise with g chosen so that 10 log10(P_speech / P_noise) = snr_db, where
// P_speech is measured over `speech_ranges` (the voiced part; all of it when empty).
void MixAtSnr(std::vector<float>& speech, const std::vector<float>& noise, double snr_db,
              const std::vector<std::pair<size_t, size_t>>& speech_ranges);

}  // namespace mavg
