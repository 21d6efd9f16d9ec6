#include "engine/train/trainer.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <span>
#include <thread>

#include "engine/backend/device_buffer.h"
#include "engine/comm/communicator.h"
#include "engine/comm/mpi/mpi_communicator.h"
#include "engine/config/schema.h"
#include "engine/core/build_info.h"
#include "engine/core/files.h"
#include "engine/core/logging.h"
#include "engine/core/progress.h"
#include "engine/core/rng.h"
#include "engine/core/signals.h"
#include "engine/core/timer.h"
#include "engine/data/minibatch.h"
#include "engine/nn/init.h"
#include "engine/nn/model.h"
#include "engine/optim/factory.h"
#include "engine/pretrain/dbn.h"
#include "engine/pretrain/stack_cache.h"
#include "engine/train/averaging.h"
#include "engine/train/checkpoint.h"
#include "engine/train/decode_eval.h"
#include "engine/train/run_data.h"
#include "engine/train/run_dir.h"
#include "engine/train/schedule.h"
#include "engine/train/step.h"

namespace mavg {
namespace {

// Per-worker numbers kept for metrics and checkpoints (kFields doubles each).
struct WorkerStats {
  double loss_sum = 0, correct = 0, frames = 0;  // this epoch's training loss statistics
  double compute_s = 0, io_s = 0, comm_s = 0, wait_s = 0;
  double interval_s = 0;            // compute + io since the last averaging (simulated projection)
  double updates = 0, limited = 0;  // layer updates, and those max-change scaled down
  static constexpr int kFields = 10;
  void To(double* out) const {
    const double v[kFields] = {loss_sum, correct, frames,     compute_s, io_s,
                               comm_s,   wait_s,  interval_s, updates,   limited};
    std::copy_n(v, kFields, out);
  }
  void From(const double* in) {
    loss_sum = in[0], correct = in[1], frames = in[2], compute_s = in[3], io_s = in[4];
    comm_s = in[5], wait_s = in[6], interval_s = in[7], updates = in[8], limited = in[9];
  }
};

struct Worker {
  int rank = 0;            // global worker index
  std::vector<int> shard;  // training utterances of this worker
  int64_t shard_frames = 0;
  Matrix replica;                        // own parameters (simulated, N > 1); else empty
  std::unique_ptr<Optimizer> optimizer;  // never averaged unless parallel.average_momentum
  std::unique_ptr<MinibatchReader> reader;
  DeviceBuffer<double> loss;  // [loss sum, correct, frames] of this epoch
  WorkerStats stats;
  int64_t minibatches = 0;  // done in this epoch
};

// Finite numbers as numbers; NaN/Inf as null (JSON has no NaN).
nlohmann::json Num(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); }

enum class EpochEnd { kDone, kDiverged, kPreempted };

class Trainer {
 public:
  Trainer(const RunConfig& config, const TrainOptions& options, Communicator& comm, RunDir* run)
      : config_(config), options_(options), comm_(comm), run_(run) {
    n_ = static_cast<int>(config.parallel.workers);
    simulated_ = config.parallel.mode == "simulated";
    // Testing hook: MAVG_TEST_STOP_AT=EPOCH:MINIBATCH acts like a SIGUSR1 arriving on rank 0
    // right after that minibatch, so preemption and resume can be tested deterministically.
    if (const char* at = std::getenv("MAVG_TEST_STOP_AT")) {
      MAVG_CHECK(std::sscanf(at, "%d:%ld", &test_stop_epoch_, &test_stop_minibatch_) == 2,
                 "MAVG_TEST_STOP_AT must be EPOCH:MINIBATCH, got '{}'", at);
    }
  }

  nlohmann::json Run();

 private:
  bool IsRoot() const { return comm_.Rank() == 0; }
  void Setup();
  // model.init rbm: the hidden layers from a pretrained stack (cached), on every worker.
  void InitializeFromRbm();
  // Refreshes state.json's heartbeat at most once a minute (cluster launchers detect hung runs).
  void Heartbeat() {
    if (run_ == nullptr || heartbeat_.Seconds() < 60) return;
    run_->WriteState("running");
    heartbeat_.Reset();
  }
  void RestoreCheckpoint(const nlohmann::json& meta);
  EpochEnd RunEpoch(int epoch, const nlohmann::json* progress);
  int64_t Step(Worker& w);
  void Average();
  void AverageMomentum();
  bool AnyLossNonFinite();
  EvalSums EvaluateSet(const Dataset& data, const std::vector<std::vector<int>>& shards);
  void BindWorker(Worker& w) {
    network_->BindParams(w.replica.Rows() > 0 ? w.replica.View() : MatrixView());
  }
  // Runs a host-side collective `op` on `v`: in place for CPU memory, else through staging_.
  void OnHost(MatrixView v, const std::function<void(std::span<float>)>& op);
  // Copies `src` into the network's own parameters and every replica.
  void SetAllParams(ConstMatrixView src);
  std::vector<WorkerStats> GatherStats();
  void WriteCheckpoint(int epochs_done, const nlohmann::json& progress, bool stopped = false);

  const RunConfig& config_;
  const TrainOptions& options_;
  Communicator& comm_;
  RunDir* run_;  // [rank 0 only], not owned
  int n_ = 1;
  bool simulated_ = true;

  std::unique_ptr<Backend> backend_;
  RunData data_;
  Model model_;
  Network* network_ = nullptr;     // model_.network
  std::unique_ptr<Network> best_;  // last accepted parameters (newbob)
  std::unique_ptr<Schedule> schedule_;
  std::vector<Worker> workers_;  // the workers of this process
  std::vector<std::vector<int>> dev_shards_, test_shards_;
  std::vector<int64_t> shard_frames_;  // [worker] training frames of every shard
  AveragingPlan plan_;
  float lr_ = 0.0f;           // per-worker lr of the current epoch
  int epoch_ = 0;             // current epoch (1-based)
  int stop_signal_ = 0;       // the signal that stopped training (agreed over ranks)
  int64_t averagings_ = 0;    // done in the current epoch
  double projected_s_ = 0.0;  // simulated: projected epoch wall time
  int64_t generation_ = 0;    // checkpoint generation
  Matrix x_;                  // [minibatch x input] device input
  DeviceBuffer<int32_t> labels_;
  std::vector<float> host_x_;
  std::vector<int32_t> host_labels_;
  std::vector<float> staging_;  // host copy of device parameters for MPI
  nlohmann::json diverged_at_;
  double load_io_s_ = 0.0, compute_total_ = 0.0;
  int64_t frames_total_ = 0;
  EvalSums cv_best_;
  int start_epoch_ = 1;
  bool restored_ = false;  // continuing from a checkpoint
  int test_stop_epoch_ = -1;
  long test_stop_minibatch_ = -1;
  nlohmann::json resume_progress_;
  nlohmann::json pretrain_info_;
  Timer heartbeat_;  // pretrain_s, pretrain_cached, pretrain_key (model.init rbm)
};

void Trainer::Setup() {
  BackendOptions bo;
  bo.kind = config_.device == "cuda" ? DeviceKind::kCuda : DeviceKind::kCpu;
  bo.device_index = static_cast<int>(config_.device_index);
  bo.threads = static_cast<int>(config_.device_options.threads);
  backend_ = CreateBackend(bo);
  spdlog::info("[train] backend {}; {} worker(s), {}{}", backend_->Describe(), n_,
               config_.parallel.mode, simulated_ ? "" : fmt::format(" ({})", comm_.Name()));

  data_ = LoadRunData(config_, &load_io_s_);

  NetworkSpec spec;
  spec.input_dim = data_.transform.OutputDim();
  spec.output_dim = data_.num_outputs;
  spec.hidden_dims.assign(config_.model.hidden_layers, static_cast<int>(config_.model.hidden_dim));
  spec.activation = ParseLayerKind(config_.model.activation);
  model_.transform = data_.transform;
  model_.label_counts = data_.label_counts;
  model_.network = std::make_unique<Network>(*backend_, spec);
  network_ = model_.network.get();
  // Every rank initialises from the same seed, so all replicas start identical.
  InitializeKaldiNnet1(*network_, DeriveSeed(static_cast<uint64_t>(config_.seed), {1}));
  spdlog::info("[train] network {}-{}x{}({})-{}: {} parameters", spec.input_dim,
               spec.hidden_dims.size(), config_.model.hidden_dim, config_.model.activation,
               spec.output_dim, network_->NumParams());
  schedule_ = CreateSchedule(config_.schedule);
  if (schedule_->NeedsInitialCvLoss()) best_ = std::make_unique<Network>(*backend_, spec);

  // Shards: balanced by frames, the same computation on every rank.
  const auto shards = ShardByFrames(data_.train, n_);
  dev_shards_ = ShardByFrames(data_.dev, simulated_ ? 1 : n_);
  if (data_.test.NumUtts() > 0) test_shards_ = ShardByFrames(data_.test, simulated_ ? 1 : n_);
  for (const auto& s : shards) {
    int64_t f = 0;
    for (int u : s) f += data_.train.UttFrames(u);
    shard_frames_.push_back(f);
  }
  const int64_t min_frames = *std::min_element(shard_frames_.begin(), shard_frames_.end());
  const int64_t mb = config_.optimizer.minibatch;
  if (n_ > 1) {
    const int64_t fpr = config_.parallel.average_frames > 0 ? config_.parallel.average_frames
                                                            : config_.parallel.average_every * mb;
    plan_ = PlanAveraging(min_frames, mb, fpr);
    spdlog::info(
        "[train] averaging every {} frames: {} averagings and {} minibatches per worker "
        "per epoch (smallest shard {} frames)",
        fpr, plan_.reduces, plan_.minibatches, min_frames);
  }
  const int first = simulated_ ? 0 : comm_.Rank();
  const int count = simulated_ ? n_ : 1;
  for (int r = first; r < first + count; ++r) {
    Worker w;
    w.rank = r;
    w.shard = shards[r];
    w.shard_frames = shard_frames_[r];
    if (simulated_ && n_ > 1) {
      w.replica = Matrix(*backend_, 1, network_->NumParams());
      backend_->Copy(network_->Params(), w.replica);
    }
    w.optimizer = CreateOptimizer(*backend_, config_.optimizer);
    w.optimizer->Prepare(*network_);
    w.loss = DeviceBuffer<double>(*backend_, 3);
    workers_.push_back(std::move(w));
  }
  x_ = Matrix(*backend_, mb, spec.input_dim);
  labels_ = DeviceBuffer<int32_t>(*backend_, static_cast<size_t>(mb));
}

void Trainer::InitializeFromRbm() {
  if (IsRoot()) {
    const StackKey key = RbmStackKey(config_);
    const std::string records_path = run_ != nullptr ? run_->File("pretrain.jsonl") : "";
    if (!records_path.empty()) WriteFileAtomic(records_path, "");  // this attempt's records
    auto record = [&](nlohmann::json r, bool cached) {
      r["cached"] = cached;
      r["stack"] = key.key;
      if (!records_path.empty()) AppendLine(records_path, r.dump());
    };
    DbnOptions o;
    o.rbm = config_.pretrain.rbm;
    o.context = static_cast<int>(config_.data.context);
    o.randomizer_size = config_.data.randomizer_size;
    o.progress = options_.progress;
    o.on_minibatch = [this] { Heartbeat(); };
    const CachedStack stack = ObtainStack(
        options_.cache_dir, key,
        [&](const DbnEpochCallback& cb) {
          return PretrainDbn(*backend_, data_.train, network_->Spec().hidden_dims, o, cb);
        },
        [&](const nlohmann::json& r) { record(r, false); });
    if (stack.hit) {
      for (const auto& r : stack.records) record(r, true);
    }
    network_->BindParams(MatrixView());
    LoadDbnIntoNetwork(stack.dbn, *network_);
    pretrain_info_ = {
        {"pretrain_s", stack.seconds}, {"pretrain_cached", stack.hit}, {"pretrain_key", key.key}};
    spdlog::info("[train] hidden layers from pretrained stack {} ({}, {:.1f} s)", key.key,
                 stack.hit ? "cached" : "pretrained now", stack.seconds);
  }
  network_->BindParams(MatrixView());
  if (!simulated_ && comm_.WorldSize() > 1) {  // every rank starts from rank 0's stack
    OnHost(network_->Params(), [&](std::span<float> host) { comm_.Broadcast(host, 0); });
  }
  SetAllParams(network_->Params());
}

void Trainer::OnHost(MatrixView v, const std::function<void(std::span<float>)>& op) {
  if (backend_->Kind() == DeviceKind::kCpu && v.Contiguous()) {
    op(std::span<float>(v.data, static_cast<size_t>(v.Size())));
    return;
  }
  staging_.resize(static_cast<size_t>(v.Size()));  // host-staged
  backend_->CopyToHost(v, staging_.data());
  op(std::span<float>(staging_));
  backend_->CopyFromHost(staging_.data(), v);
}

void Trainer::SetAllParams(ConstMatrixView src) {
  network_->BindParams(MatrixView());
  if (src.data != network_->Params().data) backend_->Copy(src, network_->Params());
  for (Worker& w : workers_) {
    if (w.replica.Rows() > 0) backend_->Copy(network_->Params(), w.replica);
  }
}

int64_t Trainer::Step(Worker& w) {
  BindWorker(w);
  Timer t;
  const int64_t n = w.reader->Next(host_x_, host_labels_);
  if (n == 0) return 0;
  backend_->CopyFromHost(host_x_.data(), x_);
  labels_.CopyFromHost(host_labels_.data(), static_cast<size_t>(n));
  const double io = t.Seconds();
  t.Reset();
  TrainStep(*network_, *w.optimizer, x_, labels_.Data(), lr_, w.loss.Data());
  backend_->Synchronize();
  const double compute = t.Seconds();
  w.stats.io_s += io;
  w.stats.compute_s += compute;
  w.stats.interval_s += io + compute;
  const Optimizer::UpdateStats u = w.optimizer->TakeUpdateStats();
  w.stats.updates += static_cast<double>(u.updates);
  w.stats.limited += static_cast<double>(u.limited);
  ++w.minibatches;
  if (w.rank == 0 && epoch_ == test_stop_epoch_ && w.minibatches == test_stop_minibatch_) {
    RequestStopForTesting(SIGUSR1);
  }
  return n;
}

bool Trainer::AnyLossNonFinite() {
  bool bad = false;
  for (Worker& w : workers_) {
    const std::vector<double> s = w.loss.ToHost();
    w.stats.loss_sum = s[0], w.stats.correct = s[1], w.stats.frames = s[2];
    bad = bad || !std::isfinite(s[0]);
  }
  return bad;
}

void Trainer::Average() {
  const float inv_n = 1.0f / static_cast<float>(n_);
  if (simulated_) {
    // Sum in rank order into the network's own buffer, scale, hand back to every replica.
    Timer t;
    network_->BindParams(MatrixView());
    std::vector<MatrixView> replicas;
    for (Worker& w : workers_) replicas.push_back(w.replica);
    AverageReplicas(*backend_, replicas, network_->Params());
    if (config_.parallel.average_momentum) AverageMomentum();
    backend_->Synchronize();
    const double comm = t.Seconds();
    double slowest = 0.0;
    for (Worker& w : workers_) {
      slowest = std::max(slowest, w.stats.interval_s);
      w.stats.comm_s += comm;
      w.stats.interval_s = 0.0;
    }
    projected_s_ += slowest + comm;
    ++averagings_;
    return;
  }
  Worker& w = workers_[0];
  Timer t;
  comm_.Barrier();  // time blocked waiting for slower ranks
  w.stats.wait_s += t.Seconds();
  t.Reset();
  auto all_reduce = [&](MatrixView v) {
    OnHost(v, [&](std::span<float> host) { comm_.AllReduceSum(host); });
    backend_->Axpby(inv_n, v, 0.0f, v);
  };
  network_->BindParams(MatrixView());
  all_reduce(network_->Params());
  if (config_.parallel.average_momentum) {
    for (MatrixView s : w.optimizer->State()) all_reduce(s);
  }
  backend_->Synchronize();
  w.stats.comm_s += t.Seconds();
  w.stats.interval_s = 0.0;
  ++averagings_;
}

void Trainer::AverageMomentum() {
  // Simulated workers: each state tensor averaged in place, accumulating in worker 0's.
  std::vector<std::vector<MatrixView>> states;
  for (Worker& w : workers_) states.push_back(w.optimizer->State());
  for (size_t j = 0; j < states[0].size(); ++j) {
    std::vector<MatrixView> tensors;
    for (auto& s : states) tensors.push_back(s[j]);
    AverageReplicas(*backend_, tensors, tensors[0]);
  }
}

EvalSums Trainer::EvaluateSet(const Dataset& data, const std::vector<std::vector<int>>& shards) {
  network_->BindParams(MatrixView());
  const int shard = simulated_ ? 0 : comm_.Rank();
  EvalSums s = Evaluate(*network_, data, shards[shard], data_.transform.context,
                        config_.optimizer.minibatch);
  if (!simulated_) {
    double v[3] = {s.loss_sum, s.correct, s.frames};
    comm_.AllReduceSum(std::span<double>(v, 3));
    s = EvalSums{v[0], v[1], v[2]};
  }
  return s;
}

std::vector<WorkerStats> Trainer::GatherStats() {
  std::vector<double> all(static_cast<size_t>(n_) * WorkerStats::kFields, 0.0);
  for (const Worker& w : workers_) w.stats.To(all.data() + w.rank * WorkerStats::kFields);
  comm_.AllReduceSum(std::span<double>(all));
  std::vector<WorkerStats> out(n_);
  for (int r = 0; r < n_; ++r) out[r].From(all.data() + r * WorkerStats::kFields);
  return out;
}

void Trainer::WriteCheckpoint(int epochs_done, const nlohmann::json& progress, bool stopped) {
  CheckpointDir dir(options_.run_dir);
  const int64_t gen = ++generation_;
  for (Worker& w : workers_) {
    std::vector<MatrixView> state = w.optimizer->State();
    if (state.empty()) continue;
    dir.WriteTensors(*backend_, gen, fmt::format("opt-{}", w.rank),
                     std::vector<ConstMatrixView>(state.begin(), state.end()));
  }
  comm_.Barrier();
  if (IsRoot()) {
    network_->BindParams(MatrixView());
    dir.WriteTensors(*backend_, gen, "params", {network_->Params()});
    if (best_) dir.WriteTensors(*backend_, gen, "best", {best_->Params()});
    nlohmann::json meta = {{"generation", gen},
                           {"epochs_done", epochs_done},
                           {"progress", progress},
                           {"stopped", stopped},  // the schedule ended training here
                           {"schedule", schedule_->SaveState()},
                           {"has_best", best_ != nullptr},
                           {"run_id", RunId(config_)},
                           {"world_size", n_},
                           {"cv_best", {cv_best_.loss_sum, cv_best_.correct, cv_best_.frames}},
                           {"compute_total", compute_total_},
                           {"frames_total", frames_total_},
                           {"pretrain", pretrain_info_},
                           {"written", UtcNow()}};
    dir.Commit(meta);
  }
  comm_.Barrier();
}

void Trainer::RestoreCheckpoint(const nlohmann::json& meta) {
  CheckpointDir dir(options_.run_dir);
  MAVG_CHECK(meta.at("run_id").get<std::string>() == RunId(config_),
             "{}: the checkpoint belongs to run {}, not to this config ({})", dir.Path(),
             meta.at("run_id").get<std::string>(), RunId(config_));
  generation_ = meta.at("generation").get<int64_t>();
  restored_ = true;
  network_->BindParams(MatrixView());
  dir.ReadTensors(*backend_, generation_, "params", {network_->Params()});
  SetAllParams(network_->Params());
  if (best_ && meta.value("has_best", false)) {
    dir.ReadTensors(*backend_, generation_, "best", {best_->Params()});
  }
  for (Worker& w : workers_) {
    std::vector<MatrixView> state = w.optimizer->State();
    if (!state.empty()) {
      dir.ReadTensors(*backend_, generation_, fmt::format("opt-{}", w.rank), state);
      w.optimizer->StateLoaded();
    }
  }
  schedule_->LoadState(meta.at("schedule"));
  const auto cv = meta.at("cv_best").get<std::vector<double>>();
  cv_best_ = EvalSums{cv[0], cv[1], cv[2]};
  compute_total_ = meta.value("compute_total", 0.0);
  frames_total_ = meta.value("frames_total", int64_t{0});
  pretrain_info_ = meta.value("pretrain", nlohmann::json());
  start_epoch_ = meta.at("epochs_done").get<int>() + 1;
  if (meta.value("stopped", false)) start_epoch_ = std::numeric_limits<int>::max();  // done
  resume_progress_ = meta.at("progress");
  spdlog::info("[train] resumed from checkpoint {}: {} epochs done{}", generation_,
               start_epoch_ - 1,
               resume_progress_.is_null()
                   ? ""
                   : fmt::format(", {} minibatches into epoch {}",
                                 resume_progress_.at("minibatches").get<int64_t>(), start_epoch_));
}

EpochEnd Trainer::RunEpoch(int epoch, const nlohmann::json* progress) {
  const double scale = config_.parallel.lr_scaling == "linear" ? n_ : 1.0;
  lr_ = static_cast<float>(schedule_->LearningRate() * scale);
  epoch_ = epoch;
  const uint64_t seed = static_cast<uint64_t>(config_.seed);
  averagings_ = 0;
  projected_s_ = 0.0;
  for (Worker& w : workers_) {
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
  if (progress != nullptr) {  // resuming inside this epoch: same streams, fast-forwarded
    const int64_t done = progress->at("minibatches").get<int64_t>();
    averagings_ = progress->at("averagings").get<int64_t>();
    projected_s_ = progress->value("projected_s", 0.0);
    const auto all = progress->at("workers").get<std::vector<double>>();
    MAVG_CHECK(all.size() == static_cast<size_t>(n_) * WorkerStats::kFields,
               "checkpoint: progress has {} worker statistics, expected {} (written by another "
               "version of mavg?)",
               all.size(), static_cast<size_t>(n_) * WorkerStats::kFields);
    for (Worker& w : workers_) {
      MAVG_CHECK(w.reader->Skip(done) == done, "checkpoint is past the end of the epoch");
      w.minibatches = done;
      w.stats.From(all.data() + w.rank * WorkerStats::kFields);
      const double s[3] = {w.stats.loss_sum, w.stats.correct, w.stats.frames};
      w.loss.CopyFromHost(s, 3);
    }
    // Optimizer state as it was at the checkpoint (Reset above cleared it).
    CheckpointDir dir(options_.run_dir);
    for (Worker& w : workers_) {
      std::vector<MatrixView> state = w.optimizer->State();
      if (!state.empty()) {
        dir.ReadTensors(*backend_, generation_, fmt::format("opt-{}", w.rank), state);
        w.optimizer->StateLoaded();
      }
    }
  }

  const int64_t total_frames = n_ > 1 ? plan_.minibatches * config_.optimizer.minibatch *
                                            static_cast<int64_t>(workers_.size())
                                      : workers_[0].shard_frames;
  Progress bar(fmt::format("[train] epoch {}", epoch), total_frames, options_.progress && IsRoot());
  auto frames_done = [&] {
    int64_t f = 0;
    for (const Worker& w : workers_) f += w.minibatches * config_.optimizer.minibatch;
    return f;
  };
  auto progress_json = [&] {  // a collective: every rank calls it at the same point
    std::vector<double> all(static_cast<size_t>(n_) * WorkerStats::kFields, 0.0);
    const std::vector<WorkerStats> gathered = GatherStats();
    for (int r = 0; r < n_; ++r) gathered[r].To(all.data() + r * WorkerStats::kFields);
    return nlohmann::json{{"minibatches", workers_[0].minibatches},
                          {"averagings", averagings_},
                          {"projected_s", projected_s_},
                          {"workers", all}};
  };

  if (n_ == 1) {
    Worker& w = workers_[0];
    while (true) {
      if (StopRequested()) {
        stop_signal_ = StopSignal();
        AnyLossNonFinite();
        WriteCheckpoint(epoch - 1, progress_json());
        return EpochEnd::kPreempted;
      }
      if (Step(w) == 0) break;
      if (AnyLossNonFinite()) {
        diverged_at_ = {{"epoch", epoch}, {"minibatch", w.minibatches}, {"lr", lr_}};
        return EpochEnd::kDiverged;
      }
      bar.Update(frames_done(),
                 fmt::format("loss {:.4f}", w.stats.loss_sum / std::max(1.0, w.stats.frames)));
      Heartbeat();
    }
  } else {
    for (; averagings_ < plan_.reduces;) {
      for (Worker& w : workers_) {
        do {
          MAVG_CHECK(Step(w) > 0, "worker {} ran out of data before averaging {}", w.rank,
                     averagings_ + 1);
        } while (!plan_.AverageAfter(w.minibatches));
      }
      Average();
      // Agree on stopping: a non-finite loss or a stop signal on any rank stops all ranks.
      double flags[2] = {AnyLossNonFinite() ? 1.0 : 0.0, static_cast<double>(StopSignal())};
      comm_.AllReduceMax(std::span<double>(flags, 2));
      stop_signal_ = static_cast<int>(flags[1]);
      if (flags[0] > 0) {
        diverged_at_ = {{"epoch", epoch},
                        {"minibatch", workers_[0].minibatches},
                        {"averaging", averagings_},
                        {"lr", lr_}};
        return EpochEnd::kDiverged;
      }
      if (flags[1] > 0) {
        WriteCheckpoint(epoch - 1, progress_json());
        return EpochEnd::kPreempted;
      }
      bar.Update(frames_done());
      Heartbeat();
    }
  }
  bar.Finish();
  AnyLossNonFinite();  // fetch the final statistics
  return EpochEnd::kDone;
}

nlohmann::json Trainer::Run() {
  Timer wall;
  Setup();
  if (options_.resume) {
    const auto meta = CheckpointDir(options_.run_dir).ReadMeta();
    if (meta) {
      RestoreCheckpoint(*meta);
    } else {
      spdlog::warn("[train] {}: no checkpoint yet; starting from the beginning", options_.run_dir);
    }
  }
  if (IsRoot() && run_ != nullptr && start_epoch_ < std::numeric_limits<int>::max()) {
    run_->TruncateMetrics(start_epoch_ - 1);
  }
  if (config_.model.init == "rbm" && !restored_) InitializeFromRbm();
  if (schedule_->NeedsInitialCvLoss() && !restored_) {  // a checkpoint carries its own
    const EvalSums cv0 = EvaluateSet(data_.dev, dev_shards_);
    spdlog::info("[train] initial CV loss {:.4f} accuracy {:.2f}%", cv0.Loss(),
                 100 * cv0.Accuracy());
    schedule_->SetInitialCvLoss(cv0.Loss());
    network_->BindParams(MatrixView());
    best_->CopyParamsFrom(*network_);
  }

  nlohmann::json result = {{"status", "completed"}};
  const int max_epochs = static_cast<int>(config_.schedule.epochs);
  for (int epoch = start_epoch_; epoch <= max_epochs; ++epoch) {
    Timer epoch_timer;
    const nlohmann::json* progress =
        epoch == start_epoch_ && !resume_progress_.is_null() ? &resume_progress_ : nullptr;
    const EpochEnd end = RunEpoch(epoch, progress);
    if (end == EpochEnd::kDiverged) {
      spdlog::error("[train] diverged: non-finite loss in epoch {} (lr {})", epoch, lr_);
      result = {{"status", "diverged"}, {"diverged_at", diverged_at_}};
      break;
    }
    if (end == EpochEnd::kPreempted) {
      spdlog::warn(
          "[train] stop requested (signal {}): checkpointed in epoch {}; continue with "
          "mavg train --resume {}",
          stop_signal_, epoch, options_.run_dir);
      result = {{"status", "preempted"}, {"signal", stop_signal_}, {"epoch", epoch}};
      break;
    }
    const std::vector<WorkerStats> stats = GatherStats();
    Timer cv_timer;
    const EvalSums cv = EvaluateSet(data_.dev, dev_shards_);
    const double cv_s = cv_timer.Seconds();
    const EpochDecision decision = schedule_->EndEpoch(cv.Loss());
    if (decision.accept) {
      cv_best_ = cv;
      if (best_) {
        network_->BindParams(MatrixView());
        best_->CopyParamsFrom(*network_);
      }
    } else {
      SetAllParams(best_->Params());  // newbob: back to the last accepted model
    }
    // Aggregates over all workers: sums of the loss statistics, max and mean of the timings.
    WorkerStats sum, max;
    int64_t dropped = 0;
    for (int r = 0; r < n_; ++r) {
      const WorkerStats& s = stats[r];
      sum.loss_sum += s.loss_sum, sum.correct += s.correct, sum.frames += s.frames;
      sum.compute_s += s.compute_s, sum.io_s += s.io_s, sum.comm_s += s.comm_s;
      sum.wait_s += s.wait_s;
      sum.updates += s.updates, sum.limited += s.limited;
      max.compute_s = std::max(max.compute_s, s.compute_s);
      max.io_s = std::max(max.io_s, s.io_s);
      max.comm_s = std::max(max.comm_s, s.comm_s);
      max.wait_s = std::max(max.wait_s, s.wait_s);
    }
    if (n_ == 1) {
      dropped = workers_[0].reader->FramesDropped();
    } else {
      // Frames of every shard beyond the epoch's last averaging (all workers stop there).
      for (int64_t f : shard_frames_)
        dropped += f - plan_.minibatches * config_.optimizer.minibatch;
    }
    compute_total_ += max.compute_s;
    frames_total_ += static_cast<int64_t>(sum.frames);
    const double train_loss = sum.frames > 0 ? sum.loss_sum / sum.frames : 0.0;
    const double train_acc = sum.frames > 0 ? sum.correct / sum.frames : 0.0;
    const double epoch_wall = epoch_timer.Seconds();
    nlohmann::json m = {{"epoch", epoch},
                        {"lr", lr_},
                        {"accepted", decision.accept},
                        {"train_loss", Num(train_loss)},
                        {"train_acc", train_acc},
                        {"cv_loss", Num(cv.Loss())},
                        {"cv_acc", cv.Accuracy()},
                        {"frames", static_cast<int64_t>(sum.frames)},
                        {"frames_dropped", dropped},
                        {"minibatches", workers_[0].minibatches},
                        {"averagings", n_ > 1 ? plan_.reduces : 0},
                        {"world_size", n_},
                        {"wall_s", epoch_wall},
                        {"compute_s", max.compute_s},
                        {"compute_s_mean", sum.compute_s / n_},
                        {"io_s", max.io_s},
                        {"io_s_mean", sum.io_s / n_},
                        {"comm_s", max.comm_s},
                        {"comm_s_mean", sum.comm_s / n_},
                        {"wait_s", max.wait_s},
                        {"wait_s_mean", sum.wait_s / n_},
                        {"cv_s", cv_s}};
    if (simulated_ && n_ > 1) m["projected_wall_s"] = projected_s_;
    if (sum.updates > 0) m["max_change_limited"] = sum.limited / sum.updates;
    if (IsRoot()) {
      run_->AppendMetrics(m);
      run_->WriteState("running", {{"epoch", epoch}});
    }
    spdlog::info(
        "[train] epoch {:2} lr {:.6g} train loss {:.4f} acc {:.2f}% | CV loss {:.4f} "
        "acc {:.2f}% {} | {:.0f} frames/s, {:.1f}s{}",
        epoch, lr_, train_loss, 100 * train_acc, cv.Loss(), 100 * cv.Accuracy(),
        decision.accept ? "accepted" : "REJECTED", sum.frames / max.compute_s, epoch_wall,
        simulated_ && n_ > 1 ? fmt::format(" (projected {:.1f}s on {} devices)", projected_s_, n_)
                             : "");
    WriteCheckpoint(epoch, nullptr, decision.stop);
    if (decision.stop) break;
  }

  if (result["status"] == "completed") {
    result["cv_loss"] = Num(cv_best_.Loss());
    result["cv_acc"] = cv_best_.Accuracy();
    if (!test_shards_.empty()) {
      const EvalSums test = EvaluateSet(data_.test, test_shards_);
      result["test_loss"] = Num(test.Loss());
      result["test_acc"] = test.Accuracy();
      result["test_frames"] = static_cast<int64_t>(test.frames);
      spdlog::info("[train] test loss {:.4f} accuracy {:.2f}% ({} frames)", test.Loss(),
                   100 * test.Accuracy(), static_cast<int64_t>(test.frames));
    }
    network_->BindParams(MatrixView());
    if (IsRoot()) {
      SaveModel(run_->File("model.bin"), model_);
      // Speech data with a lang dir: WER on the test set (settings chosen on dev).
      const int threads = config_.device_options.threads > 0
                              ? static_cast<int>(config_.device_options.threads)
                              : static_cast<int>(std::thread::hardware_concurrency());
      if (auto report = DecodeTestSet(*network_, data_, config_, threads)) {
        for (const auto& [k, v] : report->result.items()) result[k] = v;
        WriteFileAtomic(run_->File("decode_test.txt"), report->alignments);
      }
    }
  }
  result["run_id"] = RunId(config_);
  result["epochs"] = schedule_->EpochsDone();
  result["wall_s"] = wall.Seconds();
  result["compute_s"] = compute_total_;
  result["io_s"] = load_io_s_;
  result["frames"] = frames_total_;
  result["frames_per_s"] = compute_total_ > 0 ? frames_total_ / compute_total_ : 0.0;
  result["num_params"] = network_->NumParams();
  result["world_size"] = n_;
  if (pretrain_info_.is_object()) result.update(pretrain_info_);
  result["mode"] = n_ == 1 ? "single" : config_.parallel.mode;
  result["host"] = HostName();
  result["build"] = {
      {"git_commit", build_info::kGitCommit}, {"code_version", build_info::kCodeVersion},
      {"build_type", build_info::kBuildType}, {"compiler", build_info::kCompiler},
      {"with_cuda", build_info::kWithCuda},   {"device", backend_->Describe()},
      {"communicator", comm_.Name()}};
  result["finished"] = UtcNow();
  return result;
}

std::unique_ptr<Communicator> MakeCommunicator(const RunConfig& config) {
  if (config.parallel.mode != "mpi") {
    MAVG_CHECK(!LaunchedUnderMpi(),
               "parallel.mode is '{}' but this process was started by mpirun: set "
               "parallel.mode=mpi, or run without mpirun",
               config.parallel.mode);
    return CreateLocalCommunicator();
  }
  auto comm = CreateMpiCommunicator(config.parallel.deterministic);
  MAVG_CHECK(comm->WorldSize() == config.parallel.workers,
             "parallel.workers is {} but {} MPI rank(s) were started (mpirun -np {} mavg train "
             "...)",
             config.parallel.workers, comm->WorldSize(), config.parallel.workers);
  return comm;
}

}  // namespace

nlohmann::json Train(const RunConfig& config, const TrainOptions& options) {
  Validate(config, "config");
  std::unique_ptr<Communicator> comm = MakeCommunicator(config);
  const bool root = comm->Rank() == 0;
  if (comm->IsDistributed()) SetLogRank(comm->Rank(), comm->WorldSize());
  InstallStopSignalHandlers();

  std::optional<RunDir> run;
  try {
    if (root) {
      run = options.resume ? RunDir::Resume(options.run_dir)
                           : RunDir::Prepare(options.run_dir, options.force);
      if (!options.resume) WriteFileAtomic(run->File("config.yaml"), ToYaml(config));
      run->WriteState("running",
                      {{"world_size", config.parallel.workers}, {"mode", config.parallel.mode}});
      AddLogFile(run->File("log.txt"));
      spdlog::info("[train] run {} attempt {} in {}", RunId(config), run->Attempt(), run->Path());
    }
    comm->Barrier();
  } catch (const std::exception& e) {
    if (comm->IsDistributed()) {
      std::fprintf(stderr, "mavg: error: %s\n", e.what());
      comm->Abort(1);
    }
    throw;
  }

  nlohmann::json result;
  try {
    Trainer trainer(config, options, *comm, run ? &*run : nullptr);
    result = trainer.Run();
  } catch (const std::exception& e) {
    if (root) {
      try {  // best effort: the disk may be what failed
        LogErrorToFiles(fmt::format("[train] failed: {}", e.what()));
        run->WriteJson("result.json", {{"status", "failed"},
                                       {"error", e.what()},
                                       {"run_id", RunId(config)},
                                       {"finished", UtcNow()}});
        run->WriteState("failed", {{"error", e.what()}});
        RemoveLogFiles();
      } catch (const std::exception& write_error) {
        std::fprintf(stderr, "mavg: error: cannot record the failure: %s\n", write_error.what());
      }
    }
    if (comm->IsDistributed()) {
      // Peers may be waiting in a collective: take them all down rather than hang.
      std::fprintf(stderr, "mavg: error: rank %d: %s\n", comm->Rank(), e.what());
      comm->Abort(1);
    }
    throw;
  }
  if (root) {
    try {
      run->WriteJson("result.json", result);
      run->WriteState(result["status"].get<std::string>());
      RemoveLogFiles();
    } catch (const std::exception& e) {
      if (comm->IsDistributed()) {  // peers wait at the barrier below: take them down
        std::fprintf(stderr, "mavg: error: %s\n", e.what());
        comm->Abort(1);
      }
      throw;
    }
  }
  // No rank leaves before the root has written the run's files: under mpirun a rank that exits
  // non-zero (preempted, diverged) gets the others killed.
  comm->Barrier();
  result["rank"] = comm->Rank();  // for the caller; not part of result.json
  return result;
}

}  // namespace mavg
