#pragma once
// The NG-SGD row products and scalings: squared norms of rows (a block per row, each thread
// summing a strided share of the columns, then a block reduction) and rows scaled by a vector.

#include "engine/backend/cuda/dev_view.cuh"
#include "engine/backend/cuda/rounding.cuh"

namespace mavg::cuda {

// Thread `tid` of `nt`: its share (columns tid, tid + nt, ...) of the squared norm of a row,
// accumulated in double.
MAVG_HOST_DEVICE inline double RowSquaresPartial(const float* row, int64_t cols, int tid, int nt) {
  double s = 0.0;
  for (int64_t c = tid; c < cols; c += nt) s += static_cast<double>(row[c]) * row[c];
  return s;
}

// y = beta y + scales[r] x (row r scaled); beta == 0 ignores y. The CPU backend's bits.
struct MulRowsAddBody {
  const float* scales;
  DevConstView x;
  DevView y;
  float beta;
  MAVG_HOST_DEVICE void operator()(int64_t r, int64_t c) const {
    const float s = scales[r];
    y(r, c) = beta == 0.0f ? s * x(r, c) : SumOfProductsRn(s, x(r, c), beta, y(r, c));
  }
};

// y = alpha (*scalar) x + beta y, the scalar a result in device memory (NG-SGD's step size, the
// RBM's gated learning rate); beta == 0 ignores y. The CPU backend's bits.
struct AxpbyScaledBody {
  DevConstView x;
  DevView y;
  const float* scalar;
  float alpha, beta;
  MAVG_HOST_DEVICE void operator()(int64_t r, int64_t c) const {
    const float a = alpha * *scalar;
    y(r, c) = beta == 0.0f ? a * x(r, c) : SumOfProductsRn(a, x(r, c), beta, y(r, c));
  }
};

}  // namespace mavg::cuda
