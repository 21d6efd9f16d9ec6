// The max-change scale factor's histogram: its bins, and its quantiles against the exact
// quantiles of the same values (a sorted vector).
#include "engine/backend/scale_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/core/rng.h"

namespace mavg {
namespace {

std::vector<double> Histogram(const std::vector<double>& scales) {
  std::vector<double> bins(kScaleBins, 0.0);
  for (double s : scales) bins[static_cast<size_t>(ScaleBin(s, s < 1.0))] += 1.0;
  return bins;
}

TEST(ScaleHistogram, Bins) {
  EXPECT_EQ(ScaleBin(1.0, false), 0);
  EXPECT_EQ(ScaleBin(1.0, true), 1) << "limited, though the ratio rounded to 1";
  EXPECT_EQ(ScaleBin(0.999, true), 1);
  // Bin P ends at 0.1 (-log10(0.1) * P = P).
  EXPECT_EQ(ScaleBin(0.1001, true), kScaleBinsPerDecade);
  EXPECT_EQ(ScaleBin(0.0999, true), kScaleBinsPerDecade + 1);
  EXPECT_EQ(ScaleBin(1e-7, true), kScaleBins - 1);
  EXPECT_EQ(ScaleBin(0.0, true), kScaleBins - 1);
  EXPECT_EQ(ScaleBin(std::numeric_limits<double>::quiet_NaN(), true), kScaleBins - 1);
  for (int bin = 1; bin < kScaleBins; ++bin) {
    EXPECT_EQ(ScaleBin(ScaleBinValue(bin), true), bin) << "a bin's value lies in it";
  }
  EXPECT_EQ(ScaleBinValue(0), 1.0);
}

TEST(ScaleHistogram, QuantilesMatchTheSortedValues) {
  Rng rng(11);
  for (int n : {1, 2, 3, 9, 10, 11, 30, 31, 99, 1000, 4321}) {
    for (double unlimited : {0.0, 0.3, 0.5, 0.95, 1.0}) {
      std::vector<double> scales;
      for (int i = 0; i < n; ++i) {
        // Unlimited updates (exactly 1) mixed with factors log-uniform over [1e-5, 1).
        scales.push_back(rng.Uniform() < unlimited ? 1.0 : std::pow(10.0, -5.0 * rng.Uniform()));
      }
      const std::vector<double> bins = Histogram(scales);
      std::vector<double> sorted = scales;
      std::sort(sorted.begin(), sorted.end());
      // The k-th smallest, k = ceil(q n), in integers.
      const double exact_p50 = sorted[static_cast<size_t>((n + 1) / 2 - 1)];
      const double exact_p10 = sorted[static_cast<size_t>((n + 9) / 10 - 1)];
      for (const auto& [q, exact] : {std::pair{0.5, exact_p50}, std::pair{0.1, exact_p10}}) {
        const std::optional<double> got = ScaleQuantile(bins, q);
        ASSERT_TRUE(got.has_value());
        if (exact == 1.0) {
          EXPECT_EQ(*got, 1.0) << "n " << n << " q " << q;
        } else {
          EXPECT_EQ(ScaleBin(*got, true), ScaleBin(exact, true)) << "n " << n << " q " << q;
          EXPECT_NEAR(std::log10(*got), std::log10(exact), 0.5 / kScaleBinsPerDecade + 1e-12)
              << "n " << n << " q " << q;
        }
      }
    }
  }
}

TEST(ScaleHistogram, EmptyAndAdditive) {
  EXPECT_FALSE(ScaleQuantile(std::vector<double>(kScaleBins, 0.0), 0.5).has_value());
  EXPECT_FALSE(ScaleQuantile({}, 0.5).has_value());
  // Histograms add: the pooled quantile is the quantile of the pooled values.
  const std::vector<double> a = Histogram({0.5, 0.5, 0.5}), b = Histogram({1.0, 1.0, 1.0, 1.0});
  std::vector<double> sum(kScaleBins);
  for (int i = 0; i < kScaleBins; ++i) sum[i] = a[i] + b[i];
  EXPECT_EQ(*ScaleQuantile(sum, 0.5), 1.0);  // the 4th of 7 values
  EXPECT_NEAR(*ScaleQuantile(sum, 0.1), 0.5, 0.5 * 0.03);
  EXPECT_NEAR(*ScaleQuantile(sum, 3.0 / 7.0), 0.5, 0.5 * 0.03);  // the 3rd
}

}  // namespace
}  // namespace mavg
