#pragma once
// The options of a data dir's feature pipeline (feature_pipeline.h), alone so that the model
// file (engine/nn) can record them without depending on the data readers.

namespace mavg {

struct FeaturePipeline {
  bool speaker_cmvn = false;  // per-speaker (or per-utterance) stats from the dir's cmvn.scp
  bool norm_vars = false;     // speaker CMVN also normalises variances (Kaldi's default: no)
  int delta_order = 0;        // 0: none; 2: deltas and delta-deltas (x3 dimensions)

  int OutputDim(int feat_dim) const { return feat_dim * (delta_order + 1); }
  bool IsIdentity() const { return !speaker_cmvn && delta_order == 0; }
};

}  // namespace mavg
