#pragma once
// Random-fill kernel bodies over the counter-based generator (backend/counter_rng.h): element
// (r, c) of a rows x cols fill is draw offset + r * cols + c, exactly as on the CPU backend.

#include "engine/backend/counter_rng.h"
#include "engine/backend/cuda/dev_view.cuh"

namespace mavg::cuda {

MAVG_HOST_DEVICE inline uint64_t DrawIndex(uint64_t offset, int64_t cols, int64_t r, int64_t c) {
  return offset + static_cast<uint64_t>(r) * static_cast<uint64_t>(cols) + static_cast<uint64_t>(c);
}

struct UniformBody {
  DevView x;
  int64_t cols;  // of the logical matrix (the draw index is row-major over it)
  uint64_t seed, offset;
  MAVG_HOST_DEVICE void operator()(int64_t r, int64_t c) const {
    x(r, c) = counter_rng::Uniform(seed, DrawIndex(offset, cols, r, c));
  }
};

struct GaussianBody {
  DevView x;
  int64_t cols;
  uint64_t seed, offset;
  float stddev;
  MAVG_HOST_DEVICE void operator()(int64_t r, int64_t c) const {
    x(r, c) = stddev * counter_rng::Gaussian(seed, DrawIndex(offset, cols, r, c));
  }
};

// out = 1 where draw < prob, else 0; out may alias probs.
struct BernoulliBody {
  DevConstView probs;
  DevView out;
  int64_t cols;
  uint64_t seed, offset;
  MAVG_HOST_DEVICE void operator()(int64_t r, int64_t c) const {
    out(r, c) =
        counter_rng::Uniform(seed, DrawIndex(offset, cols, r, c)) < probs(r, c) ? 1.0f : 0.0f;
  }
};

}  // namespace mavg::cuda
