#include "engine/train/run_data.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "engine/core/hash.h"
#include "engine/core/timer.h"
#include "engine/data/cmvn.h"
#include "engine/data/kaldi_table.h"
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

// The global CMVN sums of every training utterance, each utterance's summed alone and added in
// file order: the same bits for any number of workers, simulated or MPI. `train` holds the
// utterances u with local[u] >= 0. With `comm`, each rank fills the slots of its own
// utterances in a zeroed buffer that is summed over the ranks -- adding zeros is exact in any
// order, so every rank gets every utterance's sums unchanged -- chunk by chunk, to bound the
// buffer.
CmvnSums FileOrderCmvn(const DataDirIndex& index, const Dataset& train,
                       const std::vector<int>& local, Communicator* comm) {
  constexpr int kChunk = 4096;  // utterances per exchange
  const int dim = train.dim;
  const size_t width = 2 * static_cast<size_t>(dim) + 1;
  CmvnSums total(dim);
  std::vector<double> slots;
  for (int begin = 0; begin < index.NumUtts(); begin += kChunk) {
    const int n = std::min(kChunk, index.NumUtts() - begin);
    slots.assign(static_cast<size_t>(n) * width, 0.0);
    for (int i = 0; i < n; ++i) {
      if (local[begin + i] < 0) continue;
      CmvnSums one(dim);
      one.Add(train, {local[begin + i]});
      const std::vector<double> packed = one.Packed();
      std::copy(packed.begin(), packed.end(), slots.begin() + static_cast<size_t>(i) * width);
    }
    if (comm != nullptr) comm->AllReduceSum(std::span<double>(slots));
    for (int i = 0; i < n; ++i) {
      total.Add(CmvnSums::Unpacked(
          std::span<const double>(slots.data() + static_cast<size_t>(i) * width, width)));
    }
  }
  return total;
}

// Every rank must have indexed the same training utterances (it computes the shards from
// them): a 52-bit hash of the ids, sizes and label counts, compared over the ranks.
void CheckSameIndex(const DataDirIndex& index, Communicator& comm) {
  std::string text;
  for (int u = 0; u < index.NumUtts(); ++u) {
    text += index.UttIds()[u] + " " + std::to_string(index.Frames()[u]) + "\n";
  }
  for (double c : index.LabelCounts()) text += std::to_string(c) + " ";
  const double h = static_cast<double>(std::stoull(Sha256Hex(text).substr(0, 13), nullptr, 16));
  double v[2] = {h, -h};
  comm.AllReduceMax(std::span<double>(v, 2));
  MAVG_CHECK(v[0] == -v[1],
             "{}: the MPI ranks read different training utterances (a pipe or file that gave "
             "each rank other data?); every rank must see the same corpus",
             index.Dir());
}

}  // namespace

FeaturePipeline PipelineOf(const RunConfig& config) {
  FeaturePipeline p;
  p.speaker_cmvn = config.data.cmvn == Cmvn::kSpeaker;
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
  LoadOptions train_options = TrainLoadOptions(config);
  LoadOptions dev_options = DevLoadOptions(config);
  if (!config.data.ali.empty()) {  // read once for train and dev (a pipe runs once)
    train_options.alignment_table =
        std::make_shared<const kaldi::TableSource>(config.data.ali, "data.ali");
    if (config.data.dev_ali.empty()) dev_options.alignment_table = train_options.alignment_table;
  }
  const DataDirIndex index(config.data.train, train_options);
  if (!all_held) CheckSameIndex(index, comm);
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
  d.dev = LoadDataDir(config.data.dev, dev_options);
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
  if (config.data.cmvn != Cmvn::kNone) {
    CmvnStats cmvn =
        FileOrderCmvn(index, d.train, local, all_held ? nullptr : &comm).Stats(config.data.train);
    for (Dataset* set : {&d.train, &d.dev, &d.test}) {
      if (set->NumUtts() > 0) ApplyCmvn(cmvn, *set);
    }
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
