// The CPU backend's vectorised element-wise kernels: against double-precision references, at
// the edges of their range, and bit for bit the same in the build the CPU runs as in the
// baseline build.
#include "engine/backend/cpu/vector_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace mavg::vector_math {
namespace {

std::vector<float> Grid(float lo, float hi, int n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) x[i] = lo + (hi - lo) * static_cast<float>(i) / (n - 1);
  return x;
}

TEST(VectorMath, ExpWithinTwoUlpOverItsRange) {
  const std::vector<float> x = Grid(-87.0f, 88.0f, 200001);
  std::vector<float> y(x.size());
  Exp(x.data(), y.data(), static_cast<int64_t>(x.size()));
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double ref = std::exp(static_cast<double>(x[i]));
    worst = std::max(worst, std::fabs(y[i] - ref) / ref);
  }
  EXPECT_LT(worst, 2.0 * std::ldexp(1.0, -23)) << "worst relative error " << worst;
  EXPECT_EQ(y[100000 + 0], y[100000]);  // (touches the middle)
}

TEST(VectorMath, SigmoidAgainstDouble) {
  const std::vector<float> x = Grid(-40.0f, 40.0f, 160001);
  std::vector<float> y(x.size());
  Sigmoid(x.data(), y.data(), static_cast<int64_t>(x.size()));
  double worst_rel = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double ref = 1.0 / (1.0 + std::exp(-static_cast<double>(x[i])));
    worst_rel = std::max(worst_rel, std::fabs(y[i] - ref) / ref);
    ASSERT_GE(y[i], 0.0f);
    ASSERT_LE(y[i], 1.0f);
  }
  EXPECT_LT(worst_rel, 4.0 * std::ldexp(1.0, -24)) << worst_rel;
  // In place, as the backend may call it.
  std::vector<float> z = x;
  Sigmoid(z.data(), z.data(), static_cast<int64_t>(z.size()));
  EXPECT_EQ(0, std::memcmp(z.data(), y.data(), y.size() * sizeof(float)));
}

TEST(VectorMath, EdgesAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float x[] = {inf, -inf, nan, 0.0f, -0.0f, 1e-30f, 200.0f, -200.0f, 87.5f};
  float s[9], e[9];
  Sigmoid(x, s, 9);
  Exp(x, e, 9);
  EXPECT_EQ(s[0], 1.0f);
  EXPECT_GE(s[1], 0.0f);
  EXPECT_LT(s[1], 1e-37f);
  EXPECT_TRUE(std::isnan(s[2]));
  EXPECT_TRUE(std::isnan(e[2]));
  EXPECT_EQ(s[3], 0.5f);
  EXPECT_EQ(s[4], 0.5f);
  EXPECT_EQ(e[3], 1.0f);
  EXPECT_EQ(e[5], 1.0f);
  EXPECT_TRUE(std::isfinite(e[0]) && e[0] > 1e38f);  // clamped at exp(88)
  EXPECT_GT(e[1], 0.0f);
  EXPECT_LT(e[1], 2e-38f);  // clamped at exp(-87)
  EXPECT_EQ(s[6], 1.0f);
  EXPECT_LT(s[7], 1e-37f);
  EXPECT_NEAR(e[8] / std::exp(87.5), 1.0, 1e-6);
}

TEST(VectorMath, SumSquaresAgainstLongDouble) {
  std::mt19937 gen(7);
  std::normal_distribution<float> d(0.0f, 3.0f);
  for (int n : {0, 1, 7, 8, 9, 63, 512, 513, 100003}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = d(gen);
    long double ref = 0;
    for (float v : x) ref += static_cast<long double>(v) * v;
    const double got = SumSquares(x.data(), n);
    EXPECT_NEAR(got, static_cast<double>(ref), 1e-12 * static_cast<double>(ref) + 1e-300) << n;
  }
}

// Whatever vector width this CPU runs, the bits are the baseline build's.
TEST(VectorMath, SameBitsAsTheBaselineBuild) {
  std::mt19937 gen(11);
  std::normal_distribution<float> d(0.0f, 20.0f);
  for (int n : {1, 5, 8, 15, 16, 17, 31, 64, 513, 4099}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = d(gen);
    if (n > 4) x[3] = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> a(x.size()), b(x.size());
    Sigmoid(x.data(), a.data(), n);
    testing::SigmoidBaseline(x.data(), b.data(), n);
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << "sigmoid " << n;
    Exp(x.data(), a.data(), n);
    testing::ExpBaseline(x.data(), b.data(), n);
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << "exp " << n;
    if (n > 4) x[3] = 1.0f;
    const double s1 = SumSquares(x.data(), n), s2 = testing::SumSquaresBaseline(x.data(), n);
    EXPECT_EQ(0, std::memcmp(&s1, &s2, sizeof s1)) << "sum of squares " << n;
  }
}

}  // namespace
}  // namespace mavg::vector_math
