#pragma once
// The run configuration: typed structs with in-class defaults. YAML is read only at the edge
// (config/schema.cpp), through one table of keys that also drives validation, `--set`,
// `--dump-config`, the run identity and the README's config reference.

#include <cstdint>
#include <string>

#include "engine/config/averaging_config.h"
#include "engine/config/choices.h"
#include "engine/config/combine_config.h"
#include "engine/config/compress_config.h"
#include "engine/config/outer_config.h"
#include "engine/config/stream_config.h"

namespace mavg {

struct DataConfig {
  std::string train;                // Kaldi data dir used for training (required)
  std::string dev;                  // held-out data dir for CV loss/accuracy (required)
  std::string test;                 // data dir for the final test metric (optional)
  int64_t context = 0;              // splice +-context frames (edge frames repeated)
  Cmvn cmvn = Cmvn::kGlobal;        // global | speaker (cmvn.scp, then global) | none
  bool cmvn_norm_vars = false;      // speaker CMVN also normalises variances
  int64_t deltas = 0;               // add-deltas order (0: none)
  std::string ali;                  // alignments rspecifier for train and dev (empty: ali.ark)
  std::string dev_ali;              // alignments rspecifier for dev (empty: ali, else ali.ark)
  int64_t randomizer_size = 32768;  // frames in the shuffling buffer
  std::string lang;                 // lang dir for decoding (empty: <train>/../lang if present)
};

struct ModelConfig {
  int64_t hidden_layers = 6;  // the paper: 6 x 2048 sigmoid
  int64_t hidden_dim = 2048;
  Activation activation = Activation::kSigmoid;
  ModelInit init = ModelInit::kRandom;         // random (Kaldi nnet1 make_nnet_proto.py) | rbm
  InitScheme init_scheme = InitScheme::kAuto;  // random weights' scale
  int64_t num_outputs = 0;                     // output units (0: 1 + largest training label)
};

struct NgsgdConfig {
  int64_t rank_in = 20;       // rank of the input-side Fisher model
  int64_t rank_out = 80;      // rank of the output-side Fisher model
  int64_t update_period = 4;  // update the models every this many minibatches
  double alpha = 4.0;         // smoothing towards the identity
  int64_t num_samples_history = 2000;
  double epsilon = 1e-10;
  double delta = 5e-4;
  double eta_max = 0.9;  // cap of the forgetting factor (1: none, the fork)
  MaxChangeMode max_change_mode = MaxChangeMode::kNnet2;  // nnet2: lr inside the limit; fork: out
  RankCap rank_cap = RankCap::kNnet3;  // nnet3: R <= (D + 1) / 2; nnet2: R <= D - 1
  bool reset_each_epoch = true;        // restart the preconditioners at every epoch (the paper)
};

// Adam with decoupled weight decay (AdamW), as torch.optim.AdamW (engine/optim/adam.h).
struct AdamConfig {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double weight_decay = 0.0;      // decoupled: p *= 1 - lr x weight_decay each step
  bool reset_each_epoch = false;  // forget the moments at every epoch (as SGD's momentum is)
};

struct OptimizerConfig {
  OptimizerType type = OptimizerType::kSgd;
  int64_t minibatch = 256;  // frames per minibatch
  double momentum = 0.0;
  double l2 = 0.0;  // L2 penalty per frame on weights (Kaldi nnet1 --l2-penalty)
  double max_change_per_sample = 0.075;  // ngsgd: limit of the parameter change per frame
  bool sgd_max_change = false;  // sgd: limit its updates by max_change_per_sample as ngsgd does
  NgsgdConfig ngsgd;
  AdamConfig adam;
};

struct NewbobConfig {
  double start_halving_impr = 0.01;  // start halving when relative CV-loss gain < this
  double end_halving_impr = 0.001;   // stop when halving and relative gain < this
  double halving_factor = 0.5;
  int64_t min_epochs = 0;      // never stop before this many epochs
  int64_t keep_lr_epochs = 0;  // keep lr (and accept every epoch) for this many epochs
};

// When a run whose losses stayed finite still counts as failed (engine/train/health.h).
struct CollapseConfig {
  double chance_fraction = 0.99;  // best CV loss >= this x the input-free loss (0: off)
  double growth = 2.0;            // final CV loss >= this x the first epoch's (0: off)
};

struct ScheduleConfig {
  ScheduleType type = ScheduleType::kExponential;
  double lr = 0.008;          // initial learning rate (per summed-gradient step)
  double final_ratio = 0.01;  // exponential: last epoch's lr = lr * final_ratio
  int64_t epochs = 15;        // exponential/constant: epochs; newbob: maximum epochs
  NewbobConfig newbob;
  CollapseConfig collapse;
};

// BmufConfig (parallel.bmuf.*): engine/config/averaging_config.h.

// CombineConfig (parallel.combine.*): engine/config/combine_config.h.

// OuterConfig (parallel.outer.*): engine/config/outer_config.h.

// CompressConfig (parallel.compress.*): engine/config/compress_config.h.

// StreamConfig (parallel.stream.*): engine/config/stream_config.h.

struct ParallelConfig {
  int64_t workers = 1;                           // data-parallel workers N
  ParallelMode mode = ParallelMode::kSimulated;  // N replicas in one process | one MPI rank each
  int64_t average_every = 10;                    // average after every K minibatches ...
  int64_t average_frames = 0;  // ... or when the frame count crosses a multiple of F (>0)
  LrScaling lr_scaling = LrScaling::kLinear;  // linear: per-worker lr = N x schedule lr | none
  bool deterministic = false;     // sum in rank order in every mode (bitwise reproducible)
  bool average_momentum = false;  // the older spelling of optimizer_state average
  // What a combine does with each worker's optimizer state (SGD's momentum, Adam's moments,
  // NG-SGD's statistics): keep it (the paper), average it as the parameters are, or reset it.
  OptimizerStatePolicy optimizer_state = OptimizerStatePolicy::kKeep;
  AveragingAlgorithm algorithm = AveragingAlgorithm::kAverage;  // what a global combine makes
  BmufConfig bmuf;
  OuterConfig outer;
  CombineConfig combine;
  CompressConfig compress;             // how the outer deltas travel (compress_config.h)
  StreamConfig stream;                 // fragments combined in turn (stream_config.h)
  bool overlap = false;                // the global all-reduce of block t runs during block t+1
  int64_t group_size = 0;              // two-level: groups of g workers (0: one group of all)
  int64_t average_every_global = 0;    // two-level: all workers every K2 minibatches (0: every K)
  CommChoice comm = CommChoice::kMpi;  // mpi: host-staged MPI sums | nccl: device to device
};

struct DecodeConfig {
  bool tune = true;             // choose acoustic scale and word penalty on dev (a grid)
  double acoustic_scale = 0.1;  // used when tune is false
  double word_penalty = 0.0;    // used when tune is false
  double beam = 13.0;
  double sil_prob = 0.5;
  bool allow_partial = true;  // no final state reached: the best partial path (Kaldi's recipes)
};

// Kaldi nnet1 RBM pretraining (steps/nnet/pretrain_dbn.sh, rbm-train-cd1-frmshuff).
struct RbmConfig {
  int64_t epochs = 1;                     // per Bernoulli-Bernoulli layer (rbm_iter)
  int64_t epochs_gaussian = 2;            // for the Gaussian-Bernoulli first layer (2 x rbm_iter)
  double lr = 0.4;                        // Bernoulli-Bernoulli learning rate (rbm_lrate)
  double lr_gaussian = 0.01;              // Gaussian-Bernoulli learning rate (rbm_lrate_low)
  int64_t minibatch = 100;                // frames per CD-1 step (bunchsize)
  double l2 = 0.0002;                     // weight cost on W (rbm_l2penalty)
  double momentum = 0.5;                  // momentum schedule: from this ...
  double momentum_max = 0.9;              // ... to this ...
  int64_t momentum_steps = 40;            // ... in this many steps ...
  int64_t momentum_step_period = 500000;  // ... of this many frames; lr x (1 - momentum)
  bool momentum_bug = true;               // Kaldi's with_bug default: momentum_max from the start
  double param_stddev = 0.1;              // W ~ N(0, stddev^2) (param_stddev, param_stddev_first)
  int64_t vis_bias_utts = 10000;          // utterances for the visible-bias estimate of layers >= 2
  int64_t seed = 777;  // shuffling and sampling (not the run seed: runs share a stack)
  // > 0: the momentum steps' period is set so that the ramp spans this fraction of an epoch's
  // frames (0.185: Kaldi's 20 M frames of its 300 h recipe's 108 M; docs/algorithms.md §3b)
  double momentum_ramp_fraction = 0.0;
};

struct PretrainConfig {
  RbmConfig rbm;
};

struct DeviceOptions {
  int64_t threads = 0;  // CPU threads for BLAS and kernels (0: all cores)
  // Simulated workers on a CPU stepping at once, each on one thread (0: min(workers, threads)).
  int64_t concurrent_workers = 0;
  bool tf32 = false;  // cuda: TF32 tensor cores for FP32 GEMMs
};

struct RunConfig {
  DataConfig data;
  ModelConfig model;
  OptimizerConfig optimizer;
  ScheduleConfig schedule;
  ParallelConfig parallel;
  DecodeConfig decode;
  PretrainConfig pretrain;
  Device device = Device::kCpu;
  int64_t device_index = 0;
  DeviceOptions device_options;
  int64_t seed = 777;
};

}  // namespace mavg
