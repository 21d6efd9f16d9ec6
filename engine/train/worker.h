#pragma once
// One data-parallel worker: its shard, its own parameters and optimizer, its minibatch stream
// and the statistics it keeps for metrics and checkpoints.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/backend/device_buffer.h"
#include "engine/data/minibatch.h"
#include "engine/optim/optimizer.h"

namespace mavg {

// Per-worker numbers of the current epoch (kFields doubles, the order of To/From, which is the
// order checkpoints store them in).
struct WorkerStats {
  double loss_sum = 0, correct = 0, frames = 0;  // training loss statistics
  double compute_s = 0, io_s = 0;                // minibatch work and input staging
  double comm_s = 0;                             // combining (the communication itself)
  double wait_s = 0;                // blocked: for slower ranks, or for an overlapped sum to finish
  double interval_s = 0;            // compute + io since the last combine (projected wall time)
  double updates = 0, limited = 0;  // layer updates, and those max-change scaled down
  static constexpr int kFields = 10;
  void To(double* out) const {
    const double v[kFields] = {loss_sum, correct, frames,     compute_s, io_s,
                               comm_s,   wait_s,  interval_s, updates,   limited};
    std::copy_n(v, kFields, out);
  }
  void From(const double* in) {
    loss_sum = in[0], correct = in[1], frames = in[2], compute_s = in[3], io_s = in[4];
    comm_s = in[5], wait_s = in[6], interval_s = in[7], updates = in[8], limited = in[9];
  }
};

struct Worker {
  int rank = 0;            // global worker index in [0, N)
  std::vector<int> shard;  // training utterances of this worker
  int64_t shard_frames = 0;
  Matrix params;  // [1 x num_params] owned: the parameters this worker trains
  std::unique_ptr<Optimizer> optimizer;  // owned; its state at a combine: optimizer_state
  // The optimizer's state after the last accepted epoch (before the first: its initial state),
  // kept only when the optimizer keeps state across epochs: a rejected epoch goes back to it.
  std::vector<Matrix> accepted_optimizer_state;
  std::unique_ptr<MinibatchReader> reader;  // owned; this epoch's stream
  DeviceBuffer<double> loss;  // [3] owned: loss sum, correct, frames of this epoch (device)
  WorkerStats stats;
  int64_t minibatches = 0;  // done in this epoch
};

}  // namespace mavg
