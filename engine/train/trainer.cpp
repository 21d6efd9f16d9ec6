#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <span>
#include <thread>

#include "engine/backend/cpu/blas_kernels.h"
#include "engine/backend/scale_histogram.h"
#include "engine/comm/communicator.h"
#include "engine/config/schema.h"
#include "engine/config/stream_config.h"
#include "engine/core/build_info.h"
#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/core/json.h"
#include "engine/core/logging.h"
#include "engine/core/progress.h"
#include "engine/core/rng.h"
#include "engine/core/signals.h"
#include "engine/core/sysinfo.h"
#include "engine/core/timer.h"
#include "engine/data/minibatch.h"
#include "engine/nn/init.h"
#include "engine/nn/model.h"
#include "engine/optim/factory.h"
#include "engine/pretrain/dbn.h"
#include "engine/pretrain/stack_cache.h"
#include "engine/records/checkpoint_meta.h"
#include "engine/records/pretrain_record.h"
#include "engine/records/run_result.h"
#include "engine/records/run_totals.h"
#include "engine/train/averager.h"
#include "engine/train/checkpoint.h"
#include "engine/train/combine_policy.h"
#include "engine/train/contention.h"
#include "engine/train/decode_eval.h"
#include "engine/train/device_choice.h"
#include "engine/train/health.h"
#include "engine/train/metrics.h"
#include "engine/train/run_data.h"
#include "engine/train/run_dir.h"
#include "engine/train/schedule.h"
#include "engine/train/step.h"
#include "engine/train/step_lanes.h"
#include "engine/train/training_run.h"
#include "engine/train/worker_group.h"

namespace mavg {
namespace {

enum class EpochEnd { kDone, kDiverged, kPreempted };

// One run, written once over a WorkerGroup: the same code drives N simulated replicas and one
// MPI rank. The network holds no training state of its own: every worker owns its parameters
// and binds them (ParamsBinding) for its steps; evaluation and saving bind the model, which
// every worker holds after an epoch's last combine. What the run writes are the records of
// records/: an EpochRow per epoch, a CheckpointMeta per checkpoint, the RunResult at the end.
class Trainer {
 public:
  Trainer(const ResolvedRun& spec, const TrainOptions& options, Communicator& comm, RunDir* run)
      : config_(spec.config), run_id_(spec.run_id), options_(options), comm_(comm), run_(run) {
    n_ = static_cast<int>(config_.parallel.workers);
    // Testing hook: MAVG_TEST_STOP_AT=EPOCH:MINIBATCH acts like a SIGUSR1 arriving on rank 0
    // right after that minibatch, so preemption and resume can be tested deterministically.
    if (const char* at = std::getenv("MAVG_TEST_STOP_AT")) {
      MAVG_CHECK(std::sscanf(at, "%d:%ld", &test_stop_epoch_, &test_stop_minibatch_) == 2,
                 "MAVG_TEST_STOP_AT must be EPOCH:MINIBATCH, got '{}'", at);
    }
  }

  // The epoch loop: returns the result (run_->WriteResult is the caller's).
  RunResult Run();

 private:
  bool IsRoot() const { return group_->IsRoot(); }
  std::vector<Worker>& Workers() { return group_->Workers(); }
  // The model the averaging method names (Averager::Model): what is evaluated, kept as the
  // last accepted model and saved.
  MatrixView ModelParams() { return averager_->Model(); }
  // Worker 0's parameters, which a model is written into before SetAllParams (an RBM stack, a
  // checkpoint's), and which a checkpoint stores as the workers' common point.
  MatrixView FirstWorkerParams() { return Workers()[0].params; }
  void Setup();
  // Continues from the checkpoint (--resume), or starts afresh: RBM pretraining (model.init
  // rbm), the initial CV loss (newbob).
  void Start();
  // After an epoch's training: CV, the schedule's decision (a rejected epoch goes back to the
  // last accepted model), the epoch's record, the checkpoint.
  EpochDecision EndEpoch(int epoch);
  // The result of a run that stopped with `status`: the health check, the test set, the model
  // and its decoding (completed or collapsed), and what the run measured.
  RunResult Finish(RunState status);
  // Measured times over the attempts: the run's, the current epoch's (each with what earlier
  // attempts carried in the checkpoint).
  double WallSeconds() const { return totals_.WallSeconds(wall_.Seconds()); }
  double EpochSeconds() const { return epoch_before_s_ + epoch_timer_.Seconds(); }
  // model.init rbm: the hidden layers from a pretrained stack (cached), on every worker.
  void InitializeFromRbm();
  // Refreshes state.json's heartbeat at most once a minute (cluster launchers detect hung runs).
  void Heartbeat() {
    if (run_ == nullptr || heartbeat_.Seconds() < 60) return;
    run_->WriteState(RunState::kRunning);
    heartbeat_.Reset();
  }
  void RestoreCheckpoint(const CheckpointMeta& meta);
  // Fresh streams and statistics for `epoch`; with `progress`, fast-forwarded to it.
  void BeginEpoch(int epoch, const EpochProgress* progress);
  // The combine points of `epoch` at the schedule's lr `lr` (one worker: every minibatch).
  CombinePlan PlanEpoch(int epoch, double lr) const;
  EpochEnd RunEpoch(int epoch, const EpochProgress* progress);
  // One minibatch of worker i (ForEach's index) on `lane`; `next`: the worker whose minibatch
  // the lane steps after this one, read ahead while the device steps (asynchronous backends),
  // or nullptr. Returns the minibatch's rows (0: the worker's stream ended).
  int64_t Step(int i, StepLane& lane, Worker* next);
  // With one lane, the worker whose minibatch follows worker i's next step (nullptr after the
  // epoch's last combine, or with several lanes, where it is not known).
  Worker* NextOnLane(int i);
  // After the lanes' steps up to a combine point: their times and the optimizers' counts into
  // the workers' statistics (what Combine, checkpoints and metrics read).
  void CollectStepStats();
  void AddStepTimes(const StepClock::Times& t);
  bool AnyLossNonFinite();
  EvalSums EvaluateSet(const Dataset& data, const std::vector<std::vector<int>>& shards);
  // Every worker's parameters = `src`.
  void SetAllParams(ConstMatrixView src);
  // Optimizer state that survives epochs (NG-SGD without reset_each_epoch): the copy of the
  // last accepted epoch's, taken after it, and put back when an epoch is rejected.
  void KeepAcceptedOptimizerState();
  void RestoreAcceptedOptimizerState();
  // Every worker's statistics, on every process, in rank order (collectives); flat: the
  // WorkerStats::To layout of worker r at r * kFields, as checkpoints store them.
  std::vector<WorkerStats> GatherStats();
  std::vector<double> GatherStatsFlat();
  // The max-change scale histogram of every worker, summed (a collective).
  std::vector<double> GatherMaxChangeScales();
  EpochProgress PositionInEpoch();  // a collective
  void WriteCheckpoint(int epochs_done, const std::optional<EpochProgress>& progress,
                       bool stopped = false);
  EpochMetrics EndEpochMetrics(int epoch, const EvalSums& cv, bool accepted);
  CollapseVerdict CheckHealth() const;

  // Values are owned unless marked otherwise.
  const RunConfig& config_;      // not owned (Train's caller), validated
  const std::string& run_id_;    // not owned: the config's identity, computed once
  const TrainOptions& options_;  // not owned
  Communicator& comm_;           // not owned: the world of processes
  RunDir* run_;                  // [root only], not owned
  int n_ = 1;                    // N workers in the world

  std::unique_ptr<Backend> backend_;    // owned; every matrix below lives on its device
  RunData data_;                        // train/dev/test sets, normalised, one copy per process
  Model model_;                         // owns the network (layers, workspace)
  Network* network_ = nullptr;          // [not null] model_.network, not owned
  std::unique_ptr<WorkerGroup> group_;  // owned: this process's workers
  std::unique_ptr<Averager> averager_;  // owned: how the workers combine
  Matrix best_;                         // [1 x P] last accepted model (newbob), else empty
  std::unique_ptr<Schedule> schedule_;  // owned: the lr and accept/stop decisions
  std::vector<std::vector<int>> dev_shards_, test_shards_;  // [group_->EvalShards()]
  std::vector<int64_t> shard_frames_;      // [N] training frames of every worker's shard
  std::unique_ptr<CombinePolicy> policy_;  // when the workers combine (N > 1)
  CombinePlan plan_;                       // the epoch's combine points (N = 1: every minibatch)
  int64_t min_shard_frames_ = 0;           // the smallest worker's shard
  float lr_ = 0.0f;                        // per-worker lr of the current epoch
  int epoch_ = 0;                          // current epoch (1-based)
  int stop_signal_ = 0;                    // the signal that stopped training (agreed over ranks)
  int64_t averagings_ = 0;                 // combine points done in the current epoch
  int64_t generation_ = 0;                 // checkpoint generation
  std::string kernels_;                    // the GEMM kernels of every rank (Backend::Kernels)
  std::unique_ptr<StepLanes> lanes_;  // owned: where this process's workers step (step_lanes.h)
  double load_io_s_ = 0.0;            // reading the data, this attempt
  RunTotals totals_;                  // over the epochs and the attempts (and the policy's step)
  // [kScaleBins] the max-change scale factors of this process's workers' layer updates in the
  // current epoch (backend/scale_histogram.h); a checkpoint inside an epoch holds every
  // process's sum, which the process holding worker 0 takes back.
  std::vector<double> max_change_scales_;
  double epoch_before_s_ = 0.0;     // the current epoch's time in earlier attempts (resumed inside)
  Timer wall_;                      // this attempt, from Run()
  Timer epoch_timer_;               // the current epoch, this attempt
  double epoch_cpu_start_s_ = 0.0;  // the process's CPU seconds when the epoch (attempt) began
  std::optional<double> epoch_queue_start_s_;  // its threads' run-queue seconds then
  int compute_threads_ = 0;        // CPU: the threads this process computes on (0: a GPU run)
  EvalSums cv_best_;               // CV statistics of the last accepted epoch
  std::vector<double> cv_losses_;  // [epochs done] every epoch's CV loss (health check)
  int start_epoch_ = 1;            // first epoch to run (after a checkpoint's)
  bool restored_ = false;          // continuing from a checkpoint
  int test_stop_epoch_ = -1;       // MAVG_TEST_STOP_AT
  long test_stop_minibatch_ = -1;
  std::optional<EpochProgress> resume_progress_;  // the checkpoint's position inside an epoch
  RunResult result_;  // filled as the run goes: pretraining, how it stopped, then Finish
  Timer heartbeat_;   // since state.json's last heartbeat
};

void Trainer::Setup() {
  backend_ = CreateBackend(RunBackendOptions(config_, comm_.NodeRank()));

  // Simulated workers share one copy of every shard; an MPI rank reads only its own.
  ShardPlan plan;
  plan.num_shards = n_;
  if (config_.parallel.mode == ParallelMode::kMpi) {
    plan.held = {comm_.Rank()};
  } else {
    plan.held.resize(n_);
    for (int s = 0; s < n_; ++s) plan.held[s] = s;
  }
  data_ = LoadRunData(config_, plan, comm_, &load_io_s_);

  NetworkSpec spec;
  spec.input_dim = data_.transform.OutputDim();
  spec.output_dim = data_.num_outputs;
  spec.hidden_dims.assign(config_.model.hidden_layers, static_cast<int>(config_.model.hidden_dim));
  spec.activation = HiddenLayerKind(config_.model.activation);
  model_.transform = data_.transform;
  model_.label_counts = data_.label_counts;
  model_.network = std::make_unique<Network>(*backend_, spec);
  network_ = model_.network.get();
  const int64_t num_params = network_->NumParams();
  // Every rank initialises from the same seed, so all replicas start identical.
  InitializeNetwork(*network_, ResolvedInitScheme(config_.model),
                    DeriveSeed(static_cast<uint64_t>(config_.seed), {1}));
  spdlog::info("[train] network {}-{}x{}({})-{}: {} parameters", spec.input_dim,
               spec.hidden_dims.size(), config_.model.hidden_dim, config_.model.activation,
               spec.output_dim, num_params);
  schedule_ = CreateSchedule(config_.schedule);
  if (schedule_->NeedsInitialCvLoss()) best_ = Matrix(*backend_, 1, num_params);

  group_ = CreateWorkerGroup(config_.parallel, *backend_, comm_, num_params);
  if (config_.parallel.algorithm == AveragingAlgorithm::kBmuf &&
      config_.parallel.lr_scaling == LrScaling::kLinear && n_ > 1) {
    spdlog::warn(
        "[train] parallel.algorithm bmuf with parallel.lr_scaling linear: block momentum already "
        "multiplies steady progress by 1/(1 - eta) (N at the default eta); BMUF is meant for "
        "parallel.lr_scaling: none");
  }
  spdlog::info("[train] backend {}; {}", backend_->Describe(), group_->Describe());
  kernels_ = backend_->Kernels();
  {
    // Ranks on different machines may run different kernels: their timings are not one
    // machine's, and their bits differ. The kernels' names, hashed into a double's mantissa.
    const std::string hex = Sha256Hex(kernels_).substr(0, 12);
    const double h = static_cast<double>(std::stoull(hex, nullptr, 16));
    double v[2] = {h, -h};
    group_->MaxOverProcesses(std::span<double>(v, 2));
    if (v[0] != -v[1]) {
      spdlog::warn("[train] the MPI ranks run different BLAS kernels (rank 0: {})", kernels_);
      kernels_ += " on rank 0; other ranks differ";
    }
  }

  // Shards: balanced by frames over the whole training set, the same on every rank (LoadRunData).
  const auto& shards = data_.shards;
  dev_shards_ = ShardByFrames(data_.dev, group_->EvalShards());
  if (data_.test.HasLabels()) test_shards_ = ShardByFrames(data_.test, group_->EvalShards());
  shard_frames_ = data_.shard_frames;
  const int64_t min_frames = *std::min_element(shard_frames_.begin(), shard_frames_.end());
  const int64_t mb = config_.optimizer.minibatch;
  min_shard_frames_ = min_frames;
  if (n_ > 1) {
    policy_ = CreateCombinePolicy(config_.parallel, mb);
    const CombineConfig& cc = config_.parallel.combine;
    const int64_t most_steps = config_.schedule.epochs * (min_frames / mb);
    if (cc.policy == CombinePolicyType::kPostLocal && cc.warmup_steps >= most_steps) {
      throw Error(fmt::format(
          "parallel.combine.warmup_steps: {} is not shorter than the run ({} epochs of at most "
          "{} minibatches per worker: {} steps)",
          cc.warmup_steps, config_.schedule.epochs, min_frames / mb, most_steps));
    }
    // The first epoch's plan now: a shard too small for one combine fails before any work.
    const CombinePlan first = PlanEpoch(1, schedule_->LearningRate());
    spdlog::info(
        "[train] combining {} ({}): epoch 1 {} combines and {} minibatches per worker (smallest "
        "shard {} frames)",
        policy_->Describe(), config_.parallel.algorithm, first.Combines(), first.Minibatches(),
        min_frames);
  }
  for (Worker& w : Workers()) {
    w.shard = shards[w.rank];
    w.shard_frames = shard_frames_[w.rank];
    w.optimizer = CreateOptimizer(*backend_, config_.optimizer);
    w.optimizer->Prepare(*network_);
    if (w.optimizer->KeepsStateAcrossEpochs()) {
      for (MatrixView v : w.optimizer->State()) {
        w.accepted_optimizer_state.emplace_back(*backend_, v.rows, v.cols);
      }
    }
  }
  KeepAcceptedOptimizerState();  // before epoch 1: the initial state
  SetAllParams(network_->Params());
  AveragerOptions averaging = AveragerOptionsFrom(config_.parallel, n_);
  for (int k = 0; k < network_->NumAffine(); ++k) {  // each layer's weights, then its biases
    const AffineLayer& layer = network_->Affine(k);
    averaging.tensor_sizes.push_back(static_cast<int64_t>(layer.OutputDim()) * layer.InputDim());
    averaging.tensor_sizes.push_back(layer.OutputDim());
  }
  if (Streaming(config_.parallel) && n_ > 1) {  // one worker combines nothing
    averaging.stream_layers = StreamFragments(config_.parallel.stream, network_->NumAffine());
    averaging.stream_overlap_steps = config_.parallel.stream.overlap_steps;
    averaging.stream_mix = static_cast<float>(config_.parallel.stream.mix);
  }
  averager_ = std::make_unique<Averager>(*backend_, *group_, averaging, num_params);
  averager_->Reset();
  const int threads = config_.device_options.threads > 0
                          ? static_cast<int>(config_.device_options.threads)
                          : static_cast<int>(std::thread::hardware_concurrency());
  const int lanes =
      StepLaneCount(backend_->Kind() == DeviceKind::kCpu, static_cast<int>(Workers().size()),
                    threads, static_cast<int>(config_.device_options.concurrent_workers));
  lanes_ = std::make_unique<StepLanes>(*backend_, *network_, lanes, mb);
  // Lanes step on one thread each; one lane uses the backend's threads.
  if (backend_->Kind() == DeviceKind::kCpu) compute_threads_ = lanes > 1 ? lanes : threads;
  if (lanes > 1) {
    spdlog::info("[train] {} workers step at once, each on one thread", lanes);
  }
}

void Trainer::KeepAcceptedOptimizerState() {
  for (Worker& w : Workers()) {
    if (w.accepted_optimizer_state.empty()) continue;
    const std::vector<MatrixView> state = w.optimizer->State();
    for (size_t i = 0; i < state.size(); ++i) {
      backend_->Copy(state[i], w.accepted_optimizer_state[i]);
    }
  }
}

void Trainer::RestoreAcceptedOptimizerState() {
  for (Worker& w : Workers()) {
    if (w.accepted_optimizer_state.empty()) continue;
    const std::vector<MatrixView> state = w.optimizer->State();
    for (size_t i = 0; i < state.size(); ++i) {
      backend_->Copy(w.accepted_optimizer_state[i], state[i]);
    }
    w.optimizer->StateLoaded();
  }
}

// Thrown out of RBM pretraining (or the wait for another run's) by a stop signal.
struct PretrainingStopped {};

void Trainer::InitializeFromRbm() {
  bool stopped = false;
  if (IsRoot()) {
    const StackKey key = RbmStackKey(config_);
    const std::string records_path = run_ != nullptr ? run_->File(kPretrainFileName) : "";
    if (!records_path.empty()) WriteFileAtomic(records_path, "");  // this attempt's records
    auto record = [&](const nlohmann::json& line, bool cached) {
      PretrainEpoch r = PretrainEpochFromJson(line, "pretraining record");
      r.cached = cached;
      r.stack = key.key;
      if (!records_path.empty()) AppendLine(records_path, DumpJson(ToJson(r)));
    };
    DbnOptions o;
    o.rbm = config_.pretrain.rbm;
    o.context = static_cast<int>(config_.data.context);
    o.randomizer_size = config_.data.randomizer_size;
    o.progress = options_.progress;
    // A stop signal ends pretraining at the next CD-1 step: there is nothing to checkpoint
    // (a stack is cached whole or not at all), so --resume pretrains again or finds it cached.
    const auto alive = [this] {
      Heartbeat();
      if (StopRequested()) throw PretrainingStopped{};
    };
    o.on_minibatch = alive;
    std::optional<CachedStack> stack;
    try {
      stack = ObtainStack(
          options_.cache_dir, key,
          [&](const DbnEpochCallback& cb) {
            if (data_.train_complete) {
              return PretrainDbn(*backend_, data_.train, network_->Spec().hidden_dims, o, cb);
            }
            // An MPI rank holds its shard only: the stack is pretrained on every training
            // utterance (once; cached for every later run), as one process would.
            spdlog::info("[train] loading every training utterance for pretraining");
            const Dataset all = LoadFullTrainingSet(config_, data_.transform);
            return PretrainDbn(*backend_, all, network_->Spec().hidden_dims, o, cb);
          },
          [&](const nlohmann::json& r) { record(r, false); }, alive);
    } catch (const PretrainingStopped&) {
      stopped = true;
    }
    if (stack) {
      if (stack->hit) {
        for (const auto& r : stack->records) record(r, true);
      }
      ParamsBinding bind(*network_, FirstWorkerParams());
      LoadDbnIntoNetwork(stack->dbn, *network_);
      result_.pretrain_s = stack->seconds;
      result_.pretrain_cached = stack->hit;
      result_.pretrain_key = key.key;
      spdlog::info("[train] hidden layers from pretrained stack {} ({}, {:.1f} s)", key.key,
                   stack->hit ? "cached" : "pretrained now", stack->seconds);
    }
  }
  // The other ranks wait here while rank 0 pretrains, and stop with it.
  double stop = stopped ? static_cast<double>(StopSignal()) : 0.0;
  group_->MaxOverProcesses(std::span<double>(&stop, 1));
  if (stop > 0) {
    stop_signal_ = static_cast<int>(stop);
    spdlog::warn(
        "[train] stop requested (signal {}) during RBM pretraining: nothing to checkpoint; "
        "mavg train --resume {} pretrains again (or takes the stack from the cache)",
        stop_signal_, options_.run_dir);
    return;
  }
  group_->BroadcastFromRoot(FirstWorkerParams());  // every rank starts from rank 0's stack
  SetAllParams(FirstWorkerParams());
  averager_->Reset();
}

void Trainer::SetAllParams(ConstMatrixView src) {
  for (Worker& w : Workers()) {
    if (src.data != w.params.View().data) backend_->Copy(src, w.params);
  }
}

int64_t Trainer::Step(int i, StepLane& lane, Worker* next) {
  Worker& w = Workers()[static_cast<size_t>(i)];
  ParamsBinding bind(*lane.net, w.params);
  const auto reader_of = [](Worker& v) -> MinibatchSource {
    return [&v](std::vector<float>& x, std::vector<int32_t>& labels) {
      return v.reader->Next(x, labels);
    };
  };
  const int64_t n = lane.Take(&w, w.minibatches, reader_of(w));
  if (n == 0) return 0;
  // No synchronization: the step's device time comes from events around its work (Take
  // started the clock).
  TrainStep(*lane.net, *w.optimizer, lane.x.View().RowRange(0, n), lane.labels.Data(), lr_,
            w.loss.Data());
  lane.clock.Stop(i, lane.io_s, lane.prefetched);
  ++w.minibatches;
  if (next != nullptr) lane.Prefetch(next, next->minibatches, reader_of(*next));
  // All but the last two steps are done by now where the input is read ahead (the staging of
  // the prefetch waited for the copy before, which waited for them); elsewhere the host waits
  // for them here, so that it runs at most two steps ahead of the device.
  lane.clock.Collect(2, [this](const StepClock::Times& t) { AddStepTimes(t); });
  if (w.rank == 0 && epoch_ == test_stop_epoch_ && w.minibatches == test_stop_minibatch_) {
    RequestStopForTesting(SIGUSR1);
  }
  return n;
}

Worker* Trainer::NextOnLane(int i) {
  if (lanes_->Count() != 1) return nullptr;
  std::vector<Worker>& workers = Workers();
  Worker& w = workers[static_cast<size_t>(i)];
  if (!plan_.CombineAfter(w.minibatches + 1)) return &w;
  if (static_cast<size_t>(i) + 1 < workers.size()) return &workers[static_cast<size_t>(i) + 1];
  return averagings_ + 1 < plan_.Combines() ? &workers[0] : nullptr;
}

void Trainer::AddStepTimes(const StepClock::Times& t) {
  WorkerStats& s = Workers()[static_cast<size_t>(t.worker)].stats;
  s.io_s += t.io_s;
  s.compute_s += t.compute_s;
  // A minibatch read while the step before it ran overlapped that step: of the two, the longer
  // is the time this one added. (The step it overlapped may be another worker's on a shared
  // device; paired here with this worker's own step, which is of the same size: what one
  // device per worker would overlap.)
  s.interval_s += t.prefetched ? std::max(t.io_s, t.compute_s) : t.io_s + t.compute_s;
}

void Trainer::CollectStepStats() {
  for (int l = 0; l < lanes_->Count(); ++l) {
    lanes_->Lane(l).clock.Collect(0, [this](const StepClock::Times& t) { AddStepTimes(t); });
  }
  for (Worker& w : Workers()) {
    const Optimizer::UpdateStats u = w.optimizer->TakeUpdateStats();
    w.stats.updates += static_cast<double>(u.updates);
    w.stats.limited += static_cast<double>(u.limited);
    for (size_t b = 0; b < u.scales.size() && b < max_change_scales_.size(); ++b) {
      max_change_scales_[b] += u.scales[b];
    }
  }
}

std::vector<double> Trainer::GatherMaxChangeScales() {
  std::vector<double> all = max_change_scales_;
  group_->SumOverProcesses(std::span<double>(all));
  return all;
}

bool Trainer::AnyLossNonFinite() {
  bool bad = false;
  for (Worker& w : Workers()) {
    const std::vector<double> s = w.loss.ToHost();
    w.stats.loss_sum = s[0], w.stats.correct = s[1], w.stats.frames = s[2];
    bad = bad || !std::isfinite(s[0]);
  }
  return bad;
}

EvalSums Trainer::EvaluateSet(const Dataset& data, const std::vector<std::vector<int>>& shards) {
  ParamsBinding bind(*network_, ModelParams());
  const EvalSums s = Evaluate(*network_, data, shards[group_->EvalShard()], data_.transform.context,
                              config_.optimizer.minibatch);
  double v[3] = {s.loss_sum, s.correct, s.frames};
  group_->SumOverProcesses(std::span<double>(v, 3));
  return EvalSums{v[0], v[1], v[2]};
}

std::vector<double> Trainer::GatherStatsFlat() {
  std::vector<double> all(static_cast<size_t>(n_) * WorkerStats::kFields, 0.0);
  for (const Worker& w : Workers()) w.stats.To(all.data() + w.rank * WorkerStats::kFields);
  group_->SumOverProcesses(std::span<double>(all));
  return all;
}

std::vector<WorkerStats> Trainer::GatherStats() {
  const std::vector<double> all = GatherStatsFlat();
  std::vector<WorkerStats> out(n_);
  for (int r = 0; r < n_; ++r) out[r].From(all.data() + r * WorkerStats::kFields);
  return out;
}

EpochProgress Trainer::PositionInEpoch() {
  EpochProgress p;
  p.minibatches = Workers()[0].minibatches;
  p.averagings = averagings_;
  p.projected_s = averager_->ProjectedSeconds();
  p.wall_s = EpochSeconds();
  p.workers = GatherStatsFlat();
  p.max_change_scales = GatherMaxChangeScales();
  return p;
}

void Trainer::WriteCheckpoint(int epochs_done, const std::optional<EpochProgress>& progress,
                              bool stopped) {
  CheckpointDir dir(options_.run_dir);
  const int64_t gen = ++generation_;
  const bool agree = averager_->WorkersAgree();
  for (Worker& w : Workers()) {
    std::vector<MatrixView> state = w.optimizer->State();
    if (!state.empty()) {
      dir.WriteTensors(*backend_, gen, fmt::format("opt-{}", w.rank),
                       std::vector<ConstMatrixView>(state.begin(), state.end()));
    }
    if (!w.accepted_optimizer_state.empty()) {
      std::vector<ConstMatrixView> kept;
      for (const Matrix& m : w.accepted_optimizer_state) kept.push_back(m.View());
      dir.WriteTensors(*backend_, gen, fmt::format("opt-accepted-{}", w.rank), kept);
    }
    // Between two global combines of two-level or overlapped averaging the workers differ.
    if (!agree) dir.WriteTensors(*backend_, gen, fmt::format("params-{}", w.rank), {w.params});
  }
  const nlohmann::json averager_state = averager_->Save(dir, gen, IsRoot());
  group_->Barrier();
  if (IsRoot()) {
    dir.WriteTensors(*backend_, gen, "params", {FirstWorkerParams()});
    if (best_.Cols() > 0) dir.WriteTensors(*backend_, gen, "best", {best_});
    CheckpointMeta meta;
    meta.generation = gen;
    meta.epochs_done = epochs_done;
    if (progress) meta.progress = ToJson(*progress);
    meta.stopped = stopped;
    meta.schedule = schedule_->SaveState();
    meta.has_best = best_.Cols() > 0;
    meta.run_id = run_id_;
    meta.world_size = n_;
    meta.averager = averager_state;
    meta.cv_best = {cv_best_.loss_sum, cv_best_.correct, cv_best_.frames};
    meta.cv_losses = cv_losses_;
    totals_.ToCheckpoint(meta, wall_.Seconds(), load_io_s_);
    if (result_.pretrain_key) {  // the result's pretraining fields, for the resumed run's result
      RunResult pretrain;
      pretrain.pretrain_s = result_.pretrain_s;
      pretrain.pretrain_cached = result_.pretrain_cached;
      pretrain.pretrain_key = result_.pretrain_key;
      meta.pretrain = ToJson(pretrain);
    }
    meta.code_version = build_info::kCodeVersion;
    meta.written = UtcNow();
    dir.Commit(meta);
  }
  group_->Barrier();
}

void Trainer::RestoreCheckpoint(const CheckpointMeta& meta) {
  CheckpointDir dir(options_.run_dir);
  const std::string& where = dir.MetaPath();
  MAVG_CHECK(meta.run_id == run_id_,
             "{}: the checkpoint belongs to run {}, not to this config ({})", dir.Path(),
             meta.run_id, run_id_);
  generation_ = meta.generation;
  restored_ = true;
  resume_progress_ = meta.Progress(where);
  dir.ReadTensors(*backend_, generation_, "params", {FirstWorkerParams()});
  SetAllParams(FirstWorkerParams());
  averager_->Load(dir, generation_, meta.averager.value_or(nlohmann::json::object()));
  if (!averager_->WorkersAgree()) {
    for (Worker& w : Workers()) {
      dir.ReadTensors(*backend_, generation_, fmt::format("params-{}", w.rank), {w.params});
    }
  }
  if (best_.Cols() > 0 && meta.has_best) {
    dir.ReadTensors(*backend_, generation_, "best", {best_});
  }
  for (Worker& w : Workers()) {
    std::vector<MatrixView> state = w.optimizer->State();
    if (!state.empty()) {
      dir.ReadTensors(*backend_, generation_, fmt::format("opt-{}", w.rank), state);
      w.optimizer->StateLoaded();
    }
    if (!w.accepted_optimizer_state.empty()) {
      std::vector<MatrixView> kept;
      for (Matrix& m : w.accepted_optimizer_state) kept.push_back(m.View());
      const std::string name = fmt::format("opt-accepted-{}", w.rank);
      if (dir.HasTensors(generation_, name)) {
        dir.ReadTensors(*backend_, generation_, name, kept);
      } else {  // written before the copy was kept: the state as of the checkpoint
        if (&w == &Workers()[0] && resume_progress_) {
          spdlog::warn(
              "[train] {}: the checkpoint has no copy of the last accepted epoch's optimizer "
              "state (an older mavg); if this epoch is rejected, its statistics are kept",
              dir.Path());
        }
        for (size_t i = 0; i < kept.size(); ++i) backend_->Copy(state[i], kept[i]);
      }
    }
  }
  schedule_->LoadState(meta.schedule);
  cv_best_ = EvalSums{meta.cv_best[0], meta.cv_best[1], meta.cv_best[2]};
  cv_losses_.clear();  // older checkpoints have none: the health check sees the later epochs
  for (double x : meta.cv_losses.value_or(std::vector<double>{})) {
    cv_losses_.push_back(std::isnan(x) ? std::numeric_limits<double>::infinity() : x);
  }
  // The earlier attempts' totals; a checkpoint of an older mavg has no times (its attempts'
  // times are unknown: the result counts from this attempt, and has no throughput).
  totals_ = RunTotals::FromCheckpoint(meta);
  if (!meta.wall_total) {
    spdlog::warn(
        "[train] {}: the checkpoint does not say how long the earlier attempts took (an older "
        "mavg): the run's times count from this attempt",
        dir.Path());
  }
  if (meta.pretrain) Update(result_, RunResultFromJson(*meta.pretrain, where + ": 'pretrain'"));
  start_epoch_ = static_cast<int>(meta.epochs_done) + 1;
  if (meta.stopped) start_epoch_ = std::numeric_limits<int>::max();  // done
  spdlog::info("[train] resumed from checkpoint {}: {} epochs done{}", generation_,
               start_epoch_ - 1,
               resume_progress_ ? fmt::format(", {} minibatches into epoch {}",
                                              resume_progress_->minibatches, start_epoch_)
                                : "");
}

void Trainer::BeginEpoch(int epoch, const EpochProgress* progress) {
  const double scale = config_.parallel.lr_scaling == LrScaling::kLinear ? n_ : 1.0;
  lr_ = static_cast<float>(schedule_->LearningRate() * scale);
  epoch_ = epoch;
  plan_ = PlanEpoch(epoch, schedule_->LearningRate());
  if (n_ > 1) averager_->PlanEpoch(plan_);  // streaming: each fragment's points
  const uint64_t seed = static_cast<uint64_t>(config_.seed);
  averagings_ = 0;
  max_change_scales_.assign(kScaleBins, 0.0);
  lanes_->SyncFromModel();
  for (Worker& w : Workers()) {
    // Each worker's own streams: utterance order and frame shuffling.
    std::vector<int> utts = w.shard;
    Rng order(DeriveSeed(seed, {2, static_cast<uint64_t>(epoch), static_cast<uint64_t>(w.rank)}));
    order.Shuffle(utts.data(), utts.size());
    MinibatchOptions mo;
    mo.minibatch = config_.optimizer.minibatch;
    mo.randomizer_size = config_.data.randomizer_size;
    mo.context = data_.transform.context;
    mo.seed = DeriveSeed(seed, {3, static_cast<uint64_t>(epoch), static_cast<uint64_t>(w.rank)});
    w.reader = std::make_unique<MinibatchReader>(data_.train, std::move(utts), mo);
    // Optimizer state starts fresh every epoch, as in Kaldi nnet1 where each epoch is a new
    // process (and a rejected epoch's momentum must not leak into the next).
    w.optimizer->Reset();
    w.stats = WorkerStats{};
    w.minibatches = 0;
    const double zeros[3] = {0, 0, 0};
    w.loss.CopyFromHost(zeros, 3);
  }
  epoch_before_s_ = 0.0;
  if (progress == nullptr) {
    averager_->BeginEpoch();
    return;
  }
  // Resuming inside this epoch: the same streams, fast-forwarded; the averager's state and the
  // workers' parameters came with the checkpoint.
  const int64_t done = progress->minibatches;
  epoch_before_s_ = progress->wall_s.value_or(0.0);
  MAVG_CHECK(progress->averagings && progress->workers,
             "checkpoint: progress inside epoch {} lacks its averagings or worker statistics "
             "(written by another version of mavg?)",
             epoch);
  averagings_ = *progress->averagings;
  // One worker combines after every minibatch (older checkpoints counted no combines there).
  if (n_ == 1) averagings_ = done;
  averager_->SetProjectedSeconds(progress->projected_s.value_or(0.0));
  const std::vector<double>& all = *progress->workers;
  MAVG_CHECK(all.size() == static_cast<size_t>(n_) * WorkerStats::kFields,
             "checkpoint: progress has {} worker statistics, expected {} (written by another "
             "version of mavg?)",
             all.size(), static_cast<size_t>(n_) * WorkerStats::kFields);
  // The epoch's max-change scales so far (older checkpoints: none, the epoch's count restarts).
  if (const auto& scales = progress->max_change_scales) {
    MAVG_CHECK(scales->size() == static_cast<size_t>(kScaleBins),
               "checkpoint: progress has {} max-change scale counts, expected {} (written by "
               "another version of mavg?)",
               scales->size(), kScaleBins);
    const bool holds_first = std::any_of(Workers().begin(), Workers().end(),
                                         [](const Worker& w) { return w.rank == 0; });
    if (holds_first) max_change_scales_ = *scales;
  }
  CheckpointDir dir(options_.run_dir);
  for (Worker& w : Workers()) {
    MAVG_CHECK(w.reader->Skip(done) == done, "checkpoint is past the end of the epoch");
    w.minibatches = done;
    w.stats.From(all.data() + w.rank * WorkerStats::kFields);
    const double s[3] = {w.stats.loss_sum, w.stats.correct, w.stats.frames};
    w.loss.CopyFromHost(s, 3);
    // Optimizer state as it was at the checkpoint (Reset above cleared it).
    std::vector<MatrixView> state = w.optimizer->State();
    if (!state.empty()) {
      dir.ReadTensors(*backend_, generation_, fmt::format("opt-{}", w.rank), state);
      w.optimizer->StateLoaded();
    }
  }
}

CombinePlan Trainer::PlanEpoch(int epoch, double lr) const {
  const int64_t mb = config_.optimizer.minibatch;
  if (n_ == 1) {  // a block of one per full minibatch of the shard
    CombinePlan plan;
    for (int64_t m = 1; m <= min_shard_frames_ / mb; ++m) plan.points.push_back(m);
    return plan;
  }
  return policy_->PlanEpoch(EpochCombineInput{epoch, totals_.steps, lr, mb, min_shard_frames_});
}

EpochEnd Trainer::RunEpoch(int epoch, const EpochProgress* progress) {
  BeginEpoch(epoch, progress);
  for (int l = 0; l < lanes_->Count(); ++l) lanes_->Lane(l).DropPrefetched();  // new streams
  const int64_t mb = config_.optimizer.minibatch;
  const int64_t total_frames = plan_.Minibatches() * mb * static_cast<int64_t>(Workers().size());
  Progress bar(fmt::format("[train] epoch {}", epoch), total_frames, options_.progress && IsRoot());
  while (averagings_ < plan_.Combines()) {
    // Every worker's steps up to the next combine point, on the lanes (concurrently where
    // there are several: the workers share nothing until they combine).
    lanes_->ForEach(static_cast<int>(Workers().size()), [&](int i, StepLane& lane) {
      Worker& w = Workers()[static_cast<size_t>(i)];
      do {
        MAVG_CHECK(Step(i, lane, NextOnLane(i)) > 0,
                   "worker {} ran out of data before averaging {}", w.rank, averagings_ + 1);
      } while (!plan_.CombineAfter(w.minibatches));
    });
    CollectStepStats();
    // Agree on stopping: a non-finite loss or a stop signal on any rank stops all ranks. The
    // flags ride on the combine's world mean where it has one (combining every step costs one
    // collective wait, not two), else they are maxed on their own.
    double flags[2] = {AnyLossNonFinite() ? 1.0 : 0.0, static_cast<double>(StopSignal())};
    const StopFlags agreed =
        averager_->Combine(++averagings_, plan_.Combines(), std::span<double>(flags, 2));
    if (agreed == StopFlags::kNotChecked) {
      flags[0] = flags[1] = 0.0;  // nothing exchanged here: agreed on at the next exchange
    } else if (agreed == StopFlags::kLocal) {
      group_->MaxOverProcesses(std::span<double>(flags, 2));
    }
    stop_signal_ = static_cast<int>(flags[1]);
    if (flags[0] > 0) {
      spdlog::error("[train] diverged: non-finite loss in epoch {} (lr {})", epoch, lr_);
      DivergedAt at;
      at.epoch = epoch, at.minibatch = Workers()[0].minibatches, at.averaging = averagings_;
      at.lr = lr_;
      result_.diverged_at = ToJson(at);
      return EpochEnd::kDiverged;
    }
    if (flags[1] > 0) {
      WriteCheckpoint(epoch - 1, PositionInEpoch());
      spdlog::warn(
          "[train] stop requested (signal {}): checkpointed in epoch {}; continue with "
          "mavg train --resume {}",
          stop_signal_, epoch, options_.run_dir);
      result_.signal = stop_signal_;
      result_.epoch = epoch;
      return EpochEnd::kPreempted;
    }
    double loss = 0.0, frames = 0.0, done = 0.0;
    for (const Worker& w : Workers()) {
      loss += w.stats.loss_sum, frames += w.stats.frames;
      done += static_cast<double>(w.minibatches * mb);
    }
    bar.Update(static_cast<int64_t>(done),
               fmt::format("loss {:.4f}", loss / std::max(1.0, frames)));
    Heartbeat();
  }
  bar.Finish();
  return EpochEnd::kDone;
}

EpochMetrics Trainer::EndEpochMetrics(int epoch, const EvalSums& cv, bool accepted) {
  EpochMetrics m;
  m.epoch = epoch;
  m.lr = lr_;
  m.accepted = accepted;
  m.stats = Summarize(GatherStats());
  m.max_change_scales = GatherMaxChangeScales();
  m.cv = cv;
  // Frames of every shard beyond the epoch's last combine point (all workers stop there).
  const int64_t trained = plan_.Minibatches() * config_.optimizer.minibatch;
  for (int64_t f : shard_frames_) m.frames_dropped += f - trained;
  m.minibatches = Workers()[0].minibatches;
  m.averagings = n_ > 1 ? averager_->Exchanges(averagings_) : 0;
  m.comm_bytes = averager_->Bytes(averagings_);
  m.comm_bytes_received = averager_->BytesReceived(averagings_);
  m.world_size = n_;
  if (group_->ProjectsWallTime()) m.projected_wall_s = averager_->ProjectedSeconds();
  // CPU use and wait of this attempt's part of the epoch: the lowest use and the highest wait
  // over the processes (a collective).
  if (compute_threads_ > 0) {
    const double wall = epoch_timer_.Seconds();
    const std::optional<double> use =
        EpochCpuUse(ProcessCpuSeconds() - epoch_cpu_start_s_, wall, compute_threads_);
    const std::optional<double> queued = ProcessRunQueueSeconds();
    const bool waits_known = queued.has_value() && epoch_queue_start_s_.has_value();
    // The run-queue seconds of its live threads per compute thread (a thread that ended
    // meanwhile takes its seconds with it: never below 0).
    const double wait =
        waits_known && wall > 0
            ? std::max(0.0, (*queued - *epoch_queue_start_s_) / (wall * compute_threads_))
            : 0.0;
    // (a process whose use is unknown takes no part in the lowest: -inf)
    double worst[3] = {use ? -*use : -std::numeric_limits<double>::infinity(), wait,
                       waits_known ? 0.0 : 1.0};  // any process without run-queue times
    group_->MaxOverProcesses(worst);
    if (use) {
      m.cpu_util = -worst[0];
      if (worst[2] == 0.0) m.cpu_wait = worst[1];
      m.contended = Contended(*m.cpu_util, m.cpu_wait);
    }
  }
  return m;
}

CollapseVerdict Trainer::CheckHealth() const {
  const double input_free = InputFreeLoss(data_.label_counts, data_.dev.labels);
  return CheckCollapse(cv_losses_, cv_best_.Loss(), input_free, config_.schedule.collapse);
}

void Trainer::Start() {
  if (options_.resume) {
    const CheckpointDir dir(options_.run_dir);
    if (const auto json = dir.ReadMeta()) {
      const CheckpointMeta meta = ReadCheckpointMeta(*json, config_, dir.MetaPath());
      if (meta.code_version && *meta.code_version != build_info::kCodeVersion) {
        // A run is made by one build, so its numbers are one build's (sweep plan calls a
        // finished run of another build stale for the same reason).
        spdlog::warn(
            "[train] {}: the checkpoint was written by another build (code version {}, this "
            "is {}): starting the run from the beginning",
            dir.Path(), *meta.code_version, build_info::kCodeVersion);
        generation_ = meta.generation;  // new tensor files never overwrite the committed ones
      } else {
        RestoreCheckpoint(meta);
      }
    } else {
      spdlog::warn("[train] {}: no checkpoint yet; starting from the beginning", options_.run_dir);
    }
  }
  if (IsRoot() && run_ != nullptr && start_epoch_ < std::numeric_limits<int>::max()) {
    run_->TruncateMetrics(start_epoch_ - 1);
  }
  if (restored_) return;  // a checkpoint carries the model and the schedule's state
  if (config_.model.init == ModelInit::kRbm) InitializeFromRbm();
  if (stop_signal_ != 0) return;  // stopped while pretraining
  if (schedule_->NeedsInitialCvLoss()) {
    const EvalSums cv0 = EvaluateSet(data_.dev, dev_shards_);
    spdlog::info("[train] initial CV loss {:.4f} accuracy {:.2f}%", cv0.Loss(),
                 100 * cv0.Accuracy());
    schedule_->SetInitialCvLoss(cv0.Loss());
    backend_->Copy(ModelParams(), best_);
  }
}

EpochDecision Trainer::EndEpoch(int epoch) {
  Timer cv_timer;
  const EvalSums cv = EvaluateSet(data_.dev, dev_shards_);
  const double cv_s = cv_timer.Seconds();
  const EpochDecision decision = schedule_->EndEpoch(cv.Loss());
  cv_losses_.push_back(cv.Loss());
  if (decision.accept) {
    totals_.steps += plan_.Minibatches();
    cv_best_ = cv;
    if (best_.Cols() > 0) backend_->Copy(ModelParams(), best_);
    KeepAcceptedOptimizerState();
  } else {
    SetAllParams(best_);              // newbob: back to the last accepted model
    RestoreAcceptedOptimizerState();  // and to its optimizer statistics
    averager_->Reset();
  }
  EpochMetrics m = EndEpochMetrics(epoch, cv, decision.accept);
  m.cv_s = cv_s;
  m.wall_s = EpochSeconds();
  const EpochRow row = MetricsRow(m);
  totals_.AddEpoch(m.stats.max.compute_s, static_cast<int64_t>(m.stats.sum.frames), m.comm_bytes,
                   m.comm_bytes_received, row.TrainSeconds(), m.projected_wall_s.value_or(0.0));
  if (IsRoot()) {
    run_->AppendMetrics(row);
    run_->State().epoch = epoch;
    run_->WriteState(RunState::kRunning);
  }
  const double train_loss = m.stats.sum.frames > 0 ? m.stats.sum.loss_sum / m.stats.sum.frames : 0;
  const double train_acc = m.stats.sum.frames > 0 ? m.stats.sum.correct / m.stats.sum.frames : 0;
  // Throughput as measured here, and as projected onto N devices where it is (simulated).
  const auto rate = [&](double seconds) { return seconds > 0 ? m.stats.sum.frames / seconds : 0; };
  spdlog::info(
      "[train] epoch {:2} lr {:.6g} train loss {:.4f} acc {:.2f}% | CV loss {:.4f} "
      "acc {:.2f}% {} | measured {:.0f} frames/s, {:.1f}s + CV {:.1f}s{}{}",
      epoch, lr_, train_loss, 100 * train_acc, cv.Loss(), 100 * cv.Accuracy(),
      decision.accept ? "accepted" : "REJECTED", rate(row.TrainSeconds()), row.TrainSeconds(),
      m.cv_s,
      m.projected_wall_s ? fmt::format("; projected {:.0f} frames/s, {:.1f}s on {} devices",
                                       rate(*m.projected_wall_s), *m.projected_wall_s, n_)
                         : "",
      m.cpu_util ? fmt::format("; CPU use {:.2f} of {} thread{}{}", *m.cpu_util, compute_threads_,
                               compute_threads_ == 1 ? "" : "s",
                               m.cpu_wait ? fmt::format(", waiting for a core {:.0f}% of the time",
                                                        100 * *m.cpu_wait)
                                          : "")
                 : "");
  if (m.contended.value_or(false)) {
    spdlog::warn(
        "[train] epoch {}: contended: {} (other work shares these cores), so this epoch's "
        "times measure the sharing, not the run",
        epoch,
        m.cpu_wait
            ? fmt::format("its threads waited for a core {:.0f}% of the time", 100 * *m.cpu_wait)
            : fmt::format("the process used {:.0f}% of the CPU time of its {} thread{}",
                          100 * *m.cpu_util, compute_threads_, compute_threads_ == 1 ? "" : "s"));
  }
  WriteCheckpoint(epoch, std::nullopt, decision.stop);
  return decision;
}

RunResult Trainer::Finish(RunState status) {
  if (status == RunState::kCompleted) {
    const CollapseVerdict health = CheckHealth();
    if (health.collapsed) {
      spdlog::error("[train] collapsed: {}", health.reason);
      status = RunState::kCollapsed;
      result_.collapse = health.detail;
    }
  }
  result_.status = status;
  // A collapsed run is measured like a completed one: its numbers show how bad it is.
  if (status == RunState::kCompleted || status == RunState::kCollapsed) {
    result_.cv_loss = cv_best_.Loss();
    result_.cv_acc = cv_best_.Accuracy();
    if (!test_shards_.empty()) {
      const EvalSums test = EvaluateSet(data_.test, test_shards_);
      result_.test_loss = test.Loss();
      result_.test_acc = test.Accuracy();
      result_.test_frames = static_cast<int64_t>(test.frames);
      spdlog::info("[train] test loss {:.4f} accuracy {:.2f}% ({} frames)", test.Loss(),
                   100 * test.Accuracy(), static_cast<int64_t>(test.frames));
    }
    if (IsRoot()) {
      ParamsBinding bind(*network_, ModelParams());
      SaveModel(run_->File("model.bin"), model_);
      // Speech data with a lang dir: WER on the test set (settings chosen on dev).
      const int threads = config_.device_options.threads > 0
                              ? static_cast<int>(config_.device_options.threads)
                              : static_cast<int>(std::thread::hardware_concurrency());
      if (auto report = DecodeTestSet(*network_, data_, config_, threads)) {
        Update(result_, report->result);
        WriteFileAtomic(run_->File("decode_test.txt"), report->alignments);
      }
    }
  }
  result_.run_id = run_id_;
  result_.epochs = schedule_->EpochsDone();
  totals_.ToResult(result_, wall_.Seconds(), load_io_s_, group_->ProjectsWallTime());
  result_.num_params = network_->NumParams();
  result_.world_size = n_;
  result_.mode = n_ == 1 ? "single" : std::string(ToString(config_.parallel.mode));
  // Timings are comparable only between runs on the same kernels.
  result_.blas_kernels = kernels_;
  result_.host = HostName();
  BuildInfo build;
  build.git_commit = build_info::kGitCommit;
  build.code_version = build_info::kCodeVersion;
  build.build_type = build_info::kBuildType;
  build.compiler = build_info::kCompiler;
  build.with_cuda = build_info::kWithCuda;
  build.device = backend_->Describe();
  build.communicator = comm_.Name();
  if (backend_->Kind() == DeviceKind::kCpu) {
    const BlasKernels& k = SelectBlasKernels();
    build.blas_kernels_by = k.source;  // openblas | mavg | user
    build.cpu = fmt::format("{} ({})", k.cpu.model_name, IsaName(k.cpu.isa));
  }
  result_.build = ToJson(build);
  result_.finished = UtcNow();
  return result_;
}

RunResult Trainer::Run() {
  wall_.Reset();
  Setup();
  Start();
  if (stop_signal_ != 0) {  // stopped while pretraining: no epoch ran
    result_.signal = stop_signal_;
    return Finish(RunState::kPreempted);
  }
  RunState status = RunState::kCompleted;
  const int max_epochs = static_cast<int>(config_.schedule.epochs);
  if (options_.until_epoch > 0 && start_epoch_ > options_.until_epoch &&
      start_epoch_ <= max_epochs) {
    // Resumed past the epoch asked to pause after (a controller that died before it recorded
    // the pause): pause again at once rather than train past it.
    spdlog::info("[train] already past epoch {} (--until-epoch): paused, nothing trained",
                 options_.until_epoch);
    result_.epoch = start_epoch_ - 1;
    return Finish(RunState::kPreempted);
  }
  for (int epoch = start_epoch_; epoch <= max_epochs; ++epoch) {
    epoch_timer_.Reset();
    if (compute_threads_ > 0) {  // CPU runs: what EndEpochMetrics' contention check reads
      epoch_cpu_start_s_ = ProcessCpuSeconds();
      epoch_queue_start_s_ = ProcessRunQueueSeconds();
    }
    const bool resumed_inside = epoch == start_epoch_ && resume_progress_.has_value();
    const EpochEnd end = RunEpoch(epoch, resumed_inside ? &*resume_progress_ : nullptr);
    if (end == EpochEnd::kDiverged) {
      status = RunState::kDiverged;
      break;
    }
    if (end == EpochEnd::kPreempted) {
      status = RunState::kPreempted;
      break;
    }
    if (EndEpoch(epoch).stop) break;
    if (options_.until_epoch > 0 && epoch == options_.until_epoch && epoch < max_epochs) {
      // Paused at the epoch asked for: EndEpoch wrote its checkpoint, the next launch goes on.
      spdlog::info(
          "[train] paused after epoch {} (--until-epoch); continue with mavg train "
          "--resume {}",
          epoch, options_.run_dir);
      result_.epoch = epoch;
      status = RunState::kPreempted;
      break;
    }
  }
  return Finish(status);
}

}  // namespace

RunResult RunTraining(const ResolvedRun& run, const TrainOptions& options, Communicator& comm,
                      RunDir* dir) {
  Trainer trainer(run, options, comm, dir);
  return trainer.Run();
}

}  // namespace mavg
