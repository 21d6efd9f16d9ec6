#include "engine/train/run_data.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "engine/core/timer.h"
#include "engine/data/cmvn.h"
#include "engine/data/minibatch.h"

namespace mavg {
namespace {

// Every label within [0, num_outputs), else an error naming the utterance and frame.
void CheckLabels(const Dataset& data, int64_t num_outputs) {
  for (int u = 0; u < data.NumUtts(); ++u) {
    for (int64_t f = data.offsets[u]; f < data.offsets[u + 1]; ++f) {
      MAVG_CHECK(data.labels[f] >= 0 && data.labels[f] < num_outputs,
                 "{}: utterance '{}' frame {}: label {} is outside the output layer ({} outputs)",
                 data.source, data.utt_ids[u], f - data.offsets[u], data.labels[f], num_outputs);
    }
  }
}

CmvnStats ApplyGlobal(const CmvnStats& cmvn, std::initializer_list<Dataset*> sets) {
  for (Dataset* set : sets) {
    if (set->NumUtts() > 0) ApplyCmvn(cmvn, *set);
  }
  return cmvn;
}

}  // namespace

FeaturePipeline PipelineOf(const RunConfig& config) {
  FeaturePipeline p;
  p.speaker_cmvn = config.data.cmvn == "speaker";
  p.norm_vars = config.data.cmvn_norm_vars;
  p.delta_order = static_cast<int>(config.data.deltas);
  return p;
}

LoadOptions TrainLoadOptions(const RunConfig& config) {
  LoadOptions o;
  o.alignments = config.data.ali;
  o.alignments_setting = "data.ali";
  o.pipeline = PipelineOf(config);
  return o;
}

LoadOptions DevLoadOptions(const RunConfig& config) {
  LoadOptions o = TrainLoadOptions(config);
  if (!config.data.dev_ali.empty()) {
    o.alignments = config.data.dev_ali;
    o.alignments_setting = "data.dev_ali";
  }
  return o;
}

LoadOptions TestLoadOptions(const RunConfig& config) {
  LoadOptions o;
  o.require_labels = false;  // an evaluation set may have transcripts only (decoding)
  o.pipeline = PipelineOf(config);
  return o;
}

RunData LoadRunData(const RunConfig& config, double* io_s) {
  ShardPlan all;
  const int n = static_cast<int>(std::max<int64_t>(1, config.parallel.workers));
  all.num_shards = n;
  all.held.resize(n);
  for (int s = 0; s < n; ++s) all.held[s] = s;
  auto local = CreateLocalCommunicator();
  return LoadRunData(config, all, *local, io_s);
}

RunData LoadRunData(const RunConfig& config, const ShardPlan& plan, Communicator& comm,
                    double* io_s) {
  ScopedTimer timer(io_s);
  MAVG_CHECK(plan.num_shards > 0 && !plan.held.empty() &&
                 std::is_sorted(plan.held.begin(), plan.held.end()) && plan.held.front() >= 0 &&
                 plan.held.back() < plan.num_shards,
             "shard plan: held shards must be ascending within [0, {})", plan.num_shards);
  const bool all_held = static_cast<int>(plan.held.size()) == plan.num_shards;
  MAVG_CHECK(all_held || (plan.held.size() == 1 && plan.held[0] == comm.Rank() &&
                          comm.WorldSize() == plan.num_shards),
             "shard plan: a process holds every shard, or rank r of {} holds shard r",
             plan.num_shards);

  RunData d;
  spdlog::info("[data] indexing {}", config.data.train);
  const DataDirIndex index(config.data.train, TrainLoadOptions(config));
  const std::vector<std::vector<int>> shards = ShardByFrames(index.Frames(), plan.num_shards);
  // This process's utterances, in file order, and where each shard's are among them.
  std::vector<int> held_utts;
  for (int s : plan.held) held_utts.insert(held_utts.end(), shards[s].begin(), shards[s].end());
  std::sort(held_utts.begin(), held_utts.end());
  std::vector<int> local(index.NumUtts(), -1);
  for (size_t i = 0; i < held_utts.size(); ++i) local[held_utts[i]] = static_cast<int>(i);
  d.shards.resize(plan.num_shards);
  for (int s = 0; s < plan.num_shards; ++s) {
    int64_t frames = 0;
    for (int u : shards[s]) frames += index.Frames()[u];
    d.shard_frames.push_back(frames);
  }
  for (int s : plan.held) {
    for (int u : shards[s]) d.shards[s].push_back(local[u]);
  }
  d.train_complete = all_held;
  spdlog::info("[data] loading {} ({} of {} utterances: {} of {} shards)", config.data.train,
               held_utts.size(), index.NumUtts(), plan.held.size(), plan.num_shards);
  d.train = index.Load(held_utts);

  spdlog::info("[data] loading {}", config.data.dev);
  d.dev = LoadDataDir(config.data.dev, DevLoadOptions(config));
  if (!config.data.test.empty()) {
    spdlog::info("[data] loading {}", config.data.test);
    d.test = LoadDataDir(config.data.test, TestLoadOptions(config));
  }
  for (const Dataset* other : {&d.dev, &d.test}) {
    if (other->NumUtts() == 0) continue;
    MAVG_CHECK(other->dim == d.train.dim, "{}: features have {} dims but {} has {}", other->source,
               other->dim, d.train.source, d.train.dim);
  }

  // Outputs and priors from every training utterance (the index has them all).
  const int64_t largest = static_cast<int64_t>(index.LabelCounts().size()) - 1;
  if (config.model.num_outputs > 0) {
    d.num_outputs = static_cast<int>(config.model.num_outputs);
    MAVG_CHECK(largest < d.num_outputs,
               "{}: label {} is outside the output layer ({} outputs, model.num_outputs)",
               index.LargestLabelWhere(), largest, d.num_outputs);
  } else {
    d.num_outputs = static_cast<int>(largest + 1);
  }
  for (const Dataset* set : {&d.dev, &d.test}) {
    if (set->HasLabels()) CheckLabels(*set, d.num_outputs);
  }
  d.label_counts = index.LabelCounts();
  d.label_counts.resize(d.num_outputs, 0.0);

  d.transform.pipeline = PipelineOf(config);
  d.transform.raw_dim = d.train.dim;
  d.transform.context = static_cast<int>(config.data.context);
  if (config.data.cmvn != "none") {
    // Shard by shard in shard order: one process holding every shard and N ranks holding one
    // each form the same sums in the same order.
    CmvnSums sums(d.train.dim);
    for (int s : plan.held) {
      CmvnSums shard(d.train.dim);
      shard.Add(d.train, d.shards[s]);
      sums.Add(shard);
    }
    if (!all_held) {
      std::vector<double> packed = sums.Packed();
      comm.AllReduceSum(std::span<double>(packed));
      sums = CmvnSums::Unpacked(packed);
    }
    CmvnStats cmvn = ApplyGlobal(sums.Stats(config.data.train), {&d.train, &d.dev, &d.test});
    d.transform.shift = std::move(cmvn.shift);
    d.transform.scale = std::move(cmvn.scale);
  }
  spdlog::info(
      "[data] train {} utts / {} frames held ({} in all), dev {} / {}, test {} / {}; {} dims x {} "
      "spliced = {} inputs, {} outputs",
      d.train.NumUtts(), d.train.NumFrames(), index.NumFrames(), d.dev.NumUtts(), d.dev.NumFrames(),
      d.test.NumUtts(), d.test.NumFrames(), d.train.dim, 2 * d.transform.context + 1,
      d.transform.OutputDim(), d.num_outputs);
  return d;
}

Dataset LoadFullTrainingSet(const RunConfig& config, const FeatureTransform& transform) {
  Dataset train = LoadDataDir(config.data.train, TrainLoadOptions(config));
  if (transform.HasCmvn()) {
    CmvnStats cmvn{transform.shift, transform.scale};
    ApplyCmvn(cmvn, train);
  }
  return train;
}

}  // namespace mavg
