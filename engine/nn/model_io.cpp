#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "engine/core/blob_file.h"
#include "engine/nn/model.h"

namespace mavg {
namespace {

constexpr char kMagic[8] = {'M', 'A', 'V', 'G', 'N', 'N', 'E', 'T'};

}  // namespace

void SaveModel(const std::string& path, const Model& model) {
  const Network& net = *model.network;
  const NetworkSpec& spec = net.Spec();
  nlohmann::json header;
  header["input_dim"] = spec.input_dim;
  header["output_dim"] = spec.output_dim;
  header["hidden_dims"] = spec.hidden_dims;
  header["activation"] = LayerKindName(spec.activation);
  std::vector<float> coefs;
  for (int k = 0; k < net.NumAffine(); ++k) coefs.push_back(net.Affine(k).BiasLearnRateCoef());
  header["bias_lr_coefs"] = coefs;
  header["feature_transform"] = {{"raw_dim", model.transform.raw_dim},
                                 {"context", model.transform.context},
                                 {"shift", model.transform.shift},
                                 {"scale", model.transform.scale}};
  const FeaturePipeline& pipe = model.transform.pipeline;
  if (!pipe.IsIdentity()) {
    header["feature_transform"]["pipeline"] = {{"speaker_cmvn", pipe.speaker_cmvn},
                                               {"norm_vars", pipe.norm_vars},
                                               {"delta_order", pipe.delta_order}};
  }
  header["label_counts"] = model.label_counts;
  header["num_params"] = net.NumParams();
  std::vector<float> params(static_cast<size_t>(net.NumParams()));
  net.GetBackend().CopyToHost(net.Params(), params.data());

  // Version 1 where it says all: a build that reads only version 1 then still reads the model,
  // and refuses one whose pipeline it would silently skip.
  WriteBlobFile(path, kMagic, pipe.IsIdentity() ? 1 : kModelFormatVersion, header, params);
}

namespace {

// The parameter count of `spec` (weights and biases of every affine layer), or -1 when a size
// is not positive or the count would overflow.
int64_t ParamCount(const NetworkSpec& spec) {
  std::vector<int64_t> dims = {spec.input_dim};
  dims.insert(dims.end(), spec.hidden_dims.begin(), spec.hidden_dims.end());
  dims.push_back(spec.output_dim);
  int64_t total = 0;
  for (size_t k = 0; k + 1 < dims.size(); ++k) {
    const int64_t in = dims[k], out = dims[k + 1];
    if (in <= 0 || out <= 0 || in + 1 > INT64_MAX / out) return -1;
    const int64_t layer = (in + 1) * out;
    if (total > INT64_MAX - layer) return -1;
    total += layer;
  }
  return total;
}

}  // namespace

Model LoadModel(const std::string& path, Backend& backend) {
  BlobFile blob = ReadBlobFile(path, kMagic, kModelFormatVersion, "model file", 1);
  const nlohmann::json& header = blob.header;

  Model model;
  NetworkSpec spec;
  std::vector<float> coefs;
  try {
    spec.input_dim = header.at("input_dim").get<int>();
    spec.output_dim = header.at("output_dim").get<int>();
    spec.hidden_dims = header.at("hidden_dims").get<std::vector<int>>();
    spec.activation = ParseLayerKind(header.at("activation").get<std::string>());
    coefs = header.at("bias_lr_coefs").get<std::vector<float>>();
    const auto& ft = header.at("feature_transform");
    model.transform.raw_dim = ft.at("raw_dim").get<int>();
    model.transform.context = ft.at("context").get<int>();
    model.transform.shift = ft.at("shift").get<std::vector<float>>();
    model.transform.scale = ft.at("scale").get<std::vector<float>>();
    if (ft.contains("pipeline")) {
      const auto& p = ft.at("pipeline");
      model.transform.pipeline.speaker_cmvn = p.at("speaker_cmvn").get<bool>();
      model.transform.pipeline.norm_vars = p.at("norm_vars").get<bool>();
      model.transform.pipeline.delta_order = p.at("delta_order").get<int>();
    }
    model.label_counts = header.at("label_counts").get<std::vector<double>>();
  } catch (const nlohmann::json::exception& e) {
    MAVG_FAIL("{}: corrupt model header: {}", path, e.what());
  }
  const int order = model.transform.pipeline.delta_order;
  MAVG_CHECK(order >= 0 && order <= 10 && model.transform.raw_dim % (order + 1) == 0,
             "{}: corrupt model header: delta order {} for {}-dimensional frames", path, order,
             model.transform.raw_dim);
  MAVG_CHECK(model.transform.OutputDim() == spec.input_dim,
             "{}: feature transform gives {} dims but the network takes {}", path,
             model.transform.OutputDim(), spec.input_dim);

  // The header's architecture must account for exactly the stored parameters before anything
  // is allocated for it (a header with absurd dimensions and a valid checksum is refused here).
  const int64_t expected = ParamCount(spec);
  MAVG_CHECK(expected >= 0 && static_cast<uint64_t>(expected) == blob.data.size(),
             "{}: {} parameters stored but the header's architecture ({} inputs, {} hidden "
             "layers, {} outputs) {}",
             path, blob.data.size(), spec.input_dim, spec.hidden_dims.size(), spec.output_dim,
             expected < 0 ? std::string("is invalid (a non-positive size, or too large)")
                          : fmt::format("has {}", expected));
  model.network = std::make_unique<Network>(backend, spec);
  Network& net = *model.network;
  MAVG_CHECK(static_cast<int>(coefs.size()) == net.NumAffine(), "{}: corrupt model header", path);
  backend.CopyFromHost(blob.data.data(), net.Params());
  for (int k = 0; k < net.NumAffine(); ++k) net.Affine(k).SetBiasLearnRateCoef(coefs[k]);
  return model;
}

ParamDiff DiffParams(const Network& a, const Network& b) {
  MAVG_CHECK(a.Spec() == b.Spec(), "the two models have different architectures");
  std::vector<float> pa(static_cast<size_t>(a.NumParams())), pb(pa.size());
  a.GetBackend().CopyToHost(a.Params(), pa.data());
  b.GetBackend().CopyToHost(b.Params(), pb.data());
  ParamDiff d;
  d.params = a.NumParams();
  double max_a = 0.0;
  for (size_t i = 0; i < pa.size(); ++i) {
    const double x = pa[i], y = pb[i], diff = std::fabs(x - y);
    if (std::memcmp(&pa[i], &pb[i], sizeof(float)) != 0) ++d.differing;
    d.max_abs = std::max(d.max_abs, diff);
    d.max_elementwise =
        std::max(d.max_elementwise, diff / std::max({std::fabs(x), std::fabs(y), 1e-3}));
    max_a = std::max(max_a, std::fabs(x));
  }
  d.max_rel = max_a > 0 ? d.max_abs / max_a : d.max_abs;
  return d;
}

}  // namespace mavg
