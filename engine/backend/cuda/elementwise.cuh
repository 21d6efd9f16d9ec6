#pragma once
// Element-wise kernel bodies: fills, scaled sums and row-vector broadcasts. Each body is called
// once per element (r, c) by the 2-D launch in launch.cuh on the device and by a plain loop on
// the host (tests). Each rounds as the CPU backend does (rounding.cuh): the same bits.

#include "engine/backend/cuda/dev_view.cuh"
#include "engine/backend/cuda/rounding.cuh"

namespace mavg::cuda {

struct FillBody {
  DevView x;
  float value;
  MAVG_HOST_DEVICE void operator()(int64_t r, int64_t c) const { x(r, c) = value; }
};

// y = alpha x + beta y; beta == 0 ignores y (NaN there does not propagate).
struct AxpbyBody {
  DevConstView x;
  DevView y;
  float alpha, beta;
  MAVG_HOST_DEVICE void operator()(int64_t r, int64_t c) const {
    y(r, c) = beta == 0.0f ? alpha * x(r, c) : SumOfProductsRn(alpha, x(r, c), beta, y(r, c));
  }
};

// m = beta m + alpha row (broadcast over rows).
struct AddRowVectorBody {
  const float* row;
  DevView m;
  float alpha, beta;
  MAVG_HOST_DEVICE void operator()(int64_t r, int64_t c) const {
    m(r, c) = beta == 0.0f ? alpha * row[c] : SumOfProductsRn(alpha, row[c], beta, m(r, c));
  }
};

}  // namespace mavg::cuda
