#pragma once
// Streaming partial synchronisation (parallel.stream.*; docs/algorithms.md §1j; Douillard et
// al. 2025, "Streaming DiLoCo"). The model's layers are grouped into F fragments
// (config/stream_config.h); within each period [a, b] of the combine policy (every K
// minibatches), fragment p is combined at step a + (p + 1)(b - a) / F, so every fragment is
// combined once per period, at its own offset, in the fixed order of the fragments. A
// fragment's combine is a world mean of its parameters (compressed as parallel.compress says),
// its own filter's step on that mean (each fragment keeps its own outer optimizer state), and
// a merge into every worker:
//   tau = 0   at once: worker_f = alpha worker_f + (1 - alpha) start_f
//   tau > 0   the mean is formed while the workers take tau more local steps
//             (WorkerGroup::StartMean: a background sum where MPI allows one; a compressed
//             exchange is gathered at the start and only its merge waits), then merged as
//             above with the worker's fragment as it is after those steps
// where start_f is what the fragment's filter makes of the mean (plain averaging: the mean).
// Every epoch ends with all fragments combined at its last point, every worker taking the
// model (no mix), as the other schedules end an epoch. A fragment order fixed by the model and
// points fixed by the plan (never by arrival) make every process call the same collectives in
// the same order; the filters', exchanges' and in-flight fragment's state is checkpointed
// (tensor sets suffixed "-f<p>", and "stream-mean"), so a resumed run continues bit for bit.
// One fragment with tau = 0 and alpha = 0 is the synchronous schedule, bit for bit.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/core/delta_codec.h"
#include "engine/train/combine_filter.h"
#include "engine/train/combine_schedule.h"
#include "engine/train/delta_exchange.h"
#include "engine/train/worker_group.h"

namespace mavg {

// One fragment: where its layers' tensors lie in a worker's parameter vector.
struct StreamFragment {
  std::vector<std::pair<int64_t, int64_t>> ranges;  // (offset, length), increasing, disjoint
  std::vector<int64_t> tensor_sizes;                // its tensors in order (the codec's blocks)
  int64_t Size() const;
};

// The fragments of a model whose parameter vector holds `tensor_sizes` in order, two tensors
// (weights, biases) per layer, from each fragment's layers (StreamFragments); adjacent layers
// make one range.
std::vector<StreamFragment> FragmentsOfLayers(const std::vector<std::vector<int>>& layer_groups,
                                              const std::vector<int64_t>& tensor_sizes);

struct StreamOptions {
  std::vector<StreamFragment> fragments;  // in combine order; together the whole model
  int64_t overlap_steps = 0;              // tau
  float mix = 0.0f;                       // alpha
  DeltaFormat compress = DeltaFormat::kFp32;
  int64_t compress_block = 0;
  bool error_feedback = false;
};

// Makes a fragment's filter for `size` parameters (the schedule tags its checkpoint names).
using FilterMaker = std::function<std::unique_ptr<CombineFilter>(int64_t size)>;

class StreamSchedule final : public CombineSchedule {
 public:
  StreamSchedule(Backend& backend, WorkerGroup& group, StreamOptions options,
                 const FilterMaker& make_filter);

  void PlanEpoch(CombinePlan& plan) override;
  void Reset() override;
  void BeginEpoch() override;
  void Combine(int64_t index, int64_t total, double slowest, CombineTally& tally) override;
  bool Pending() const override { return pending_fragment_ >= 0; }
  int64_t Exchanges(int64_t points) const override;
  int64_t Bytes(int64_t points, int64_t payload) const override;
  int64_t BytesReceived(int64_t points, int64_t received) const override;
  void Save(const CheckpointDir& dir, int64_t generation, bool root,
            nlohmann::json& state) override;
  void Load(const CheckpointDir& dir, int64_t generation, const nlohmann::json& state) override;

  // What one point of the epoch's plan does (PlanEpoch): merge the fragment in flight, start
  // fragment `start`'s exchange (-1: none), or combine every fragment (the epoch's last).
  struct Point {
    bool merge = false;
    int start = -1;
    bool all = false;
  };
  const std::vector<Point>& Points() const { return points_; }

 private:
  // Every local worker's fragment f into its scratch buffer.
  void Gather(int f);
  // The scratch buffers become fragment f's world mean (blocking); `agree` as WorkerGroup::Mean.
  CommTime Exchange(int f, std::span<double> agree);
  // Fragment f's filter steps on the mean in scratch; every worker's fragment takes the result
  // (mixed with alpha unless `epoch_end`).
  void Merge(int f, bool epoch_end);
  // Finishes and merges the fragment in flight; returns the seconds its communication took.
  double FinishPending();
  // Worker i's scratch view of fragment f.
  MatrixView Scratch(size_t i, int f) {
    return scratch_[i].View().ColRange(0, sizes_[static_cast<size_t>(f)]);
  }
  // Every local worker's scratch view of fragment f, as a combine averages it.
  TensorsOf ScratchOf(int f);
  // One exchange of fragment f (for counting them).
  int64_t One(int) const { return 1; }
  // Bytes a worker puts into fragment f's exchange, and takes out of it.
  int64_t PayloadOf(int f) const;
  int64_t ReceivedOf(int f) const;
  // Sums `of` over the exchanges of the epoch's first `points` points.
  int64_t SumOverExchanges(int64_t points, int64_t (StreamSchedule::*of)(int) const) const;

  Backend& backend_;    // not owned
  WorkerGroup& group_;  // not owned
  StreamOptions options_;
  std::vector<int64_t> sizes_;                             // [F] parameters per fragment
  std::vector<std::unique_ptr<CombineFilter>> filters_;    // [F]
  std::vector<std::unique_ptr<DeltaExchange>> exchanges_;  // [F], empty: uncompressed
  std::vector<Matrix> scratch_;                            // [local worker] [1 x largest fragment]
  std::vector<Point> points_;                              // the epoch's points (PlanEpoch)
  std::unique_ptr<PendingMean> in_flight_;  // an uncompressed mean started, not waited for
  int pending_fragment_ = -1;               // the fragment whose merge is pending
  double pending_comm_s_ = 0.0, pending_wait_s_ = 0.0;  // of a mean finished before its merge
};

}  // namespace mavg
