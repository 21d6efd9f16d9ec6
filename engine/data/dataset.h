#pragma once
// An in-memory frame-level dataset: utterances of feature frames with optional per-frame labels
// (pdf ids from alignments). Host memory only; training code splices and copies minibatches to
// the device. One Dataset is shared read-only by every simulated worker of a run.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/data/pipeline_options.h"

namespace mavg {

namespace kaldi {
class TableSource;
}  // namespace kaldi

struct Dataset {
  std::string source;                // where it came from (data dir path), for messages
  int dim = 0;                       // feature dimension of one (unspliced) frame
  std::vector<std::string> utt_ids;  // [num_utts]
  std::vector<int64_t> offsets{0};   // [num_utts + 1] frame offsets into feats/labels
  std::vector<float> feats;          // [num_frames x dim], row-major
  std::vector<int32_t> labels;       // [num_frames] pdf ids; empty when there are no alignments

  int NumUtts() const { return static_cast<int>(utt_ids.size()); }
  int64_t NumFrames() const { return offsets.back(); }
  int64_t UttFrames(int utt) const { return offsets[utt + 1] - offsets[utt]; }
  bool HasLabels() const { return !labels.empty(); }
  const float* Frame(int64_t global_frame) const { return feats.data() + global_frame * dim; }
  float* MutableFrame(int64_t global_frame) { return feats.data() + global_frame * dim; }

  // Appends one utterance. `frames` is [n x dim] row-major; `labels` empty or [n].
  void Append(const std::string& utt_id, const float* frames, int64_t n,
              const int32_t* frame_labels);
  // Largest label + 1 (0 without labels).
  int64_t NumClasses() const;  // 1 + the largest label (64-bit: no overflow at 2^31 - 1)
};

struct LoadOptions {
  bool require_labels = true;  // a data dir without alignments is an error when set
  bool ignore_labels = false;  // features only: every utterance, no alignments read
  int max_utts = 0;            // keep only the first max_utts usable utterances (0: all)
  // Where the alignments (pdf ids) come from: a Kaldi rspecifier (kaldi_table.h: archives,
  // gzip, globs, scp, pipes); empty: the dir's ali.ark when it has one. `alignments_setting`
  // names it in messages (e.g. "data.ali").
  std::string alignments;
  std::string alignments_setting = "data.ali";
  // The same alignments already read (e.g. shared by the train and dev sets, so that a pipe runs
  // once); when set, `alignments` is not read again.
  std::shared_ptr<const kaldi::TableSource> alignment_table;
  FeaturePipeline pipeline;  // speaker CMVN and deltas, applied to every utterance as it loads
};

// The usable utterances of a Kaldi data dir and their sizes, read without their features:
// feats.scp (or feats.ark) gives every utterance's size from its matrix header, the
// alignments its labels; an utterance is usable when it has frames, an alignment (where
// labels are read) and the pipeline's speaker statistics. Sharding needs only this, so an MPI
// rank can read the utterance list first and then only the features of its own shard.
// Every problem (missing dir/files, corrupt archive, length mismatch, a dimension that
// changes between utterances, a negative label) throws mavg::Error naming the file and
// utterance; NaN/Inf features are found when they are loaded.
class DataDirIndex {
 public:
  DataDirIndex(const std::string& dir, const LoadOptions& options = {});
  ~DataDirIndex();
  DataDirIndex(DataDirIndex&&) noexcept;
  DataDirIndex& operator=(DataDirIndex&&) noexcept;

  const std::string& Dir() const { return dir_; }
  int NumUtts() const { return static_cast<int>(utt_ids_.size()); }
  const std::vector<std::string>& UttIds() const { return utt_ids_; }
  const std::vector<int64_t>& Frames() const { return frames_; }  // [num_utts]
  int64_t NumFrames() const;
  int FeatDim() const { return feat_dim_; }                           // in the archives
  int Dim() const { return options_.pipeline.OutputDim(feat_dim_); }  // after the pipeline
  bool HasLabels() const { return labelled_; }
  // Frames per label over the usable utterances ([1 + largest label]; empty without labels).
  const std::vector<double>& LabelCounts() const { return label_counts_; }
  // Where the largest label is ("" without labels): "file: utterance 'u' frame t".
  const std::string& LargestLabelWhere() const { return largest_where_; }

  // The features (through the pipeline) and labels of the utterances `which` (positions in
  // this index, ascending), in that order.
  Dataset Load(const std::vector<int>& which) const;
  Dataset LoadAll() const;

 private:
  struct Sources;
  std::string dir_;
  LoadOptions options_;
  std::unique_ptr<Sources> sources_;  // the feature entries and the alignment table
  std::vector<std::string> utt_ids_;  // [num_utts] usable utterances, in file order
  std::vector<int64_t> frames_;       // [num_utts]
  std::vector<int> entry_;            // [num_utts] position among the feature entries
  int feat_dim_ = 0;
  bool labelled_ = false;
  std::vector<double> label_counts_;
  std::string largest_where_;
};

// Loads a Kaldi-style data dir: DataDirIndex(dir, options).LoadAll().
Dataset LoadDataDir(const std::string& dir, const LoadOptions& options = {});

}  // namespace mavg
