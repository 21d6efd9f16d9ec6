#include "engine/nn/affine.h"

namespace mavg {

void AffineLayer::Forward(Backend& backend, ConstMatrixView in, MatrixView out) const {
  backend.AddRowVector(1.0f, Bias(), 0.0f, out);
  backend.Gemm(false, true, 1.0f, in, Weights(), 1.0f, out);
}

void AffineLayer::Backward(Backend& backend, ConstMatrixView /*in*/, ConstMatrixView /*out*/,
                           ConstMatrixView out_grad, MatrixView in_grad) const {
  backend.Gemm(false, false, 1.0f, out_grad, Weights(), 0.0f, in_grad);
}

void AffineLayer::ParamGradient(Backend& backend, ConstMatrixView in, ConstMatrixView out_grad,
                                float alpha, float beta, MatrixView dw, MatrixView db) const {
  backend.Gemm(true, false, alpha, out_grad, in, beta, dw);
  backend.SumRows(alpha, out_grad, beta, db);
}

}  // namespace mavg
