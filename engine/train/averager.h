#pragma once
// How the workers' parameters combine at the end of every block of minibatches, written once
// over a WorkerGroup (docs/algorithms.md §1b-§1d): a combine schedule (combine_schedule.h:
// when, over which workers, overlapped or not) composed with a filter (combine_filter.h: what
// a global combine makes of the workers' mean). The options choose the parts:
//   parallel.algorithm   average: the identity filter (the model is the workers' mean W̄,
//                        Su & Chen); bmuf: block momentum (Chen & Huo 2016)
//   parallel.outer       an outer optimizer on the averaged delta (DiLoCo): nesterov and
//                        momentum are BMUF's filter (η = momentum, ζ = lr), adam its own
//   parallel.overlap     the overlapped schedule (the mean of block t is formed while block
//                        t+1 trains), else the synchronous one
//   two-level            (parallel.group_size) wraps either schedule: groups of g workers
//                        average at every combine point, the wrapped schedule combines all
//                        workers at every (K2/K)-th and at the epoch's last
//   parallel.compress    the workers send compressed outer deltas (delta_exchange.h) to a
//                        synchronous flat schedule, instead of their parameters
//   parallel.stream      the streaming schedule (stream_schedule.h): fragments of layers, each
//                        combined at its own point with its own filter, overlapped and mixed
//   parallel.optimizer_state  keep: each worker's optimizer state stays its own (the
//                        paper); average: it is averaged with the parameters (more bytes);
//                        reset: every worker clears it after each combine (no bytes)
// The parts' state (W_g, Δ; the snapshot and mean of an overlapped block) is held identically
// by every process, never communicated, and checkpointed, so a resumed run continues bit for
// bit. A world of one worker has nothing to combine and costs nothing.

#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/config/config.h"
#include "engine/train/checkpoint.h"
#include "engine/train/combine_filter.h"
#include "engine/train/combine_schedule.h"
#include "engine/train/delta_exchange.h"
#include "engine/train/worker_group.h"

namespace mavg {

struct AveragerOptions {
  bool bmuf = false;            // BMUF, or an outer nesterov / momentum step (the same filter)
  float block_momentum = 0.0f;  // η
  float block_lr = 1.0f;        // ζ
  bool nesterov = true;
  bool model_is_start = false;  // an epoch ends on the look-ahead S (outer nesterov: DiLoCo's θ)
  bool overlap = false;
  int64_t global_every = 1;  // combine points per global combine (K2 / K; 1: flat)
  // The workers' optimizer state at every combine (group or world): kept, averaged with the
  // parameters, or cleared after the mean
  OptimizerStatePolicy optimizer_state = OptimizerStatePolicy::kKeep;
  // parallel.outer.type adam: Adam on the outer gradient
  bool outer_adam = false;
  double outer_lr = 0.0, outer_beta1 = 0.9, outer_beta2 = 0.999, outer_epsilon = 1e-8;
  // parallel.compress: the format of the workers' outer deltas (fp32: uncompressed means),
  // values per scale, error feedback; the model's tensors in order (empty: one of all)
  DeltaFormat compress = DeltaFormat::kFp32;
  int64_t compress_block = 0;
  bool error_feedback = false;
  std::vector<int64_t> tensor_sizes;
  // parallel.stream: each fragment's layers (config/stream_config.h; empty: not streaming), tau,
  // alpha
  std::vector<std::vector<int>> stream_layers;
  int64_t stream_overlap_steps = 0;
  float stream_mix = 0.0f;
};

// What a combine point did with the stop flags passed to Averager::Combine.
enum class StopFlags {
  kAgreed,     // they hold the max over all processes (carried by the combine's world mean)
  kLocal,      // as passed: the caller maxes them itself
  kNotChecked  // this point exchanged nothing: check them at the next one
};

// From the config; η < 0 becomes 1 - 1/N.
AveragerOptions AveragerOptionsFrom(const ParallelConfig& parallel, int world_size);

class Averager {
 public:
  Averager(Backend& backend, WorkerGroup& group, const AveragerOptions& options,
           int64_t num_params);

  // What the workers hold now (identical on all) becomes the global model; Δ = 0. At the
  // start, after a newbob rejection.
  void Reset();
  // Start of a fresh epoch (not one resumed inside): the workers take the block start point.
  void BeginEpoch();
  // The epoch's combine points, as the combine policy planned them, become the points the
  // schedule acts at (streaming adds each fragment's); every epoch, fresh or resumed, before
  // its first Combine.
  void PlanEpoch(CombinePlan& plan) { schedule_->PlanEpoch(plan); }
  // After the block that ends at combine point `index` (1-based) of the epoch's `total`.
  // Adds comm_s / wait_s to the local workers' statistics and the block's time to
  // ProjectedSeconds(). The epoch's last combine leaves every worker with the model (W_g).
  // `stop_flags`: values to max over all processes on the combine's way (WorkerGroup::Mean's
  // `agree`); says whether they now hold that max, or are as passed because this combine had
  // no world mean to carry them (a group combine, an overlapped block's started mean: not the
  // epoch's last, which is synchronous), or exchanged nothing (a streamed fragment's merge).
  StopFlags Combine(int64_t index, int64_t total, std::span<double> stop_flags = {});
  // Exchanges among the workers in the epoch's first `points` combine points, and the bytes
  // every worker put into them (EpochRow::averagings, comm_bytes). 0 for a world of one.
  int64_t Exchanges(int64_t points) const;
  int64_t Bytes(int64_t points);
  // ... and the bytes every worker took out of them: the mean (as many as it put in), or with
  // compressed deltas the N - 1 other workers' packed deltas (EpochRow::comm_bytes_received).
  int64_t BytesReceived(int64_t points);
  // Bytes every worker puts into one combine (group or global): the tensors it averages, as
  // 4-byte floats, or its packed delta with parallel.compress (EpochRow::comm_bytes). 0 for a
  // world of one.
  int64_t PayloadBytes();
  // The model the averaging method names (its filter's global model: BMUF's W_g, DiLoCo's
  // outer parameters; plain averaging's workers' mean), after Reset, Load and an epoch's last
  // combine: what the run evaluates, keeps as the last accepted model and saves. The methods
  // here also leave it on every worker, but the trainer reads it from here, so a method whose
  // workers keep their own models needs no stash of them around an epoch's end.
  MatrixView Model();
  // True when every worker holds the same parameters (false after a group combine and while
  // an overlapped mean is pending).
  bool WorkersAgree() const { return tally_.agree; }

  // Projected wall time of the epoch so far: per block the slowest worker's compute plus the
  // communication that is not hidden.
  double ProjectedSeconds() const { return tally_.projected_s; }
  void SetProjectedSeconds(double s) { tally_.projected_s = s; }

  // Checkpoint: every process calls Save (root writes what all share, every process its
  // workers' own tensors); the returned JSON goes into meta.json and back into Load.
  nlohmann::json Save(const CheckpointDir& dir, int64_t generation, bool root);
  void Load(const CheckpointDir& dir, int64_t generation, const nlohmann::json& state);

 private:
  Backend& backend_;                           // not owned
  WorkerGroup& group_;                         // not owned
  std::unique_ptr<CombineFilter> filter_;      // owned
  std::unique_ptr<DeltaExchange> exchange_;    // owned; null: uncompressed means
  std::unique_ptr<CombineSchedule> schedule_;  // owned; uses *filter_
  bool clear_state_;                           // optimizer_state reset
  TensorsOf tensors_;                          // what a combine averages of a worker
  CombineTally tally_;
};

}  // namespace mavg
