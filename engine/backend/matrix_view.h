#pragma once
// Non-owning, strided, row-major views of device memory. A view does not know which device its
// memory lives on: pass it only to the Backend that allocated it.

#include <cstdint>
#include <type_traits>

#include "engine/core/error.h"

namespace mavg {

template <typename T>
struct BasicMatrixView {
  T* data = nullptr;  // [rows x stride], not owned
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t stride = 0;  // elements between the starts of consecutive rows (>= cols)

  BasicMatrixView() = default;
  BasicMatrixView(T* d, int64_t r, int64_t c) : data(d), rows(r), cols(c), stride(c) {}
  BasicMatrixView(T* d, int64_t r, int64_t c, int64_t s) : data(d), rows(r), cols(c), stride(s) {}
  // A mutable view converts to a const one.
  template <typename U,
            typename = std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>>>
  BasicMatrixView(const BasicMatrixView<U>& other)  // NOLINT(google-explicit-constructor)
      : data(other.data), rows(other.rows), cols(other.cols), stride(other.stride) {}

  int64_t Size() const { return rows * cols; }
  bool Empty() const { return rows == 0 || cols == 0; }
  bool Contiguous() const { return stride == cols || rows <= 1; }
  T* Row(int64_t r) const { return data + r * stride; }

  BasicMatrixView RowRange(int64_t begin, int64_t n) const {
    MAVG_CHECK(begin >= 0 && n >= 0 && begin + n <= rows, "row range [{}, {}) outside {} rows",
               begin, begin + n, rows);
    return BasicMatrixView(data + begin * stride, n, cols, stride);
  }
  BasicMatrixView ColRange(int64_t begin, int64_t n) const {
    MAVG_CHECK(begin >= 0 && n >= 0 && begin + n <= cols, "column range [{}, {}) outside {} cols",
               begin, begin + n, cols);
    return BasicMatrixView(data + begin, rows, n, stride);
  }
};

using MatrixView = BasicMatrixView<float>;
using ConstMatrixView = BasicMatrixView<const float>;

template <typename A, typename B>
bool SameShape(const BasicMatrixView<A>& a, const BasicMatrixView<B>& b) {
  return a.rows == b.rows && a.cols == b.cols;
}

}  // namespace mavg
