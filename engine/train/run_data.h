#pragma once
// The data of a run: the training utterances of the shards this process trains (all of them
// for simulated workers, one shard per MPI rank), dev and test sets whole, labels checked
// against the output layer, each data dir's feature pipeline (speaker CMVN, deltas) applied
// as it loads, and the global CMVN estimated on all training frames -- summed shard by shard
// over the processes, so every process gets the same bits -- and applied to every set.

#include <vector>

#include "engine/comm/communicator.h"
#include "engine/config/config.h"
#include "engine/data/dataset.h"
#include "engine/nn/model.h"

namespace mavg {

// Which shards of the training data a process trains: the training utterances are split into
// `num_shards` shards balanced by frames (ShardByFrames) and this process holds those in
// `held` (every shard, or shard r on rank r of `num_shards` ranks).
struct ShardPlan {
  int num_shards = 1;
  std::vector<int> held = {0};
};

struct RunData {
  Dataset train, dev, test;    // train: the held shards' utterances only; test may be empty
  FeatureTransform transform;  // pipeline + context + CMVN (what the model file records)
  int num_outputs = 0;
  std::vector<double> label_counts;      // [num_outputs] training frames per label (all shards)
  std::vector<std::vector<int>> shards;  // [num_shards] a held shard's utterances (indices
                                         // into train, in shard order); empty when not held
  std::vector<int64_t> shard_frames;     // [num_shards] training frames of every shard
  bool train_complete = true;            // train holds every training utterance
};

// Loads and normalises everything; adds the time spent to *io_s. A plan that holds one shard of
// several sums the CMVN statistics over `comm` (rank r holding shard r); otherwise `comm` is
// not used.
RunData LoadRunData(const RunConfig& config, const ShardPlan& plan, Communicator& comm,
                    double* io_s);
// The same, every shard held (one process, e.g. tools and tests).
RunData LoadRunData(const RunConfig& config, double* io_s);

// Every training utterance through the pipeline, normalised with `transform`'s CMVN: what RBM
// pretraining reads on rank 0 of an MPI run, whose own data are one shard.
Dataset LoadFullTrainingSet(const RunConfig& config, const FeatureTransform& transform);

// The load options config.data gives each set.
LoadOptions TrainLoadOptions(const RunConfig& config);
LoadOptions DevLoadOptions(const RunConfig& config);
LoadOptions TestLoadOptions(const RunConfig& config);
FeaturePipeline PipelineOf(const RunConfig& config);

}  // namespace mavg
