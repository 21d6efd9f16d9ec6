#pragma once
// Counter-based random numbers for the backends' random fills. Element i of a fill with
// (seed, offset) depends only on (seed, offset + i): CPU threads and GPU kernels produce the
// same numbers whatever their work split, and a stream can be continued by advancing the
// offset. The generator is splitmix64 evaluated at an arbitrary position: the Weyl state
// key + (n + 1) * golden, through splitmix64's finaliser (a generator that passes BigCrush);
// the key is the finalised seed, so nearby seeds give unrelated streams.
// Header-only and free of host-only calls, so CUDA kernels can include it.

#include <cmath>
#include <cstdint>

#include "engine/backend/host_device.h"

namespace mavg::counter_rng {

MAVG_HOST_DEVICE inline uint64_t Finalize(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// 64 random bits: draw number n of the stream `seed`.
MAVG_HOST_DEVICE inline uint64_t Bits(uint64_t seed, uint64_t n) {
  const uint64_t key = Finalize(seed + 0x9E3779B97F4A7C15ULL);
  return Finalize(key + (n + 1) * 0x9E3779B97F4A7C15ULL);
}

// Uniform on [0, 1) with 24 random bits (every value exactly representable as a float).
MAVG_HOST_DEVICE inline float Uniform(uint64_t seed, uint64_t n) {
  return static_cast<float>(Bits(seed, n) >> 40) * (1.0f / 16777216.0f);
}

// Standard normal for element n, from draws 2n and 2n+1 (Box-Muller, cosine branch), computed
// in double so that host and device agree to float rounding.
MAVG_HOST_DEVICE inline float Gaussian(uint64_t seed, uint64_t n) {
  const double u1 = static_cast<double>((Bits(seed, 2 * n) >> 11) + 1) * (1.0 / 9007199254740992.0);
  const double u2 = static_cast<double>(Bits(seed, 2 * n + 1) >> 11) * (1.0 / 9007199254740992.0);
  return static_cast<float>(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

}  // namespace mavg::counter_rng
