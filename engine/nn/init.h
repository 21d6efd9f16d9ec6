#pragma once
// Random initialisation as Kaldi nnet1's make_nnet_proto.py + nnet-initialize do it:
//   weights ~ N(0, s^2), s = 0.1 * 35 * sqrt(2 / (in + out))          (Glorot-scaled)
//   input layer: s additionally x sqrt(1/12) (std of U[0,1], matching sigmoid outputs)
//   hidden biases ~ U[-4, 0] (mean -2, range 4) for sigmoid; 0 for tanh and relu, which that
//   negative offset would saturate or silence
//   output layer: bias 0, bias learning-rate coefficient 0.1
// Schemes fitted to other activations (model.init_scheme; biases 0, output bias coefficient 0.1
// as above):
//   he:     hidden layers N(0, 2 / in) (He et al. 2015, for the relu they feed); the output
//           layer N(0, 1 / in), as it feeds a softmax, not a relu
//   glorot: every layer N(0, 2 / (in + out)) (Glorot & Bengio 2010, for tanh)
// Values are drawn on the host from mavg::Rng (same numbers on every backend), then copied.

#include <cstdint>
#include <string>

#include "engine/config/choices.h"
#include "engine/nn/network.h"

namespace mavg {

// "nnet1", "he" or "glorot": a resolved scheme (config/choices.h; "auto" is resolved from the
// activation by the config, ResolvedInitScheme).
InitScheme ParseInitScheme(const std::string& name);

void InitializeNetwork(Network& network, InitScheme scheme, uint64_t seed);
inline void InitializeKaldiNnet1(Network& network, uint64_t seed) {
  InitializeNetwork(network, InitScheme::kNnet1, seed);
}

// Standard deviation of the weights of affine layer k (exposed for tests).
double InitStddev(const NetworkSpec& spec, InitScheme scheme, int affine_index);
inline double KaldiInitStddev(const NetworkSpec& spec, int affine_index) {
  return InitStddev(spec, InitScheme::kNnet1, affine_index);
}

}  // namespace mavg
