// Streaming partial synchronisation (train/stream_schedule.h, config/stream_config.h): the
// fragments a pattern makes and the ones a list may not make; the points of an epoch; fragments
// combined by hand (dyadic values, so every mean and mix is exact); one fragment without overlap
// or mix is the synchronous schedule bit for bit, for every filter; simulated workers and ranks
// over a communicator agree bit for bit; a checkpoint with a fragment in flight resumes bit for
// bit; the exchanges and bytes an epoch records.
#include "engine/train/stream_schedule.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "engine/comm/thread_group.h"
#include "engine/config/stream_config.h"
#include "engine/core/error.h"
#include "engine/core/rng.h"
#include "engine/train/averager.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

using testing::ToHost;

using Groups = std::vector<std::vector<int>>;

StreamConfig Stream(int64_t fragments, FragmentPattern pattern, const std::string& layers = "") {
  StreamConfig s;
  s.fragments = fragments, s.pattern = pattern, s.layers = layers;
  return s;
}

TEST(StreamFragments, PatternsCoverTheModelOnce) {
  EXPECT_EQ(StreamFragments(Stream(1, FragmentPattern::kStrided), 3), (Groups{{0, 1, 2}}));
  EXPECT_EQ(StreamFragments(Stream(2, FragmentPattern::kStrided), 5), (Groups{{0, 2, 4}, {1, 3}}));
  EXPECT_EQ(StreamFragments(Stream(2, FragmentPattern::kContiguous), 5),
            (Groups{{0, 1}, {2, 3, 4}}));
  EXPECT_EQ(StreamFragments(Stream(3, FragmentPattern::kContiguous), 7),
            (Groups{{0, 1}, {2, 3}, {4, 5, 6}}));
  EXPECT_EQ(StreamFragments(Stream(2, FragmentPattern::kList, "3, 0-1; 2"), 4),
            (Groups{{0, 1, 3}, {2}}));
}

TEST(StreamFragments, AListThatDoesNotCoverTheModelOnceIsRefusedInOneLine) {
  const auto refused = [](int64_t f, const std::string& layers, int model_layers) {
    try {
      StreamFragments(Stream(f, FragmentPattern::kList, layers), model_layers);
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      return what;
    }
    ADD_FAILURE() << "accepted '" << layers << "'";
    return std::string();
  };
  EXPECT_NE(refused(2, "0,1; 1,2", 3).find("layer 1 in fragments 0 and 1"), std::string::npos);
  EXPECT_NE(refused(2, "0; 2", 3).find("leaves layer 1 out"), std::string::npos);
  EXPECT_NE(refused(2, "0; 1-3", 3).find("names layer 3"), std::string::npos);
  EXPECT_NE(refused(3, "0; 1-2", 3).find("has 2 fragments"), std::string::npos);
  EXPECT_NE(refused(2, "0; x", 3).find("not a layer number"), std::string::npos);
  EXPECT_NE(refused(2, "0; 2-1", 3).find("runs backwards"), std::string::npos);
  EXPECT_NE(refused(2, "0;;1", 3).find("empty"), std::string::npos);
  EXPECT_NE(refused(4, "0; 1; 2; 3", 3).find("4 fragments of a model with 3 layers"),
            std::string::npos);
}

TEST(StreamFragments, RangesFollowTheParameterLayout) {
  // Layers of (6 + 2), (4 + 2), (3 + 1) parameters.
  const std::vector<int64_t> sizes = {6, 2, 4, 2, 3, 1};
  const std::vector<StreamFragment> f = FragmentsOfLayers({{0, 2}, {1}}, sizes);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].ranges, (std::vector<std::pair<int64_t, int64_t>>{{0, 8}, {14, 4}}));
  EXPECT_EQ(f[0].tensor_sizes, (std::vector<int64_t>{6, 2, 3, 1}));
  EXPECT_EQ(f[1].ranges, (std::vector<std::pair<int64_t, int64_t>>{{8, 6}}));
  // Adjacent layers are one range.
  const std::vector<StreamFragment> g = FragmentsOfLayers({{0, 1}, {2}}, sizes);
  EXPECT_EQ(g[0].ranges, (std::vector<std::pair<int64_t, int64_t>>{{0, 14}}));
  EXPECT_EQ(g[0].Size() + g[1].Size(), 18);
}

// Two layers of 3 parameters each: (2 + 1), (2 + 1).
const std::vector<int64_t> kSizes = {2, 1, 2, 1};

AveragerOptions Streamed(Groups layers, int64_t tau = 0, float mix = 0.0f) {
  AveragerOptions o;
  o.tensor_sizes = kSizes;
  o.stream_layers = std::move(layers);
  o.stream_overlap_steps = tau;
  o.stream_mix = mix;
  return o;
}

CombinePlan Every(int64_t k, int64_t periods) {
  CombinePlan plan;
  for (int64_t i = 1; i <= periods; ++i) plan.points.push_back(i * k);
  return plan;
}

TEST(StreamSchedule, PlacesEachFragmentAtItsOffsetAndEndsTheEpochOnAll) {
  auto backend = testing::MakeBackend("cpu");
  auto group = CreateSimulatedGroup(*backend, 2, 0, 6);
  for (const int64_t tau : {0, 2}) {
    Averager avg(*backend, *group, Streamed({{0}, {1}}, tau), 6);
    CombinePlan plan = Every(10, 3);
    avg.PlanEpoch(plan);
    if (tau == 0) {
      EXPECT_EQ(plan.points, (std::vector<int64_t>{5, 10, 15, 20, 25, 30}));
    } else {
      EXPECT_EQ(plan.points, (std::vector<int64_t>{5, 7, 10, 12, 15, 17, 20, 22, 25, 27, 30}));
    }
    // Fragments 0, 1 in each period, both at the epoch's end: 2 + 2 + (1 + 2) exchanges of 3
    // floats; nothing exchanged at a merge.
    EXPECT_EQ(avg.Exchanges(plan.Combines()), 7);
    EXPECT_EQ(avg.Bytes(plan.Combines()), 7 * 3 * 4);
    EXPECT_EQ(avg.BytesReceived(plan.Combines()), 7 * 3 * 4);  // the means
    EXPECT_EQ(avg.Exchanges(tau == 0 ? 2 : 3), 2);
  }
  // Compressed (int4, one scale per tensor), 3 workers: a fragment's packed delta is smaller than
  // its 12 float bytes, the same for both fragments; each worker receives the other two's.
  AveragerOptions z = Streamed({{0}, {1}});
  z.compress = DeltaFormat::kInt4, z.compress_block = 0;
  auto group3 = CreateSimulatedGroup(*backend, 3, 0, 6);
  Averager packed(*backend, *group3, z, 6);
  CombinePlan plan = Every(10, 3);
  packed.PlanEpoch(plan);
  const int64_t per = packed.Bytes(plan.Combines()) / 7;
  EXPECT_EQ(per * 7, packed.Bytes(plan.Combines()));
  EXPECT_LT(per, 3 * 4);
  EXPECT_EQ(packed.BytesReceived(plan.Combines()), 2 * packed.Bytes(plan.Combines()));
  // A period shorter than the fragments: refused.
  Averager avg(*backend, *group, Streamed({{0}, {1}}), 6);
  CombinePlan short_plan = Every(1, 2);
  EXPECT_THROW(avg.PlanEpoch(short_plan), Error);
}

std::vector<float> Get(Backend& b, Worker& w) { return ToHost(b, w.params).v; }
void Set(Backend& b, Worker& w, const std::vector<float>& v) { b.CopyFromHost(v.data(), w.params); }

TEST(StreamSchedule, FragmentsByHand) {
  auto backend = testing::MakeBackend("cpu");
  auto group = CreateSimulatedGroup(*backend, 2, 0, 6);
  Worker& a = group->Workers()[0];
  Worker& b = group->Workers()[1];
  Set(*backend, a, std::vector<float>(6, 0.0f));
  Set(*backend, b, std::vector<float>(6, 0.0f));
  {  // No overlap, no mix: a fragment's combine leaves the other fragment as each worker has it.
    Averager avg(*backend, *group, Streamed({{0}, {1}}), 6);
    avg.Reset();
    avg.BeginEpoch();
    CombinePlan plan = Every(4, 2);  // points 2 (fragment 0), 4 (1), 6 (0), 8 (all)
    avg.PlanEpoch(plan);
    ASSERT_EQ(plan.points, (std::vector<int64_t>{2, 4, 6, 8}));
    Set(*backend, a, {1, 2, 3, 4, 5, 6});
    Set(*backend, b, {3, 4, 5, 6, 7, 8});
    EXPECT_EQ(avg.Combine(1, 4), StopFlags::kAgreed);
    EXPECT_EQ(Get(*backend, a), (std::vector<float>{2, 3, 4, 4, 5, 6}));
    EXPECT_EQ(Get(*backend, b), (std::vector<float>{2, 3, 4, 6, 7, 8}));
    EXPECT_FALSE(avg.WorkersAgree());
    avg.Combine(2, 4);
    EXPECT_EQ(Get(*backend, a), (std::vector<float>{2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(Get(*backend, b), Get(*backend, a));
    Set(*backend, a, {0, 0, 0, 1, 1, 1});
    Set(*backend, b, {2, 2, 2, 3, 3, 3});
    avg.Combine(3, 4);
    EXPECT_EQ(Get(*backend, a), (std::vector<float>{1, 1, 1, 1, 1, 1}));
    avg.Combine(4, 4);  // the epoch's end: every fragment, every worker the model
    EXPECT_EQ(Get(*backend, a), (std::vector<float>{1, 1, 1, 2, 2, 2}));
    EXPECT_EQ(Get(*backend, b), Get(*backend, a));
    EXPECT_TRUE(avg.WorkersAgree());
    EXPECT_EQ(ToHost(*backend, avg.Model()).v, Get(*backend, a));
  }
  {  // tau = 1, alpha = 1/4: the mean formed at the start, merged into the worker one step on.
    Averager avg(*backend, *group, Streamed({{0}, {1}}, 1, 0.25f), 6);
    avg.Reset();
    avg.BeginEpoch();
    CombinePlan plan = Every(4, 2);
    avg.PlanEpoch(plan);
    ASSERT_EQ(plan.points, (std::vector<int64_t>{2, 3, 4, 5, 6, 7, 8}));
    Set(*backend, a, {1, 2, 3, 4, 5, 6});
    Set(*backend, b, {3, 4, 5, 6, 7, 8});
    avg.Combine(1, 7);  // fragment 0's exchange starts: mean {2, 3, 4}
    EXPECT_EQ(Get(*backend, a), (std::vector<float>{1, 2, 3, 4, 5, 6}));  // not merged yet
    Set(*backend, a, {9, 9, 9, 4, 5, 6});                  // the local step meanwhile
    EXPECT_EQ(avg.Combine(2, 7), StopFlags::kNotChecked);  // the merge: 1/4 own, 3/4 mean
    EXPECT_EQ(Get(*backend, a), (std::vector<float>{3.75f, 4.5f, 5.25f, 4, 5, 6}));
    EXPECT_EQ(Get(*backend, b), (std::vector<float>{2.25f, 3.25f, 4.25f, 6, 7, 8}));
  }
}

// Simulated local training: every worker adds its own deterministic noise.
void Train(Backend& b, WorkerGroup& g, uint64_t step) {
  for (Worker& w : g.Workers()) {
    std::vector<float> v = ToHost(b, w.params).v;
    Rng rng(DeriveSeed(13, {step, static_cast<uint64_t>(w.rank)}));
    for (float& x : v) x += static_cast<float>(rng.Uniform() - 0.5) * 0.37f;
    b.CopyFromHost(v.data(), w.params);
  }
}

std::vector<float> Init(int64_t p) {
  std::vector<float> init(static_cast<size_t>(p));
  Rng rng(5);
  for (float& x : init) x = static_cast<float>(rng.Uniform() * 3 - 1);
  return init;
}

// Two epochs of `periods` periods of K steps, the averager's points planned from them; every
// worker's parameters at the end.
std::vector<std::vector<float>> RunSteps(Backend& backend, WorkerGroup& group, Averager& avg,
                                         int64_t k, int64_t periods) {
  avg.Reset();
  for (int e = 0; e < 2; ++e) {
    avg.BeginEpoch();
    CombinePlan plan = Every(k, periods);
    avg.PlanEpoch(plan);
    int64_t index = 0;
    for (int64_t step = 1; step <= plan.Minibatches(); ++step) {
      Train(backend, group, static_cast<uint64_t>(e * 1000 + step));
      if (plan.CombineAfter(step)) avg.Combine(++index, plan.Combines());
    }
  }
  std::vector<std::vector<float>> out;
  for (Worker& w : group.Workers()) out.push_back(Get(backend, w));
  return out;
}

std::vector<std::vector<float>> Simulated(int n, const AveragerOptions& o, int64_t k,
                                          int64_t periods) {
  const std::vector<float> init = Init(6);
  auto backend = testing::MakeBackend("cpu");
  auto group = CreateSimulatedGroup(*backend, n, 0, 6);
  for (Worker& w : group->Workers()) Set(*backend, w, init);
  Averager avg(*backend, *group, o, 6);
  return RunSteps(*backend, *group, avg, k, periods);
}

std::vector<std::vector<float>> Ranks(int n, const AveragerOptions& o, int64_t k, int64_t periods) {
  const std::vector<float> init = Init(6);
  std::vector<std::vector<float>> out(static_cast<size_t>(n));
  RunThreadGroup(n, [&](Communicator& comm) {
    auto backend = testing::MakeBackend("cpu");
    auto group = CreateRankGroup(*backend, comm, 0, 6);
    Set(*backend, group->Workers()[0], init);
    Averager avg(*backend, *group, o, 6);
    out[static_cast<size_t>(comm.Rank())] = RunSteps(*backend, *group, avg, k, periods)[0];
  });
  return out;
}

AveragerOptions WithFilter(AveragerOptions o, int filter) {
  if (filter == 1) {  // outer Nesterov (DiLoCo)
    o.bmuf = true, o.block_momentum = 0.75f, o.block_lr = 0.7f, o.model_is_start = true;
  } else if (filter == 2) {
    o.outer_adam = true, o.outer_lr = 0.1;
  }
  return o;
}

TEST(StreamSchedule, OneFragmentWithoutOverlapOrMixIsTheSynchronousScheduleBitForBit) {
  for (int filter = 0; filter < 3; ++filter) {
    for (const DeltaFormat f : {DeltaFormat::kFp32, DeltaFormat::kInt4}) {
      AveragerOptions plain = WithFilter(AveragerOptions{}, filter);
      plain.tensor_sizes = kSizes;
      plain.compress = f, plain.compress_block = 2, plain.error_feedback = f != DeltaFormat::kFp32;
      AveragerOptions one = plain;
      one.stream_layers = {{0, 1}};
      const auto expected = Simulated(3, plain, 4, 3);
      EXPECT_EQ(Simulated(3, one, 4, 3), expected) << "filter " << filter << " " << f;
      // Two fragments differ (the comparison can fail).
      AveragerOptions two = plain;
      two.stream_layers = {{0}, {1}};
      EXPECT_NE(Simulated(3, two, 4, 3), expected) << "filter " << filter << " " << f;
    }
  }
}

TEST(StreamSchedule, SimulatedEqualsRanksBitForBit) {
  for (int filter = 0; filter < 3; ++filter) {
    for (const int64_t tau : {0, 2}) {
      for (const float mix : {0.0f, 0.5f}) {
        for (const DeltaFormat f : {DeltaFormat::kFp32, DeltaFormat::kInt4}) {
          AveragerOptions o = WithFilter(Streamed({{1}, {0}}, tau, mix), filter);
          o.compress = f, o.compress_block = 2, o.error_feedback = f != DeltaFormat::kFp32;
          EXPECT_EQ(Simulated(3, o, 6, 2), Ranks(3, o, 6, 2))
              << "filter " << filter << " tau " << tau << " mix " << mix << " " << f;
        }
      }
    }
  }
}

using testing::Keys;

// A checkpoint taken while a fragment's exchange is in flight (between its start and its
// merge) resumes bit for bit: the filters' state per fragment, the mean in flight, the
// compressed exchange's anchors and residuals.
TEST(StreamSchedule, CheckpointWithAFragmentInFlightResumesBitForBit) {
  const int n = 3;
  const std::vector<float> init = Init(6);
  for (const DeltaFormat f : {DeltaFormat::kFp32, DeltaFormat::kInt4}) {
    AveragerOptions o = WithFilter(Streamed({{0}, {1}}, 2, 0.5f), 1);
    o.compress = f, o.compress_block = 2, o.error_feedback = f != DeltaFormat::kFp32;
    auto backend = testing::MakeBackend("cpu");
    auto group = CreateSimulatedGroup(*backend, n, 0, 6);
    for (Worker& w : group->Workers()) Set(*backend, w, init);
    Averager avg(*backend, *group, o, 6);
    avg.Reset();
    avg.BeginEpoch();
    CombinePlan plan = Every(8, 2);  // 4 (f0), 6 (merge), 8 (f1), 10 (merge), 12 (f0), ...
    avg.PlanEpoch(plan);
    ASSERT_EQ(plan.points, (std::vector<int64_t>{4, 6, 8, 10, 12, 14, 16}));
    int64_t step = 1, index = 0;
    const auto run_to = [&](Backend& b, WorkerGroup& g, Averager& a, int64_t last, int64_t& s,
                            int64_t& i) {
      for (; s <= last; ++s) {
        Train(b, g, static_cast<uint64_t>(s));
        if (plan.CombineAfter(s)) a.Combine(++i, plan.Combines());
      }
    };
    run_to(*backend, *group, avg, 9, step, index);  // fragment 1 in flight since step 8
    testing::TempDir tmp;
    const CheckpointDir dir(tmp.Path());
    const nlohmann::json state = avg.Save(dir, 3, true);
    EXPECT_EQ(state.at("stream_fragment").get<int>(), 1);
    EXPECT_TRUE(Keys(state).count("stream_comm_s"));
    for (const std::string name : {"bmuf-f0", "bmuf-f1", "stream-mean"}) {
      EXPECT_TRUE(dir.HasTensors(3, name)) << name;
    }
    if (f != DeltaFormat::kFp32) {
      for (const std::string name : {"compress-anchor-f0", "residual-2-f1"}) {
        EXPECT_TRUE(dir.HasTensors(3, name)) << name;
      }
    }
    auto backend2 = testing::MakeBackend("cpu");
    auto group2 = CreateSimulatedGroup(*backend2, n, 0, 6);
    for (int i = 0; i < n; ++i)
      Set(*backend2, group2->Workers()[i], Get(*backend, group->Workers()[i]));
    Averager resumed(*backend2, *group2, o, 6);
    resumed.Reset();
    resumed.Load(dir, 3, state);
    CombinePlan plan2 = Every(8, 2);
    resumed.PlanEpoch(plan2);
    int64_t step2 = step, index2 = index;
    run_to(*backend, *group, avg, 16, step, index);
    run_to(*backend2, *group2, resumed, 16, step2, index2);
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(Get(*backend2, group2->Workers()[i]), Get(*backend, group->Workers()[i]))
          << f << " worker " << i;
    }
  }
}

}  // namespace
}  // namespace mavg
