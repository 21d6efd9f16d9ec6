#pragma once
// Deep belief network pretraining as Kaldi nnet1's steps/nnet/pretrain_dbn.sh: one RBM per
// hidden layer, trained greedily bottom-up with CD-1 on the training frames (spliced and
// CMVN-normalised, the DNN's own input): a Gaussian-Bernoulli RBM on the input, then
// Bernoulli-Bernoulli RBMs fed with the previous layers' hidden probabilities, each visible
// bias set from those mean activations. The stack becomes the DNN's hidden affine + sigmoid
// layers (rbm-convert-to-nnet); the output layer stays randomly initialised. The algorithms:
// docs/algorithms.md §3.

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/config/config.h"
#include "engine/data/dataset.h"
#include "engine/nn/network.h"
#include "engine/pretrain/rbm.h"

namespace mavg {

// One pretrained layer, on the host: W [hidden x visible] row-major and the hidden bias.
struct DbnLayer {
  int visible = 0;
  int hidden = 0;
  std::vector<float> weights;
  std::vector<float> hidden_bias;
};

struct Dbn {
  std::vector<DbnLayer> layers;
};

struct DbnOptions {
  RbmConfig rbm;
  int context = 0;                     // splicing of the input frames
  int64_t randomizer_size = 32768;     // frame-shuffling buffer
  bool progress = false;               // draw a progress line on stderr
  std::function<void()> on_minibatch;  // called after every CD-1 step (e.g. a heartbeat)
};

// Called after every epoch of every layer with one pretrain.jsonl record (PretrainEpoch,
// records/pretrain_record.h) as JSON: reconstruction errors, lr and momentum at the end, guard
// triggers, seconds.
using DbnEpochCallback = std::function<void(const nlohmann::json&)>;

// Frames per momentum step (docs/algorithms.md §3b): pretrain.rbm.momentum_step_period, or, with
// momentum_ramp_fraction f > 0, round(f x epoch_frames / momentum_steps) (at least 1), so that
// the ramp spans the fraction f of an epoch's frames whatever the corpus' size.
int64_t MomentumStepPeriod(const RbmConfig& o, int64_t epoch_frames);
// Kaldi's momentum schedule (rbm-train-cd1-frmshuff): after n steps, momentum + n x step, capped
// at momentum_max after momentum_steps.
double ScheduledMomentum(const RbmConfig& o, int64_t n);

// Dead units (docs/algorithms.md §3d): a hidden unit is dead when its activation (hidden
// probability) has a standard deviation below kDeadUnitStd over the first kDeadUnitFrames frames
// of the utterances given (a bounded sample: the cost does not grow with the corpus).
inline constexpr double kDeadUnitStd = 0.02;
inline constexpr int64_t kDeadUnitFrames = 20000;
// The fraction of `top`'s hidden units that are dead, on the frames of `utts` (in order,
// spliced by `context`) forwarded through `below` (the layers under it, hidden probabilities).
double DeadUnitFraction(Backend& backend, const Dataset& data, const std::vector<int>& utts,
                        int context, const std::vector<Rbm>& below, const Rbm& top);

// Pretrains a stack of hidden_dims.size() RBMs on every frame of `train`.
Dbn PretrainDbn(Backend& backend, const Dataset& train, const std::vector<int>& hidden_dims,
                const DbnOptions& options, const DbnEpochCallback& on_epoch);

// Copies the stack into the hidden affine layers of `network` (sizes must match); the output
// layer is left as it is.
void LoadDbnIntoNetwork(const Dbn& dbn, Network& network);

// Native file: magic "MAVGDBN\0", u32 version, u64 header length + JSON header (layer sizes,
// the header's own CRC-32; core/blob_file.h), u64 float count + floats (per layer W then hidden
// bias), u32 CRC-32; written atomically.
void SaveDbn(const std::string& path, const Dbn& dbn);
// Throws naming the file on a bad magic, version, size or checksum.
Dbn LoadDbn(const std::string& path);

}  // namespace mavg
