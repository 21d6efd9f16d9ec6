#include "engine/train/trainer.h"

#include <cmath>

#include "engine/backend/device_buffer.h"
#include "engine/config/schema.h"
#include "engine/core/build_info.h"
#include "engine/core/files.h"
#include "engine/core/logging.h"
#include "engine/core/progress.h"
#include "engine/core/rng.h"
#include "engine/core/timer.h"
#include "engine/data/cmvn.h"
#include "engine/data/minibatch.h"
#include "engine/nn/init.h"
#include "engine/nn/model.h"
#include "engine/optim/sgd.h"
#include "engine/train/run_dir.h"
#include "engine/train/schedule.h"
#include "engine/train/step.h"

namespace mavg {
namespace {

struct RunData {
  Dataset train, dev, test;
  FeatureTransform transform;
  int num_outputs = 0;
  std::vector<double> label_counts;  // [num_outputs] training frames per label
};

void CheckLabels(const Dataset& data, int num_outputs) {
  for (int u = 0; u < data.NumUtts(); ++u) {
    for (int64_t f = data.offsets[u]; f < data.offsets[u + 1]; ++f) {
      MAVG_CHECK(data.labels[f] < num_outputs,
                 "{}: utterance '{}' frame {}: label {} is outside the output layer ({} outputs)",
                 data.source, data.utt_ids[u], f - data.offsets[u], data.labels[f], num_outputs);
    }
  }
}

RunData LoadRunData(const RunConfig& config, double* io_s) {
  ScopedTimer timer(io_s);
  RunData d;
  spdlog::info("[data] loading {}", config.data.train);
  d.train = LoadDataDir(config.data.train);
  spdlog::info("[data] loading {}", config.data.dev);
  d.dev = LoadDataDir(config.data.dev);
  if (!config.data.test.empty()) {
    spdlog::info("[data] loading {}", config.data.test);
    d.test = LoadDataDir(config.data.test);
  }
  for (const Dataset* other : {&d.dev, &d.test}) {
    if (other->NumUtts() == 0) continue;
    MAVG_CHECK(other->dim == d.train.dim, "{}: features have {} dims but {} has {}", other->source,
               other->dim, d.train.source, d.train.dim);
  }
  d.num_outputs = config.model.num_outputs > 0 ? static_cast<int>(config.model.num_outputs)
                                               : d.train.NumClasses();
  for (const Dataset* set : {&d.train, &d.dev, &d.test}) CheckLabels(*set, d.num_outputs);
  d.label_counts.assign(d.num_outputs, 0.0);
  for (int32_t label : d.train.labels) d.label_counts[label] += 1.0;

  d.transform.raw_dim = d.train.dim;
  d.transform.context = static_cast<int>(config.data.context);
  if (config.data.cmvn == "global") {
    CmvnStats cmvn = ComputeGlobalCmvn(d.train);
    for (Dataset* set : {&d.train, &d.dev, &d.test}) {
      if (set->NumUtts() > 0) ApplyCmvn(cmvn, *set);
    }
    d.transform.shift = std::move(cmvn.shift);
    d.transform.scale = std::move(cmvn.scale);
  }
  spdlog::info(
      "[data] train {} utts / {} frames, dev {} / {}, test {} / {}; {} dims x {} "
      "spliced = {} inputs, {} outputs",
      d.train.NumUtts(), d.train.NumFrames(), d.dev.NumUtts(), d.dev.NumFrames(), d.test.NumUtts(),
      d.test.NumFrames(), d.train.dim, 2 * d.transform.context + 1, d.transform.OutputDim(),
      d.num_outputs);
  return d;
}

std::unique_ptr<Optimizer> CreateOptimizer(Backend& backend, const OptimizerConfig& c) {
  MAVG_CHECK(c.type == "sgd", "optimizer.type: '{}' is not available (valid: sgd)", c.type);
  SgdOptions o;
  o.momentum = static_cast<float>(c.momentum);
  o.l2 = static_cast<float>(c.l2);
  return std::make_unique<SgdOptimizer>(backend, o);
}

struct EpochResult {
  double loss_sum = 0.0, correct = 0.0, frames = 0.0;
  int64_t dropped = 0;
  int64_t minibatches = 0;
  double compute_s = 0.0, io_s = 0.0;
  bool diverged = false;
};

EpochResult TrainEpoch(Network& net, Optimizer& optimizer, const RunData& data,
                       const RunConfig& config, int epoch, float lr, bool show_progress) {
  Backend& backend = net.GetBackend();
  EpochResult r;
  std::vector<int> utts = AllUtterances(data.train);
  Rng order_rng(DeriveSeed(static_cast<uint64_t>(config.seed), {2, static_cast<uint64_t>(epoch)}));
  order_rng.Shuffle(utts.data(), utts.size());
  MinibatchOptions mo;
  mo.minibatch = config.optimizer.minibatch;
  mo.randomizer_size = config.data.randomizer_size;
  mo.context = data.transform.context;
  mo.shuffle = true;
  mo.seed = DeriveSeed(static_cast<uint64_t>(config.seed), {3, static_cast<uint64_t>(epoch)});
  MinibatchReader reader(data.train, std::move(utts), mo);

  const int64_t mb = config.optimizer.minibatch;
  Matrix x(backend, mb, reader.SplicedDim());
  DeviceBuffer<int32_t> labels(backend, static_cast<size_t>(mb));
  DeviceBuffer<double> stats(backend, 3);
  const double zeros[3] = {0, 0, 0};
  stats.CopyFromHost(zeros, 3);
  std::vector<float> host_x;
  std::vector<int32_t> host_labels;
  Progress progress(fmt::format("[train] epoch {}", epoch), data.train.NumFrames(), show_progress);
  while (true) {
    int64_t n = 0;
    {
      ScopedTimer t(&r.io_s);
      n = reader.Next(host_x, host_labels);
      if (n == 0) break;
      backend.CopyFromHost(host_x.data(), x.View());
      labels.CopyFromHost(host_labels.data(), static_cast<size_t>(n));
    }
    {
      ScopedTimer t(&r.compute_s);
      TrainStep(net, optimizer, x.View(), labels.Data(), lr, stats.Data());
      ++r.minibatches;
      const std::vector<double> s = stats.ToHost();  // synchronizes
      r.loss_sum = s[0], r.correct = s[1], r.frames = s[2];
    }
    if (!std::isfinite(r.loss_sum)) {
      r.diverged = true;
      break;
    }
    progress.Update(static_cast<int64_t>(r.frames),
                    fmt::format("loss {:.4f}", r.loss_sum / std::max(1.0, r.frames)));
  }
  progress.Finish();
  r.dropped = reader.FramesDropped();
  return r;
}

nlohmann::json BuildInfoJson(const Backend& backend) {
  return {{"git_commit", build_info::kGitCommit},
          {"build_type", build_info::kBuildType},
          {"compiler", build_info::kCompiler},
          {"with_cuda", build_info::kWithCuda},
          {"device", backend.Describe()}};
}

// Finite numbers as numbers; NaN/Inf as null (JSON has no NaN).
nlohmann::json Num(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); }

nlohmann::json RunTraining(const RunConfig& config, RunDir& run, const TrainOptions& options) {
  Timer wall;
  double io_s = 0.0;
  BackendOptions bo;
  bo.kind = config.device == "cuda" ? DeviceKind::kCuda : DeviceKind::kCpu;
  bo.device_index = static_cast<int>(config.device_index);
  bo.threads = static_cast<int>(config.device_options.threads);
  std::unique_ptr<Backend> backend = CreateBackend(bo);
  spdlog::info("[train] backend {}", backend->Describe());

  RunData data = LoadRunData(config, &io_s);

  NetworkSpec spec;
  spec.input_dim = data.transform.OutputDim();
  spec.output_dim = data.num_outputs;
  spec.hidden_dims.assign(config.model.hidden_layers, static_cast<int>(config.model.hidden_dim));
  spec.activation = ParseLayerKind(config.model.activation);
  Model model;
  model.transform = data.transform;
  model.label_counts = data.label_counts;
  model.network = std::make_unique<Network>(*backend, spec);
  Network& net = *model.network;
  InitializeKaldiNnet1(net, DeriveSeed(static_cast<uint64_t>(config.seed), {1}));
  spdlog::info("[train] network {}-{}x{}({})-{}: {} parameters", spec.input_dim,
               spec.hidden_dims.size(), config.model.hidden_dim, config.model.activation,
               spec.output_dim, net.NumParams());

  // The best accepted parameters, for schedules that may reject an epoch.
  std::unique_ptr<Schedule> schedule = CreateSchedule(config.schedule);
  std::unique_ptr<Network> best;
  const int context = data.transform.context;
  const int64_t eval_batch = config.optimizer.minibatch;
  if (schedule->NeedsInitialCvLoss()) {
    const EvalResult cv0 = Evaluate(net, data.dev, context, eval_batch);
    spdlog::info("[train] initial CV loss {:.4f} accuracy {:.2f}%", cv0.loss, 100 * cv0.accuracy);
    schedule->SetInitialCvLoss(cv0.loss);
    best = std::make_unique<Network>(*backend, spec);
    best->CopyParamsFrom(net);
  }
  std::unique_ptr<Optimizer> optimizer = CreateOptimizer(*backend, config.optimizer);

  double compute_total = 0.0;
  int64_t frames_total = 0;
  EvalResult cv_best;
  nlohmann::json result = {{"status", "completed"}};
  const int max_epochs = static_cast<int>(config.schedule.epochs);
  for (int epoch = 1; epoch <= max_epochs; ++epoch) {
    Timer epoch_timer;
    const double lr = schedule->LearningRate();
    // Optimizer state starts fresh every epoch, as in Kaldi nnet1 where each epoch is a new
    // process (and a rejected epoch's momentum must not leak into the next).
    optimizer->Reset();
    EpochResult er =
        TrainEpoch(net, *optimizer, data, config, epoch, static_cast<float>(lr), options.progress);
    compute_total += er.compute_s;
    frames_total += static_cast<int64_t>(er.frames);
    if (er.diverged) {
      spdlog::error("[train] diverged: non-finite loss in epoch {} minibatch {} (lr {})", epoch,
                    er.minibatches, lr);
      result = {{"status", "diverged"},
                {"diverged_at", {{"epoch", epoch}, {"minibatch", er.minibatches}, {"lr", lr}}}};
      break;
    }
    Timer cv_timer;
    const EvalResult cv = Evaluate(net, data.dev, context, eval_batch);
    const double cv_s = cv_timer.Seconds();
    const EpochDecision decision = schedule->EndEpoch(cv.loss);
    if (decision.accept) {
      cv_best = cv;
      if (best) best->CopyParamsFrom(net);
    } else {
      net.CopyParamsFrom(*best);  // newbob: back to the last accepted model
    }
    const double train_loss = er.frames > 0 ? er.loss_sum / er.frames : 0.0;
    const double train_acc = er.frames > 0 ? er.correct / er.frames : 0.0;
    const double epoch_wall = epoch_timer.Seconds();
    run.AppendMetrics({{"epoch", epoch},
                       {"lr", lr},
                       {"accepted", decision.accept},
                       {"train_loss", Num(train_loss)},
                       {"train_acc", train_acc},
                       {"cv_loss", Num(cv.loss)},
                       {"cv_acc", cv.accuracy},
                       {"frames", static_cast<int64_t>(er.frames)},
                       {"frames_dropped", er.dropped},
                       {"minibatches", er.minibatches},
                       {"wall_s", epoch_wall},
                       {"compute_s", er.compute_s},
                       {"io_s", er.io_s},
                       {"cv_s", cv_s},
                       {"comm_s", 0.0},
                       {"wait_s", 0.0}});
    spdlog::info(
        "[train] epoch {:2} lr {:.6g} train loss {:.4f} acc {:.2f}% | CV loss {:.4f} "
        "acc {:.2f}% {} | {:.0f} frames/s, {:.1f}s",
        epoch, lr, train_loss, 100 * train_acc, cv.loss, 100 * cv.accuracy,
        decision.accept ? "accepted" : "REJECTED", er.frames / er.compute_s, epoch_wall);
    run.WriteState("running", {{"epoch", epoch}});
    if (decision.stop) break;
  }

  const bool completed = result["status"] == "completed";
  if (completed) {
    result["cv_loss"] = Num(cv_best.loss);
    result["cv_acc"] = cv_best.accuracy;
    if (data.test.NumUtts() > 0) {
      const EvalResult test = Evaluate(net, data.test, context, eval_batch);
      result["test_loss"] = Num(test.loss);
      result["test_acc"] = test.accuracy;
      result["test_frames"] = test.frames;
      spdlog::info("[train] test loss {:.4f} accuracy {:.2f}% ({} frames)", test.loss,
                   100 * test.accuracy, test.frames);
    }
    SaveModel(run.File("model.bin"), model);
  }
  result["run_id"] = RunId(config);
  result["epochs"] = schedule->EpochsDone();
  result["wall_s"] = wall.Seconds();
  result["compute_s"] = compute_total;
  result["io_s"] = io_s;
  result["comm_s"] = 0.0;
  result["frames"] = frames_total;
  result["frames_per_s"] = compute_total > 0 ? frames_total / compute_total : 0.0;
  result["num_params"] = net.NumParams();
  result["world_size"] = 1;
  result["host"] = HostName();
  result["build"] = BuildInfoJson(*backend);
  result["finished"] = UtcNow();
  return result;
}

}  // namespace

nlohmann::json Train(const RunConfig& config, const TrainOptions& options) {
  Validate(config, "config");
  RunDir run = RunDir::Prepare(options.run_dir, options.force);
  WriteFileAtomic(run.File("config.yaml"), ToYaml(config));
  run.WriteState("running");
  AddLogFile(run.File("log.txt"));
  spdlog::info("[train] run {} attempt {} in {}", RunId(config), run.Attempt(), run.Path());
  nlohmann::json result;
  try {
    result = RunTraining(config, run, options);
  } catch (const std::exception& e) {
    LogErrorToFiles(fmt::format("[train] failed: {}", e.what()));
    run.WriteJson("result.json", {{"status", "failed"},
                                  {"error", e.what()},
                                  {"run_id", RunId(config)},
                                  {"finished", UtcNow()}});
    run.WriteState("failed", {{"error", e.what()}});
    RemoveLogFiles();
    throw;
  }
  run.WriteJson("result.json", result);
  run.WriteState(result["status"].get<std::string>());
  RemoveLogFiles();
  return result;
}

}  // namespace mavg
