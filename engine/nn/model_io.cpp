#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "engine/core/files.h"
#include "engine/nn/model.h"

namespace mavg {
namespace {

constexpr char kMagic[8] = {'M', 'A', 'V', 'G', 'N', 'N', 'E', 'T'};

template <typename T>
void Put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

class Cursor {
 public:
  Cursor(const std::string& data, const std::string& path) : data_(data), path_(path) {}
  template <typename T>
  T Get(const char* what) {
    T value;
    Need(sizeof(T), what);
    std::memcpy(&value, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }
  const char* Take(size_t n, const char* what) {
    Need(n, what);
    const char* p = data_.data() + pos_;
    pos_ += n;
    return p;
  }
  bool AtEnd() const { return pos_ == data_.size(); }

 private:
  void Need(size_t n, const char* what) {
    MAVG_CHECK(n <= data_.size() - pos_, "{}: truncated model file (reading {} at byte {})", path_,
               what, pos_);
  }
  const std::string& data_;
  const std::string& path_;
  size_t pos_ = 0;
};

uint32_t Crc(const float* data, size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* bytes = reinterpret_cast<const Bytef*>(data);
  size_t left = n * sizeof(float);
  while (left > 0) {
    const uInt chunk = static_cast<uInt>(std::min<size_t>(left, 1u << 30));
    crc = crc32(crc, bytes, chunk);
    bytes += chunk;
    left -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

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
  header["label_counts"] = model.label_counts;
  header["num_params"] = net.NumParams();
  const std::string header_text = header.dump();

  std::vector<float> params(static_cast<size_t>(net.NumParams()));
  net.GetBackend().CopyToHost(net.Params(), params.data());

  std::string out;
  out.reserve(64 + header_text.size() + params.size() * sizeof(float));
  out.append(kMagic, sizeof(kMagic));
  Put<uint32_t>(out, kModelFormatVersion);
  Put<uint64_t>(out, header_text.size());
  out += header_text;
  Put<uint64_t>(out, params.size());
  out.append(reinterpret_cast<const char*>(params.data()), params.size() * sizeof(float));
  Put<uint32_t>(out, Crc(params.data(), params.size()));
  WriteFileAtomic(path, out);
}

Model LoadModel(const std::string& path, Backend& backend) {
  const std::string data = ReadFile(path);
  Cursor cur(data, path);
  const char* magic = cur.Take(sizeof(kMagic), "magic");
  MAVG_CHECK(std::memcmp(magic, kMagic, sizeof(kMagic)) == 0, "{}: not a mavg model file", path);
  const auto version = cur.Get<uint32_t>("version");
  MAVG_CHECK(version == kModelFormatVersion,
             "{}: model format version {} is not supported (this build reads {})", path, version,
             kModelFormatVersion);
  const auto header_len = cur.Get<uint64_t>("header length");
  const char* header_text = cur.Take(header_len, "header");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(header_text, header_text + header_len);
  } catch (const std::exception& e) {
    MAVG_FAIL("{}: corrupt model header: {}", path, e.what());
  }

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
    model.label_counts = header.at("label_counts").get<std::vector<double>>();
  } catch (const nlohmann::json::exception& e) {
    MAVG_FAIL("{}: corrupt model header: {}", path, e.what());
  }
  MAVG_CHECK(model.transform.OutputDim() == spec.input_dim,
             "{}: feature transform gives {} dims but the network takes {}", path,
             model.transform.OutputDim(), spec.input_dim);

  model.network = std::make_unique<Network>(backend, spec);
  Network& net = *model.network;
  const auto num_params = cur.Get<uint64_t>("parameter count");
  MAVG_CHECK(num_params == static_cast<uint64_t>(net.NumParams()),
             "{}: {} parameters stored but the architecture has {}", path, num_params,
             net.NumParams());
  const char* raw = cur.Take(num_params * sizeof(float), "parameters");
  std::vector<float> params(num_params);
  std::memcpy(params.data(), raw, num_params * sizeof(float));
  const auto crc = cur.Get<uint32_t>("checksum");
  MAVG_CHECK(crc == Crc(params.data(), params.size()), "{}: parameter checksum mismatch", path);
  MAVG_CHECK(cur.AtEnd(), "{}: trailing bytes after the model", path);
  MAVG_CHECK(static_cast<int>(coefs.size()) == net.NumAffine(), "{}: corrupt model header", path);
  backend.CopyFromHost(params.data(), net.Params());
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
