#pragma once
// The shape checks of the Backend operations, written once for every backend so that a
// mismatch reads the same whatever the device.

#include <cstdint>

#include "engine/backend/matrix_view.h"
#include "engine/core/error.h"

namespace mavg {

inline void CheckSameShape(const char* op, ConstMatrixView a, ConstMatrixView b) {
  MAVG_CHECK(SameShape(a, b), "{}: shape mismatch {}x{} vs {}x{}", op, a.rows, a.cols, b.rows,
             b.cols);
}

// `v` must be one row of `cols` elements.
inline void CheckRowVector(const char* op, const char* what, ConstMatrixView v, int64_t cols) {
  MAVG_CHECK(v.rows == 1 && v.cols == cols, "{}: {} is {}x{}, needs 1x{}", op, what, v.rows, v.cols,
             cols);
}

struct GemmDims {
  int64_t m, n, k;
};

// c = op(a) op(b): the dimensions, or an error naming every shape.
inline GemmDims CheckGemm(bool trans_a, bool trans_b, ConstMatrixView a, ConstMatrixView b,
                          ConstMatrixView c) {
  const GemmDims d{trans_a ? a.cols : a.rows, trans_b ? b.rows : b.cols, trans_a ? a.rows : a.cols};
  const int64_t kb = trans_b ? b.cols : b.rows;
  MAVG_CHECK(d.k == kb && c.rows == d.m && c.cols == d.n,
             "Gemm: shapes {}{}x{} * {}{}x{} -> {}x{} do not match", trans_a ? "T" : "", a.rows,
             a.cols, trans_b ? "T" : "", b.rows, b.cols, c.rows, c.cols);
  return d;
}

}  // namespace mavg
