#include "engine/nn/init.h"

#include <cmath>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/rng.h"

namespace mavg {
namespace {

constexpr double kParamStddevFactor = 0.1;
constexpr double kGlorotMagic = 35.0;  // make_nnet_proto.py: "~1.0 in inner layers for 1024 dims"
constexpr double kHiddenBiasMean = -2.0;
constexpr double kHiddenBiasRange = 4.0;
constexpr float kOutputBiasLearnRateCoef = 0.1f;

}  // namespace

InitScheme ParseInitScheme(const std::string& name) {
  const std::optional<InitScheme> scheme = ParseEnum<InitScheme>(name);
  MAVG_CHECK(scheme && *scheme != InitScheme::kAuto,
             "model.init_scheme: '{}' is not a scheme (nnet1, he, glorot)", name);
  return *scheme;
}

double InitStddev(const NetworkSpec& spec, InitScheme scheme, int affine_index) {
  const int num_affine = static_cast<int>(spec.hidden_dims.size()) + 1;
  MAVG_CHECK(affine_index >= 0 && affine_index < num_affine, "affine index {} out of range",
             affine_index);
  const int in = affine_index == 0 ? spec.input_dim : spec.hidden_dims[affine_index - 1];
  const int out = affine_index + 1 == num_affine ? spec.output_dim : spec.hidden_dims[affine_index];
  const bool is_output = affine_index + 1 == num_affine;
  switch (scheme) {
    case InitScheme::kHe:
      return std::sqrt((is_output ? 1.0 : 2.0) / in);
    case InitScheme::kGlorot:
      return std::sqrt(2.0 / (in + out));
    case InitScheme::kNnet1:
      break;
    case InitScheme::kAuto:
      MAVG_FAIL("model.init_scheme auto is resolved from the activation before initialising");
  }
  double s = kParamStddevFactor * kGlorotMagic * std::sqrt(2.0 / (in + out));
  const bool is_input_hidden = affine_index == 0 && num_affine > 1;
  if (is_input_hidden) s *= std::sqrt(1.0 / 12.0);
  return s;
}

void InitializeNetwork(Network& network, InitScheme scheme, uint64_t seed) {
  Backend& backend = network.GetBackend();
  const NetworkSpec& spec = network.Spec();
  for (int k = 0; k < network.NumAffine(); ++k) {
    AffineLayer& layer = network.Affine(k);
    Rng rng(DeriveSeed(seed, {0x1417, static_cast<uint64_t>(k)}));
    const double stddev = InitStddev(spec, scheme, k);
    std::vector<float> w(static_cast<size_t>(layer.Weights().Size()));
    for (float& v : w) v = static_cast<float>(stddev * rng.Gaussian());
    backend.CopyFromHost(w.data(), layer.Weights());

    const bool is_output = k + 1 == network.NumAffine();
    std::vector<float> b(static_cast<size_t>(layer.OutputDim()), 0.0f);
    if (scheme == InitScheme::kNnet1 && !is_output && spec.activation == LayerKind::kSigmoid) {
      for (float& v : b) {
        v = static_cast<float>(kHiddenBiasMean + (rng.Uniform() - 0.5) * kHiddenBiasRange);
      }
    }
    backend.CopyFromHost(b.data(), layer.Bias());
    layer.SetBiasLearnRateCoef(is_output ? kOutputBiasLearnRateCoef : 1.0f);
  }
}

}  // namespace mavg
