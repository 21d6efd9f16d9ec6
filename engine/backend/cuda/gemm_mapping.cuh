#pragma once
// The one place where mavg's row-major GEMM becomes cuBLAS's column-major one. A row-major
// matrix with row stride s is, read column-major, its transpose with leading dimension s. So
// C = op(A) op(B) (row-major) is C^T = op(B)^T op(A)^T (column-major): cuBLAS is called with
// the operands swapped, each keeping its own transpose flag, and m and n exchanged.
// Plain C++: tests/unit/backend/cuda_kernels_test.cpp runs a column-major reference GEMM on
// these arguments and compares with the CPU backend.

#include <algorithm>
#include <cstdint>

#include "engine/backend/matrix_view.h"

namespace mavg::cuda {

struct ColumnMajorGemm {
  bool trans_first, trans_second;  // op of the first and second operand
  int64_t m, n, k;                 // result m x n (column-major), inner dimension k
  const float* first;
  int64_t ld_first;
  const float* second;
  int64_t ld_second;
  float* c;
  int64_t ldc;
};

// c (rows x cols) = op(a) op(b), row-major; shapes already checked.
inline ColumnMajorGemm MapRowMajorGemm(bool trans_a, bool trans_b, ConstMatrixView a,
                                       ConstMatrixView b, MatrixView c) {
  const int64_t k = trans_a ? a.rows : a.cols;
  const auto ld = [](int64_t stride) { return std::max<int64_t>(stride, 1); };
  return ColumnMajorGemm{trans_b,      trans_a, c.cols,       c.rows, k,           b.data,
                         ld(b.stride), a.data,  ld(a.stride), c.data, ld(c.stride)};
}

}  // namespace mavg::cuda
