// StepLanes: how many lanes, every index run once on a lane of its own thread, the first error
// rethrown after every lane has stopped.
#include "engine/train/step_lanes.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "engine/backend/backend.h"

namespace mavg {
namespace {

TEST(StepLanes, Count) {
  EXPECT_EQ(StepLaneCount(true, 16, 2, 0), 2);   // every thread
  EXPECT_EQ(StepLaneCount(true, 3, 8, 0), 3);    // never more than the workers
  EXPECT_EQ(StepLaneCount(true, 16, 8, 4), 4);   // concurrent_workers caps
  EXPECT_EQ(StepLaneCount(true, 16, 2, 1), 1);   // one after another
  EXPECT_EQ(StepLaneCount(true, 1, 8, 0), 1);    // one worker
  EXPECT_EQ(StepLaneCount(false, 16, 8, 0), 1);  // a GPU: one stream
}

struct Fixture {
  std::unique_ptr<Backend> backend = CreateBackend(BackendOptions{});
  Network model{*backend, NetworkSpec{4, 3, {5}, LayerKind::kSigmoid}};
};

TEST(StepLanes, EveryIndexOnceEachLaneOnItsOwnThread) {
  Fixture f;
  f.model.Affine(1).SetBiasLearnRateCoef(0.25f);
  StepLanes lanes(*f.backend, f.model, 3, 8);
  ASSERT_EQ(lanes.Count(), 3);
  EXPECT_EQ(lanes.Lane(0).net, &f.model);
  EXPECT_NE(lanes.Lane(1).net, &f.model);
  EXPECT_EQ(lanes.Lane(2).net->Affine(1).BiasLearnRateCoef(), 0.25f);  // synced from the model
  EXPECT_EQ(lanes.Lane(2).x.Rows(), 8);
  std::mutex m;
  std::multiset<int> seen;
  std::set<std::pair<const StepLane*, std::thread::id>> used;
  std::atomic<int> inside{0}, most{0};
  lanes.ForEach(50, [&](int i, StepLane& lane) {
    const int now = ++inside;
    int prev = most.load();
    while (now > prev && !most.compare_exchange_weak(prev, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    {
      std::lock_guard<std::mutex> lock(m);
      seen.insert(i);
      used.insert({&lane, std::this_thread::get_id()});
    }
    --inside;
  });
  ASSERT_EQ(seen.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(seen.count(i), 1u) << i;
  // A lane is only ever used by one thread (its buffers are that thread's).
  std::map<const StepLane*, std::set<std::thread::id>> threads_of;
  for (const auto& [lane, id] : used) threads_of[lane].insert(id);
  for (const auto& [lane, ids] : threads_of) EXPECT_EQ(ids.size(), 1u);
  EXPECT_GE(most.load(), 1);
  EXPECT_LE(most.load(), 3);
}

TEST(StepLanes, OneLaneRunsInOrderOnThisThread) {
  Fixture f;
  StepLanes lanes(*f.backend, f.model, 1, 8);
  std::vector<int> order;
  lanes.ForEach(5, [&](int i, StepLane& lane) {
    EXPECT_EQ(&lane, &lanes.Lane(0));
    order.push_back(i);
  });
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(StepLanes, FirstErrorRethrownAfterAllStop) {
  Fixture f;
  StepLanes lanes(*f.backend, f.model, 2, 8);
  std::atomic<int> running{0};
  try {
    lanes.ForEach(20, [&](int i, StepLane&) {
      ++running;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      --running;
      if (i == 3) throw std::runtime_error("worker 3 failed");
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "worker 3 failed");
  }
  EXPECT_EQ(running.load(), 0);  // nothing still running when the error surfaced
}

}  // namespace
}  // namespace mavg
