#include "engine/train/step_lanes.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>

#include "engine/core/timer.h"

namespace mavg {

int StepLaneCount(bool cpu, int workers, int threads, int concurrent) {
  if (!cpu || workers <= 1) return 1;
  const int want = concurrent > 0 ? concurrent : std::max(threads, 1);
  return std::clamp(want, 1, workers);
}

int64_t StepLane::Take(const void* stream, int64_t index, const MinibatchSource& read) {
  if (prefetch && prefetch->stream != nullptr) {
    MAVG_CHECK(prefetch->stream == stream && prefetch->index == index,
               "step input: minibatch {} of another stream was read ahead where minibatch {} is "
               "asked for",
               prefetch->index, index);
    std::swap(x, prefetch->x);
    std::swap(labels, prefetch->labels);
    // The buffers just swapped out were read by the work queued so far, and by nothing later.
    prefetch->released.Record();
    prefetch->stream = nullptr;
    io_s = prefetch->io_s;
    prefetched = true;
    if (prefetch->rows == 0) return 0;
    // The step waits on the device for its copy, and that wait is part of its time.
    clock.Start();
    backend->WorkWaitsFor(prefetch->copied.Get());
    return prefetch->rows;
  }
  Timer t;
  const int64_t n = read(host_x, host_labels);
  if (n == 0) return 0;
  backend->CopyFromHost(host_x.data(), x.View().RowRange(0, n));
  labels.CopyFromHost(host_labels.data(), static_cast<size_t>(n));
  io_s = t.Seconds();
  prefetched = false;
  clock.Start();
  return n;
}

void StepLane::Prefetch(const void* stream, int64_t index, const MinibatchSource& read) {
  if (!prefetch) return;
  LanePrefetch& p = *prefetch;
  MAVG_CHECK(p.stream == nullptr, "step input: a minibatch is already read ahead");
  p.copied.Wait();  // the copies from the staging memory before have read it
  Timer t;
  const int64_t n = read(host_x, host_labels);
  if (n > 0) {
    const size_t x_bytes = static_cast<size_t>(n * x.Cols()) * sizeof(float);
    const size_t label_bytes = static_cast<size_t>(n) * sizeof(int32_t);
    MAVG_CHECK(n <= p.x.Rows() && host_x.size() * sizeof(float) >= x_bytes &&
                   host_labels.size() * sizeof(int32_t) >= label_bytes,
               "step input: a minibatch of {} rows for buffers of {}", n, p.x.Rows());
    void* sx = p.staged_x.Bytes(x_bytes);
    void* sl = p.staged_labels.Bytes(label_bytes);
    std::memcpy(sx, host_x.data(), x_bytes);
    std::memcpy(sl, host_labels.data(), label_bytes);
    backend->CopiesWaitFor(p.released.Get());  // the step that read p.x before has run
    backend->CopyFromStagingAsync(sx, p.x.View().data, x_bytes);
    backend->CopyFromStagingAsync(sl, p.labels.Data(), label_bytes);
    backend->RecordCopiesEvent(p.copied.Get());
  }
  // Only now: a throw above leaves nothing read ahead.
  p.stream = stream;
  p.index = index;
  p.rows = n;
  p.io_s = t.Seconds();
}

void StepClock::Start() {
  MAVG_CHECK(backend_ != nullptr, "a step clock without a backend");
  if (spare_.empty()) {
    pending_.push_back(Mark{BackendEvent(*backend_), BackendEvent(*backend_), Times{}});
  } else {
    pending_.push_back(std::move(spare_.back()));
    spare_.pop_back();
  }
  pending_.back().start.Record();
}

void StepClock::Stop(int worker, double io_s, bool prefetched) {
  MAVG_CHECK(!pending_.empty(), "a step clock stopped before it started");
  Mark& m = pending_.back();
  m.end.Record();
  m.times = Times{worker, io_s, 0.0, prefetched};
}

void StepClock::Collect(size_t keep, const std::function<void(const Times&)>& fn) {
  while (pending_.size() > keep) {
    Mark& m = pending_.front();
    m.times.compute_s = m.end.SecondsSince(m.start);
    fn(m.times);
    spare_.push_back(std::move(m));
    pending_.pop_front();
  }
}

StepLanes::StepLanes(Backend& backend, Network& model, int lanes, int64_t minibatch,
                     InputBuffering buffering)
    : model_(model), lanes_(static_cast<size_t>(std::max(lanes, 1))) {
  if (lanes_.size() > 1) pool_ = std::make_unique<ThreadPool>(static_cast<int>(lanes_.size()));
  const int input = model.Spec().input_dim;
  const bool double_buffered = buffering == InputBuffering::kDouble ||
                               (buffering == InputBuffering::kAuto && backend.RunsAsynchronously());
  for (size_t i = 0; i < lanes_.size(); ++i) {
    StepLane& lane = lanes_[i];
    lane.backend = &backend;
    if (i > 0) lane.owned = std::make_unique<Network>(backend, model.Spec());
    lane.net = i == 0 ? &model : lane.owned.get();
    lane.x = Matrix(backend, minibatch, input);
    lane.labels = DeviceBuffer<int32_t>(backend, static_cast<size_t>(minibatch));
    lane.clock = StepClock(backend);
    if (double_buffered) {
      lane.prefetch = std::make_unique<LanePrefetch>(backend);
      lane.prefetch->x = Matrix(backend, minibatch, input);
      lane.prefetch->labels = DeviceBuffer<int32_t>(backend, static_cast<size_t>(minibatch));
      // The copy queue must not write them before the work queue has made them (zeroed).
      lane.prefetch->released.Record();
    }
  }
  SyncFromModel();
}

void StepLanes::SyncFromModel() {
  for (StepLane& lane : lanes_) {
    if (lane.owned == nullptr) continue;
    for (int k = 0; k < model_.NumAffine(); ++k) {
      lane.net->Affine(k).SetBiasLearnRateCoef(model_.Affine(k).BiasLearnRateCoef());
    }
  }
}

void StepLanes::ForEach(int n, const std::function<void(int, StepLane&)>& fn) {
  if (lanes_.size() == 1) {
    for (int i = 0; i < n; ++i) fn(i, lanes_[0]);
    return;
  }
  // One task per lane, each stepping items until none is left: a lane whose thread is slow to
  // start (or descheduled) takes fewer items. Inside a task the backend's own parallel work runs
  // on the task's thread alone (ThreadPool::InTask), so each GEMM is its single-threaded tiles.
  std::atomic<int> next{0};
  pool_->Run(static_cast<int64_t>(lanes_.size()), [&](int64_t l) {
    StepLane& lane = lanes_[static_cast<size_t>(l)];
    for (int i = next++; i < n; i = next++) {
      try {
        fn(i, lane);
      } catch (...) {
        next = n;  // the others stop after their current item
        throw;
      }
    }
  });
}

}  // namespace mavg
