#pragma once
// An in-memory frame-level dataset: utterances of feature frames with optional per-frame labels
// (pdf ids from alignments). Host memory only; training code splices and copies minibatches to
// the device. One Dataset is shared read-only by every simulated worker of a run.

#include <cstdint>
#include <string>
#include <vector>

namespace mavg {

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
  bool require_labels = true;  // a data dir without ali.ark is an error when set
  bool ignore_labels = false;  // features only: every utterance, ali.ark not read
  int max_utts = 0;            // keep only the first max_utts utterances (0: all)
};

// Loads a Kaldi-style data dir: feats.scp (or feats.ark) + ali.ark (int32 pdf ids per frame).
// Every problem (missing dir/files, corrupt archive, NaN/Inf feature, length mismatch, a
// dimension that changes between utterances) throws mavg::Error naming the file and utterance.
Dataset LoadDataDir(const std::string& dir, const LoadOptions& options = {});

}  // namespace mavg
