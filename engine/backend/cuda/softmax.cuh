#pragma once
// Softmax and softmax + cross-entropy, a block per row in three phases separated by block
// reductions: (1) the row maximum with its first index, (2) the sum of exp(x - max), (3) the
// outputs. Each thread takes the columns tid, tid + nt, ... of the row. The host tests run the
// phases for every tid and combine the partials as the block reduction does.

#include <math.h>

#include "engine/backend/cuda/dev_view.cuh"

namespace mavg::cuda {

// A row maximum and its column; index < 0: no element seen.
struct ArgMax {
  float value;
  int64_t index;
};

// The CPU backend's arg-max is a left-to-right scan that moves on `x[c] > x[arg]` from arg = 0:
// a NaN in column 0 is the result whatever follows, a NaN elsewhere is never taken, and of equal
// values the first wins. The partials and their combination give that result in any split of
// the columns: a NaN past column 0 is not seen, one in column 0 wins every combination.
MAVG_HOST_DEVICE inline bool NaNInFirstColumn(const ArgMax& m) {
  return m.index == 0 && isnan(m.value);
}

// The larger value; on ties the smaller index (the first maximum, as a left-to-right scan).
MAVG_HOST_DEVICE inline ArgMax CombineArgMax(const ArgMax& a, const ArgMax& b) {
  if (a.index < 0 || NaNInFirstColumn(b)) return b;
  if (b.index < 0 || NaNInFirstColumn(a)) return a;
  if (b.value > a.value || (b.value == a.value && b.index < a.index)) return b;
  return a;
}
struct ArgMaxOp {
  MAVG_HOST_DEVICE ArgMax operator()(const ArgMax& a, const ArgMax& b) const {
    return CombineArgMax(a, b);
  }
};

MAVG_HOST_DEVICE inline ArgMax RowArgMaxPartial(const float* row, int64_t cols, int tid, int nt) {
  ArgMax m{0.0f, -1};
  for (int64_t c = tid; c < cols; c += nt) {
    const float v = row[c];
    if (isnan(v) && c != 0) continue;
    if (m.index < 0 || v > m.value) m = ArgMax{v, c};
  }
  return m;
}

// Phase 2, in float for Softmax (as the CPU backend) ...
MAVG_HOST_DEVICE inline float RowExpSumPartial(const float* row, int64_t cols, float mx, int tid,
                                               int nt) {
  float s = 0.0f;
  for (int64_t c = tid; c < cols; c += nt) s += expf(row[c] - mx);
  return s;
}
// ... and in double for the cross-entropy (the loss is a sum of logs over many frames).
MAVG_HOST_DEVICE inline double RowExpSumPartialDouble(const float* row, int64_t cols, float mx,
                                                      int tid, int nt) {
  double s = 0.0;
  for (int64_t c = tid; c < cols; c += nt) s += exp(static_cast<double>(row[c] - mx));
  return s;
}

// Phase 3: y = exp(x - mx) * inv (y may alias x).
MAVG_HOST_DEVICE inline void SoftmaxWrite(const float* x, float* y, int64_t cols, float mx,
                                          float inv, int tid, int nt) {
  for (int64_t c = tid; c < cols; c += nt) y[c] = expf(x[c] - mx) * inv;
}

// Phase 3 of the cross-entropy: grad = softmax - onehot(label) (grad may alias x).
MAVG_HOST_DEVICE inline void CrossEntropyGradWrite(const float* x, float* grad, int64_t cols,
                                                   float mx, float inv, int32_t label, int tid,
                                                   int nt) {
  for (int64_t c = tid; c < cols; c += nt) {
    const float p = expf(x[c] - mx) * inv;
    grad[c] = c == label ? p - 1.0f : p;
  }
}

// -log p(label) from the phase results; x_label read before phase 3 overwrites it.
MAVG_HOST_DEVICE inline double RowCrossEntropy(double exp_sum, float x_label, float mx) {
  return log(exp_sum) - static_cast<double>(x_label - mx);
}

// A label outside [0, cols) is reported through KernelError (kernels.h): row and label packed
// in one 64-bit word (0: none), so that one store reports both.
MAVG_HOST_DEVICE inline bool LabelValid(int32_t label, int64_t cols) {
  return label >= 0 && label < cols;
}
MAVG_HOST_DEVICE inline int64_t PackLabelError(int64_t row, int32_t label) {
  return static_cast<int64_t>((static_cast<uint64_t>(row) + 1) << 32 |
                              static_cast<uint32_t>(label));
}
MAVG_HOST_DEVICE inline void UnpackLabelError(int64_t packed, int64_t* row, int32_t* label) {
  *label = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(packed) & 0xffffffffu));
  *row = static_cast<int64_t>(static_cast<uint64_t>(packed) >> 32) - 1;
}

}  // namespace mavg::cuda
