#include "engine/train/run_data.h"

#include <spdlog/spdlog.h>

#include "engine/core/timer.h"
#include "engine/data/cmvn.h"

namespace mavg {
namespace {

// Outputs a network may have (labels are pdf ids: Kaldi systems have thousands).
constexpr int64_t kMaxOutputs = int64_t{1} << 24;

// Every label within [0, num_outputs), else an error naming the utterance and frame.
void CheckLabels(const Dataset& data, int64_t num_outputs, const char* why) {
  for (int u = 0; u < data.NumUtts(); ++u) {
    for (int64_t f = data.offsets[u]; f < data.offsets[u + 1]; ++f) {
      MAVG_CHECK(data.labels[f] >= 0 && data.labels[f] < num_outputs,
                 "{}: utterance '{}' frame {}: label {} is outside the output layer ({} outputs{})",
                 data.source, data.utt_ids[u], f - data.offsets[u], data.labels[f], num_outputs,
                 why);
    }
  }
}

}  // namespace

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
  if (config.model.num_outputs > 0) {
    d.num_outputs = static_cast<int>(config.model.num_outputs);
  } else {
    // 1 + the largest label, in 64 bits; a label too large for a network is named where it is.
    CheckLabels(d.train, kMaxOutputs, "; at most 2^24 outputs are supported");
    d.num_outputs = static_cast<int>(d.train.NumClasses());
  }
  for (const Dataset* set : {&d.train, &d.dev, &d.test}) CheckLabels(*set, d.num_outputs, "");
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
      "[data] train {} utts / {} frames, dev {} / {}, test {} / {}; {} dims x {} spliced = {} "
      "inputs, {} outputs",
      d.train.NumUtts(), d.train.NumFrames(), d.dev.NumUtts(), d.dev.NumFrames(), d.test.NumUtts(),
      d.test.NumFrames(), d.train.dim, 2 * d.transform.context + 1, d.transform.OutputDim(),
      d.num_outputs);
  return d;
}

}  // namespace mavg
