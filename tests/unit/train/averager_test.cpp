// The averaging algorithms (BMUF, overlapped, two-level) against hand-computed blocks, and the
// equivalences the design promises: plain averaging is BMUF with eta = 0, zeta = 1 bit for bit;
// simulated replicas and ranks over a communicator give the same parameters bit for bit.
#include "engine/train/averager.h"

#include <gtest/gtest.h>

#include <mutex>

#include "engine/comm/thread_group.h"
#include "engine/core/delta_codec.h"
#include "engine/core/rng.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

using testing::ToHost;

std::vector<float> Get(Backend& b, Worker& w) { return ToHost(b, w.params).v; }
void Set(Backend& b, Worker& w, const std::vector<float>& v) { b.CopyFromHost(v.data(), w.params); }

struct Sim {
  std::unique_ptr<Backend> backend = testing::MakeBackend("cpu");
  std::unique_ptr<WorkerGroup> group;
  std::unique_ptr<Averager> avg;
  Sim(int n, int g, const AveragerOptions& o, const std::vector<float>& init) {
    group = CreateSimulatedGroup(*backend, n, g, static_cast<int64_t>(init.size()));
    for (Worker& w : group->Workers()) Set(*backend, w, init);
    avg = std::make_unique<Averager>(*backend, *group, o, static_cast<int64_t>(init.size()));
    avg->Reset();
    avg->BeginEpoch();
  }
  Worker& W(int i) { return group->Workers()[i]; }
  std::vector<float> P(int i) { return Get(*backend, W(i)); }
};

AveragerOptions Bmuf(float eta, float zeta, bool nesterov) {
  AveragerOptions o;
  o.bmuf = true, o.block_momentum = eta, o.block_lr = zeta, o.nesterov = nesterov;
  return o;
}

TEST(Bmuf, TwoBlocksByHandNesterov) {
  // eta 0.5, zeta 1.5, every number exact in binary floating point.
  Sim s(2, 0, Bmuf(0.5f, 1.5f, true), {1, 2});
  Set(*s.backend, s.W(0), {2, 2});
  Set(*s.backend, s.W(1), {4, 6});  // mean [3, 4]
  s.avg->Combine(1, 2);
  // G = [2, 2]; Delta = 1.5 G = [3, 3]; W_g = [4, 5]; start = W_g + 0.5 Delta = [5.5, 6.5].
  EXPECT_EQ(s.P(0), (std::vector<float>{5.5f, 6.5f}));
  EXPECT_EQ(s.P(1), (std::vector<float>{5.5f, 6.5f}));
  Set(*s.backend, s.W(0), {6.5f, 6.5f});
  Set(*s.backend, s.W(1), {8.5f, 10.5f});  // mean [7.5, 8.5]
  s.avg->Combine(2, 2);
  // G is measured from where the block started: [2, 2]; W_g = [4, 5] + Delta with
  // Delta = 0.5 [3, 3] + 1.5 G = [4.5, 4.5]: [8.5, 9.5], which the epoch's last combine leaves
  // on every worker (no look-ahead).
  EXPECT_EQ(s.P(0), (std::vector<float>{8.5f, 9.5f}));
  EXPECT_EQ(s.P(1), (std::vector<float>{8.5f, 9.5f}));
  // The next epoch starts from W_g + eta Delta = [10.75, 11.75].
  s.avg->BeginEpoch();
  EXPECT_EQ(s.P(1), (std::vector<float>{10.75f, 11.75f}));
}

TEST(Bmuf, TwoBlocksByHandClassical) {
  Sim s(2, 0, Bmuf(0.5f, 1.5f, false), {1, 2});
  Set(*s.backend, s.W(0), {2, 2});
  Set(*s.backend, s.W(1), {4, 6});
  s.avg->Combine(1, 2);
  EXPECT_EQ(s.P(0), (std::vector<float>{4, 5}));  // W_g, no look-ahead
  Set(*s.backend, s.W(0), {5, 5});
  Set(*s.backend, s.W(1), {7, 9});  // mean [6, 7]: G = [2, 2]; Delta = [1.5 + 3] = [4.5, 4.5]
  s.avg->Combine(2, 2);
  EXPECT_EQ(s.P(0), (std::vector<float>{8.5f, 9.5f}));
}

TEST(Bmuf, SteadyProgressIsAmplifiedByOneOverOneMinusEta) {
  // Every worker moves by c in every block: G = c, so Delta -> c / (1 - eta) = N c with the
  // default eta = 1 - 1/N, classical or Nesterov (the look-ahead must not compound it).
  for (bool nesterov : {false, true}) {
    const int n = 4;
    Sim s(n, 0, Bmuf(1.0f - 1.0f / n, 1.0f, nesterov), {0});
    float before = 0, step = 0;
    for (int t = 1; t <= 200; ++t) {
      for (int i = 0; i < n; ++i) Set(*s.backend, s.W(i), {s.P(i)[0] + 0.001f});
      s.avg->Combine(t, 1000);
      step = s.P(0)[0] - before;
      before = s.P(0)[0];
    }
    EXPECT_NEAR(step, n * 0.001f, 1e-5) << "nesterov " << nesterov;
  }
}

// Simulated local training: every worker adds its own deterministic noise.
void Train(Backend& b, WorkerGroup& g, uint64_t block) {
  for (Worker& w : g.Workers()) {
    std::vector<float> v = ToHost(b, w.params).v;
    Rng rng(DeriveSeed(11, {block, static_cast<uint64_t>(w.rank)}));
    for (float& x : v) x += static_cast<float>(rng.Uniform() - 0.5) * 0.37f;
    b.CopyFromHost(v.data(), w.params);
  }
}

std::vector<std::vector<float>> RunBlocks(int n, int g, const AveragerOptions& o, int blocks,
                                          int epochs = 2) {
  std::vector<float> init(37);
  Rng rng(5);
  for (float& x : init) x = static_cast<float>(rng.Uniform() * 3 - 1);
  Sim s(n, g, o, init);
  for (int e = 0; e < epochs; ++e) {
    if (e > 0) s.avg->BeginEpoch();
    for (int t = 1; t <= blocks; ++t) {
      Train(*s.backend, *s.group, static_cast<uint64_t>(e * 100 + t));
      s.avg->Combine(t, blocks);
    }
  }
  std::vector<std::vector<float>> out;
  for (int i = 0; i < n; ++i) out.push_back(s.P(i));
  return out;
}

TEST(Bmuf, PlainAveragingIsBmufWithoutMomentumBitForBit) {
  for (bool nesterov : {true, false}) {
    for (bool overlap : {false, true}) {
      AveragerOptions plain;
      plain.overlap = overlap;
      AveragerOptions bmuf = Bmuf(0.0f, 1.0f, nesterov);
      bmuf.overlap = overlap;
      EXPECT_EQ(RunBlocks(4, 0, plain, 5), RunBlocks(4, 0, bmuf, 5))
          << "nesterov " << nesterov << " overlap " << overlap;
    }
  }
  // And momentum changes the result (the comparison above can fail).
  EXPECT_NE(RunBlocks(4, 0, AveragerOptions{}, 5), RunBlocks(4, 0, Bmuf(0.75f, 1.0f, true), 5));
}

TEST(Overlap, ThreeBlocksByHand) {
  AveragerOptions o;
  o.overlap = true;
  Sim s(2, 0, o, {0, 0});
  Set(*s.backend, s.W(0), {2, 0});
  Set(*s.backend, s.W(1), {4, 2});
  s.avg->Combine(1, 3);  // the mean [3, 1] is formed while block 2 trains
  EXPECT_FALSE(s.avg->WorkersAgree());
  EXPECT_EQ(s.P(0), (std::vector<float>{2, 0}));  // untouched meanwhile
  Set(*s.backend, s.W(0), {3, 1});                // progress [1, 1]
  Set(*s.backend, s.W(1), {3, 3});                // progress [-1, 1]
  s.avg->Combine(2, 3);
  // mean(block 1) + own progress: [4, 2] and [2, 2]; their mean [3, 2] is now pending.
  EXPECT_EQ(s.P(0), (std::vector<float>{4, 2}));
  EXPECT_EQ(s.P(1), (std::vector<float>{2, 2}));
  Set(*s.backend, s.W(0), {5, 2});  // progress [1, 0]
  s.avg->Combine(3, 3);
  // [3, 2] + [1, 0] = [4, 2] and [3, 2] + [0, 0]; the epoch's last block is combined at once.
  EXPECT_TRUE(s.avg->WorkersAgree());
  EXPECT_EQ(s.P(0), (std::vector<float>{3.5f, 2}));
  EXPECT_EQ(s.P(1), (std::vector<float>{3.5f, 2}));
}

TEST(Overlap, NothingMovesWithoutLocalProgress) {
  for (bool bmuf : {false, true}) {
    AveragerOptions o = bmuf ? Bmuf(0.5f, 1.0f, true) : AveragerOptions{};
    o.overlap = true;
    std::vector<float> init = testing::RandomHost(1, 29, 3).v;
    Sim s(2, 0, o, init);
    for (int t = 1; t <= 4; ++t) s.avg->Combine(t, 4);
    EXPECT_EQ(s.P(0), init);
    EXPECT_EQ(s.P(1), init);
  }
}

TEST(TwoLevel, GroupsEveryCombineAllEveryOther) {
  AveragerOptions o;
  o.global_every = 2;
  Sim s(4, 2, o, {0});
  const float v[4] = {1, 3, 5, 11};
  for (int i = 0; i < 4; ++i) Set(*s.backend, s.W(i), {v[i]});
  s.avg->Combine(1, 3);  // groups {0, 1} and {2, 3}
  EXPECT_FALSE(s.avg->WorkersAgree());
  EXPECT_EQ(s.P(0)[0], 2.0f);
  EXPECT_EQ(s.P(1)[0], 2.0f);
  EXPECT_EQ(s.P(2)[0], 8.0f);
  EXPECT_EQ(s.P(3)[0], 8.0f);
  s.avg->Combine(2, 3);  // everyone
  for (int i = 0; i < 4; ++i) EXPECT_EQ(s.P(i)[0], 5.0f);
  EXPECT_TRUE(s.avg->WorkersAgree());
  for (int i = 0; i < 4; ++i) Set(*s.backend, s.W(i), {v[i]});
  s.avg->Combine(3, 3);  // the epoch's last combine is global even off the K2 grid
  for (int i = 0; i < 4; ++i) EXPECT_EQ(s.P(i)[0], 5.0f);
}

TEST(TwoLevel, WholeWorldGroupsOrGlobalEveryTimeIsFlatAveraging) {
  const auto flat = RunBlocks(4, 0, AveragerOptions{}, 5);
  AveragerOptions o;
  o.global_every = 3;
  EXPECT_EQ(RunBlocks(4, 4, o, 5), flat);  // g = N
  o.global_every = 1;
  EXPECT_EQ(RunBlocks(4, 2, o, 5), flat);  // K2 = K
  o.global_every = 3;
  EXPECT_NE(RunBlocks(4, 2, o, 5), flat);  // a real two-level run differs
}

// The same blocks driven through RankGroups over a thread communicator, one worker per thread.
std::vector<std::vector<float>> RunRanks(int n, const AveragerOptions& o, int blocks) {
  std::vector<float> init(37);
  Rng rng(5);
  for (float& x : init) x = static_cast<float>(rng.Uniform() * 3 - 1);
  std::vector<std::vector<float>> out(n);
  RunThreadGroup(n, [&](Communicator& comm) {
    auto backend = testing::MakeBackend("cpu");
    auto group = CreateRankGroup(*backend, comm, 0, static_cast<int64_t>(init.size()));
    Set(*backend, group->Workers()[0], init);
    Averager avg(*backend, *group, o, static_cast<int64_t>(init.size()));
    avg.Reset();
    for (int e = 0; e < 2; ++e) {
      avg.BeginEpoch();
      for (int t = 1; t <= blocks; ++t) {
        Train(*backend, *group, static_cast<uint64_t>(e * 100 + t));
        avg.Combine(t, blocks);
      }
    }
    out[comm.Rank()] = Get(*backend, group->Workers()[0]);
  });
  return out;
}

TEST(WorkerGroups, SimulatedEqualsRanksBitForBit) {
  for (bool overlap : {false, true}) {
    for (bool bmuf : {false, true}) {
      AveragerOptions o = bmuf ? Bmuf(0.75f, 1.25f, true) : AveragerOptions{};
      o.overlap = overlap;
      EXPECT_EQ(RunBlocks(3, 0, o, 4), RunRanks(3, o, 4))
          << "overlap " << overlap << " bmuf " << bmuf;
    }
  }
}

// Compressed deltas (parallel.compress): simulated workers and ranks over a communicator hold
// the same bits for every format, with and without error feedback, under plain averaging and
// an outer Nesterov step; and each format changes the model (the comparison can fail).
TEST(Compressed, SimulatedEqualsRanksBitForBit) {
  const std::vector<std::vector<float>> plain = RunBlocks(3, 0, AveragerOptions{}, 4);
  for (const DeltaFormat f :
       {DeltaFormat::kFp16, DeltaFormat::kBf16, DeltaFormat::kFp8, DeltaFormat::kInt4}) {
    for (const bool ef : {false, true}) {
      for (const bool bmuf : {false, true}) {
        AveragerOptions o = bmuf ? Bmuf(0.75f, 1.25f, true) : AveragerOptions{};
        o.compress = f, o.compress_block = 8, o.error_feedback = ef, o.tensor_sizes = {30, 7};
        const std::vector<std::vector<float>> sim = RunBlocks(3, 0, o, 4);
        EXPECT_EQ(sim, RunRanks(3, o, 4)) << f << " ef " << ef << " bmuf " << bmuf;
        if (!bmuf) {
          EXPECT_NE(sim, plain) << f << " ef " << ef;
        }
      }
    }
  }
}

// The mean by hand (int4, one scale per tensor; every number exact in binary): W̄ = S + the
// mean of the decoded deltas, the next block's deltas measured from W̄, and error feedback
// sending the first block's rounding error with the second.
TEST(Compressed, MeanIsTheAnchorPlusTheMeanOfTheDecodedDeltas) {
  for (const bool ef : {false, true}) {
    AveragerOptions o;
    o.compress = DeltaFormat::kInt4, o.compress_block = 0, o.error_feedback = ef;
    Sim s(2, 0, o, {0, 0, 0, 0});
    // Worker 0: scale 7 / 7 = 1, codes 7, 3, -7, 0 (3.5 rounds to the even 4? no: 3.25 -> 3).
    Set(*s.backend, s.W(0), {7, 3.25f, -7, 0});
    // Worker 1: scale 1.75 / 7 = 0.25: 7, 7, 1, -0.5 -> 0 (ties to even).
    Set(*s.backend, s.W(1), {1.75f, 1.75f, 0.25f, -0.125f});
    s.avg->Combine(1, 2);
    const std::vector<float> first = {4.375f, 2.375f, -3.375f, 0};
    EXPECT_EQ(s.P(0), first);
    EXPECT_EQ(s.P(1), first);
    // No progress in block 2: without error feedback nothing moves; with it, worker 0 sends its
    // residual (0, 0.25, 0, 0): scale 0.25 / 7, code 7: +0.125 in the mean; worker 1 sends
    // (0, 0, 0, -0.125): scale 0.125 / 7, code -7: -0.0625.
    s.avg->Combine(2, 2);
    const std::vector<float> second =
        ef ? std::vector<float>{4.375f, 2.5f, -3.375f, -0.0625f} : first;
    const std::vector<float> got = s.P(0);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], second[i], 1e-6) << "ef " << ef << " " << i;
    EXPECT_EQ(s.avg->PayloadBytes(), 4 + 2);  // one scale, four codes in two bytes
  }
}

}  // namespace
}  // namespace mavg
