#include "engine/nn/kaldi_nnet1.h"

#include <fmt/ostream.h>

#include <vector>

namespace mavg {
namespace {

void WriteVector(std::ostream& out, const float* v, int64_t n) {
  out << " [";
  for (int64_t i = 0; i < n; ++i) fmt::print(out, " {}", v[i]);
  out << " ]\n";
}

void WriteTransformComponents(const FeatureTransform& t, std::ostream& out) {
  const int dim = t.OutputDim();
  fmt::print(out, "<Splice> {} {}\n [", dim, t.raw_dim);
  for (int o = -t.context; o <= t.context; ++o) fmt::print(out, " {}", o);
  out << " ]\n<!EndOfComponent>\n";
  if (!t.HasCmvn()) return;
  // Splicing repeats the raw frame, so the spliced shift/scale repeat the raw ones.
  std::vector<float> shift, scale;
  for (int o = -t.context; o <= t.context; ++o) {
    shift.insert(shift.end(), t.shift.begin(), t.shift.end());
    scale.insert(scale.end(), t.scale.begin(), t.scale.end());
  }
  fmt::print(out, "<AddShift> {} {}\n<LearnRateCoef> 0", dim, dim);
  WriteVector(out, shift.data(), dim);
  out << "<!EndOfComponent>\n";
  fmt::print(out, "<Rescale> {} {}\n<LearnRateCoef> 0", dim, dim);
  WriteVector(out, scale.data(), dim);
  out << "<!EndOfComponent>\n";
}

const char* KaldiMarker(LayerKind kind) {
  switch (kind) {
    case LayerKind::kAffine:
      return "<AffineTransform>";
    case LayerKind::kSigmoid:
      return "<Sigmoid>";
    case LayerKind::kTanh:
      return "<Tanh>";
    case LayerKind::kRelu:
      return "<ParametricRelu>";  // slopes 1 and 0: a relu (nnet1 has no plain ReLU)
    case LayerKind::kSoftmax:
      return "<Softmax>";
  }
  return "?";
}

}  // namespace

void WriteKaldiFeatureTransform(const FeatureTransform& transform, std::ostream& out) {
  out << "<Nnet>\n";
  WriteTransformComponents(transform, out);
  out << "</Nnet>\n";
}

void WriteKaldiCounts(const std::vector<double>& counts, std::ostream& out) {
  out << "[";
  for (double c : counts) fmt::print(out, " {}", c);
  out << " ]\n";
}

void WriteKaldiNnet1(const Model& model, bool include_transform, std::ostream& out) {
  const Network& net = *model.network;
  std::vector<float> params(static_cast<size_t>(net.NumParams()));
  net.GetBackend().CopyToHost(net.Params(), params.data());
  const float* base = params.data();
  const float* net_base = net.Params().data;

  out << "<Nnet>\n";
  if (include_transform) WriteTransformComponents(model.transform, out);
  int affine_k = 0;
  for (int i = 0; i < net.NumLayers(); ++i) {
    const Layer& layer = net.GetLayer(i);
    fmt::print(out, "{} {} {}\n", KaldiMarker(layer.Kind()), layer.OutputDim(), layer.InputDim());
    if (layer.Kind() == LayerKind::kAffine) {
      const AffineLayer& affine = net.Affine(affine_k++);
      fmt::print(out, "<LearnRateCoef> 1 <BiasLearnRateCoef> {} <MaxNorm> 0\n",
                 affine.BiasLearnRateCoef());
      const float* w = base + (affine.Weights().data - net_base);
      out << " [";
      for (int r = 0; r < affine.OutputDim(); ++r) {
        out << "\n ";
        for (int c = 0; c < affine.InputDim(); ++c) {
          fmt::print(out, " {}", w[static_cast<int64_t>(r) * affine.InputDim() + c]);
        }
      }
      out << " ]\n";
      WriteVector(out, base + (affine.Bias().data - net_base), affine.OutputDim());
    } else if (layer.Kind() == LayerKind::kRelu) {
      // y = alpha x for x >= 0, beta x below; both fixed (learning-rate coefficients 0).
      const std::vector<float> alpha(layer.OutputDim(), 1.0f), beta(layer.OutputDim(), 0.0f);
      out << "<BiasLearnRateCoef> 0 <LearnRateCoef> 0\n";
      WriteVector(out, alpha.data(), layer.OutputDim());
      WriteVector(out, beta.data(), layer.OutputDim());
    }
    out << "<!EndOfComponent>\n";
  }
  out << "</Nnet>\n";
}

}  // namespace mavg
