#include "engine/config/schema.h"

#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string_view>

#include "engine/config/averaging_config.h"
#include "engine/config/combine_config.h"
#include "engine/config/compress_config.h"
#include "engine/config/key_builder.h"
#include "engine/config/outer_config.h"
#include "engine/config/stream_config.h"
#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/core/json.h"
#include "engine/core/yaml.h"

namespace mavg {
namespace {

using schema_keys::Binding;
using schema_keys::KeyBuilder;
using schema_keys::Trim;
using schema_keys::TypeName;

// A range bound as the reference and errors print it: integers in full (1000000, not 1e+06).
std::string Bound(const KeySpec& s, double v) {
  if (s.type == ValueType::kInt) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

// Where a key's setting is used (KeyBuilder::UsedWhen).
bool RbmInit(const RunConfig& c) { return c.model.init == ModelInit::kRbm; }
bool SpeakerCmvn(const RunConfig& c) { return c.data.cmvn == Cmvn::kSpeaker; }
bool Ngsgd(const RunConfig& c) { return c.optimizer.type == OptimizerType::kNgsgd; }
bool Sgd(const RunConfig& c) { return c.optimizer.type == OptimizerType::kSgd; }
bool Adam(const RunConfig& c) { return c.optimizer.type == OptimizerType::kAdam; }
bool MaxChangeUsed(const RunConfig& c) {
  return Ngsgd(c) || (Sgd(c) && c.optimizer.sgd_max_change);
}

const std::vector<Binding>& Bindings() {
  static const std::vector<Binding> kBindings = [] {
    std::vector<Binding> keys = {
        KeyBuilder("data.train", MAVG_FIELD(data.train),
                   "training data dir (Kaldi style: feats.scp or feats.ark, ali.ark); required"),
        KeyBuilder("data.dev", MAVG_FIELD(data.dev),
                   "held-out data dir: CV loss and frame accuracy after every epoch; required"),
        KeyBuilder("data.test", MAVG_FIELD(data.test),
                   "data dir for the final test metric (empty: none)"),
        KeyBuilder("data.context", MAVG_FIELD(data.context),
                   "splice +-context frames around each frame (edge frames repeated); "
                   "5 gives the paper's 11 x 40 = 440 inputs")
            .Min(0)
            .Max(100),
        KeyBuilder("data.cmvn", MAVG_FIELD(data.cmvn),
                   "input normalisation: global = mean/variance estimated on the training data "
                   "(nnet1's feature transform); speaker = Kaldi's apply-cmvn with each data "
                   "dir's cmvn.scp and utt2spk first, then global; none"),
        KeyBuilder("data.cmvn_norm_vars", MAVG_FIELD(data.cmvn_norm_vars),
                   "data.cmvn speaker: normalise the variances too (apply-cmvn --norm-vars; "
                   "Kaldi's default is false)")
            .UsedWhen(SpeakerCmvn, "data.cmvn is speaker"),
        KeyBuilder("data.deltas", MAVG_FIELD(data.deltas),
                   "add-deltas order after speaker CMVN (window 2): 2 gives deltas and "
                   "delta-deltas, 3 x the feature dimension; 0: none")
            .Min(0)
            .Max(4)
            .OmittedAt(0),
        KeyBuilder("data.ali", MAVG_FIELD(data.ali),
                   "alignments of data.train and data.dev as a Kaldi rspecifier holding pdf ids: "
                   "ark:FILE, FILE.gz, a glob (pdf.*.gz), scp:FILE, several separated by blanks, "
                   "or a pipe 'ark:ali-to-pdf MDL \"ark:gunzip -c ali.*.gz|\" ark:- |' (Kaldi's "
                   "ali.*.gz hold transition ids: convert them); empty: each dir's ali.ark")
            .OmittedAt(""),
        KeyBuilder("data.dev_ali", MAVG_FIELD(data.dev_ali),
                   "alignments of data.dev alone (an rspecifier as data.ali); empty: data.ali, "
                   "else the dir's ali.ark")
            .OmittedAt(""),
        KeyBuilder("data.randomizer_size", MAVG_FIELD(data.randomizer_size),
                   "frames in the shuffling buffer (Kaldi's --randomizer-size); at least one "
                   "minibatch")
            .Min(1)
            .Max(100000000),
        KeyBuilder("data.lang", MAVG_FIELD(data.lang),
                   "lang dir (lexicon, phones, pdfs, transitions) to decode the test set with; "
                   "empty: the train dir's sibling `lang` if it exists, else no decoding"),
        KeyBuilder("model.hidden_layers", MAVG_FIELD(model.hidden_layers),
                   "number of hidden layers")
            .Min(0)
            .Max(64),
        KeyBuilder("model.hidden_dim", MAVG_FIELD(model.hidden_dim), "units per hidden layer")
            .Min(1)
            .Max(65536),
        KeyBuilder("model.activation", MAVG_FIELD(model.activation), "hidden non-linearity"),
        KeyBuilder("model.init", MAVG_FIELD(model.init),
                   "initialisation: random = Kaldi nnet1 make_nnet_proto.py (Glorot-scaled "
                   "Gaussian weights; sigmoid hidden biases U[-4,0], others 0); rbm = Kaldi nnet1 "
                   "RBM pretraining of the hidden layers (pretrain.rbm.*), then a random output "
                   "layer"),
        KeyBuilder("model.init_scheme", MAVG_FIELD(model.init_scheme),
                   "scale of the random weights (of every layer for init random, of the output "
                   "layer for rbm): nnet1 = Kaldi's, made for sigmoid; he = N(0, 2/in) for relu "
                   "(output layer N(0, 1/in)); glorot = N(0, 2/(in+out)) for tanh; auto = the "
                   "one that fits model.activation (sigmoid nnet1, relu he, tanh glorot)")
            .OmittedAt("nnet1"),
        KeyBuilder("model.num_outputs", MAVG_FIELD(model.num_outputs),
                   "output units, e.g. the number of pdfs (0: 1 + the largest training label); "
                   "a label outside the output layer is an error")
            .Min(0)
            .Max(1000000),
        KeyBuilder("optimizer.type", MAVG_FIELD(optimizer.type),
                   "sgd: plain SGD with momentum and L2 on the summed minibatch gradient; ngsgd: "
                   "Kaldi's online natural-gradient SGD with max-change; adam: Adam with "
                   "decoupled weight decay (AdamW, as PyTorch's) on the minibatch's mean "
                   "gradient (optimizer.adam.*; schedule.lr is Adam's lr, e.g. 0.001)"),
        KeyBuilder("optimizer.minibatch", MAVG_FIELD(optimizer.minibatch),
                   "frames per minibatch (the last partial minibatch of an epoch is dropped)")
            .Min(1)
            .Max(1048576),
        KeyBuilder("optimizer.momentum", MAVG_FIELD(optimizer.momentum),
                   "momentum (Kaldi nnet1 semantics; not averaged across workers)")
            .Min(0)
            .Max(0.999999),
        KeyBuilder("optimizer.l2", MAVG_FIELD(optimizer.l2),
                   "L2 penalty per frame on weights: W *= 1 - lr*l2*minibatch each step")
            .Min(0)
            .Max(1),
        KeyBuilder("optimizer.max_change_per_sample", MAVG_FIELD(optimizer.max_change_per_sample),
                   "ngsgd: bound on lr x sum_i |x_i| |g_i| per frame; larger steps are scaled "
                   "down (nnet2 max-change-per-sample; 0: no limit)")
            .Min(0)
            .Max(1000)
            .UsedWhen(MaxChangeUsed, "max-change applies (ngsgd, or sgd with sgd_max_change)"),
        KeyBuilder("optimizer.sgd_max_change", MAVG_FIELD(optimizer.sgd_max_change),
                   "sgd: scale each layer update down by NG-SGD's max-change rule "
                   "(optimizer.max_change_per_sample, measured as optimizer.ngsgd.max_change_mode "
                   "says); needs optimizer.momentum 0")
            .UsedWhen(Sgd, "optimizer.type is sgd")
            .OmittedAt(false),
        KeyBuilder("optimizer.ngsgd.rank_in", MAVG_FIELD(optimizer.ngsgd.rank_in),
                   "ngsgd: rank of the input-side Fisher model (at most input dim)")
            .Min(1)
            .Max(4096)
            .UsedWhen(Ngsgd, "optimizer.type is ngsgd"),
        KeyBuilder("optimizer.ngsgd.rank_out", MAVG_FIELD(optimizer.ngsgd.rank_out),
                   "ngsgd: rank of the output-side Fisher model (at most output dim - 1)")
            .Min(1)
            .Max(4096)
            .UsedWhen(Ngsgd, "optimizer.type is ngsgd"),
        KeyBuilder("optimizer.ngsgd.update_period", MAVG_FIELD(optimizer.ngsgd.update_period),
                   "ngsgd: update the Fisher models every this many minibatches (after 10)")
            .Min(1)
            .Max(1000000)
            .UsedWhen(Ngsgd, "optimizer.type is ngsgd"),
        KeyBuilder("optimizer.ngsgd.alpha", MAVG_FIELD(optimizer.ngsgd.alpha),
                   "ngsgd: smoothing of the Fisher model towards the identity")
            .Min(0)
            .Max(1000)
            .UsedWhen(Ngsgd, "optimizer.type is ngsgd"),
        KeyBuilder("optimizer.ngsgd.num_samples_history",
                   MAVG_FIELD(optimizer.ngsgd.num_samples_history),
                   "ngsgd: forgetting: eta = 1 - exp(-minibatch / this), at most eta_max")
            .Min(1)
            .Max(1000000000)
            .UsedWhen(Ngsgd, "optimizer.type is ngsgd"),
        KeyBuilder("optimizer.ngsgd.epsilon", MAVG_FIELD(optimizer.ngsgd.epsilon),
                   "ngsgd: absolute floor of the Fisher model's eigenvalues")
            .Min(0, true)
            .Max(1)
            .UsedWhen(Ngsgd, "optimizer.type is ngsgd"),
        KeyBuilder("optimizer.ngsgd.delta", MAVG_FIELD(optimizer.ngsgd.delta),
                   "ngsgd: floor of the eigenvalues relative to the largest")
            .Min(0, true)
            .Max(1)
            .UsedWhen(Ngsgd, "optimizer.type is ngsgd"),
        KeyBuilder("optimizer.ngsgd.eta_max", MAVG_FIELD(optimizer.ngsgd.eta_max),
                   "ngsgd: cap of the forgetting factor eta (nnet2/3: 0.9; 1: none, as the "
                   "authors' fork)")
            .Min(0, true)
            .Max(1)
            .UsedWhen(Ngsgd, "optimizer.type is ngsgd")
            .OmittedAt(0.9),
        KeyBuilder("optimizer.ngsgd.max_change_mode", MAVG_FIELD(optimizer.ngsgd.max_change_mode),
                   "ngsgd: nnet2: the max-change bound includes lr (a binding limit cancels a "
                   "larger lr); fork: as Su & Chen's Kaldi fork, without lr, so the step still "
                   "scales with lr")
            .UsedWhen(MaxChangeUsed, "max-change applies (ngsgd, or sgd with sgd_max_change)")
            .OmittedAt("nnet2"),
        KeyBuilder("optimizer.ngsgd.rank_cap", MAVG_FIELD(optimizer.ngsgd.rank_cap),
                   "ngsgd: the largest rank for a dimension D: nnet3 = (D+1)/2; nnet2 = D-1, as "
                   "nnet2 and the authors' fork")
            .UsedWhen(Ngsgd, "optimizer.type is ngsgd")
            .OmittedAt("nnet3"),
        KeyBuilder("optimizer.adam.beta1", MAVG_FIELD(optimizer.adam.beta1),
                   "adam: decay of the first moment (PyTorch's betas[0])")
            .Min(0)
            .Max(0.999999)
            .UsedWhen(Adam, "optimizer.type is adam"),
        KeyBuilder("optimizer.adam.beta2", MAVG_FIELD(optimizer.adam.beta2),
                   "adam: decay of the second moment (PyTorch's betas[1]; DiLoCo: 0.95)")
            .Min(0)
            .Max(0.999999)
            .UsedWhen(Adam, "optimizer.type is adam"),
        KeyBuilder("optimizer.adam.epsilon", MAVG_FIELD(optimizer.adam.epsilon),
                   "adam: added to sqrt(v) (after bias correction) in the step's denominator")
            .Min(0, true)
            .Max(1)
            .UsedWhen(Adam, "optimizer.type is adam"),
        KeyBuilder("optimizer.adam.weight_decay", MAVG_FIELD(optimizer.adam.weight_decay),
                   "adam: decoupled weight decay, p *= 1 - lr x weight_decay every step, on "
                   "weights and biases (AdamW; 0: plain Adam; DiLoCo: 0.1)")
            .Min(0)
            .Max(1000)
            .UsedWhen(Adam, "optimizer.type is adam"),
        KeyBuilder("optimizer.adam.reset_each_epoch", MAVG_FIELD(optimizer.adam.reset_each_epoch),
                   "adam: forget the moments and the step count at every epoch (false: kept, as "
                   "PyTorch's are, and checkpointed)")
            .UsedWhen(Adam, "optimizer.type is adam"),
        KeyBuilder("optimizer.ngsgd.reset_each_epoch", MAVG_FIELD(optimizer.ngsgd.reset_each_epoch),
                   "ngsgd: restart the preconditioners at every epoch (the paper's behaviour)")
            .UsedWhen(Ngsgd, "optimizer.type is ngsgd"),
        KeyBuilder("schedule.type", MAVG_FIELD(schedule.type),
                   "learning-rate schedule: exponential (lr * final_ratio^((k-1)/(E-1))), "
                   "newbob (Kaldi nnet1 halving with epoch rejection), constant"),
        KeyBuilder("schedule.lr", MAVG_FIELD(schedule.lr),
                   "initial learning rate, for the gradient summed over the minibatch (0: the "
                   "model never moves, a check of the averaging)")
            .Min(0)
            .Max(1000),
        KeyBuilder("schedule.final_ratio", MAVG_FIELD(schedule.final_ratio),
                   "exponential: lr of the last epoch divided by lr")
            .Min(0, true)
            .Max(1),
        KeyBuilder("schedule.epochs", MAVG_FIELD(schedule.epochs),
                   "epochs (exponential, constant); maximum epochs (newbob)")
            .Min(1)
            .Max(10000),
        KeyBuilder("schedule.newbob.start_halving_impr",
                   MAVG_FIELD(schedule.newbob.start_halving_impr),
                   "newbob: start halving when the relative CV cross-entropy gain is below this")
            .Min(0)
            .Max(1),
        KeyBuilder("schedule.newbob.end_halving_impr", MAVG_FIELD(schedule.newbob.end_halving_impr),
                   "newbob: stop when halving and the relative gain is below this")
            .Min(0)
            .Max(1),
        KeyBuilder("schedule.newbob.halving_factor", MAVG_FIELD(schedule.newbob.halving_factor),
                   "newbob: lr multiplier when halving")
            .Min(0, true)
            .Max(1),
        KeyBuilder(
            "schedule.newbob.min_epochs", MAVG_FIELD(schedule.newbob.min_epochs),
            "newbob: never stop before this many epochs (delays stopping only, as Kaldi nnet1)")
            .Min(0)
            .Max(10000),
        KeyBuilder("schedule.newbob.keep_lr_epochs", MAVG_FIELD(schedule.newbob.keep_lr_epochs),
                   "newbob: keep the initial lr and accept every epoch for this many epochs")
            .Min(0)
            .Max(10000),
        KeyBuilder("schedule.collapse.chance_fraction",
                   MAVG_FIELD(schedule.collapse.chance_fraction),
                   "a run whose best CV loss is not below this x the input-free loss (CV labels "
                   "scored by the training label frequencies, at most ln(outputs)) ends "
                   "`collapsed`, not `completed` (0: no such check; not part of the run id)")
            .Min(0)
            .NotIdentity()
            .Max(1),
        KeyBuilder("schedule.collapse.growth", MAVG_FIELD(schedule.collapse.growth),
                   "a run whose final CV loss is at least this x the first epoch's and at least "
                   "half the input-free loss ends `collapsed` (0: no such check; not part of "
                   "the run id)")
            .Min(0)
            .NotIdentity()
            .Max(1000000),
        KeyBuilder("parallel.workers", MAVG_FIELD(parallel.workers),
                   "data-parallel workers N, each training on its own shard (balanced by frames)")
            .Min(1)
            .Max(4096),
        KeyBuilder("parallel.mode", MAVG_FIELD(parallel.mode),
                   "simulated: N replicas in one process, averaged in rank order; mpi: one "
                   "process per worker under `mpirun -np N`"),
        KeyBuilder("parallel.average_every", MAVG_FIELD(parallel.average_every),
                   "average the workers' parameters after every K minibatches")
            .Min(1)
            .Max(1000000)
            .OneWorkerFree(),
        KeyBuilder("parallel.average_frames", MAVG_FIELD(parallel.average_frames),
                   "instead average when a worker's frame count crosses a multiple of F (the "
                   "paper's --frames-per-reduce; 0: use average_every)")
            .Min(0)
            .Max(1000000000000)
            .OneWorkerFree(),
        KeyBuilder("parallel.lr_scaling", MAVG_FIELD(parallel.lr_scaling),
                   "linear: per-worker lr = N x the schedule's lr (the paper); none")
            .OneWorkerFree(),
        KeyBuilder("parallel.deterministic", MAVG_FIELD(parallel.deterministic),
                   "MPI sums in rank order, so mpi and simulated runs agree bit for bit"),
        KeyBuilder("parallel.average_momentum", MAVG_FIELD(parallel.average_momentum),
                   "the older spelling of parallel.optimizer_state: average (runs made with it "
                   "keep their ids)")
            .OneWorkerFree(),
        KeyBuilder("parallel.optimizer_state", MAVG_FIELD(parallel.optimizer_state),
                   "what every combine does with each worker's optimizer state (SGD's momentum, "
                   "Adam's moments, NG-SGD's statistics): keep it local (the paper; no bytes), "
                   "average it as the parameters (SGD momentum 2x, Adam 3x the bytes), reset it "
                   "(no bytes)")
            .OmittedAt("keep")
            .OneWorkerFree(),
    };
    // parallel.algorithm, parallel.bmuf.*: declared with BMUF's checks (averaging_config.cpp)
    for (Binding& b : AveragingKeys()) keys.push_back(std::move(b));
    // parallel.combine.*: declared with the combine policies' checks (combine_config.cpp)
    for (Binding& b : CombineKeys()) keys.push_back(std::move(b));
    // parallel.outer.*: declared with the outer optimizers' checks (outer_config.cpp)
    for (Binding& b : OuterKeys()) keys.push_back(std::move(b));
    // parallel.compress.*: declared with the exchange's checks (compress_config.cpp)
    for (Binding& b : CompressKeys()) keys.push_back(std::move(b));
    // parallel.stream.*: declared with the streaming schedule's checks (stream_config.cpp)
    for (Binding& b : StreamKeys()) keys.push_back(std::move(b));
    const std::vector<Binding> rest = {
        KeyBuilder("parallel.overlap", MAVG_FIELD(parallel.overlap),
                   "the all-reduce of each block runs while the next block trains; the model then "
                   "takes the combined result plus the worker's progress since")
            .OmittedAt(false)
            .OneWorkerFree(),
        KeyBuilder("parallel.group_size", MAVG_FIELD(parallel.group_size),
                   "two-level averaging: groups of g consecutive workers average every "
                   "average_every minibatches (0: no groups)")
            .Min(0)
            .Max(4096)
            .OmittedAt(0)
            .OneWorkerFree(),
        KeyBuilder("parallel.average_every_global", MAVG_FIELD(parallel.average_every_global),
                   "two-level averaging: all workers combine every K2 minibatches, a multiple of "
                   "average_every (0: at every averaging)")
            .Min(0)
            .Max(1000000)
            .OmittedAt(0)
            .OneWorkerFree(),
        KeyBuilder("parallel.comm", MAVG_FIELD(parallel.comm),
                   "mpi ranks: mpi sums host-staged copies; nccl sums device memory directly "
                   "(device cuda, one GPU per rank; ranks sharing a GPU fall back to mpi); not "
                   "part of the run id")
            .NotIdentity(),
        KeyBuilder("pretrain.rbm.epochs", MAVG_FIELD(pretrain.rbm.epochs),
                   "rbm: epochs of CD-1 per Bernoulli-Bernoulli layer")
            .Min(1)
            .Max(10000)
            .UsedWhen(RbmInit, "model.init is rbm"),
        KeyBuilder("pretrain.rbm.epochs_gaussian", MAVG_FIELD(pretrain.rbm.epochs_gaussian),
                   "rbm: epochs of CD-1 for the Gaussian-Bernoulli first layer")
            .Min(1)
            .Max(10000)
            .UsedWhen(RbmInit, "model.init is rbm"),
        KeyBuilder("pretrain.rbm.lr", MAVG_FIELD(pretrain.rbm.lr),
                   "rbm: learning rate of the Bernoulli-Bernoulli layers (per frame; applied as "
                   "lr x (1 - momentum))")
            .Min(0, true)
            .Max(1000)
            .UsedWhen(RbmInit, "model.init is rbm"),
        KeyBuilder("pretrain.rbm.lr_gaussian", MAVG_FIELD(pretrain.rbm.lr_gaussian),
                   "rbm: learning rate of the Gaussian-Bernoulli first layer")
            .Min(0, true)
            .Max(1000)
            .UsedWhen(RbmInit, "model.init is rbm"),
        KeyBuilder("pretrain.rbm.minibatch", MAVG_FIELD(pretrain.rbm.minibatch),
                   "rbm: frames per CD-1 step")
            .Min(1)
            .Max(1048576)
            .UsedWhen(RbmInit, "model.init is rbm"),
        KeyBuilder("pretrain.rbm.l2", MAVG_FIELD(pretrain.rbm.l2),
                   "rbm: L2 weight cost on W (not on biases)")
            .Min(0)
            .Max(1)
            .UsedWhen(RbmInit, "model.init is rbm"),
        KeyBuilder("pretrain.rbm.momentum", MAVG_FIELD(pretrain.rbm.momentum),
                   "rbm: initial momentum of the schedule")
            .Min(0)
            .Max(0.999999)
            .UsedWhen(RbmInit, "model.init is rbm"),
        KeyBuilder("pretrain.rbm.momentum_max", MAVG_FIELD(pretrain.rbm.momentum_max),
                   "rbm: final momentum of the schedule")
            .Min(0)
            .Max(0.999999)
            .UsedWhen(RbmInit, "model.init is rbm"),
        KeyBuilder("pretrain.rbm.momentum_steps", MAVG_FIELD(pretrain.rbm.momentum_steps),
                   "rbm: momentum rises in this many equal steps")
            .Min(1)
            .Max(1000000)
            .UsedWhen(RbmInit, "model.init is rbm"),
        KeyBuilder(
            "pretrain.rbm.momentum_step_period", MAVG_FIELD(pretrain.rbm.momentum_step_period),
            "rbm: frames per momentum step (the applied lr is lr x (1 - scheduled momentum))")
            .Min(1)
            .Max(1000000000000)
            .UsedWhen(RbmInit, "model.init is rbm"),
        KeyBuilder("pretrain.rbm.momentum_ramp_fraction",
                   MAVG_FIELD(pretrain.rbm.momentum_ramp_fraction),
                   "rbm: > 0: the momentum ramp spans this fraction of an epoch's training frames "
                   "(the step period becomes fraction x frames / momentum_steps; Kaldi's 300 h "
                   "recipe: 0.185); 0: momentum_step_period as given")
            .Min(0)
            .Max(100)
            .UsedWhen(RbmInit, "model.init is rbm")
            .OmittedAt(0.0),
        KeyBuilder("pretrain.rbm.momentum_bug", MAVG_FIELD(pretrain.rbm.momentum_bug),
                   "rbm: Kaldi's with_bug default: the update uses momentum_max from the first "
                   "minibatch while the lr follows the schedule; false: both follow it")
            .UsedWhen(RbmInit, "model.init is rbm"),
        KeyBuilder("pretrain.rbm.param_stddev", MAVG_FIELD(pretrain.rbm.param_stddev),
                   "rbm: initial weights ~ N(0, stddev^2); biases 0")
            .Min(0, true)
            .Max(1000)
            .UsedWhen(RbmInit, "model.init is rbm"),
        KeyBuilder("pretrain.rbm.vis_bias_utts", MAVG_FIELD(pretrain.rbm.vis_bias_utts),
                   "rbm: utterances whose mean activations set the visible biases of layers >= 2 "
                   "(logit of the mean, clipped to [1e-4, 0.9999])")
            .Min(1)
            .Max(1000000000)
            .UsedWhen(RbmInit, "model.init is rbm"),
        KeyBuilder("pretrain.rbm.seed", MAVG_FIELD(pretrain.rbm.seed),
                   "rbm: seed of initialisation, shuffling and sampling; not the run seed, so the "
                   "runs of a sweep share one pretrained stack")
            .Min(0)
            .Max(1000000000000000000)
            .UsedWhen(RbmInit, "model.init is rbm"),
        KeyBuilder("decode.tune", MAVG_FIELD(decode.tune),
                   "choose the acoustic scale and word penalty with the lowest dev WER on a grid "
                   "(as Kaldi's scoring picks the LM weight), then decode test with them"),
        KeyBuilder("decode.acoustic_scale", MAVG_FIELD(decode.acoustic_scale),
                   "acoustic scale when decode.tune is false")
            .Min(0, true)
            .Max(1000),
        KeyBuilder("decode.word_penalty", MAVG_FIELD(decode.word_penalty),
                   "word insertion penalty (log units) when decode.tune is false")
            .Min(-1000)
            .Max(1000),
        KeyBuilder("decode.beam", MAVG_FIELD(decode.beam),
                   "Viterbi beam (log units, as Kaldi's --beam)")
            .Min(0, true)
            .Max(100000),
        KeyBuilder("decode.sil_prob", MAVG_FIELD(decode.sil_prob),
                   "probability of optional silence between words")
            .Min(0)
            .Max(1),
        KeyBuilder("decode.allow_partial", MAVG_FIELD(decode.allow_partial),
                   "an utterance whose paths all end outside a final state is scored by its best "
                   "partial path, as Kaldi's recipes decode (--allow-partial=true); false: by no "
                   "words (all deletions), mavg's rule before")
            .OmittedAt(true),
        KeyBuilder("device", MAVG_FIELD(device), "compute device"),
        KeyBuilder("device_index", MAVG_FIELD(device_index),
                   "CUDA device ordinal; MPI ranks take device_index + their rank on the machine "
                   "(mod the visible devices)")
            .Min(0)
            .NotIdentity()
            .Max(1024),
        KeyBuilder("device_options.threads", MAVG_FIELD(device_options.threads),
                   "CPU threads for BLAS and kernels (0: all cores); not part of the run id")
            .Min(0)
            .NotIdentity()
            .Max(4096),
        KeyBuilder(
            "device_options.concurrent_workers", MAVG_FIELD(device_options.concurrent_workers),
            "cpu, simulated workers: how many step at once between combines, each on one "
            "thread with single-threaded BLAS (0: min(workers, threads); 1: one after another, "
            "each with every thread); at once, the model is bit for bit that of threads 1; "
            "not part of the run id")
            .Min(0)
            .NotIdentity()
            .Max(4096),
        KeyBuilder("device_options.tf32", MAVG_FIELD(device_options.tf32),
                   "cuda: FP32 GEMMs on TF32 tensor cores (inputs rounded to 10 mantissa bits; "
                   "faster, less exact)")
            .OmittedAt(false),
        KeyBuilder("seed", MAVG_FIELD(seed),
                   "random seed: initialisation, utterance order, frame shuffling")
            .Min(0)
            .Max(1000000000000000000),
    };
    keys.insert(keys.end(), rest.begin(), rest.end());
    return keys;
  }();
  return kBindings;
}

const Binding* FindBinding(const std::string& path) {
  for (const Binding& b : Bindings()) {
    if (b.spec.path == path) return &b;
  }
  return nullptr;
}

bool IsSection(const std::string& path) {
  const std::string prefix = path + ".";
  return std::any_of(Bindings().begin(), Bindings().end(),
                     [&](const Binding& b) { return b.spec.path.rfind(prefix, 0) == 0; });
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string LastComponent(const std::string& path) {
  const size_t dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

// Converts `value` for `binding` and stores it; returns an error message or "".
std::string Assign(RunConfig& config, const Binding& binding, const std::string& raw) {
  return binding.assign(config, raw);
}

std::string UnknownKeyMessage(const std::string& path) {
  return fmt::format("unknown key '{}' (did you mean '{}'?)", path, NearestKey(path));
}

void Walk(const YAML::Node& node, const std::string& prefix, RunConfig& config,
          std::vector<std::string>& problems) {
  for (const auto& item : node) {
    std::string key;
    try {
      key = item.first.as<std::string>();
    } catch (const YAML::Exception&) {
      problems.push_back(
          fmt::format("line {}: keys must be plain names", item.first.Mark().line + 1));
      continue;
    }
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    const YAML::Node& value = item.second;
    const int line = value.Mark().line + 1;
    if (const Binding* b = FindBinding(path)) {
      if (value.IsNull()) {
        if (b->spec.type == ValueType::kString && b->spec.choices.empty()) {
          Assign(config, *b, "");
        } else {
          problems.push_back(fmt::format("line {}: key '{}' has no value", line, path));
        }
      } else if (!value.IsScalar()) {
        problems.push_back(fmt::format("line {}: key '{}' expects {} {}, got a {}", line, path,
                                       b->spec.type == ValueType::kInt ? "an" : "a",
                                       TypeName(b->spec.type), value.IsMap() ? "mapping" : "list"));
      } else if (std::string quoted = QuotedValueProblem(path, value); !quoted.empty()) {
        problems.push_back(fmt::format("line {}: {}", line, quoted));
      } else if (std::string err = Assign(config, *b, value.Scalar()); !err.empty()) {
        problems.push_back(fmt::format("line {}: {}", line, err));
      }
    } else if (IsSection(path)) {
      if (value.IsMap()) {
        Walk(value, path, config, problems);
      } else if (!value.IsNull()) {
        problems.push_back(
            fmt::format("line {}: '{}' is a section and takes keys, not a value", line, path));
      }
    } else {
      problems.push_back(fmt::format("line {}: {}", line, UnknownKeyMessage(path)));
    }
  }
}

void ThrowProblems(const std::string& source, const std::vector<std::string>& problems) {
  if (problems.empty()) return;
  if (problems.size() == 1) throw Error(fmt::format("{}: {}", source, problems[0]));
  std::string joined;
  for (size_t i = 0; i < problems.size(); ++i) joined += (i ? "; " : "") + problems[i];
  throw Error(fmt::format("{}: {} problems: {}", source, problems.size(), joined));
}

nlohmann::json FieldJson(const RunConfig& config, const Binding& b) { return b.json(config); }

std::string FieldText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());
  return DumpJson(v);
}

nlohmann::json::json_pointer Pointer(const std::string& path) {
  std::string p = "/" + path;
  std::replace(p.begin(), p.end(), '.', '/');
  return nlohmann::json::json_pointer(p);
}

}  // namespace

const std::vector<KeySpec>& ConfigKeys() {
  static const std::vector<KeySpec> kKeys = [] {
    std::vector<KeySpec> out;
    for (const Binding& b : Bindings()) out.push_back(b.spec);
    return out;
  }();
  return kKeys;
}

const KeySpec* FindKey(const std::string& path) {
  const Binding* b = FindBinding(path);
  return b ? &b->spec : nullptr;
}

std::string NearestKey(const std::string& path) {
  // Candidates: every key and every section ("schedule", "schedule.newbob").
  std::vector<std::string> candidates;
  for (const Binding& b : Bindings()) {
    candidates.push_back(b.spec.path);
    for (size_t dot = b.spec.path.find('.'); dot != std::string::npos;
         dot = b.spec.path.find('.', dot + 1)) {
      candidates.push_back(b.spec.path.substr(0, dot));
    }
  }
  std::string best;
  size_t best_score = std::numeric_limits<size_t>::max();
  for (const std::string& c : candidates) {
    size_t score = EditDistance(path, c);
    // "lr" alone should find "schedule.lr": compare last components too.
    score = std::min(score, EditDistance(LastComponent(path), LastComponent(c)) + 1);
    if (score < best_score) {
      best_score = score;
      best = c;
    }
  }
  return best;
}

RunConfig ParseConfigYaml(const std::string& text, const std::string& source,
                          const RunConfig& base) {
  return ReadingYaml(source, [&] {
    const YAML::Node root = LoadYamlStrict(text, source);
    RunConfig config = base;
    if (root.IsNull()) return config;  // an empty file: all defaults
    MAVG_CHECK(root.IsMap(), "{}: expected a mapping of config keys at the top level", source);
    std::vector<std::string> problems;
    Walk(root, "", config, problems);
    ThrowProblems(source, problems);
    return config;
  });
}

RunConfig LoadConfigFile(const std::string& path) {
  MAVG_CHECK(PathExists(path), "{}: config file not found", path);
  MAVG_CHECK(!IsDirectory(path), "{}: is a directory, expected a YAML config file", path);
  return ParseConfigYaml(ReadFile(path), path);
}

nlohmann::json KeyJson(const RunConfig& config, const std::string& path) {
  const Binding* b = FindBinding(path);
  MAVG_CHECK(b != nullptr, "{}", UnknownKeyMessage(path));
  return FieldJson(config, *b);
}

void SetKey(RunConfig& config, const std::string& path, const std::string& value) {
  const Binding* b = FindBinding(path);
  if (b == nullptr) {
    if (IsSection(path)) throw Error(fmt::format("'{}' is a section, not a key", path));
    throw Error(UnknownKeyMessage(path));
  }
  if (std::string err = Assign(config, *b, value); !err.empty()) throw Error(err);
}

std::string QuotedValueProblem(const std::string& path, const YAML::Node& value) {
  const Binding* b = FindBinding(path);
  // yaml-cpp tags a quoted scalar "!" (a plain one "?").
  if (b == nullptr || b->spec.type == ValueType::kString || !value.IsScalar() ||
      value.Tag() != "!") {
    return "";
  }
  return fmt::format(
      "key '{}' expects {} {}, got the quoted string '{}' (quotes make it text: "
      "write it without them)",
      path, b->spec.type == ValueType::kInt ? "an" : "a", TypeName(b->spec.type), value.Scalar());
}

void ApplyOverride(RunConfig& config, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  MAVG_CHECK(eq != std::string::npos && eq > 0, "--set '{}': expected key=value", assignment);
  const std::string key = Trim(assignment.substr(0, eq));
  std::string value = assignment.substr(eq + 1);
  // Accept YAML-quoted strings: --set data.train="'a b'" (but not a quoted number).
  try {
    YAML::Node node = YAML::Load(value);
    if (node.IsScalar()) {
      const std::string quoted = QuotedValueProblem(key, node);
      if (!quoted.empty()) throw Error(fmt::format("--set {}: {}", assignment, quoted));
      value = node.Scalar();
    }
  } catch (const YAML::Exception&) {
  }
  try {
    SetKey(config, key, value);
  } catch (const Error& e) {
    throw Error(fmt::format("--set {}: {}", assignment, e.what()));
  }
}

namespace {

// Whether `text` names the config key `key` as a whole dotted path (schedule.lr, not
// schedule.lr_x or x.schedule.lr).
bool NamesKey(const std::string& text, const std::string& key) {
  const auto part_of_key = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  };
  for (size_t pos = text.find(key); pos != std::string::npos; pos = text.find(key, pos + 1)) {
    const size_t end = pos + key.size();
    if ((pos == 0 || !part_of_key(text[pos - 1])) &&
        (end == text.size() || !part_of_key(text[end]) ||
         (text[end] == '.' && (end + 1 == text.size() || !part_of_key(text[end + 1]))))) {
      return true;
    }
  }
  return false;
}

// Throws the problems, each against where its value came from: the --set assignments whose
// keys it names, else `source`. One origin: "<origin>: <problem>" or "<origin>: N problems:
// a; b"; several: "N problems: <origin>: a; <origin>: b".
void ThrowAttributed(const std::string& source, const std::vector<std::string>& sets,
                     const std::vector<std::string>& problems) {
  if (problems.empty()) return;
  std::vector<std::pair<std::string, std::string>> attributed;  // (origin, problem)
  for (const std::string& p : problems) {
    std::string origin;
    for (const std::string& s : sets) {
      const std::string key = Trim(s.substr(0, s.find('=')));
      if (!key.empty() && NamesKey(p, key)) origin += (origin.empty() ? "--set " : ", --set ") + s;
    }
    attributed.emplace_back(origin.empty() ? source : origin, p);
  }
  const bool one_origin = std::all_of(attributed.begin(), attributed.end(), [&](const auto& a) {
    return a.first == attributed[0].first;
  });
  if (one_origin) ThrowProblems(attributed[0].first, problems);
  std::string joined;
  for (size_t i = 0; i < attributed.size(); ++i) {
    joined += fmt::format("{}{}: {}", i ? "; " : "", attributed[i].first, attributed[i].second);
  }
  throw Error(fmt::format("{} problems: {}", attributed.size(), joined));
}

}  // namespace

void Validate(const RunConfig& config_in, const std::string& source,
              const std::vector<std::string>& sets) {
  RunConfig config = config_in;  // fields are reached through non-const accessors
  std::vector<std::string> problems;
  for (const Binding& b : Bindings()) {
    const KeySpec& s = b.spec;
    // A choice holds one of its enum's values by type: read through Assign, which refuses any
    // other text.
    const nlohmann::json v = FieldJson(config, b);
    if (v.is_number()) {
      const double x = v.get<double>();
      if (s.has_min && (x < s.min || (s.min_exclusive && x == s.min))) {
        problems.push_back(fmt::format("{}: {} is out of range (must be {} {})", s.path,
                                       FieldText(v),
                                       s.min_exclusive ? ">" : ">=", Bound(s, s.min)));
      } else if (s.has_max && x > s.max) {
        problems.push_back(fmt::format("{}: {} is out of range (must be <= {})", s.path,
                                       FieldText(v), Bound(s, s.max)));
      }
    }
  }
  if (config.data.train.empty()) problems.push_back("data.train: required (a data dir)");
  if (config.data.dev.empty()) problems.push_back("data.dev: required (a data dir)");
  if (config.data.cmvn_norm_vars && config.data.cmvn != Cmvn::kSpeaker) {
    problems.push_back(fmt::format(
        "data.cmvn_norm_vars: applies to speaker CMVN only (data.cmvn is {})", config.data.cmvn));
  }
  if (config.data.randomizer_size < config.optimizer.minibatch) {
    problems.push_back(
        fmt::format("data.randomizer_size: {} is smaller than optimizer.minibatch {}",
                    config.data.randomizer_size, config.optimizer.minibatch));
  }
  if (config.parallel.average_frames > 0 &&
      config.parallel.average_frames < config.optimizer.minibatch) {
    problems.push_back(fmt::format(
        "parallel.average_frames: {} is smaller than optimizer.minibatch {} (workers average at "
        "most once per minibatch)",
        config.parallel.average_frames, config.optimizer.minibatch));
  }
  // Weight matrices are indexed with 32-bit dimensions by the BLAS libraries: each must have
  // fewer than 2^31 elements (checked in 64 bits; the input layer's size depends on the data
  // and is checked when the network is built).
  const ModelConfig& mc = config.model;
  if (mc.hidden_layers >= 2 && mc.hidden_dim > 0 && mc.hidden_dim > INT32_MAX / mc.hidden_dim) {
    problems.push_back(fmt::format(
        "model.hidden_dim: {} makes {} x {} hidden weight matrices ({} elements; at most 2^31 - 1)",
        mc.hidden_dim, mc.hidden_dim, mc.hidden_dim,
        static_cast<double>(mc.hidden_dim) * static_cast<double>(mc.hidden_dim)));
  } else if (mc.hidden_layers >= 1 && mc.num_outputs > 0 && mc.hidden_dim > 0 &&
             mc.num_outputs > INT32_MAX / mc.hidden_dim) {
    problems.push_back(fmt::format(
        "model.hidden_dim: {} with model.num_outputs {} makes a {} x {} output layer (at most "
        "2^31 - 1 elements)",
        mc.hidden_dim, mc.num_outputs, mc.num_outputs, mc.hidden_dim));
  }
  const ParallelConfig& par = config.parallel;
  CheckAveraging(config, problems);  // parallel.algorithm, parallel.bmuf.*
  CheckCombine(config, problems);    // parallel.combine.* (combine_config.cpp)
  CheckOuter(config, problems);      // parallel.outer.* (outer_config.cpp)
  CheckCompress(config, problems);   // parallel.compress.* (compress_config.cpp)
  CheckStream(config, problems);     // parallel.stream.* (stream_config.cpp)
  if (par.comm == CommChoice::kNccl) {
    if (config.device != Device::kCuda || par.mode != ParallelMode::kMpi) {
      problems.push_back(fmt::format(
          "parallel.comm: nccl sums GPU memory between MPI ranks; it needs device: cuda and "
          "parallel.mode: mpi (have device: {}, parallel.mode: {})",
          config.device, par.mode));
    }
    if (par.deterministic) {
      problems.push_back(
          "parallel.comm: nccl does not sum in rank order; parallel.deterministic needs "
          "parallel.comm: mpi");
    }
  }
  if (config.device_options.tf32 && config.device != Device::kCuda) {
    problems.push_back("device_options.tf32: only applies to device: cuda");
  }
  const bool two_level = par.group_size > 0 || par.average_every_global > 0;
  if (two_level) {
    if (par.group_size < 1 || par.average_every_global < 1) {
      problems.push_back(
          "parallel.group_size and parallel.average_every_global: two-level averaging needs "
          "both (or neither)");
    } else {
      if (par.workers % par.group_size != 0) {
        problems.push_back(
            fmt::format("parallel.group_size: {} does not divide parallel.workers {}",
                        par.group_size, par.workers));
      }
      if (par.average_frames > 0) {
        problems.push_back(
            "parallel.average_every_global: two-level averaging counts minibatches; set "
            "parallel.average_every, not parallel.average_frames");
      } else if (par.average_every_global % par.average_every != 0) {
        problems.push_back(fmt::format(
            "parallel.average_every_global: {} is not a multiple of parallel.average_every {}",
            par.average_every_global, par.average_every));
      }
    }
    if (par.overlap) {
      problems.push_back(
          "parallel.overlap: not available with two-level averaging (parallel.group_size)");
    }
  }
  if (par.average_momentum && par.optimizer_state != OptimizerStatePolicy::kKeep) {
    problems.push_back(fmt::format(
        "parallel.average_momentum: true is the older spelling of parallel.optimizer_state: "
        "average, and parallel.optimizer_state is {} (set one of them)",
        par.optimizer_state));
  }
  const bool average_state =
      par.average_momentum || par.optimizer_state == OptimizerStatePolicy::kAverage;
  if ((average_state || par.optimizer_state == OptimizerStatePolicy::kReset) &&
      config.optimizer.type == OptimizerType::kSgd && config.optimizer.momentum == 0.0) {
    problems.push_back(fmt::format(
        "{}: optimizer.type sgd with optimizer.momentum 0 keeps no state to {}",
        par.average_momentum ? "parallel.average_momentum: true"
                             : fmt::format("parallel.optimizer_state: {}", par.optimizer_state),
        average_state ? "average" : "reset"));
  }
  if (par.overlap && average_state) {
    problems.push_back(
        "parallel.overlap: not available with parallel.optimizer_state average (the overlapped "
        "mean carries the parameters only)");
  }
  if (config.optimizer.sgd_max_change) {
    if (config.optimizer.type != OptimizerType::kSgd) {
      problems.push_back(
          "optimizer.sgd_max_change: true needs optimizer.type sgd (ngsgd has its "
          "own max-change: optimizer.max_change_per_sample)");
    } else if (config.optimizer.momentum != 0.0) {
      problems.push_back(
          fmt::format("optimizer.sgd_max_change: true needs optimizer.momentum 0, not {}",
                      config.optimizer.momentum));
    } else if (config.optimizer.max_change_per_sample <= 0.0) {
      problems.push_back(
          "optimizer.sgd_max_change: true needs optimizer.max_change_per_sample > 0");
    }
  }
  if (config.optimizer.type == OptimizerType::kAdam) {
    if (config.optimizer.momentum != 0.0) {
      problems.push_back(fmt::format(
          "optimizer.momentum: {} but optimizer.type adam has its own (optimizer.adam.beta1; set "
          "it to 0)",
          config.optimizer.momentum));
    }
    if (config.optimizer.l2 != 0.0) {
      problems.push_back(fmt::format(
          "optimizer.l2: {} but optimizer.type adam decays weights by optimizer.adam.weight_decay "
          "(set it to 0)",
          config.optimizer.l2));
    }
    // (the lr a worker steps with: x N under the linear scaling)
    const double lr = config.schedule.lr * (config.parallel.lr_scaling == LrScaling::kLinear
                                                ? static_cast<double>(config.parallel.workers)
                                                : 1.0);
    if (config.optimizer.adam.weight_decay * lr >= 1.0) {
      problems.push_back(fmt::format(
          "optimizer.adam.weight_decay: {} x the workers' lr {} is at least 1: every step would "
          "zero or flip the weights",
          config.optimizer.adam.weight_decay, lr));
    }
  }
  if (config.optimizer.type == OptimizerType::kNgsgd) {
    if (config.optimizer.momentum != 0.0) {
      problems.push_back(fmt::format(
          "optimizer.momentum: {} but optimizer.type ngsgd takes no momentum (set it to 0)",
          config.optimizer.momentum));
    }
    if (config.optimizer.l2 != 0.0) {
      problems.push_back(
          fmt::format("optimizer.l2: {} but optimizer.type ngsgd takes no L2 penalty (set it to 0)",
                      config.optimizer.l2));
    }
    if (config.parallel.average_momentum ||
        config.parallel.optimizer_state == OptimizerStatePolicy::kAverage) {
      problems.push_back(fmt::format(
          "{} is only for optimizer.type sgd or adam (each NG-SGD worker's statistics are a "
          "low-rank basis of its own; their mean is no Fisher estimate): keep or reset them",
          config.parallel.average_momentum ? "parallel.average_momentum: true"
                                           : "parallel.optimizer_state: average"));
    }
  }
  if (config.model.init == ModelInit::kRbm) {
    if (config.model.activation != Activation::kSigmoid) {
      problems.push_back(
          fmt::format("model.activation: {} but model.init rbm needs sigmoid (RBM hidden units are "
                      "sigmoid)",
                      config.model.activation));
    }
    if (config.model.hidden_layers < 1) {
      problems.push_back("model.hidden_layers: 0 but model.init rbm needs at least one");
    }
    if (config.pretrain.rbm.momentum > config.pretrain.rbm.momentum_max) {
      problems.push_back(
          fmt::format("pretrain.rbm.momentum: {} exceeds pretrain.rbm.momentum_max {}",
                      config.pretrain.rbm.momentum, config.pretrain.rbm.momentum_max));
    }
  }
  if (config.schedule.type == ScheduleType::kNewbob &&
      config.schedule.newbob.min_epochs > config.schedule.epochs) {
    problems.push_back(fmt::format("schedule.newbob.min_epochs: {} exceeds schedule.epochs {}",
                                   config.schedule.newbob.min_epochs, config.schedule.epochs));
  }
  ThrowAttributed(source, sets, problems);
}

nlohmann::json ToJson(const RunConfig& config_in) {
  RunConfig config = config_in;
  nlohmann::json out = nlohmann::json::object();
  for (const Binding& b : Bindings()) out[Pointer(b.spec.path)] = FieldJson(config, b);
  return out;
}

RunConfig ConfigFromJson(const nlohmann::json& json, const std::string& source) {
  RunConfig config;
  // CanonicalJson leaves a key out at the value runs had before it existed (OmittedAt): a
  // missing key is that value, e.g. the nnet1 scheme, not auto, which would pick He or Glorot
  // for relu and tanh.
  for (const Binding& b : Bindings()) {
    if (b.omitted_at) {
      const nlohmann::json& v = *b.omitted_at;
      MAVG_CHECK(Assign(config, b, v.is_string() ? v.get<std::string>() : DumpJson(v)).empty(),
                 "{}: the omitted value of {} does not parse", source, b.spec.path);
    }
  }
  for (const Binding& b : Bindings()) {
    std::string p = "/" + b.spec.path;
    std::replace(p.begin(), p.end(), '.', '/');
    const nlohmann::json::json_pointer ptr(p);
    if (!json.contains(ptr)) continue;
    const nlohmann::json& v = json[ptr];
    if (std::string err = Assign(config, b, v.is_string() ? v.get<std::string>() : DumpJson(v));
        !err.empty()) {
      throw Error(fmt::format("{}: {}", source, err));
    }
  }
  return config;
}

namespace {

// Whether the key enters the identity of `config` (KeyBuilder's rules, declared with each key).
bool InIdentity(const Binding& b, const RunConfig& config) {
  if (!b.spec.identity) return false;
  if (b.used && !b.used(config)) return false;
  return !(b.omitted_at && FieldJson(config, b) == *b.omitted_at);
}

// Sorted JSON of the identity keys' values; with `one_worker_free`, one worker's runs also leave
// out the keys that change nothing for one worker.
std::string IdentityJson(const RunConfig& config_in, bool one_worker_free) {
  RunConfig config = config_in;
  // auto and the scheme it stands for are one run.
  config.model.init_scheme = ResolvedInitScheme(config.model);
  const bool one_worker = one_worker_free && config.parallel.workers == 1;
  nlohmann::json out = nlohmann::json::object();
  for (const Binding& b : Bindings()) {
    if (one_worker && b.one_worker_free) continue;
    if (InIdentity(b, config)) out[Pointer(b.spec.path)] = FieldJson(config, b);
  }
  return DumpJson(out);  // nlohmann::json objects keep keys sorted
}

}  // namespace

InitScheme ResolvedInitScheme(const ModelConfig& model) {
  if (model.init_scheme != InitScheme::kAuto) return model.init_scheme;
  if (model.activation == Activation::kRelu) return InitScheme::kHe;
  if (model.activation == Activation::kTanh) return InitScheme::kGlorot;
  return InitScheme::kNnet1;
}

std::string CanonicalJson(const RunConfig& config) { return IdentityJson(config, false); }

std::string TrainingKey(const RunConfig& config) { return IdentityJson(config, true); }

IdentitySummary SummarizeIdentity(const RunConfig& config_in) {
  RunConfig config = config_in;
  config.model.init_scheme = ResolvedInitScheme(config.model);
  IdentitySummary out;
  for (const Binding& b : Bindings()) {
    if (InIdentity(b, config)) {
      out.in.push_back(b.spec.path);
    } else {
      out.left_out.emplace_back(b.spec.path, b.spec.identity_rule);
    }
  }
  return out;
}

std::string RunId(const RunConfig& config) {
  return Sha256Hex(CanonicalJson(config)).substr(0, 16);
}

ResolvedRun ResolveRun(RunConfig config, const std::string& source,
                       const std::vector<std::string>& sets) {
  Validate(config, source, sets);
  std::string id = RunId(config);
  return ResolvedRun{std::move(config), std::move(id)};
}

std::string ToYaml(const RunConfig& config_in) {
  RunConfig config = config_in;
  // Nested in the schema's order (ordered_json keeps insertion order), then emitted as YAML.
  nlohmann::ordered_json tree = nlohmann::ordered_json::object();
  for (const Binding& b : Bindings()) {
    std::string p = "/" + b.spec.path;
    std::replace(p.begin(), p.end(), '.', '/');
    tree[nlohmann::ordered_json::json_pointer(p)] = FieldText(FieldJson(config, b));
  }
  YAML::Emitter emitter;
  std::function<void(const nlohmann::ordered_json&)> emit = [&](const nlohmann::ordered_json& n) {
    if (!n.is_object()) {
      emitter << n.get<std::string>();
      return;
    }
    emitter << YAML::BeginMap;
    for (const auto& [key, value] : n.items()) {
      emitter << YAML::Key << key << YAML::Value;
      emit(value);
    }
    emitter << YAML::EndMap;
  };
  emit(tree);
  return std::string(emitter.c_str()) + "\n";
}

std::string ConfigReferenceMarkdown() {
  RunConfig defaults;
  std::string out = "| key | type | default | run id | meaning |\n|---|---|---|---|---|\n";
  for (const Binding& b : Bindings()) {
    const KeySpec& s = b.spec;
    std::string type = TypeName(s.type);
    if (!s.choices.empty()) {
      type.clear();
      for (size_t i = 0; i < s.choices.size(); ++i) type += (i ? " \\| " : "") + s.choices[i];
    } else if (s.has_min || s.has_max) {
      if (s.has_min) type += fmt::format(", {} {}", s.min_exclusive ? ">" : ">=", Bound(s, s.min));
      if (s.has_max) type += fmt::format(", <= {}", Bound(s, s.max));
    }
    std::string def = FieldText(FieldJson(defaults, b));
    if (def.empty()) def = "(empty)";
    out +=
        fmt::format("| `{}` | {} | `{}` | {} | {} |\n", s.path, type, def, s.identity_rule, s.doc);
  }
  return out;
}

namespace schema_keys {

const char* TypeName(ValueType t) {
  switch (t) {
    case ValueType::kInt:
      return "integer";
    case ValueType::kFloat:
      return "number";
    case ValueType::kString:
      return "string";
    case ValueType::kBool:
      return "boolean";
  }
  return "?";
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace schema_keys

}  // namespace mavg
