#include "engine/train/delta_exchange.h"

#include <algorithm>
#include <utility>

#include "engine/core/error.h"
#include "engine/core/timer.h"

namespace mavg {

DeltaExchange::DeltaExchange(Backend& backend, WorkerGroup& group, DeltaCodec codec,
                             bool error_feedback, ExchangedOf exchanged, std::string tag)
    : backend_(backend),
      group_(group),
      codec_(std::move(codec)),
      error_feedback_(error_feedback),
      exchanged_(exchanged ? std::move(exchanged)
                           : ExchangedOf([](Worker& w) { return w.params.View(); })),
      tag_(std::move(tag)) {
  const auto p = static_cast<size_t>(codec_.Values());
  MAVG_CHECK(group.Workers().empty() || exchanged_(group.Workers()[0]).Size() == codec_.Values(),
             "compressed exchange of {} values for a vector of {}", p,
             group.Workers().empty() ? 0 : exchanged_(group.Workers()[0]).Size());
  anchor_.assign(p, 0.0f);
  delta_.assign(p, 0.0f);
  sum_.assign(p, 0.0f);
  if (error_feedback_) residuals_.assign(group.Workers().size(), std::vector<float>(p, 0.0f));
  packed_.assign(static_cast<size_t>(group.WorldSize() * codec_.PackedBytes()), std::byte{0});
}

void DeltaExchange::SetAnchor(bool clear_residuals) {
  SetAnchorFrom(exchanged_(group_.Workers()[0]), clear_residuals);
}

void DeltaExchange::SetAnchorFrom(ConstMatrixView anchor, bool clear_residuals) {
  MAVG_CHECK(anchor.Size() == codec_.Values(), "an anchor of {} values for an exchange of {}",
             anchor.Size(), codec_.Values());
  backend_.CopyToHost(anchor, anchor_.data());
  if (clear_residuals) {
    for (std::vector<float>& e : residuals_) std::fill(e.begin(), e.end(), 0.0f);
  }
}

CommTime DeltaExchange::Mean(std::span<double> agree) {
  std::vector<Worker>& workers = group_.Workers();
  const int64_t bytes = codec_.PackedBytes();
  const size_t p = anchor_.size();
  Timer coding;
  for (size_t i = 0; i < workers.size(); ++i) {
    backend_.CopyToHost(exchanged_(workers[i]), delta_.data());
    for (size_t j = 0; j < p; ++j) delta_[j] -= anchor_[j];
    if (error_feedback_) {
      for (size_t j = 0; j < p; ++j) delta_[j] += residuals_[i][j];
    }
    std::span<std::byte> mine(packed_.data() + workers[i].rank * bytes, static_cast<size_t>(bytes));
    codec_.Encode(delta_, mine);
    // The residual's buffer holds u until the decoding below makes it u - D(Q(u)).
    if (error_feedback_) residuals_[i].swap(delta_);
  }
  // One worker's share of the encoding (each device encodes its own), the gather, the decoding
  // every worker does.
  const double encode_s = coding.Seconds() / static_cast<double>(workers.size());
  CommTime time = group_.Gather(packed_, agree);
  coding.Reset();
  // Every worker's delta decoded once: into the sum, and for a local worker with error
  // feedback into its residual e = u - D(Q(u)) too.
  std::fill(sum_.begin(), sum_.end(), 0.0f);
  const int first = workers[0].rank;  // local workers have consecutive ranks
  for (int r = 0; r < group_.WorldSize(); ++r) {
    const std::span<const std::byte> q(packed_.data() + r * bytes, static_cast<size_t>(bytes));
    const int local = r - first;
    if (!error_feedback_ || local < 0 || local >= static_cast<int>(workers.size())) {
      codec_.DecodeAdd(q, sum_);
      continue;
    }
    codec_.Decode(q, delta_);
    std::vector<float>& e = residuals_[local];  // holds u (above)
    for (size_t j = 0; j < p; ++j) {
      sum_[j] += delta_[j];
      e[j] -= delta_[j];
    }
  }
  const float inv_n = 1.0f / static_cast<float>(group_.WorldSize());
  for (size_t j = 0; j < p; ++j) sum_[j] = anchor_[j] + sum_[j] * inv_n;
  for (Worker& w : workers) backend_.CopyFromHost(sum_.data(), exchanged_(w));
  backend_.Synchronize();
  time.comm_s += encode_s + coding.Seconds();
  return time;
}

void DeltaExchange::Save(const CheckpointDir& dir, int64_t generation, bool root) const {
  Matrix staged(backend_, 1, codec_.Values());
  if (root) {
    backend_.CopyFromHost(anchor_.data(), staged);
    dir.WriteTensors(backend_, generation, "compress-anchor" + tag_, {staged});
  }
  for (size_t i = 0; i < residuals_.size(); ++i) {
    backend_.CopyFromHost(residuals_[i].data(), staged);
    dir.WriteTensors(backend_, generation,
                     fmt::format("residual-{}{}", group_.Workers()[i].rank, tag_), {staged});
  }
}

void DeltaExchange::Load(const CheckpointDir& dir, int64_t generation) {
  Matrix staged(backend_, 1, codec_.Values());
  dir.ReadTensors(backend_, generation, "compress-anchor" + tag_, {staged});
  backend_.CopyToHost(staged, anchor_.data());
  for (size_t i = 0; i < residuals_.size(); ++i) {
    dir.ReadTensors(backend_, generation,
                    fmt::format("residual-{}{}", group_.Workers()[i].rank, tag_), {staged});
    backend_.CopyToHost(staged, residuals_[i].data());
  }
}

}  // namespace mavg
