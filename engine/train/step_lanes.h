#pragma once
// Where the workers of one process take their minibatch steps: one lane per worker stepping at
// once. Simulated workers on a CPU step concurrently between two combines, each on a thread of
// its own with single-threaded GEMMs (small GEMMs scale poorly across threads, and the workers
// are independent until they combine); everywhere else there is one lane and the workers step
// one after another, each using every thread of the backend.
//
// A lane holds what a step writes besides the worker's own state: a network (activations,
// gradients; the lane binds the worker's parameters into it) and the minibatch buffers. The
// worker's parameters, optimizer, reader and statistics are its own, and each step is the same
// float operations whatever lane runs it or what runs beside it, so the models are bit for bit
// those of the workers stepping one after another (and of N MPI ranks).

#include <functional>
#include <memory>
#include <vector>

#include "engine/backend/device_buffer.h"
#include "engine/nn/network.h"

namespace mavg {

struct StepLane {
  Network* net = nullptr;          // [not null] lane 0: the model's network; else owned_net
  std::unique_ptr<Network> owned;  // lanes > 0: a network of the model's shape
  Matrix x;                        // [minibatch x input] the minibatch's inputs
  DeviceBuffer<int32_t> labels;    // [minibatch]
  std::vector<float> host_x;       // host staging of the inputs
  std::vector<int32_t> host_labels;
};

// How many workers step at once: `concurrent` (device_options.concurrent_workers; 0: as many as
// there are `threads`), never more than the `workers` of this process; 1 for a GPU backend,
// whose replicas share one stream, and for one worker.
int StepLaneCount(bool cpu, int workers, int threads, int concurrent);

class StepLanes {
 public:
  // Lane 0 steps on `model` (not owned; must outlive this); the others on networks of its shape.
  StepLanes(Backend& backend, Network& model, int lanes, int64_t minibatch);
  int Count() const { return static_cast<int>(lanes_.size()); }
  StepLane& Lane(int i) { return lanes_[i]; }
  // The lanes' networks take the model's bias learning-rate coefficients (after it was
  // initialised or loaded); their parameters are always a worker's, bound per step.
  void SyncFromModel();
  // fn(i, lane) for i in [0, n): one lane per thread, each i on exactly one lane, in any order
  // across lanes. With one lane, in order on this thread. The first exception thrown is
  // rethrown here after every thread has stopped.
  void ForEach(int n, const std::function<void(int, StepLane&)>& fn);

 private:
  Network& model_;  // not owned
  std::vector<StepLane> lanes_;
};

}  // namespace mavg
