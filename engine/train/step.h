#pragma once
// The per-minibatch work of one worker, on the Backend only.

#include <cstdint>

#include "engine/data/dataset.h"
#include "engine/nn/network.h"
#include "engine/optim/optimizer.h"

namespace mavg {

// Forward, fused softmax + cross-entropy, backward and update of every affine layer with
// learning rate `lr`. Adds [loss sum, correct, frames] to the device array `stats`.
void TrainStep(Network& net, Optimizer& optimizer, ConstMatrixView input, const int32_t* labels,
               float lr, double* stats);

struct EvalResult {
  double loss = 0.0;      // average cross-entropy per frame
  double accuracy = 0.0;  // frame accuracy in [0, 1]
  int64_t frames = 0;
};

// Cross-entropy and frame accuracy of `net` on every frame of `data` (already normalised),
// spliced with `context`, in batches of `batch` frames.
EvalResult Evaluate(Network& net, const Dataset& data, int context, int64_t batch);

}  // namespace mavg
