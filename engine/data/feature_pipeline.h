#pragma once
// What happens to a data dir's features, utterance by utterance, before the global
// normalisation and splicing of the model's feature transform -- the part of a Kaldi nnet1
// feature pipeline that depends on the data dir:
//   apply-cmvn [--norm-vars] --utt2spk=ark:utt2spk scp:cmvn.scp   (speaker CMVN)
//   add-deltas --delta-order=N                                     (window 2)
// docs/algorithms.md §6 gives the equations and their sources.

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/data/kaldi_io.h"
#include "engine/data/pipeline_options.h"

namespace mavg {

// The CMVN statistics of a data dir's speakers: cmvn.scp (Kaldi's 2 x (D+1) double matrices:
// row 0 the sums and the count, row 1 the sums of squares), keyed by speaker through utt2spk,
// or by utterance where the dir has no utt2spk.
class SpeakerCmvn {
 public:
  // Reads utt2spk and cmvn.scp (the stats themselves when first used); throws naming the file
  // when cmvn.scp is missing or malformed.
  SpeakerCmvn(const std::string& dir, bool norm_vars);

  // Normalises `feats` of utterance `utt` in place as Kaldi's ApplyCmvn does; false (and
  // `feats` untouched) when the utterance's speaker has no statistics (Kaldi's apply-cmvn
  // skips such an utterance). Throws on a dimension mismatch or a count below 1.
  bool Apply(const std::string& utt, kaldi::HostMatrix& feats);
  // The speaker whose statistics normalise `utt` ("" when it has none).
  std::string SpeakerOf(const std::string& utt) const;
  const std::string& ScpPath() const { return scp_path_; }

 private:
  struct Norm {
    std::vector<float> offset, scale;  // [dim] x' = offset + x * scale (float, as Kaldi)
  };
  const Norm& NormOf(const std::string& speaker, const std::string& utt);

  std::string scp_path_, utt2spk_path_;
  bool norm_vars_ = false;
  bool has_utt2spk_ = false;
  std::unordered_map<std::string, std::string> utt2spk_;  // utterance -> speaker
  std::unordered_map<std::string, kaldi::Rxspec> scp_;    // speaker -> where its stats are
  std::unordered_map<std::string, Norm> norms_;           // speaker -> normalisation
  kaldi::RxMatrixReader reader_;
};

// Kaldi's compute-cmvn-stats --spk2utt for a data dir: per speaker (of utt2spk; per utterance
// where the dir has none) the 2 x (D+1) statistics of its utterances' features, written to
// dir/cmvn.ark (double matrices) and dir/cmvn.scp, as steps/compute_cmvn_stats.sh leaves a
// data dir. An existing cmvn.scp is an error unless `force`. Returns the number of speakers.
int WriteSpeakerCmvnStats(const std::string& dir, bool force = false);

// Kaldi's add-deltas (window 2): [frames x dim] -> [frames x dim * (order + 1)], blocks of
// the features and their derivatives of order 1..order, edge frames repeated.
kaldi::HostMatrix AddDeltas(const kaldi::HostMatrix& in, int order);

// The per-dir part of a pipeline for one data dir (SpeakerCmvn read on first use).
class DirPipeline {
 public:
  DirPipeline(std::string dir, const FeaturePipeline& pipeline);
  ~DirPipeline();
  // Transforms one utterance in place; false when it must be skipped (no speaker stats).
  bool Apply(const std::string& utt, kaldi::HostMatrix& feats);
  const FeaturePipeline& Options() const { return pipeline_; }
  // Whether `utt` has what the pipeline needs (speaker statistics).
  bool Covers(const std::string& utt);

 private:
  std::string dir_;
  FeaturePipeline pipeline_;
  std::unique_ptr<SpeakerCmvn> cmvn_;  // when speaker_cmvn
};

}  // namespace mavg
