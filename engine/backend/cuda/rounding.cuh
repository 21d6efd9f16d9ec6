#pragma once
// Float products and sums rounded one at a time, as the CPU backend computes them. nvcc
// contracts `a * b + c` into one fused multiply-add (a single rounding) unless told otherwise,
// which changes the last bit whenever the product is inexact (beta = 0.3, a momentum of 0.9):
// the bodies that promise the CPU backend's bits use these where a product meets a sum. On a
// device they are the intrinsics that are never contracted; on the host, the plain operators
// (an x86-64 build has no FMA in its target ISA to contract into, as the CPU backend relies on).

#include <math.h>

#include "engine/backend/host_device.h"

namespace mavg::cuda {

MAVG_HOST_DEVICE inline float MulRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
MAVG_HOST_DEVICE inline float AddRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
MAVG_HOST_DEVICE inline float SubRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

MAVG_HOST_DEVICE inline float DivRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
MAVG_HOST_DEVICE inline float SqrtRn(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return sqrtf(a);
#endif
}

// a * b + c * d, each product rounded (the CPU's alpha x + beta y).
MAVG_HOST_DEVICE inline float SumOfProductsRn(float a, float b, float c, float d) {
  return AddRn(MulRn(a, b), MulRn(c, d));
}

}  // namespace mavg::cuda
