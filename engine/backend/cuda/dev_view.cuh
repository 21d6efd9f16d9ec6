#pragma once
// What a kernel body sees of a matrix: data and row stride, addressed by (row, column). Plain
// C++ (no CUDA headers), so the bodies built on it also compile for the host and are tested
// there (tests/unit/backend/cuda_kernels_test.cpp).

#include <cstdint>

#include "engine/backend/host_device.h"
#include "engine/backend/matrix_view.h"

namespace mavg::cuda {

template <typename T>
struct DevMatrix {
  T* data;
  int64_t stride;
  MAVG_HOST_DEVICE T& operator()(int64_t r, int64_t c) const { return data[r * stride + c]; }
  MAVG_HOST_DEVICE T* Row(int64_t r) const { return data + r * stride; }
};
using DevView = DevMatrix<float>;
using DevConstView = DevMatrix<const float>;

inline DevView Dev(MatrixView v) { return DevView{v.data, v.stride}; }
inline DevConstView Dev(ConstMatrixView v) { return DevConstView{v.data, v.stride}; }

// The shape an element-wise launch over views of one shape covers: when all are contiguous,
// one row of all their elements (long rows keep every thread busy), else their rows; (r, c)
// then means the same element in every view.
struct Extent {
  int64_t rows, cols;
  bool flat;
};
template <typename First, typename... Rest>
Extent CommonExtent(const First& first, const Rest&... rest) {
  if (first.Contiguous() && (rest.Contiguous() && ...)) {
    return Extent{first.Size() > 0 ? 1 : 0, first.Size(), true};
  }
  return Extent{first.rows, first.cols, false};
}
// `v` addressed with `e`'s shape.
template <typename T>
DevMatrix<T> WithExtent(const BasicMatrixView<T>& v, const Extent& e) {
  return DevMatrix<T>{v.data, e.flat ? e.cols : v.stride};
}

}  // namespace mavg::cuda
