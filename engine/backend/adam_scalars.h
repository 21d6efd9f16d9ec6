#pragma once
// Included by the CUDA kernels as by the backends (no host-only headers).

namespace mavg {

// One Adam/AdamW step's scalars (Kingma & Ba 2015; decoupled weight decay, Loshchilov & Hutter
// 2019), as PyTorch's single-tensor AdamW computes the step t, in float:
//   p = decay p ; m = beta1 m + (1 - beta1) g ; v = beta2 v + (1 - beta2) g g ;
//   p = p - step_size m / (sqrt(v) inv_sqrt_bc2 + epsilon)
// with decay = 1 - lr wd, step_size = lr / (1 - beta1^t), inv_sqrt_bc2 = 1 / sqrt(1 - beta2^t)
// (computed in double by the caller, then rounded).
struct AdamScalars {
  float beta1 = 0.9f, one_minus_beta1 = 0.1f;
  float beta2 = 0.999f, one_minus_beta2 = 0.001f;
  float step_size = 0.0f, inv_sqrt_bc2 = 1.0f, epsilon = 1e-8f;
  float decay = 1.0f;
};

}  // namespace mavg
