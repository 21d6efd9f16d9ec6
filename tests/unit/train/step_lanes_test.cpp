// StepLanes: how many lanes, every index run once on a lane of its own thread, the first error
// rethrown after every lane has stopped; a lane's input, read when stepped or read ahead
// (double-buffered), reaching every step in order, also on a device that runs late; the step
// clock.
#include "engine/train/step_lanes.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/backend/backend.h"
#include "tests/testing/queued_backend.h"
#include "tests/testing/test_util.h"

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

// A stream of minibatches of `rows` x `cols`: minibatch j's element (r, c) is j*1000 + r*10 + c
// and its labels j + r (exact in float); records the order in which they were read.
struct CountingStream {
  int64_t rows = 0, cols = 0, next = 0, end = 0;
  std::vector<int64_t> read;
  static float Value(int64_t j, int64_t r, int64_t c) {
    return static_cast<float>(j * 1000 + r * 10 + c);
  }
  MinibatchSource Source() {
    return [this](std::vector<float>& x, std::vector<int32_t>& labels) -> int64_t {
      if (next == end) return 0;
      x.assign(static_cast<size_t>(rows * cols), 0.0f);
      labels.assign(static_cast<size_t>(rows), 0);
      for (int64_t r = 0; r < rows; ++r) {
        labels[r] = static_cast<int32_t>(next + r);
        for (int64_t c = 0; c < cols; ++c) x[r * cols + c] = Value(next, r, c);
      }
      read.push_back(next++);
      return rows;
    };
  }
};

// Steps on `steps` minibatches as the trainer does (Take, the step's work, Prefetch of the
// next), the step here a copy of the lane's input to the device's record of what every step
// saw; returns that record and checks the order of reads and which minibatches were read ahead.
void ExpectEveryStepSeesItsMinibatch(Backend& b, InputBuffering buffering, bool read_ahead) {
  const int64_t rows = 3, cols = 4, steps = 7;
  Network model(b, NetworkSpec{static_cast<int>(cols), 3, {5}, LayerKind::kSigmoid});
  StepLanes lanes(b, model, 1, rows, buffering);
  StepLane& lane = lanes.Lane(0);
  EXPECT_EQ(lane.prefetch != nullptr, read_ahead);
  CountingStream stream{rows, cols, 0, steps, {}};
  const MinibatchSource source = stream.Source();
  Matrix seen(b, steps * rows, cols);
  DeviceBuffer<int32_t> seen_labels(b, static_cast<size_t>(steps * rows));
  for (int64_t j = 0; j < steps; ++j) {
    ASSERT_EQ(lane.Take(&stream, j, source), rows) << j;
    EXPECT_EQ(lane.prefetched, read_ahead && j > 0) << j;
    b.Copy(lane.x.View().RowRange(0, rows), seen.View().RowRange(j * rows, rows));
    b.CopyBytesOnDevice(seen_labels.Data() + j * rows, lane.labels.Data(),
                        static_cast<size_t>(rows) * sizeof(int32_t));
    if (j + 1 < steps) lane.Prefetch(&stream, j + 1, source);
    // Read ahead: the next minibatch is read before this step's work is done.
    EXPECT_EQ(stream.read.size(), static_cast<size_t>(read_ahead && j + 1 < steps ? j + 2 : j + 1));
  }
  const testing::HostMat h = testing::ToHost(b, seen);
  const std::vector<int32_t> l = seen_labels.ToHost();
  for (int64_t j = 0; j < steps; ++j) {
    for (int64_t r = 0; r < rows; ++r) {
      EXPECT_EQ(l[j * rows + r], j + r) << j;
      for (int64_t c = 0; c < cols; ++c) {
        EXPECT_EQ(h(j * rows + r, c), CountingStream::Value(j, r, c)) << j << " " << r;
      }
    }
  }
  std::vector<int64_t> order(steps);
  for (int64_t j = 0; j < steps; ++j) order[j] = j;
  EXPECT_EQ(stream.read, order);
}

TEST(StepLanes, InputOfEveryStepIsItsMinibatchReadInOrder) {
  Fixture f;
  // The CPU reads every minibatch when it steps on it.
  ExpectEveryStepSeesItsMinibatch(*f.backend, InputBuffering::kAuto, false);
  // Double-buffered: read while the step before runs.
  ExpectEveryStepSeesItsMinibatch(*f.backend, InputBuffering::kDouble, true);
  // On a device that runs late, whose copies from staging memory read it when they run: the
  // staging is refilled only once the copy from it is done.
  testing::QueuedBackend queued;
  ExpectEveryStepSeesItsMinibatch(queued, InputBuffering::kAuto, true);
  // Its copies run on a queue of their own, ordered by events alone: work first too.
  testing::QueuedBackend work_first(testing::QueuedBackend::Order::kWorkFirst);
  ExpectEveryStepSeesItsMinibatch(work_first, InputBuffering::kAuto, true);
  testing::QueuedBackend single;
  ExpectEveryStepSeesItsMinibatch(single, InputBuffering::kSingle, false);
}

// On a device that runs late, the next minibatch is read and its copy queued while the step
// before it has not run at all: the host never waits for a step to read ahead of it. (The
// test backend's device memory is host memory, so the test can look without waiting.)
TEST(StepLanes, TheNextMinibatchIsReadAndQueuedBeforeTheStepBeforeItRuns) {
  testing::QueuedBackend b;
  Network model(b, NetworkSpec{4, 3, {5}, LayerKind::kSigmoid});
  StepLanes lanes(b, model, 1, 3);
  StepLane& lane = lanes.Lane(0);
  CountingStream stream{3, 4, 0, 10, {}};
  const MinibatchSource source = stream.Source();
  Matrix work(b, 3, 4);
  for (int64_t j = 0; j < 5; ++j) {
    ASSERT_EQ(lane.Take(&stream, j, source), 3);
    b.Fill(work, -1.0f);
    b.Synchronize();
    b.Copy(lane.x.View(), work);  // the step's work, queued
    lane.Prefetch(&stream, j + 1, source);
    EXPECT_EQ(stream.read.size(), static_cast<size_t>(j + 2)) << j;
    EXPECT_EQ(work.View().data[5], -1.0f) << j;  // the step has not run
    b.Synchronize();
    EXPECT_EQ(work.View().data[5], CountingStream::Value(j, 1, 1)) << j;
  }
  ASSERT_EQ(lane.Take(&stream, 5, source), 3);
  EXPECT_EQ(testing::ToHost(b, lane.x).v[5], CountingStream::Value(5, 1, 1));
}

TEST(StepLanes, AMinibatchReadAheadIsTakenOnlyByItsOwnStep) {
  testing::QueuedBackend b;
  Network model(b, NetworkSpec{4, 3, {5}, LayerKind::kSigmoid});
  StepLanes lanes(b, model, 1, 3);
  StepLane& lane = lanes.Lane(0);
  CountingStream a{3, 4, 0, 10, {}}, other{3, 4, 0, 10, {}};
  ASSERT_EQ(lane.Take(&a, 0, a.Source()), 3);
  lane.Prefetch(&a, 1, a.Source());
  EXPECT_THROW(lane.Prefetch(&a, 2, a.Source()), Error);  // one at a time
  EXPECT_THROW(lane.Take(&a, 2, a.Source()), Error);      // it would be lost
  EXPECT_THROW(lane.Take(&other, 1, other.Source()), Error);
  ASSERT_EQ(lane.Take(&a, 1, a.Source()), 3);
  EXPECT_TRUE(lane.prefetched);
  lane.Prefetch(&a, 2, a.Source());
  lane.DropPrefetched();  // a new epoch: new streams
  ASSERT_EQ(lane.Take(&other, 0, other.Source()), 3);
  EXPECT_FALSE(lane.prefetched);
  EXPECT_EQ(testing::ToHost(b, lane.x).v[5], CountingStream::Value(0, 1, 1));
  // The end of a stream read ahead is the end at the step.
  CountingStream short_stream{3, 4, 0, 1, {}};
  ASSERT_EQ(lane.Take(&short_stream, 0, short_stream.Source()), 3);
  lane.Prefetch(&short_stream, 1, short_stream.Source());
  EXPECT_EQ(lane.Take(&short_stream, 1, short_stream.Source()), 0);
}

TEST(StepLanes, ClockGivesEveryStepItsDeviceTimeOldestFirst) {
  testing::QueuedBackend b;  // an operation takes a millisecond, between two events
  StepClock clock(b);
  Matrix m(b, 2, 2);
  for (int step = 0; step < 3; ++step) {
    clock.Start();
    for (int op = 0; op <= step; ++op) b.Fill(m, 1.0f);
    clock.Stop(step % 2, 0.5 * step, step > 0);
  }
  EXPECT_GT(b.Pending(), 0u);  // nothing waited for yet
  std::vector<StepClock::Times> got;
  const auto collect = [&](const StepClock::Times& t) { got.push_back(t); };
  clock.Collect(2, collect);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(clock.Pending(), 2u);
  clock.Collect(0, collect);
  ASSERT_EQ(got.size(), 3u);
  for (int step = 0; step < 3; ++step) {
    EXPECT_EQ(got[step].worker, step % 2);
    EXPECT_EQ(got[step].io_s, 0.5 * step);
    EXPECT_EQ(got[step].prefetched, step > 0);
    EXPECT_DOUBLE_EQ(got[step].compute_s, 1e-3 * (step + 1));
  }
  // Its events are reused; on the CPU an event is the host clock.
  clock.Start();
  clock.Stop(0, 0.0, false);
  clock.Collect(0, collect);
  EXPECT_EQ(got.back().compute_s, 0.0);
  Fixture f;
  StepClock cpu(*f.backend);
  cpu.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  cpu.Stop(0, 0.0, false);
  cpu.Collect(0, collect);
  EXPECT_GE(got.back().compute_s, 0.015);
}

}  // namespace
}  // namespace mavg
