// LoadRunData with shard-only loading: ranks of a thread group each hold exactly their shard,
// and every way of loading -- 1 worker, N simulated workers, N ranks -- gets the same global
// normalisation bit for bit, the same priors and the same shard sizes.
#include "engine/train/run_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <set>

#include "engine/comm/thread_group.h"
#include "engine/core/files.h"
#include "engine/data/kaldi_io.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

// A data dir of `n` utterances of 3-dim features with lengths 3..(3 + n % 7) and values that
// need many digits (so summation order would show in the last bits).
void WriteDir(const std::string& dir, int n, int seed) {
  MakeDirs(dir);
  kaldi::MatrixArchiveWriter feats(dir + "/feats.ark", dir + "/feats.scp");
  kaldi::Int32VectorArchiveWriter ali(dir + "/ali.ark");
  for (int u = 0; u < n; ++u) {
    const int rows = 3 + (u * 5 + seed) % 7;
    std::vector<float> x(static_cast<size_t>(rows) * 3);
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<float>(1000.0 + 0.1234567 * static_cast<double>(i + 7 * u) +
                                1e-3 * static_cast<double>((u * 31 + i * 17) % 101));
    }
    const std::string key = "utt" + std::to_string(1000 + u);
    feats.Write(key, x.data(), rows, 3);
    std::vector<int32_t> labels(static_cast<size_t>(rows));
    for (int t = 0; t < rows; ++t) labels[t] = (u + t) % 5;
    ali.Write(key, labels);
  }
  feats.Close();
  ali.Close();
}

TEST(RunData, ShardsAndTheSameNormalisationForEveryLayout) {
  testing::TempDir tmp;
  WriteDir(tmp.File("train"), 40, 1);
  WriteDir(tmp.File("dev"), 6, 2);
  RunConfig config;
  config.data.train = tmp.File("train");
  config.data.dev = tmp.File("dev");
  double io = 0;
  config.parallel.workers = 1;
  const RunData one = LoadRunData(config, &io);
  ASSERT_EQ(one.train.NumUtts(), 40);
  ASSERT_FALSE(one.transform.shift.empty());
  constexpr int kN = 3;
  config.parallel.workers = kN;
  const RunData all = LoadRunData(config, &io);
  EXPECT_TRUE(all.train_complete);
  EXPECT_EQ(all.transform.shift, one.transform.shift);
  EXPECT_EQ(all.transform.scale, one.transform.scale);

  std::mutex mu;
  std::vector<RunData> ranks(kN);
  RunThreadGroup(kN, [&](Communicator& comm) {
    ShardPlan plan;
    plan.num_shards = kN;
    plan.held = {comm.Rank()};
    double io_s = 0;
    RunData d = LoadRunData(config, plan, comm, &io_s);
    std::lock_guard<std::mutex> lock(mu);
    ranks[comm.Rank()] = std::move(d);
  });
  std::set<std::string> seen;
  for (int r = 0; r < kN; ++r) {
    const RunData& d = ranks[r];
    EXPECT_FALSE(d.train_complete);
    // Bit for bit: the global normalisation, the priors, the shards' sizes.
    EXPECT_EQ(d.transform.shift, one.transform.shift) << "rank " << r;
    EXPECT_EQ(d.transform.scale, one.transform.scale) << "rank " << r;
    EXPECT_EQ(d.label_counts, one.label_counts);
    EXPECT_EQ(d.shard_frames, all.shard_frames);
    // Rank r holds shard r and nothing else: the same utterances as the simulated shard.
    int64_t frames = 0;
    for (int s = 0; s < kN; ++s) {
      if (s != r) {
        EXPECT_TRUE(d.shards[s].empty());
      }
    }
    ASSERT_EQ(d.shards[r].size(), all.shards[r].size());
    for (size_t i = 0; i < d.shards[r].size(); ++i) {
      const int mine = d.shards[r][i], theirs = all.shards[r][i];
      EXPECT_EQ(d.train.utt_ids[mine], all.train.utt_ids[theirs]);
      ASSERT_EQ(d.train.UttFrames(mine), all.train.UttFrames(theirs));
      // The same normalised features.
      EXPECT_TRUE(std::equal(d.train.Frame(d.train.offsets[mine]),
                             d.train.Frame(d.train.offsets[mine + 1]),
                             all.train.Frame(all.train.offsets[theirs])));
      EXPECT_TRUE(seen.insert(d.train.utt_ids[mine]).second);
      frames += d.train.UttFrames(mine);
    }
    EXPECT_EQ(d.train.NumUtts(), static_cast<int>(d.shards[r].size()));
    EXPECT_EQ(frames, all.shard_frames[r]);
  }
  EXPECT_EQ(seen.size(), 40u);
}

}  // namespace
}  // namespace mavg
