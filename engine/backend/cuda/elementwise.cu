// Element-wise kernels: fills, scaled sums, row-vector broadcasts (bodies in elementwise.cuh).
#include "engine/backend/cuda/elementwise.cuh"
#include "engine/backend/cuda/kernels.h"
#include "engine/backend/cuda/launch.cuh"

namespace mavg::cuda {

void LaunchFill(Stream s, MatrixView x, float value) {
  const Extent e = CommonExtent(x);
  LaunchElementwise(s, e.rows, e.cols, FillBody{WithExtent(x, e), value});
}

void LaunchAxpby(Stream s, float alpha, ConstMatrixView x, float beta, MatrixView y) {
  const Extent e = CommonExtent(x, y);
  LaunchElementwise(s, e.rows, e.cols, AxpbyBody{WithExtent(x, e), WithExtent(y, e), alpha, beta});
}

void LaunchAdamUpdate(Stream s, const AdamScalars& a, ConstMatrixView g, MatrixView m, MatrixView v,
                      MatrixView p) {
  LaunchElementwise(s, g.rows, g.cols, AdamBody{a, Dev(g), Dev(m), Dev(v), Dev(p)});
}

void LaunchAddRowVector(Stream s, float alpha, ConstMatrixView row, float beta, MatrixView m) {
  LaunchElementwise(s, m.rows, m.cols, AddRowVectorBody{row.data, Dev(m), alpha, beta});
}

}  // namespace mavg::cuda
