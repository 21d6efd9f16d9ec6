#pragma once
// The per-minibatch work of one worker, on the Backend only.

#include <cstdint>
#include <vector>

#include "engine/data/dataset.h"
#include "engine/nn/network.h"
#include "engine/optim/optimizer.h"

namespace mavg {

// Forward, fused softmax + cross-entropy, backward and update of every affine layer with
// learning rate `lr` (Optimizer::FinishStep included). Adds [loss sum, correct, frames] to the
// device array `stats`. Queues device work only: nothing here waits for the device.
void TrainStep(Network& net, Optimizer& optimizer, ConstMatrixView input, const int32_t* labels,
               float lr, double* stats);

// Sums over frames, so that shards evaluated apart can be added before dividing.
struct EvalSums {
  double loss_sum = 0.0;  // cross-entropy summed over frames
  double correct = 0.0;   // frames whose arg-max is the label
  double frames = 0.0;
  double Loss() const { return frames > 0 ? loss_sum / frames : 0.0; }
  double Accuracy() const { return frames > 0 ? correct / frames : 0.0; }
};

// Cross-entropy and frame accuracy of `net` on the utterances `utts` of `data` (already
// normalised), spliced with `context`, in batches of `batch` frames.
EvalSums Evaluate(Network& net, const Dataset& data, const std::vector<int>& utts, int context,
                  int64_t batch);

}  // namespace mavg
