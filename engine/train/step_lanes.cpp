#include "engine/train/step_lanes.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>

namespace mavg {

int StepLaneCount(bool cpu, int workers, int threads, int concurrent) {
  if (!cpu || workers <= 1) return 1;
  const int want = concurrent > 0 ? concurrent : std::max(threads, 1);
  return std::clamp(want, 1, workers);
}

StepLanes::StepLanes(Backend& backend, Network& model, int lanes, int64_t minibatch)
    : model_(model), lanes_(static_cast<size_t>(std::max(lanes, 1))) {
  const int input = model.Spec().input_dim;
  for (size_t i = 0; i < lanes_.size(); ++i) {
    StepLane& lane = lanes_[i];
    if (i > 0) lane.owned = std::make_unique<Network>(backend, model.Spec());
    lane.net = i == 0 ? &model : lane.owned.get();
    lane.x = Matrix(backend, minibatch, input);
    lane.labels = DeviceBuffer<int32_t>(backend, static_cast<size_t>(minibatch));
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
  // One OpenMP thread per lane. Inside this region the backend's own parallel loops run on one
  // thread (no nested parallelism) and OpenBLAS, asked from inside a parallel region, runs its
  // GEMMs on the calling thread alone.
  std::atomic<int> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  const int threads = static_cast<int>(lanes_.size());
#pragma omp parallel num_threads(threads)
  {
    StepLane& lane = lanes_[static_cast<size_t>(omp_get_thread_num())];
    for (int i = next++; i < n; i = next++) {
      try {
        fn(i, lane);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next = n;  // the others stop after their current item
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace mavg
