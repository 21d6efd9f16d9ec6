// The averager's parts on their own: the BMUF filter against the textbook recursion of
// docs/algorithms.md §1b, the combine schedules' combine points and time accounting over a
// group with fixed communication times, and the checkpoint keys and tensor sets a resumed run
// (also one written by an earlier build) reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/comm/communicator.h"
#include "engine/core/rng.h"
#include "engine/train/averager.h"
#include "engine/train/combine_filter.h"
#include "engine/train/combine_schedule.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {
// Named: the unit tests of a folder share one translation unit in a unity build.
namespace averager_parts {

using testing::HostMat;
using testing::ToDevice;
using testing::ToHost;

HostMat Row(const std::vector<float>& v) {
  HostMat m(1, static_cast<int64_t>(v.size()));
  m.v = v;
  return m;
}

// docs/algorithms.md §1b as written, in double: G = W̄ - S, Δ = ηΔ + ζG, W_g += Δ, and the next
// block starts from S = W_g + ηΔ (Nesterov, but not at an epoch's end) or W_g.
struct BmufReference {
  double eta, zeta;
  bool nesterov;
  std::vector<double> start, global, delta;

  BmufReference(double eta, double zeta, bool nesterov, const std::vector<float>& model)
      : eta(eta),
        zeta(zeta),
        nesterov(nesterov),
        start(model.begin(), model.end()),
        global(start),
        delta(model.size(), 0.0) {}
  void Block(const std::vector<float>& mean, bool epoch_end) {
    for (size_t i = 0; i < mean.size(); ++i) {
      const double g = mean[i] - start[i];
      delta[i] = eta * delta[i] + zeta * g;
      global[i] += delta[i];
      start[i] = global[i] + (nesterov && !epoch_end ? eta * delta[i] : 0.0);
    }
  }
  void EpochStart() {
    for (size_t i = 0; i < start.size(); ++i) start[i] = global[i] + eta * delta[i];
  }
};

void ExpectNear(const std::vector<float>& got, const std::vector<double>& want,
                const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << what << " " << i;
}

TEST(BmufFilter, FollowsTheTextbookRecursionAcrossEpochs) {
  auto backend = testing::MakeBackend("cpu");
  const int64_t p = 23;
  for (bool nesterov : {true, false}) {
    const std::vector<float> init = testing::RandomHost(1, p, 3).v;
    BmufFilter filter(*backend, 0.6f, 1.3f, nesterov, p);
    filter.Reset(ToDevice(*backend, Row(init)));
    BmufReference ref(0.6f, 1.3f, nesterov, init);
    Rng rng(9);
    for (int epoch = 0; epoch < 3; ++epoch) {
      if (epoch > 0) {
        const Matrix* start = filter.EpochStart();
        if (nesterov) {
          ref.EpochStart();
          ASSERT_NE(start, nullptr);
          ExpectNear(ToHost(*backend, *start).v, ref.start, "epoch start");
        } else {
          EXPECT_EQ(start, nullptr);  // the epoch's own end point, which the workers hold
        }
      }
      for (int t = 1; t <= 5; ++t) {
        // The workers' mean: where the block started plus some progress.
        std::vector<float> mean(p);
        for (int64_t i = 0; i < p; ++i) {
          mean[i] = static_cast<float>(ref.start[i] + rng.Uniform() - 0.4);
        }
        const Matrix* next = filter.Apply(ToDevice(*backend, Row(mean)), t == 5);
        ref.Block(mean, t == 5);
        ASSERT_NE(next, nullptr);
        ExpectNear(ToHost(*backend, *next).v, ref.start,
                   "nesterov " + std::to_string(nesterov) + " block " + std::to_string(t));
      }
    }
  }
}

TEST(BmufFilter, WithoutMomentumAndUnitLrItGivesTheMeanBitForBit) {
  auto backend = testing::MakeBackend("cpu");
  for (bool nesterov : {true, false}) {
    BmufFilter filter(*backend, 0.0f, 1.0f, nesterov, 31);
    filter.Reset(ToDevice(*backend, testing::RandomHost(1, 31, 4)));
    for (uint64_t t = 0; t < 3; ++t) {
      const HostMat mean = testing::RandomHost(1, 31, 10 + t, 3.0);
      const Matrix* next = filter.Apply(ToDevice(*backend, mean), false);
      ASSERT_NE(next, nullptr);
      EXPECT_EQ(ToHost(*backend, *next).v, mean.v) << "nesterov " << nesterov;
    }
  }
}

TEST(BmufFilter, CheckpointedStateContinuesBitForBit) {
  auto backend = testing::MakeBackend("cpu");
  testing::TempDir tmp;
  const CheckpointDir dir(tmp.Path());
  BmufFilter a(*backend, 0.75f, 1.25f, true, 17);
  a.Reset(ToDevice(*backend, testing::RandomHost(1, 17, 1)));
  a.Apply(ToDevice(*backend, testing::RandomHost(1, 17, 2)), false);
  a.Save(dir, 5, /*root=*/false);
  EXPECT_FALSE(dir.HasTensors(5, "bmuf"));  // written once, by the root process
  a.Save(dir, 5, /*root=*/true);
  EXPECT_TRUE(dir.HasTensors(5, "bmuf"));
  BmufFilter b(*backend, 0.75f, 1.25f, true, 17);
  b.Load(dir, 5);
  const Matrix mean = ToDevice(*backend, testing::RandomHost(1, 17, 3));
  const std::vector<float> from_a = ToHost(*backend, *a.Apply(mean, false)).v;
  EXPECT_EQ(ToHost(*backend, *b.Apply(mean, false)).v, from_a);
}

// parallel.outer.type nesterov / momentum: DiLoCo's outer step, torch.optim.SGD on the outer
// gradient g = θ - W̄ (θ: the outer parameters, where every block starts) with momentum μ and
// lr, written here as PyTorch writes it (b = μb + g; θ -= lr (g + μb) with Nesterov, lr b
// without). The filter the config makes is BMUF's with η = μ, ζ = lr: its block start is θ.
TEST(OuterOptimizer, NesterovAndMomentumAreTorchSgdOnTheOuterGradient) {
  auto backend = testing::MakeBackend("cpu");
  const int64_t p = 19;
  for (OuterType type : {OuterType::kNesterov, OuterType::kMomentum}) {
    ParallelConfig par;
    par.outer.type = type;
    par.outer.lr = 0.7;
    par.outer.momentum = 0.9;
    const AveragerOptions o = AveragerOptionsFrom(par, 8);
    ASSERT_TRUE(o.bmuf);
    BmufFilter filter(*backend, o.block_momentum, o.block_lr, o.nesterov, p, o.model_is_start);
    const std::vector<float> init = testing::RandomHost(1, p, 5).v;
    filter.Reset(ToDevice(*backend, Row(init)));
    std::vector<double> theta(init.begin(), init.end()), buf(p, 0.0);
    Rng rng(11);
    for (int t = 1; t <= 6; ++t) {
      std::vector<float> mean(p);
      for (int64_t i = 0; i < p; ++i) mean[i] = static_cast<float>(theta[i] + rng.Uniform() - 0.4);
      for (int64_t i = 0; i < p; ++i) {
        const double g = theta[i] - mean[i];
        buf[i] = 0.9 * buf[i] + g;
        theta[i] -= 0.7 * (type == OuterType::kNesterov ? g + 0.9 * buf[i] : buf[i]);
      }
      // (step 3 ends an epoch: the model evaluated is θ, DiLoCo's, and the next epoch starts
      // from it)
      const Matrix* next = filter.Apply(ToDevice(*backend, Row(mean)), t == 3);
      ASSERT_NE(next, nullptr);
      ExpectNear(ToHost(*backend, *next).v, theta, fmt::format("{} step {}", type, t));
      if (t == 3) {
        EXPECT_EQ(filter.EpochStart(), nullptr);
      }
    }
  }
}

// BMUF with block momentum η and block lr ζ is outer Nesterov with momentum η and lr ζ: the
// same filter with the same scalars, hence the same steps (tests/e2e/averaging_algorithms.sh
// trains both and compares the workers' parameters mid-epoch, bit for bit).
TEST(OuterOptimizer, BmufIsOuterNesterovWithItsEtaAndZeta) {
  ParallelConfig bmuf, outer;
  bmuf.algorithm = AveragingAlgorithm::kBmuf;
  bmuf.bmuf.block_momentum = 0.8;
  bmuf.bmuf.block_lr = 1.3;
  outer.outer.type = OuterType::kNesterov;
  outer.outer.momentum = 0.8;
  outer.outer.lr = 1.3;
  const AveragerOptions a = AveragerOptionsFrom(bmuf, 4), b = AveragerOptionsFrom(outer, 4);
  EXPECT_TRUE(a.bmuf && b.bmuf && a.nesterov && b.nesterov);
  EXPECT_EQ(a.block_momentum, b.block_momentum);
  EXPECT_EQ(a.block_lr, b.block_lr);
  // What an epoch's end evaluates is each method's own: BMUF's W_g, DiLoCo's θ = W_g + ηΔ.
  EXPECT_FALSE(a.model_is_start);
  EXPECT_TRUE(b.model_is_start);
  bmuf.bmuf.nesterov = false;
  outer.outer.type = OuterType::kMomentum;
  EXPECT_FALSE(AveragerOptionsFrom(bmuf, 4).nesterov || AveragerOptionsFrom(outer, 4).nesterov);
}

// Outer Adam: torch.optim.Adam on g = θ - W̄, in double; a checkpoint continues bit for bit.
TEST(OuterOptimizer, AdamIsTorchAdamOnTheOuterGradientAndResumes) {
  auto backend = testing::MakeBackend("cpu");
  const int64_t p = 21;
  const double lr = 0.05, b1 = 0.9, b2 = 0.99, eps = 1e-6;
  AdamOuterFilter filter(*backend, lr, b1, b2, eps, p);
  const std::vector<float> init = testing::RandomHost(1, p, 6).v;
  filter.Reset(ToDevice(*backend, Row(init)));
  std::vector<double> theta(init.begin(), init.end()), m(p, 0.0), v(p, 0.0);
  EXPECT_EQ(filter.EpochStart(), nullptr);  // the workers hold θ from the epoch's end
  Rng rng(12);
  for (int t = 1; t <= 5; ++t) {
    std::vector<float> mean(p);
    for (int64_t i = 0; i < p; ++i) mean[i] = static_cast<float>(theta[i] + rng.Uniform() - 0.4);
    for (int64_t i = 0; i < p; ++i) {
      const double g = theta[i] - mean[i];
      m[i] = b1 * m[i] + (1 - b1) * g;
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      theta[i] -=
          lr * (m[i] / (1 - std::pow(b1, t))) / (std::sqrt(v[i] / (1 - std::pow(b2, t))) + eps);
    }
    const Matrix* next = filter.Apply(ToDevice(*backend, Row(mean)), t == 5);
    ASSERT_NE(next, nullptr);
    ExpectNear(ToHost(*backend, *next).v, theta, fmt::format("adam step {}", t));
  }
  testing::TempDir tmp;
  const CheckpointDir dir(tmp.Path());
  filter.Save(dir, 2, /*root=*/true);
  AdamOuterFilter resumed(*backend, lr, b1, b2, eps, p);
  resumed.Load(dir, 2);
  const Matrix mean = ToDevice(*backend, testing::RandomHost(1, p, 7));
  const std::vector<float> straight = ToHost(*backend, *filter.Apply(mean, false)).v;
  EXPECT_EQ(ToHost(*backend, *resumed.Apply(mean, false)).v, straight);
}

TEST(AveragerFilter, IdentityLeavesTheMeanWhereItIs) {
  IdentityFilter filter;
  auto backend = testing::MakeBackend("cpu");
  const Matrix mean = ToDevice(*backend, testing::RandomHost(1, 5, 1));
  filter.Reset(mean);
  EXPECT_EQ(filter.Apply(mean, false), nullptr);
  EXPECT_EQ(filter.Apply(mean, true), nullptr);
  EXPECT_EQ(filter.EpochStart(), nullptr);
}

// A group whose collectives leave the tensors alone and report fixed seconds, and that records
// which collectives a schedule called: "group", "world" (Mean) and "start" (StartMean).
class FixedTimeGroup final : public WorkerGroup {
 public:
  FixedTimeGroup(Backend& backend, int n, int g, CommTime mean, CommTime started)
      : WorkerGroup(backend, n, g), mean_(mean), started_(started) {
    for (int r = 0; r < n; ++r) AddWorker(r, 3);
  }
  bool IsRoot() const override { return true; }
  std::string Describe() const override { return "fixed-time"; }
  bool ProjectsWallTime() const override { return true; }
  int EvalShards() const override { return 1; }
  int EvalShard() const override { return 0; }
  CommTime Mean(Scope scope, const TensorsOf& tensors, std::span<double>) override {
    for (Worker& w : Workers()) tensors(w);
    calls.push_back(scope == Scope::kGroup ? "group" : "world");
    return mean_;
  }
  std::unique_ptr<PendingMean> StartMean(const TensorsOf& tensors) override {
    for (Worker& w : Workers()) EXPECT_EQ(tensors(w).size(), 1u);
    calls.push_back("start");
    return std::make_unique<Pending>(started_);
  }
  CommTime Gather(std::span<std::byte>, std::span<double>) override {
    calls.push_back("gather");
    return mean_;
  }
  void SumOverProcesses(std::span<double>) override {}
  void MaxOverProcesses(std::span<double>) override {}
  void BroadcastFromRoot(MatrixView) override {}
  void Barrier() override {}

  std::vector<std::string> calls;

 private:
  struct Pending final : PendingMean {
    explicit Pending(CommTime t) : t(t) {}
    double Wait() override { return t.wait_s; }
    double CommSeconds() const override { return t.comm_s; }
    CommTime t;
  };
  CommTime mean_, started_;
};

TensorsOf Params() {
  return [](Worker& w) { return std::vector<MatrixView>{w.params}; };
}

TEST(AveragerSchedule, SynchronousChargesComputePlusCommunication) {
  auto backend = testing::MakeBackend("cpu");
  FixedTimeGroup group(*backend, 2, 2, {.wait_s = 0.125, .comm_s = 0.25}, {});
  IdentityFilter filter;
  SynchronousSchedule schedule(*backend, group, filter, Params());
  CombineTally tally;
  schedule.Combine(1, 2, 2.0, tally);
  schedule.Combine(2, 2, 1.0, tally);
  EXPECT_EQ(tally.projected_s, 3.5);  // (2 + 0.25) + (1 + 0.25)
  EXPECT_TRUE(tally.agree);
  EXPECT_FALSE(schedule.Pending());
  EXPECT_EQ(group.calls, (std::vector<std::string>{"world", "world"}));
  for (const Worker& w : group.Workers()) {
    EXPECT_EQ(w.stats.comm_s, 0.5);
    EXPECT_EQ(w.stats.wait_s, 0.25);
  }
}

TEST(AveragerSchedule, OverlappedHidesTheCommunicationBehindTheNextBlock) {
  auto backend = testing::MakeBackend("cpu");
  FixedTimeGroup group(*backend, 2, 2, {.wait_s = 0.125, .comm_s = 0.25},
                       {.wait_s = 0.0625, .comm_s = 3.0});
  IdentityFilter filter;
  OverlappedSchedule schedule(*backend, group, filter, Params(), 3);
  CombineTally tally;
  schedule.Combine(1, 3, 2.0, tally);  // nothing pending yet: the block's compute
  EXPECT_EQ(tally.projected_s, 2.0);
  EXPECT_TRUE(schedule.Pending());
  EXPECT_FALSE(tally.agree);
  schedule.Combine(2, 3, 2.0, tally);  // block 1's mean took longer than block 2's compute
  EXPECT_EQ(tally.projected_s, 5.0);
  EXPECT_TRUE(schedule.Pending());
  schedule.Combine(3, 3, 4.0, tally);  // block 2's mean hidden; the last block synchronous
  EXPECT_EQ(tally.projected_s, 9.25);
  EXPECT_FALSE(schedule.Pending());
  EXPECT_TRUE(tally.agree);
  EXPECT_EQ(group.calls, (std::vector<std::string>{"start", "start", "world"}));
  for (const Worker& w : group.Workers()) {
    EXPECT_EQ(w.stats.comm_s, 6.25);  // every mean's communication, hidden or not
    EXPECT_EQ(w.stats.wait_s, 0.25);
  }
}

TEST(AveragerSchedule, TwoLevelHandsEveryGlobalPointAndTheLastToTheWrappedSchedule) {
  auto backend = testing::MakeBackend("cpu");
  for (bool overlap : {false, true}) {
    FixedTimeGroup group(*backend, 4, 2, {.wait_s = 0.0, .comm_s = 0.25},
                         {.wait_s = 0.0, .comm_s = 0.25});
    IdentityFilter filter;
    std::unique_ptr<CombineSchedule> global;
    if (overlap) {
      global = std::make_unique<OverlappedSchedule>(*backend, group, filter, Params(), 3);
    } else {
      global = std::make_unique<SynchronousSchedule>(*backend, group, filter, Params());
    }
    TwoLevelSchedule schedule(group, Params(), 3, std::move(global));
    std::vector<bool> agree;
    std::vector<bool> pending;
    CombineTally tally;
    for (int64_t i = 1; i <= 7; ++i) {
      schedule.Combine(i, 7, 0.5, tally);
      agree.push_back(tally.agree);
      pending.push_back(schedule.Pending());
    }
    const std::string g = overlap ? "start" : "world";
    EXPECT_EQ(group.calls,
              (std::vector<std::string>{"group", "group", g, "group", "group", g, "world"}))
        << "overlap " << overlap;
    EXPECT_EQ(agree, (std::vector<bool>{false, false, !overlap, false, false, !overlap, true}))
        << "overlap " << overlap;
    EXPECT_EQ(pending, (std::vector<bool>{false, false, overlap, overlap, overlap, overlap, false}))
        << "overlap " << overlap;
  }
  // Groups of all N workers: a group combine leaves every worker on one model.
  FixedTimeGroup whole(*backend, 4, 4, {}, {});
  IdentityFilter filter;
  TwoLevelSchedule schedule(
      whole, Params(), 3, std::make_unique<SynchronousSchedule>(*backend, whole, filter, Params()));
  CombineTally tally;
  schedule.Combine(1, 7, 0.5, tally);
  EXPECT_EQ(whole.calls, (std::vector<std::string>{"group"}));
  EXPECT_TRUE(tally.agree);
}

// Every worker adds its own deterministic noise, as a block of training would.
void Perturb(Backend& b, WorkerGroup& g, uint64_t block) {
  for (Worker& w : g.Workers()) {
    std::vector<float> v = ToHost(b, w.params).v;
    Rng rng(DeriveSeed(23, {block, static_cast<uint64_t>(w.rank)}));
    for (float& x : v) x += static_cast<float>(rng.Uniform() - 0.5) * 0.25f;
    b.CopyFromHost(v.data(), w.params);
  }
}

using testing::Keys;

TEST(AveragerCheckpoint, KeepsTheKeysAndTensorSetsAndResumesBitForBit) {
  const int n = 3;
  const int64_t p = 19;
  const std::vector<float> init = testing::RandomHost(1, p, 8).v;
  struct Case {
    bool overlap;
    int64_t global_every;
    std::set<std::string> keys;
    std::vector<std::string> sets;
    DeltaFormat compress = DeltaFormat::kFp32;  // with error feedback
  };
  const std::vector<Case> cases = {
      {false, 1, {"agree", "pending"}, {"bmuf"}},
      {true,
       1,
       {"agree", "pending", "pending_comm_s", "pending_wait_s"},
       {"bmuf", "pending", "snapshot-0", "snapshot-1", "snapshot-2"}},
      {false, 2, {"agree", "pending"}, {"bmuf"}},
      // Compressed deltas: the anchor and each worker's residual; the checkpoint is taken
      // inside a block (the workers have moved from the anchor).
      {false,
       1,
       {"agree", "pending"},
       {"bmuf", "compress-anchor", "residual-0", "residual-1", "residual-2"},
       DeltaFormat::kInt4},
  };
  for (const Case& c : cases) {
    const std::string what =
        "overlap " + std::to_string(c.overlap) + " global_every " + std::to_string(c.global_every);
    AveragerOptions o;
    o.bmuf = true, o.block_momentum = 0.5f, o.block_lr = 1.25f;
    o.overlap = c.overlap, o.global_every = c.global_every;
    o.compress = c.compress, o.compress_block = 4, o.error_feedback = true;
    auto backend = testing::MakeBackend("cpu");
    auto group = CreateSimulatedGroup(*backend, n, c.global_every > 1 ? 1 : 0, p);
    for (Worker& w : group->Workers()) backend->CopyFromHost(init.data(), w.params);
    Averager avg(*backend, *group, o, p);
    avg.Reset();
    avg.BeginEpoch();
    for (int64_t t = 1; t <= 3; ++t) {
      Perturb(*backend, *group, t);
      avg.Combine(t, 5);
    }
    // Combine point 3: an overlapped mean is in flight; two-level workers differ.
    if (c.compress != DeltaFormat::kFp32) Perturb(*backend, *group, 35);
    testing::TempDir tmp;
    const CheckpointDir dir(tmp.Path());
    const nlohmann::json state = avg.Save(dir, 2, true);
    EXPECT_EQ(Keys(state), c.keys) << what;
    EXPECT_EQ(state.at("pending").get<bool>(), c.overlap) << what;
    EXPECT_EQ(state.at("agree").get<bool>(), !c.overlap && c.global_every == 1) << what;
    for (const std::string& name : c.sets) EXPECT_TRUE(dir.HasTensors(2, name)) << what << name;

    // A resumed process: a fresh averager, the workers' parameters restored, the state loaded.
    auto backend2 = testing::MakeBackend("cpu");
    auto group2 = CreateSimulatedGroup(*backend2, n, c.global_every > 1 ? 1 : 0, p);
    for (int i = 0; i < n; ++i) {
      const std::vector<float> v = ToHost(*backend, group->Workers()[i].params).v;
      backend2->CopyFromHost(v.data(), group2->Workers()[i].params);
    }
    Averager resumed(*backend2, *group2, o, p);
    resumed.Reset();
    resumed.Load(dir, 2, state);
    EXPECT_EQ(resumed.WorkersAgree(), avg.WorkersAgree()) << what;
    for (int64_t t = 4; t <= 5; ++t) {
      Perturb(*backend, *group, t);
      avg.Combine(t, 5);
      Perturb(*backend2, *group2, t);
      resumed.Combine(t, 5);
    }
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(ToHost(*backend2, group2->Workers()[i].params).v,
                ToHost(*backend, group->Workers()[i].params).v)
          << what << " worker " << i;
    }
  }
}

// An optimizer whose state is one tensor, for the combine's state policies.
class OneTensorOptimizer final : public Optimizer {
 public:
  OneTensorOptimizer(Backend& backend, const std::vector<float>& v) : backend_(backend) {
    HostMat m(1, static_cast<int64_t>(v.size()));
    m.v = v;
    state_ = ToDevice(backend, m);
  }
  void UpdateAffine(int, AffineLayer&, ConstMatrixView, MatrixView, float) override {}
  void Reset() override {}
  void ClearState() override { backend_.Fill(state_, 0.0f); }
  std::vector<MatrixView> State() override { return {state_}; }

 private:
  Backend& backend_;
  Matrix state_;
};

// parallel.optimizer_state: keep leaves each worker's state its own, average makes it the
// workers' mean (with the parameters), reset clears it; two-level applies it at every combine.
TEST(AveragerOptimizerState, KeepAverageOrResetAtEveryCombine) {
  const int n = 3;
  const int64_t p = 4;
  for (const int64_t global_every : {1, 2}) {
    for (const OptimizerStatePolicy policy :
         {OptimizerStatePolicy::kKeep, OptimizerStatePolicy::kAverage,
          OptimizerStatePolicy::kReset}) {
      const std::string what = fmt::format("{} global_every {}", policy, global_every);
      auto backend = testing::MakeBackend("cpu");
      auto group = CreateSimulatedGroup(*backend, n, global_every > 1 ? 1 : 0, p);
      std::vector<float> sum(2, 0.0f);
      for (Worker& w : group->Workers()) {
        const std::vector<float> v = {1.0f + static_cast<float>(w.rank), 0.5f * w.rank};
        w.optimizer = std::make_unique<OneTensorOptimizer>(*backend, v);
        for (int i = 0; i < 2; ++i) sum[i] += v[i];
        backend->Fill(w.params, static_cast<float>(w.rank));
      }
      AveragerOptions o;
      o.optimizer_state = policy, o.global_every = global_every;
      Averager avg(*backend, *group, o, p);
      avg.Reset();
      avg.BeginEpoch();
      avg.Combine(1, 2);  // with two-level: a group combine (groups of one worker)
      for (Worker& w : group->Workers()) {
        const std::vector<float> got = ToHost(*backend, w.optimizer->State()[0]).v;
        const std::vector<float> own = {1.0f + static_cast<float>(w.rank), 0.5f * w.rank};
        if (policy == OptimizerStatePolicy::kReset) {
          EXPECT_EQ(got, std::vector<float>(2, 0.0f)) << what;
        } else if (policy == OptimizerStatePolicy::kAverage && global_every == 1) {
          EXPECT_EQ(got, (std::vector<float>{sum[0] / n, sum[1] / n})) << what;
        } else {  // kept, or averaged over a group of one
          EXPECT_EQ(got, own) << what;
        }
      }
      avg.Combine(2, 2);  // the epoch's last: a world combine either way
      for (Worker& w : group->Workers()) {
        const std::vector<float> got = ToHost(*backend, w.optimizer->State()[0]).v;
        if (policy == OptimizerStatePolicy::kReset) {
          EXPECT_EQ(got, std::vector<float>(2, 0.0f)) << what;
        } else if (policy == OptimizerStatePolicy::kAverage) {
          EXPECT_EQ(got, (std::vector<float>{sum[0] / n, sum[1] / n})) << what;
        }
      }
    }
  }
}

// Rank 0 of a world of two whose peer holds what it holds, with stop flags `peer_flags`: it
// records the collectives it is asked for.
class CountingComm final : public Communicator {
 public:
  explicit CountingComm(std::vector<double> peer_flags) : peer_flags_(std::move(peer_flags)) {}
  int Rank() const override { return 0; }
  int WorldSize() const override { return 2; }
  std::string Name() const override { return "counting"; }
  void AllReduceSum(std::span<float> data) override {
    calls.push_back("sum");
    bytes.push_back(data.size() * sizeof(float));
    for (float& x : data) x += x;
  }
  void AllReduceSum(std::span<double> data) override {
    calls.push_back("sum");
    for (double& x : data) x += x;
  }
  void AllReduceMax(std::span<double> data) override {
    calls.push_back("max");
    for (size_t i = 0; i < data.size(); ++i) data[i] = std::max(data[i], peer_flags_.at(i));
  }
  void Broadcast(std::span<float>, int) override { calls.push_back("broadcast"); }
  void AllGather(std::span<std::byte> all) override {  // the peer sent what this rank sent
    calls.push_back("gather");
    const size_t block = all.size() / 2;
    bytes.push_back(block);
    std::copy_n(all.begin(), block, all.begin() + static_cast<std::ptrdiff_t>(block));
  }
  void Barrier() override { calls.push_back("barrier"); }
  void Abort(int) override {}
  std::vector<std::string> calls;
  std::vector<size_t> bytes;  // of each sum of floats or each rank's block of a gather

 private:
  std::vector<double> peer_flags_;
};

// The trainer's stop flags ride on a synchronous combine's world mean: combining costs the
// ranks one collective wait (the flags' max, which waits as the barrier did) and the sum, not
// a third for the flags; where a combine has no world mean (an overlapped block's) the
// averager says so and the flags are as passed.
TEST(AveragerStopFlags, RideOnTheWorldMean) {
  const int64_t p = 5;
  for (const bool overlap : {false, true}) {
    auto backend = testing::MakeBackend("cpu");
    CountingComm comm({1.0, 0.0});  // the peer saw a non-finite loss
    auto group = CreateRankGroup(*backend, comm, 0, p);
    backend->Fill(group->Workers()[0].params, 2.0f);
    AveragerOptions o;
    o.overlap = overlap;
    Averager avg(*backend, *group, o, p);
    avg.Reset();
    avg.BeginEpoch();
    comm.calls.clear();
    double flags[2] = {0.0, 15.0};  // this rank: a stop signal
    const bool agreed = avg.Combine(1, 2, flags) == StopFlags::kAgreed;
    if (!overlap) {
      EXPECT_TRUE(agreed);
      EXPECT_EQ(comm.calls, (std::vector<std::string>{"max", "sum"}));
      EXPECT_EQ(flags[0], 1.0);
      EXPECT_EQ(flags[1], 15.0);
      EXPECT_EQ(ToHost(*backend, group->Workers()[0].params).v, std::vector<float>(p, 2.0f));
    } else {
      EXPECT_FALSE(agreed);  // the mean was only started
      EXPECT_EQ(flags[0], 0.0);
    }
    double last[2] = {0.0, 0.0};
    EXPECT_EQ(avg.Combine(2, 2, last),
              StopFlags::kAgreed);  // the epoch's last combine is synchronous
    EXPECT_EQ(last[0], 1.0);
  }
}

// The bytes a combine records (Averager::PayloadBytes, EpochRow::comm_bytes) are the bytes the
// rank hands its communicator: the parameters' floats to the sum, or its packed delta to the
// gather; the flags ride on the max. A peer holding the same parameters leaves them in place.
TEST(AveragerBytes, PayloadIsWhatTheCommunicatorCarries) {
  const int64_t p = 301;  // odd, for int4's padding
  for (const DeltaFormat f : {DeltaFormat::kFp32, DeltaFormat::kFp16, DeltaFormat::kBf16,
                              DeltaFormat::kFp8, DeltaFormat::kInt4}) {
    auto backend = testing::MakeBackend("cpu");
    CountingComm comm({0.0});
    auto group = CreateRankGroup(*backend, comm, 0, p);
    const std::vector<float> init = testing::RandomHost(1, p, 4).v;
    backend->CopyFromHost(init.data(), group->Workers()[0].params);
    AveragerOptions o;
    o.compress = f, o.compress_block = 32, o.tensor_sizes = {200, 1, 100};
    Averager avg(*backend, *group, o, p);
    avg.Reset();
    avg.BeginEpoch();
    comm.calls.clear();
    double flags[1] = {0.0};
    EXPECT_EQ(avg.Combine(1, 1, flags), StopFlags::kAgreed);
    EXPECT_EQ(comm.calls,
              (std::vector<std::string>{"max", f == DeltaFormat::kFp32 ? "sum" : "gather"}))
        << f;
    ASSERT_EQ(comm.bytes.size(), 1u) << f;
    EXPECT_EQ(static_cast<int64_t>(comm.bytes[0]), avg.PayloadBytes()) << f;
    // groups of 32 in tensors of 200, 1, 100: 7 + 1 + 4 scales
    const int64_t want = f == DeltaFormat::kFp32   ? 4 * p
                         : f == DeltaFormat::kFp8  ? p + 4 * 12
                         : f == DeltaFormat::kInt4 ? (p + 1) / 2 + 4 * 12
                                                   : 2 * p;
    EXPECT_EQ(avg.PayloadBytes(), want) << f;
    // Both ranks sent a zero delta: the model stays the anchor.
    EXPECT_EQ(ToHost(*backend, group->Workers()[0].params).v, init) << f;
  }
}

}  // namespace averager_parts
}  // namespace
}  // namespace mavg
