#pragma once
// A world mean whose payload is compressed (parallel.compress; docs/algorithms.md §1i): every
// worker r started the block from the same point S (the anchor) and sends its outer delta
//   u_r = W_r - S (+ e_r with error feedback),   q_r = Q(u_r) packed (core/delta_codec.h),
//   e_r = u_r - D(q_r)   (error feedback: the residual it carries to the next combine),
// the packed buffers are all-gathered (WorkerGroup::Gather: MPI_Allgather of the bytes that
// were encoded, not a simulation of their rounding), and every process forms
//   W̄ = S + (1/N) (((D(q_0) + D(q_1)) + D(q_2)) + ...)
// in rank order, so simulated workers and MPI ranks hold the same W̄ bit for bit. The filter
// then takes W̄ as it takes an uncompressed mean (an outer optimizer steps on S - W̄).
// A worker puts PackedBytes() into each combine, where an uncompressed mean puts 4 bytes per
// parameter. The anchor is what every worker holds after Reset, BeginEpoch and a combine; it
// and the residuals are checkpointed ("compress-anchor", "residual-<worker>"), so a resumed run
// continues bit for bit.

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/delta_codec.h"
#include "engine/train/checkpoint.h"
#include "engine/train/worker_group.h"

namespace mavg {

// The vector a worker exchanges: its parameters, or a buffer holding a fragment of them
// (train/stream_schedule.h).
using ExchangedOf = std::function<MatrixView(Worker&)>;

class DeltaExchange {
 public:
  // `codec` packs one worker's delta ([1 x codec.Values()]) of what `exchanged` returns (empty:
  // its parameters); `tag` suffixes the checkpoint's tensor sets.
  DeltaExchange(Backend& backend, WorkerGroup& group, DeltaCodec codec, bool error_feedback,
                ExchangedOf exchanged = {}, std::string tag = {});

  // The anchor becomes what the workers hold now (identical on all); with `clear_residuals`
  // the residuals become 0 (at the start, after a newbob rejection).
  void SetAnchor(bool clear_residuals);
  // The anchor becomes `anchor` (identical on all processes).
  void SetAnchorFrom(ConstMatrixView anchor, bool clear_residuals);
  // Every local worker's exchanged vector becomes W̄ (above). `agree` as WorkerGroup::Mean's.
  CommTime Mean(std::span<double> agree);
  int64_t PayloadBytes() const { return codec_.PackedBytes(); }

  void Save(const CheckpointDir& dir, int64_t generation, bool root) const;
  void Load(const CheckpointDir& dir, int64_t generation);

 private:
  Backend& backend_;    // not owned
  WorkerGroup& group_;  // not owned
  DeltaCodec codec_;
  bool error_feedback_;
  ExchangedOf exchanged_;
  std::string tag_;
  std::vector<float> anchor_;                  // [P] S, host copy
  std::vector<std::vector<float>> residuals_;  // [local worker][P] e_r (error feedback)
  std::vector<float> delta_, sum_;             // [P] scratch: u_r; the decoded sum, then W̄
  std::vector<std::byte> packed_;              // [N x PackedBytes()] every worker's q_r
};

}  // namespace mavg
