#pragma once
// The CPU backend's element-wise hot loops, written so that the compiler vectorises them, and
// built for the widest vectors the CPU has (GCC's target_clones: AVX-512, AVX2, else SSE2,
// chosen once when the program loads).
//
// Every clone computes the same bits: the operations are IEEE adds, multiplies and divides in a
// fixed order (ISO C++ mode compiles without FMA contraction), and each vector lane does what
// the scalar loop does. So the results depend neither on the CPU nor on the thread count, like
// the rest of the backend (backend.h). The one exception is a NaN's sign and payload: which
// NaN an operation on NaNs returns is the instruction's choice (the min/max clamps differ
// between SSE and AVX-512 here); a NaN stays a NaN at every width.

#include <cstdint>

namespace mavg::vector_math {

// y[i] = 1 / (1 + exp(-x[i])), with Exp below; NaN stays NaN. x and y may be the same array.
void Sigmoid(const float* x, float* y, int64_t n);

// exp(x[i]) for every i: Cephes' single-precision polynomial after range reduction by ln 2
// (within 2 ulp of the exact value over [-87, 88]); arguments are clamped to that range
// (exp(-87) ~ 1.6e-38, the smallest normal float, and exp(88) ~ 1.65e38 < FLT_MAX), NaN stays NaN.
void Exp(const float* x, float* y, int64_t n);

// sum_i x[i]^2 in double, over 16 interleaved partial sums added pairwise at the end (a chain
// of one sum per element would run at the latency of an add), then the last n % 16 in order.
double SumSquares(const float* x, int64_t n);

namespace testing {
// The baseline builds (SSE2 on x86-64), which every wider build must match bit for bit.
void SigmoidBaseline(const float* x, float* y, int64_t n);
void ExpBaseline(const float* x, float* y, int64_t n);
double SumSquaresBaseline(const float* x, int64_t n);
}  // namespace testing

}  // namespace mavg::vector_math
