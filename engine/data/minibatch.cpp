#include "engine/data/minibatch.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "engine/core/error.h"
#include "engine/core/rng.h"

namespace mavg {

void SpliceFrame(const Dataset& data, int utt, int64_t t, int context, float* out) {
  const int64_t begin = data.offsets[utt];
  const int64_t last = data.UttFrames(utt) - 1;
  const size_t bytes = static_cast<size_t>(data.dim) * sizeof(float);
  for (int o = -context; o <= context; ++o) {
    const int64_t s = std::clamp<int64_t>(t + o, 0, last);
    std::memcpy(out, data.Frame(begin + s), bytes);
    out += data.dim;
  }
}

MinibatchReader::MinibatchReader(const Dataset& data, std::vector<int> utts,
                                 const MinibatchOptions& options)
    : data_(&data), utts_(std::move(utts)), options_(options) {
  MAVG_CHECK(options.minibatch > 0, "minibatch must be positive");
  MAVG_CHECK(!options.shuffle || options.randomizer_size >= options.minibatch,
             "randomizer_size {} is smaller than the minibatch {}", options.randomizer_size,
             options.minibatch);
}

void MinibatchReader::Refill() {
  buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(pos_));
  pos_ = 0;
  const size_t target = options_.shuffle ? static_cast<size_t>(options_.randomizer_size)
                                         : static_cast<size_t>(options_.minibatch);
  bool added = false;
  while (buffer_.size() < target && next_utt_ < utts_.size()) {
    const int u = utts_[next_utt_++];
    for (int64_t t = 0; t < data_->UttFrames(u); ++t) buffer_.push_back({u, t});
    added = true;
  }
  if (options_.shuffle && added) {
    Rng rng(DeriveSeed(options_.seed, {fills_++}));
    rng.Shuffle(buffer_.data(), buffer_.size());
  }
}

size_t MinibatchReader::Take() {
  const size_t mb = static_cast<size_t>(options_.minibatch);
  if (buffer_.size() - pos_ < mb) Refill();
  const size_t n = std::min(mb, buffer_.size() - pos_);
  if (n < mb && options_.shuffle) {
    dropped_ += static_cast<int64_t>(n);
    pos_ += n;
    return 0;
  }
  return n;
}

int64_t MinibatchReader::Skip(int64_t n) {
  int64_t skipped = 0;
  while (skipped < n) {
    const size_t got = Take();
    if (got == 0) break;
    pos_ += got;
    ++skipped;
  }
  return skipped;
}

int64_t MinibatchReader::Next(std::vector<float>& feats, std::vector<int32_t>& labels) {
  const size_t n = Take();
  if (n == 0) return 0;
  const int spliced = SplicedDim();
  feats.resize(n * spliced);
  labels.resize(data_->HasLabels() ? n : 0);
  for (size_t i = 0; i < n; ++i) {
    const FrameRef& f = buffer_[pos_ + i];
    SpliceFrame(*data_, f.utt, f.t, options_.context, feats.data() + i * spliced);
    if (data_->HasLabels()) labels[i] = data_->labels[data_->offsets[f.utt] + f.t];
  }
  pos_ += n;
  return static_cast<int64_t>(n);
}

std::vector<int> AllUtterances(const Dataset& data) {
  std::vector<int> utts(data.NumUtts());
  std::iota(utts.begin(), utts.end(), 0);
  return utts;
}

std::vector<std::vector<int>> ShardByFrames(const Dataset& data, int n) {
  std::vector<int64_t> frames(data.NumUtts());
  for (int u = 0; u < data.NumUtts(); ++u) frames[u] = data.UttFrames(u);
  return ShardByFrames(frames, n);
}

std::vector<std::vector<int>> ShardByFrames(const std::vector<int64_t>& utt_frames, int n) {
  MAVG_CHECK(n > 0, "number of shards must be positive");
  std::vector<int> order(utt_frames.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return utt_frames[a] > utt_frames[b]; });
  std::vector<std::vector<int>> shards(n);
  std::vector<int64_t> frames(n, 0);
  for (int u : order) {
    const int s = static_cast<int>(std::min_element(frames.begin(), frames.end()) - frames.begin());
    shards[s].push_back(u);
    frames[s] += utt_frames[u];
  }
  return shards;
}

}  // namespace mavg
