#pragma once
// Reductions: column sums (a thread per column, rows added in order, in double: the same
// operations as the CPU backend, so the sums agree bit for bit) and the total sum of squares
// (per-row partial sums, then one block over the rows: an order fixed by the launch shape, not
// by timing, so repeated runs agree).

#include "engine/backend/cuda/dev_view.cuh"
#include "engine/backend/cuda/rounding.cuh"

namespace mavg::cuda {

// out[c] = beta out[c] + alpha sum_r m(r, c).
struct ColumnSumBody {
  DevConstView m;
  int64_t rows;
  float* out;
  float alpha, beta;
  MAVG_HOST_DEVICE void operator()(int64_t c) const {
    double acc = 0.0;
    for (int64_t r = 0; r < rows; ++r) acc += m(r, c);
    const float s = static_cast<float>(alpha * acc);
    out[c] = beta == 0.0f ? s : AddRn(s, MulRn(beta, out[c]));
  }
};

// Thread `tid` of `nt`: its share (elements tid, tid + nt, ...) of the sum of `values`.
template <typename T>
MAVG_HOST_DEVICE double StridedSumPartial(const T* values, int64_t n, int tid, int nt) {
  double s = 0.0;
  for (int64_t i = tid; i < n; i += nt) s += static_cast<double>(values[i]);
  return s;
}

}  // namespace mavg::cuda
