#pragma once
// Frame-level minibatches from utterances: splicing of +-context frames (edge frames repeated)
// and, for training, shuffling through a randomiser buffer as Kaldi's nnet-train-frmshuff does:
// utterances are appended until the buffer holds randomizer_size frames, the buffer is shuffled,
// minibatches are taken from it, and the remainder (< one minibatch) stays for the next fill.
// A final partial minibatch is dropped in training (and counted); evaluation keeps every frame
// in utterance order.

#include <cstdint>
#include <span>
#include <vector>

#include "engine/data/dataset.h"

namespace mavg {

struct MinibatchOptions {
  int64_t minibatch = 256;          // frames per minibatch
  int64_t randomizer_size = 32768;  // shuffling buffer in frames (shuffle only)
  int context = 0;                  // splice +-context frames
  bool shuffle = true;              // false: frames in order, final partial batch kept
  uint64_t seed = 777;              // frame shuffling
};

// Writes the spliced frame `t` of utterance `utt` into out[(2*context+1) * dim].
void SpliceFrame(const Dataset& data, int utt, int64_t t, int context, float* out);

class MinibatchReader {
 public:
  // Reads the utterances `utts` (indices into data) in the given order. `data` must outlive
  // the reader.
  MinibatchReader(const Dataset& data, std::vector<int> utts, const MinibatchOptions& options);

  // Fills feats [n x spliced_dim] and labels [n] (labels only if the data has them) with the
  // next minibatch; returns n, or 0 at the end.
  int64_t Next(std::vector<float>& feats, std::vector<int32_t>& labels);
  // Moves past `n` minibatches without producing them (resuming mid-epoch); returns how many
  // there were.
  int64_t Skip(int64_t n);
  int SplicedDim() const { return data_->dim * (2 * options_.context + 1); }
  // Frames left out at the end because they did not fill a minibatch (shuffle mode).
  int64_t FramesDropped() const { return dropped_; }

 private:
  struct FrameRef {
    int32_t utt;
    int64_t t;  // frame within the utterance
  };
  void Refill();
  // Frames of the next minibatch available in buffer_ (after refilling); 0 at the end.
  size_t Take();

  const Dataset* data_;    // [not null], not owned
  std::vector<int> utts_;  // utterance order
  MinibatchOptions options_;
  size_t next_utt_ = 0;           // position in utts_
  std::vector<FrameRef> buffer_;  // randomiser buffer
  size_t pos_ = 0;                // next unread frame of buffer_
  uint64_t fills_ = 0;            // buffer fills so far (seeds each shuffle)
  int64_t dropped_ = 0;
};

// All utterance indices 0..n-1 in order.
std::vector<int> AllUtterances(const Dataset& data);

// Splits utterances into n shards balanced by frames: longest first, each to the shard with
// the fewest frames so far (ties: lowest shard). Shards keep that assignment order.
std::vector<std::vector<int>> ShardByFrames(const Dataset& data, int n);
// The same from the utterances' frame counts alone ([num_utts]; e.g. DataDirIndex::Frames()).
std::vector<std::vector<int>> ShardByFrames(const std::vector<int64_t>& frames, int n);

}  // namespace mavg
