#pragma once
// Sample-rate conversion through libsamplerate (band-limited sinc interpolation).

#include <vector>

namespace mavg {

// Converts `in`, sampled at from_rate Hz, to to_rate Hz (both > 0, ratio within libsamplerate's
// 1/256..256). The output has about in.size() * to_rate / from_rate samples. Equal rates return
// a copy. The whole signal is converted in one call (src_simple), so there are no block-edge
// effects; the filter's start-up and tail are handled by libsamplerate.
std::vector<float> Resample(const std::vector<float>& in, int from_rate, int to_rate);

}  // namespace mavg
