#pragma once
// Element-wise kernel bodies: fills, scaled sums and row-vector broadcasts. Each body is called
// once per element (r, c) by the 2-D launch in launch.cuh on the device and by a plain loop on
// the host (tests). Each rounds as the CPU backend does (rounding.cuh): the same bits.

#include "engine/backend/adam_scalars.h"
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

// One Adam step per element (AdamScalars, backend.h), each product and sum rounded on its own,
// the quotient and square root correctly rounded: the CPU backend's bits.
struct AdamBody {
  AdamScalars s;
  DevConstView g;
  DevView m, v, p;
  MAVG_HOST_DEVICE void operator()(int64_t r, int64_t c) const {
    const float gc = g(r, c);
    const float w = s.decay == 1.0f ? p(r, c) : MulRn(s.decay, p(r, c));
    const float mc = SumOfProductsRn(s.beta1, m(r, c), s.one_minus_beta1, gc);
    const float vc = SumOfProductsRn(s.beta2, v(r, c), s.one_minus_beta2, MulRn(gc, gc));
    m(r, c) = mc;
    v(r, c) = vc;
    const float denom = AddRn(MulRn(SqrtRn(vc), s.inv_sqrt_bc2), s.epsilon);
    p(r, c) = SubRn(w, DivRn(MulRn(s.step_size, mc), denom));
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
