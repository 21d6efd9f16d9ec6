// Subnormal floats flushed to zero by the CPU backend (engine/backend/cpu/float_env.h): on the
// thread that creates it and on OpenMP threads, checked by what the arithmetic gives, against
// IEEE gradual underflow on a thread with the modes cleared.
#include "engine/backend/cpu/float_env.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <thread>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define MAVG_TEST_X86 1
#endif

namespace mavg {
namespace {

// 1e-20 * 1e-20 = 1e-40: below float's smallest normal (1.18e-38), so subnormal under IEEE
// gradual underflow and 0 when flushed. volatile: computed at run time, on this thread's modes.
float Underflow() {
  volatile float a = 1e-20f, b = 1e-20f;
  return a * b;
}

// A subnormal input: 1e-39 * 1e30 = 1e-9 under IEEE, 0 when inputs are read as zero.
float SubnormalInput() {
  volatile float s = 1e-39f, big = 1e30f;
  return s * big;
}

#if MAVG_TEST_X86
// The calling thread back to IEEE behaviour (the modes cleared), whatever earlier tests set.
void ClearModes() { _mm_setcsr(_mm_getcsr() & ~((1u << 15) | (1u << 6))); }
#endif

TEST(FloatEnv, IeeeByDefaultThenFlushedOnThisThread) {
#if MAVG_TEST_X86
  ClearModes();
  ASSERT_FALSE(SubnormalsFlushedOnThisThread());
  // The control: without the modes the arithmetic keeps subnormals (this test can fail).
  EXPECT_GT(Underflow(), 0.0f);
  EXPECT_LT(Underflow(), std::numeric_limits<float>::min());
  EXPECT_NEAR(SubnormalInput(), 1e-9f, 1e-12f);
  ASSERT_TRUE(FlushSubnormalsOnThisThread());
  EXPECT_TRUE(SubnormalsFlushedOnThisThread());
  EXPECT_EQ(Underflow(), 0.0f);
  EXPECT_EQ(SubnormalInput(), 0.0f);
  ClearModes();
#else
  GTEST_SKIP() << "the IEEE control needs x86's MXCSR";
#endif
}

TEST(FloatEnv, CpuBackendFlushesItsThreadAndItsPoolsThreads) {
#if MAVG_TEST_X86
  ClearModes();
#endif
  auto backend = CreateCpuBackend(3);
  EXPECT_TRUE(SubnormalsFlushedOnThisThread());
  EXPECT_NE(backend->Describe().find("subnormals flushed to zero"), std::string::npos)
      << backend->Describe();
  // A plain thread started after it inherits the modes.
  bool in_thread = false;
  std::thread([&] { in_thread = SubnormalsFlushedOnThisThread() && Underflow() == 0.0f; }).join();
  EXPECT_TRUE(in_thread);
  // Tiles of a GEMM run on the pool's threads too: subnormal inputs read as 0 in every tile
  // (1e-39 x 1e30 = 1e-9 per term otherwise), many times over so that the helpers take tiles.
  const int m = 1024, k = 256, n = 512;  // 4 tiles of 256 rows
  std::vector<float> a(static_cast<size_t>(m) * k, 1e-39f), b(static_cast<size_t>(k) * n, 1e30f);
  std::vector<float> c(static_cast<size_t>(m) * n);
  for (int round = 0; round < 20; ++round) {
    std::fill(c.begin(), c.end(), -1.0f);
    backend->Gemm(false, false, 1.0f, ConstMatrixView(a.data(), m, k),
                  ConstMatrixView(b.data(), k, n), 0.0f, MatrixView(c.data(), m, n));
    ASSERT_EQ(std::count(c.begin(), c.end(), 0.0f), static_cast<int64_t>(c.size())) << round;
  }
}

TEST(FloatEnv, GemmOnSubnormalsGivesZeros) {
  auto backend = CreateCpuBackend(1);
  // c = a * b with a's entries subnormal (1e-39) and b's 1e30: 1e-9 each under IEEE (x 64 terms),
  // exactly 0 with subnormal inputs read as zero; a normal row keeps its exact product.
  const int m = 4, k = 64, n = 8;
  std::vector<float> a(m * k, 1e-39f), b(k * n, 1e30f), c(m * n, -1.0f);
  for (int j = 0; j < k; ++j) a[3 * k + j] = 1e-30f;  // row 3: normal
  backend->Gemm(false, false, 1.0f, ConstMatrixView(a.data(), m, k),
                ConstMatrixView(b.data(), k, n), 0.0f, MatrixView(c.data(), m, n));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < n; ++j) EXPECT_EQ(c[i * n + j], 0.0f) << i << "," << j;
  for (int j = 0; j < n; ++j) EXPECT_NEAR(c[3 * n + j], 64.0f, 64.0f * 1e-5f) << j;
}

}  // namespace
}  // namespace mavg
