#pragma once
// A trained model: the input feature transform (the per-dir pipeline, then splicing + global
// CMVN, Kaldi's final.feature_transform), the network, and the training-label counts (state priors
// for hybrid decoding). Native file format (little-endian):
//   8 bytes  magic "MAVGNNET"
//   u32      format version (kModelFormatVersion)
//   u64      header length H, then H bytes of JSON: architecture, bias lr coefficients,
//            feature transform, label counts, number of parameters, and the header's own
//            CRC-32 ("header_crc", see core/blob_file.h)
//   u64      number of parameters P, then P float32 (the network's flat buffer)
//   u32      CRC-32 (zlib) of the P floats
// Files are written atomically (tmp + fsync + rename).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/data/pipeline_options.h"
#include "engine/nn/network.h"

namespace mavg {

// Version 2 adds the per-dir feature pipeline (speaker CMVN, deltas) to the header; a model
// without one is still written as version 1, which every earlier build reads.
constexpr uint32_t kModelFormatVersion = 2;

struct FeatureTransform {
  FeaturePipeline pipeline;  // what each data dir's features go through first (speaker CMVN,
                             // deltas): decoding applies it to the dir it decodes
  int raw_dim = 0;           // dimension of one input frame before splicing (after deltas)
  int context = 0;           // frames spliced on each side (edge frames repeated)
  std::vector<float> shift;  // [raw_dim] added to each raw frame (-mean; empty: none)
  std::vector<float> scale;  // [raw_dim] then multiplied (1/stddev; empty: none)

  int OutputDim() const { return raw_dim * (2 * context + 1); }
  bool HasCmvn() const { return !shift.empty(); }
};

struct Model {
  FeatureTransform transform;
  std::unique_ptr<Network> network;
  std::vector<double> label_counts;  // [output_dim] frames per label in training (may be empty)
};

void SaveModel(const std::string& path, const Model& model);
// Reads a model onto `backend`; throws naming the file on a bad magic, version, size or CRC.
Model LoadModel(const std::string& path, Backend& backend);

// How far apart the parameters of two models of the same architecture are.
struct ParamDiff {
  int64_t params = 0;
  int64_t differing = 0;         // parameters that are not bit-identical
  double max_abs = 0.0;          // max |a - b|
  double max_rel = 0.0;          // max |a - b| / max |a|: relative to the parameters' scale
  double max_elementwise = 0.0;  // max |a_i - b_i| / max(|a_i|, |b_i|, 1e-3): per parameter
};
ParamDiff DiffParams(const Network& a, const Network& b);

}  // namespace mavg
