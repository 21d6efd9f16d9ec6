// Activation kernels and their derivatives (bodies in activation.cuh).
#include "engine/backend/cuda/activation.cuh"
#include "engine/backend/cuda/kernels.h"
#include "engine/backend/cuda/launch.cuh"

namespace mavg::cuda {
namespace {

template <typename Op>
void Map(Stream s, ConstMatrixView x, MatrixView y) {
  const Extent e = CommonExtent(x, y);
  LaunchElementwise(s, e.rows, e.cols, MapBody<Op>{WithExtent(x, e), WithExtent(y, e), Op{}});
}

template <typename Op>
void Map2(Stream s, ConstMatrixView a, ConstMatrixView b, MatrixView out) {
  const Extent e = CommonExtent(a, b, out);
  LaunchElementwise(s, e.rows, e.cols,
                    Map2Body<Op>{WithExtent(a, e), WithExtent(b, e), WithExtent(out, e), Op{}});
}

}  // namespace

void LaunchActivation(Stream s, Activation f, ConstMatrixView x, MatrixView y) {
  switch (f) {
    case Activation::kSigmoid:
      return Map<SigmoidOp>(s, x, y);
    case Activation::kTanh:
      return Map<TanhOp>(s, x, y);
    case Activation::kRelu:
      return Map<ReluOp>(s, x, y);
  }
}

void LaunchActivationBackward(Stream s, Activation f, ConstMatrixView y, ConstMatrixView dy,
                              MatrixView dx) {
  switch (f) {
    case Activation::kSigmoid:
      return Map2<SigmoidGradOp>(s, y, dy, dx);
    case Activation::kTanh:
      return Map2<TanhGradOp>(s, y, dy, dx);
    case Activation::kRelu:
      return Map2<ReluGradOp>(s, y, dy, dx);
  }
}

}  // namespace mavg::cuda
