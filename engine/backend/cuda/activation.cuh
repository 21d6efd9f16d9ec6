#pragma once
// Activation kernel bodies: the functions and their derivatives written in terms of the forward
// output y, applied per element. y may alias x and dx may alias dy (each element is read before
// it is written, by the same thread). The derivatives and ReLU give the CPU backend's bits
// (rounding.cuh); sigmoid and tanh differ by the device's expf/tanhf (within 2 ulp).

#include <math.h>

#include "engine/backend/cuda/dev_view.cuh"
#include "engine/backend/cuda/rounding.cuh"

namespace mavg::cuda {

struct SigmoidOp {
  MAVG_HOST_DEVICE float operator()(float v) const { return 1.0f / (1.0f + expf(-v)); }
};
struct TanhOp {
  MAVG_HOST_DEVICE float operator()(float v) const { return tanhf(v); }
};
struct ReluOp {
  MAVG_HOST_DEVICE float operator()(float v) const { return v > 0.0f ? v : 0.0f; }
};
// Backward ops: (y, dy) -> dx.
struct SigmoidGradOp {
  MAVG_HOST_DEVICE float operator()(float y, float g) const { return g * y * (1.0f - y); }
};
struct TanhGradOp {
  MAVG_HOST_DEVICE float operator()(float y, float g) const { return g * SubRn(1.0f, MulRn(y, y)); }
};
struct ReluGradOp {
  MAVG_HOST_DEVICE float operator()(float y, float g) const { return y > 0.0f ? g : 0.0f; }
};

template <typename Op>
struct MapBody {
  DevConstView x;
  DevView y;
  Op op;
  MAVG_HOST_DEVICE void operator()(int64_t r, int64_t c) const { y(r, c) = op(x(r, c)); }
};

template <typename Op>
struct Map2Body {
  DevConstView a, b;
  DevView out;
  Op op;
  MAVG_HOST_DEVICE void operator()(int64_t r, int64_t c) const { out(r, c) = op(a(r, c), b(r, c)); }
};

}  // namespace mavg::cuda
