#include "engine/backend/cpu/vector_math.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace mavg::vector_math {
namespace {

// Eight lanes at a time with the compiler's vector extensions (GCC and Clang): AVX2 and AVX-512
// builds use one 256-bit register, the SSE2 baseline two 128-bit ones; every lane does the
// scalar operations in the scalar order, so every build, and the scalar tail, gives the same bits.
using V8 = float __attribute__((vector_size(32)));
using U8 = uint32_t __attribute__((vector_size(32)));
using F4 = float __attribute__((vector_size(16)));
using D4 = double __attribute__((vector_size(32)));

template <typename T>
[[gnu::always_inline]] inline T Splat(typename std::remove_reference_t<decltype(T{}[0])> v) {
  return T{v, v, v, v, v, v, v, v};
}
[[gnu::always_inline]] inline D4 Splat4(double v) { return D4{v, v, v, v}; }
[[gnu::always_inline]] inline V8 Load(const float* p) {
  V8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void Store(float* p, V8 v) { std::memcpy(p, &v, sizeof v); }

// exp(x) = 2^n e^r, n = round(x / ln 2), r = x - n ln 2 (ln 2 in two parts, so that n ln 2 is
// exact), e^r by Cephes' expf polynomial on |r| <= ln 2 / 2, 2^n put into the exponent bits.
// Rounding to the nearest integer without a rounding instruction (SSE2 has none): adding
// 1.5 x 2^23 leaves the integer in the low mantissa bits. F is float or V8; the same operations
// in the same order for both.
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kRound = 12582912.0f;  // 1.5 x 2^23
constexpr float kLow = -87.0f, kHigh = 88.0f;
constexpr float kP[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                         4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

// e^r (r reduced), and the integer n modulo 2^32 as bits (unsigned: defined for any bits,
// NaN's included).
template <typename F, typename U>
[[gnu::always_inline]] inline F ExpReduced(F x, U* scale_bits, F one) {
  const F t = x * kLog2e + kRound;
  const F n = t - kRound;
  const U k = std::bit_cast<U>(t) - std::bit_cast<U>(kRound + 0 * one);
  *scale_bits = (k + 127u) << 23;
  F r = x - n * kLn2Hi;
  r = r - n * kLn2Lo;
  const F z = r * r;
  F p = kP[0] + 0 * one;
  for (int i = 1; i < 6; ++i) p = p * r + kP[i];
  return p * z + r + one;
}

[[gnu::always_inline]] inline float ExpOne(float x) {
  // NaN fails both comparisons and stays NaN.
  x = x < kLow ? kLow : x;
  x = x > kHigh ? kHigh : x;
  uint32_t bits = 0;
  const float p = ExpReduced<float, uint32_t>(x, &bits, 1.0f);
  return p * std::bit_cast<float>(bits);
}

[[gnu::always_inline]] inline V8 ExpEight(V8 x) {
  // The scalar clamps, lane by lane (NaN fails both and stays): one max and one min instruction.
  const V8 low = Splat<V8>(kLow), high = Splat<V8>(kHigh);
  x = x < low ? low : x;
  x = x > high ? high : x;
  U8 bits;
  const V8 p = ExpReduced<V8, U8>(x, &bits, Splat<V8>(1.0f));
  return p * std::bit_cast<V8>(bits);
}

// Four vectors per iteration: the exp is one long chain of dependent operations, and four
// independent chains keep the vector units busy where one would wait on latencies.
[[gnu::always_inline]] inline void SigmoidLoop(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  const V8 one = Splat<V8>(1.0f);
  for (; i + 32 <= n; i += 32) {
    V8 v[4];
    for (int j = 0; j < 4; ++j) v[j] = ExpEight(-Load(x + i + 8 * j));
    for (int j = 0; j < 4; ++j) Store(y + i + 8 * j, one / (one + v[j]));
  }
  for (; i + 8 <= n; i += 8) Store(y + i, one / (one + ExpEight(-Load(x + i))));
  for (; i < n; ++i) y[i] = 1.0f / (1.0f + ExpOne(-x[i]));
}

[[gnu::always_inline]] inline void ExpLoop(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    V8 v[4];
    for (int j = 0; j < 4; ++j) v[j] = ExpEight(Load(x + i + 8 * j));
    for (int j = 0; j < 4; ++j) Store(y + i + 8 * j, v[j]);
  }
  for (; i + 8 <= n; i += 8) Store(y + i, ExpEight(Load(x + i)));
  for (; i < n; ++i) y[i] = ExpOne(x[i]);
}

// 16 partial sums: lane j holds the elements at offsets i + j (i a multiple of 16), summed
// pairwise at the end, then the last n % 16 in order.
[[gnu::always_inline]] inline double SumSquaresFinish(double* lane, const float* x, int64_t i,
                                                      int64_t n) {
  for (int width = 8; width >= 1; width /= 2) {
    for (int j = 0; j < width; ++j) lane[j] = lane[2 * j] + lane[2 * j + 1];
  }
  double s = lane[0];
  for (; i < n; ++i) {
    const double v = x[i];
    s += v * v;
  }
  return s;
}

[[gnu::always_inline]] inline double SumSquaresLoop(const float* x, int64_t n) {
  // Four 4-lane accumulators (a 16-lane double vector would not stay in registers on AVX2).
  D4 acc[4] = {Splat4(0.0), Splat4(0.0), Splat4(0.0), Splat4(0.0)};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int j = 0; j < 4; ++j) {
      F4 f;
      std::memcpy(&f, x + i + 4 * j, sizeof f);
      const D4 v = __builtin_convertvector(f, D4);
      acc[j] += v * v;
    }
  }
  double lane[16];
  std::memcpy(lane, acc, sizeof lane);
  return SumSquaresFinish(lane, x, i, n);
}

// The same loops three times: the baseline (SSE2 on x86-64) and, where the compiler can target
// them, AVX2 and AVX-512 builds; Dispatch picks one when the program starts.
struct Kernels {
  void (*sigmoid)(const float*, float*, int64_t);
  void (*exp)(const float*, float*, int64_t);
  double (*sum_squares)(const float*, int64_t);
};

void SigmoidBase(const float* x, float* y, int64_t n) { SigmoidLoop(x, y, n); }
void ExpBase(const float* x, float* y, int64_t n) { ExpLoop(x, y, n); }
double SumSquaresBase(const float* x, int64_t n) { return SumSquaresLoop(x, n); }

#if defined(__x86_64__) && defined(__GNUC__)
#define MAVG_TARGETED_KERNELS(suffix, isa)                                                    \
  [[gnu::target(isa)]] void Sigmoid##suffix(const float* x, float* y, int64_t n) {            \
    SigmoidLoop(x, y, n);                                                                        \
  }                                                                                              \
  [[gnu::target(isa)]] void Exp##suffix(const float* x, float* y, int64_t n) {                \
    ExpLoop(x, y, n);                                                                            \
  }
MAVG_TARGETED_KERNELS(Avx2, "avx2")
MAVG_TARGETED_KERNELS(Avx512, "avx512f")
#undef MAVG_TARGETED_KERNELS

// The sum of squares on AVX2 (and AVX-512) with intrinsics: the vector extension's
// float-to-double conversion compiles to two half conversions and an insert there, the
// intrinsic to one instruction. The same lanes, products and sums as SumSquaresLoop.
[[gnu::target("avx2")]] double SumSquaresAvx2(const float* x, int64_t n) {
  __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(),
                    _mm256_setzero_pd()};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int j = 0; j < 4; ++j) {
      const __m256d v = _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4 * j));
      acc[j] = _mm256_add_pd(acc[j], _mm256_mul_pd(v, v));
    }
  }
  double lane[16];
  for (int j = 0; j < 4; ++j) _mm256_storeu_pd(lane + 4 * j, acc[j]);
  return SumSquaresFinish(lane, x, i, n);
}
#endif

Kernels Dispatch() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {SigmoidAvx512, ExpAvx512, SumSquaresAvx2};
  if (__builtin_cpu_supports("avx2")) return {SigmoidAvx2, ExpAvx2, SumSquaresAvx2};
#endif
  return {SigmoidBase, ExpBase, SumSquaresBase};
}

const Kernels& Chosen() {
  static const Kernels k = Dispatch();
  return k;
}

}  // namespace

void Sigmoid(const float* x, float* y, int64_t n) { Chosen().sigmoid(x, y, n); }
void Exp(const float* x, float* y, int64_t n) { Chosen().exp(x, y, n); }
double SumSquares(const float* x, int64_t n) { return Chosen().sum_squares(x, n); }

namespace testing {
void SigmoidBaseline(const float* x, float* y, int64_t n) { SigmoidBase(x, y, n); }
void ExpBaseline(const float* x, float* y, int64_t n) { ExpBase(x, y, n); }
double SumSquaresBaseline(const float* x, int64_t n) { return SumSquaresBase(x, n); }
}  // namespace testing

}  // namespace mavg::vector_math
