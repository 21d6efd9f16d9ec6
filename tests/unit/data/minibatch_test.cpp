// Splicing, global CMVN, the randomiser buffer and frame-balanced sharding.
#include "engine/data/minibatch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "engine/core/rng.h"
#include "engine/data/cmvn.h"

namespace mavg {
namespace {

// Utterance u has n_u frames; frame t of utterance u has value 100*u + t in every dim, label
// (u + t) % 7.
Dataset MakeData(const std::vector<int>& lengths, int dim) {
  Dataset d;
  d.dim = dim;
  d.source = "synthetic";
  for (size_t u = 0; u < lengths.size(); ++u) {
    std::vector<float> frames(static_cast<size_t>(lengths[u]) * dim);
    std::vector<int32_t> labels(lengths[u]);
    for (int t = 0; t < lengths[u]; ++t) {
      for (int k = 0; k < dim; ++k) frames[t * dim + k] = static_cast<float>(100 * u + t);
      labels[t] = static_cast<int32_t>((u + t) % 7);
    }
    d.Append("utt" + std::to_string(u), frames.data(), lengths[u], labels.data());
  }
  return d;
}

TEST(Splice, RepeatsEdgeFrames) {
  Dataset d = MakeData({4}, 2);
  std::vector<float> out(2 * 5);
  SpliceFrame(d, 0, 0, 2, out.data());
  EXPECT_EQ(out, (std::vector<float>{0, 0, 0, 0, 0, 0, 1, 1, 2, 2}));
  SpliceFrame(d, 0, 3, 2, out.data());
  EXPECT_EQ(out, (std::vector<float>{1, 1, 2, 2, 3, 3, 3, 3, 3, 3}));
  std::vector<float> one(2);
  SpliceFrame(d, 0, 2, 0, one.data());
  EXPECT_EQ(one, (std::vector<float>{2, 2}));
}

TEST(Cmvn, NormalisesToZeroMeanUnitVarianceAndFloorsConstantDims) {
  Dataset d;
  d.dim = 3;
  Rng rng(3);
  std::vector<float> frames;
  for (int t = 0; t < 5000; ++t) {
    frames.push_back(static_cast<float>(5.0 + 2.0 * rng.Gaussian()));
    frames.push_back(static_cast<float>(-1.0 + 0.1 * rng.Gaussian()));
    frames.push_back(7.0f);  // constant
  }
  d.Append("u", frames.data(), 5000, nullptr);
  CmvnStats cmvn = ComputeGlobalCmvn(d);
  EXPECT_NEAR(cmvn.shift[0], -5.0, 0.1);
  EXPECT_NEAR(1.0 / cmvn.scale[0], 2.0, 0.1);
  EXPECT_NEAR(1.0 / cmvn.scale[1], 0.1, 0.01);
  EXPECT_TRUE(std::isfinite(cmvn.scale[2]));
  ApplyCmvn(cmvn, d);
  for (int k = 0; k < 2; ++k) {
    double s = 0, s2 = 0;
    for (int64_t f = 0; f < d.NumFrames(); ++f)
      s += d.Frame(f)[k], s2 += d.Frame(f)[k] * d.Frame(f)[k];
    EXPECT_NEAR(s / 5000, 0.0, 1e-4);
    EXPECT_NEAR(s2 / 5000, 1.0, 1e-3);
  }
  for (int64_t f = 0; f < d.NumFrames(); ++f) EXPECT_EQ(d.Frame(f)[2], 0.0f);
}

// Collects all minibatches as (first value of the centre frame, label).
std::vector<std::pair<float, int32_t>> ReadAll(MinibatchReader& r, int context, int dim,
                                               int64_t* batches = nullptr) {
  std::vector<std::pair<float, int32_t>> frames;
  std::vector<float> x;
  std::vector<int32_t> y;
  const int spliced = dim * (2 * context + 1);
  int64_t nb = 0;
  while (int64_t n = r.Next(x, y)) {
    ++nb;
    EXPECT_EQ(static_cast<int64_t>(x.size()), n * spliced);
    for (int64_t i = 0; i < n; ++i) frames.emplace_back(x[i * spliced + context * dim], y[i]);
  }
  if (batches) *batches = nb;
  return frames;
}

TEST(MinibatchReader, ShuffledEpochCoversFramesOnceAndDropsOnlyTheTail) {
  Dataset d = MakeData({30, 7, 55, 12, 40, 3}, 2);  // 147 frames
  MinibatchOptions o;
  o.minibatch = 16;
  o.randomizer_size = 50;
  o.context = 1;
  o.seed = 5;
  MinibatchReader r(d, AllUtterances(d), o);
  int64_t batches = 0;
  auto frames = ReadAll(r, 1, 2, &batches);
  EXPECT_EQ(batches, 147 / 16);
  EXPECT_EQ(r.FramesDropped(), 147 % 16);
  std::set<float> seen;
  for (auto& [v, label] : frames) {
    EXPECT_TRUE(seen.insert(v).second) << "frame " << v << " twice";
    const int u = static_cast<int>(v) / 100, t = static_cast<int>(v) % 100;
    EXPECT_EQ(label, (u + t) % 7) << "label travels with its frame";
  }
  // Shuffled: not in utterance order.
  std::vector<float> order;
  for (auto& f : frames) order.push_back(f.first);
  EXPECT_FALSE(std::is_sorted(order.begin(), order.end()));
}

TEST(MinibatchReader, SameSeedSameOrderOtherSeedOtherOrder) {
  Dataset d = MakeData({30, 7, 55, 12, 40, 3}, 1);
  MinibatchOptions o;
  o.minibatch = 8;
  o.randomizer_size = 64;
  o.seed = 1;
  MinibatchReader a(d, AllUtterances(d), o), b(d, AllUtterances(d), o);
  o.seed = 2;
  MinibatchReader c(d, AllUtterances(d), o);
  auto fa = ReadAll(a, 0, 1), fb = ReadAll(b, 0, 1), fc = ReadAll(c, 0, 1);
  EXPECT_EQ(fa, fb);
  EXPECT_NE(fa, fc);
}

TEST(MinibatchReader, SkipThenReadEqualsReadingEverything) {
  Dataset d = MakeData({30, 7, 55, 12, 40, 3}, 2);
  MinibatchOptions o;
  o.minibatch = 10;
  o.randomizer_size = 40;
  o.seed = 3;
  MinibatchReader all(d, AllUtterances(d), o), skipping(d, AllUtterances(d), o);
  auto full = ReadAll(all, 0, 2);
  EXPECT_EQ(skipping.Skip(5), 5);
  auto rest = ReadAll(skipping, 0, 2);
  const std::vector<std::pair<float, int32_t>> tail(full.begin() + 50, full.end());
  EXPECT_EQ(rest, tail);
  EXPECT_EQ(skipping.Skip(3), 0);  // at the end
}

TEST(MinibatchReader, RandomiserBufferBoundsHowFarFramesTravel) {
  // With a buffer of 20 frames the first minibatch only holds frames of the first utterances.
  Dataset d = MakeData({10, 10, 10, 10, 10, 10, 10, 10}, 1);
  MinibatchOptions o;
  o.minibatch = 5;
  o.randomizer_size = 20;
  MinibatchReader r(d, AllUtterances(d), o);
  std::vector<float> x;
  std::vector<int32_t> y;
  ASSERT_EQ(r.Next(x, y), 5);
  for (float v : x) EXPECT_LT(v, 200.0f);
}

TEST(MinibatchReader, EvaluationKeepsOrderAndPartialBatch) {
  Dataset d = MakeData({3, 4}, 1);
  MinibatchOptions o;
  o.minibatch = 5;
  o.shuffle = false;
  MinibatchReader r(d, AllUtterances(d), o);
  int64_t batches = 0;
  auto frames = ReadAll(r, 0, 1, &batches);
  EXPECT_EQ(batches, 2);
  std::vector<float> order;
  for (auto& f : frames) order.push_back(f.first);
  EXPECT_EQ(order, (std::vector<float>{0, 1, 2, 100, 101, 102, 103}));
}

TEST(MinibatchReader, UtteranceSubsetAndOrder) {
  Dataset d = MakeData({2, 2, 2}, 1);
  MinibatchOptions o;
  o.minibatch = 10;
  o.shuffle = false;
  MinibatchReader r(d, {2, 0}, o);
  auto frames = ReadAll(r, 0, 1);
  std::vector<float> order;
  for (auto& f : frames) order.push_back(f.first);
  EXPECT_EQ(order, (std::vector<float>{200, 201, 0, 1}));
}

TEST(Sharding, LongestFirstToTheLightestShard) {
  Dataset d = MakeData({10, 50, 20, 30, 40, 5}, 1);
  auto shards = ShardByFrames(d, 2);
  // 50->s0, 40->s1, 30->s1 (40<50), 20->s0 (50<70), 10->s0 (70=70: lowest), 5->s1.
  EXPECT_EQ(shards[0], (std::vector<int>{1, 2, 0}));
  EXPECT_EQ(shards[1], (std::vector<int>{4, 3, 5}));
  auto one = ShardByFrames(d, 1);
  EXPECT_EQ(one[0].size(), 6u);
}

TEST(Sharding, BalancedAndComplete) {
  std::vector<int> lengths;
  Rng rng(9);
  for (int i = 0; i < 500; ++i) lengths.push_back(50 + static_cast<int>(rng.Below(500)));
  Dataset d = MakeData(lengths, 1);
  for (int n : {3, 8, 16}) {
    auto shards = ShardByFrames(d, n);
    std::set<int> all;
    int64_t lo = INT64_MAX, hi = 0;
    for (auto& s : shards) {
      int64_t frames = 0;
      for (int u : s) {
        EXPECT_TRUE(all.insert(u).second);
        frames += d.UttFrames(u);
      }
      lo = std::min(lo, frames), hi = std::max(hi, frames);
    }
    EXPECT_EQ(all.size(), 500u);
    EXPECT_LE(hi - lo, 550) << "shards differ by at most about one utterance";
  }
}

}  // namespace
}  // namespace mavg
