#pragma once
// Random initialisation as Kaldi nnet1's make_nnet_proto.py + nnet-initialize do it:
//   weights ~ N(0, s^2), s = 0.1 * 35 * sqrt(2 / (in + out))          (Glorot-scaled)
//   input layer: s additionally x sqrt(1/12) (std of U[0,1], matching sigmoid outputs)
//   hidden biases ~ U[-4, 0] (mean -2, range 4) for sigmoid; 0 for tanh and relu, which that
//   negative offset would saturate or silence
//   output layer: bias 0, bias learning-rate coefficient 0.1
// Values are drawn on the host from mavg::Rng (same numbers on every backend), then copied.

#include <cstdint>

#include "engine/nn/network.h"

namespace mavg {

void InitializeKaldiNnet1(Network& network, uint64_t seed);

// Standard deviation of the weights of affine layer k (exposed for tests).
double KaldiInitStddev(const NetworkSpec& spec, int affine_index);

}  // namespace mavg
