#include "engine/pretrain/dbn.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "engine/core/blob_file.h"
#include "engine/core/error.h"
#include "engine/core/progress.h"
#include "engine/core/rng.h"
#include "engine/core/timer.h"
#include "engine/data/minibatch.h"
#include "engine/pretrain/rbm.h"
#include "engine/records/pretrain_record.h"

namespace mavg {
namespace {

constexpr char kDbnMagic[8] = {'M', 'A', 'V', 'G', 'D', 'B', 'N', '\0'};
constexpr uint32_t kDbnFormatVersion = 1;
constexpr int64_t kForwardChunk = 1024;  // frames per forward pass for the bias statistics

// Forwards `x` through the hidden probabilities of `stack`, using `acts` as workspaces;
// returns the top layer's output (x itself for an empty stack).
ConstMatrixView ForwardStack(const std::vector<Rbm>& stack, ConstMatrixView x,
                             std::vector<Matrix>& acts) {
  ConstMatrixView v = x;
  for (size_t k = 0; k < stack.size(); ++k) {
    MatrixView h = acts[k].View().RowRange(0, x.rows);
    stack[k].HiddenProbs(v, h);
    v = h;
  }
  return v;
}

// Mean of the top layer's activations over the frames of `utts` (in order).
std::vector<double> MeanActivations(Backend& backend, const Dataset& train,
                                    const std::vector<int>& utts, int context,
                                    const std::vector<Rbm>& stack, std::vector<Matrix>& acts) {
  MinibatchOptions mo;
  mo.minibatch = kForwardChunk;
  mo.context = context;
  mo.shuffle = false;
  MinibatchReader reader(train, utts, mo);
  const int dim = stack.back().Hidden();
  Matrix x(backend, kForwardChunk, reader.SplicedDim());
  Matrix sums(backend, 1, dim);
  std::vector<float> host_x, host_sums(static_cast<size_t>(dim));
  std::vector<int32_t> labels;
  std::vector<double> total(static_cast<size_t>(dim), 0.0);
  int64_t frames = 0;
  while (const int64_t n = reader.Next(host_x, labels)) {
    MatrixView xv = x.View().RowRange(0, n);
    backend.CopyFromHost(host_x.data(), xv);
    backend.SumRows(1.0f, ForwardStack(stack, xv, acts), 0.0f, sums);
    backend.CopyToHost(sums, host_sums.data());
    for (int j = 0; j < dim; ++j) total[j] += host_sums[j];
    frames += n;
  }
  MAVG_CHECK(frames > 0, "RBM pretraining: no training frames");
  for (double& t : total) t /= static_cast<double>(frames);
  return total;
}

}  // namespace

double DeadUnitFraction(Backend& backend, const Dataset& data, const std::vector<int>& utts,
                        int context, const std::vector<Rbm>& below, const Rbm& top) {
  MinibatchOptions mo;
  mo.minibatch = kForwardChunk;
  mo.context = context;
  mo.shuffle = false;
  MinibatchReader reader(data, utts, mo);
  std::vector<Matrix> acts;  // [k]: hidden probabilities of below[k]
  for (const Rbm& rbm : below) acts.emplace_back(backend, kForwardChunk, rbm.Hidden());
  const int dim = top.Hidden();
  Matrix x(backend, kForwardChunk, reader.SplicedDim());
  Matrix h(backend, kForwardChunk, dim);
  std::vector<float> host_x, host_h;
  std::vector<int32_t> labels;
  std::vector<double> sum(static_cast<size_t>(dim), 0.0), sum_sq(static_cast<size_t>(dim), 0.0);
  int64_t frames = 0;
  while (frames < kDeadUnitFrames) {
    const int64_t read = reader.Next(host_x, labels);
    if (read == 0) break;
    const int64_t n = std::min(read, kDeadUnitFrames - frames);
    MatrixView xv = x.View().RowRange(0, n);
    backend.CopyFromHost(host_x.data(), xv);
    MatrixView hv = h.View().RowRange(0, n);
    top.HiddenProbs(ForwardStack(below, xv, acts), hv);
    host_h.resize(static_cast<size_t>(n) * dim);
    backend.CopyToHost(hv, host_h.data());
    for (int64_t i = 0; i < n; ++i) {
      const float* row = host_h.data() + i * dim;
      for (int j = 0; j < dim; ++j) {
        sum[j] += row[j];
        sum_sq[j] += static_cast<double>(row[j]) * row[j];
      }
    }
    frames += n;
  }
  MAVG_CHECK(frames > 0, "RBM pretraining: no frames to measure dead units on");
  int dead = 0;
  for (int j = 0; j < dim; ++j) {
    const double mean = sum[j] / static_cast<double>(frames);
    const double var = std::max(0.0, sum_sq[j] / static_cast<double>(frames) - mean * mean);
    if (std::sqrt(var) < kDeadUnitStd) ++dead;
  }
  return static_cast<double>(dead) / static_cast<double>(dim);
}

int64_t MomentumStepPeriod(const RbmConfig& o, int64_t epoch_frames) {
  if (o.momentum_ramp_fraction <= 0.0) return o.momentum_step_period;
  const double period = std::round(o.momentum_ramp_fraction * static_cast<double>(epoch_frames) /
                                   static_cast<double>(o.momentum_steps));
  return std::max<int64_t>(1, static_cast<int64_t>(period));
}

double ScheduledMomentum(const RbmConfig& o, int64_t n) {
  if (n > o.momentum_steps) return o.momentum_max;
  return o.momentum + static_cast<double>(n) * (o.momentum_max - o.momentum) /
                          static_cast<double>(o.momentum_steps);
}

Dbn PretrainDbn(Backend& backend, const Dataset& train, const std::vector<int>& hidden_dims,
                const DbnOptions& options, const DbnEpochCallback& on_epoch) {
  const RbmConfig& o = options.rbm;
  MAVG_CHECK(!hidden_dims.empty(), "RBM pretraining needs at least one hidden layer");
  MAVG_CHECK(train.NumFrames() > 0, "RBM pretraining: {} has no frames", train.source);
  const uint64_t seed = static_cast<uint64_t>(o.seed);
  // One shuffled utterance list for every layer (pretrain_dbn.sh shuffles train.scp once).
  std::vector<int> order = AllUtterances(train);
  Rng(DeriveSeed(seed, {1})).Shuffle(order.data(), order.size());
  std::vector<int> bias_utts(
      order.begin(),
      order.begin() + std::min<int64_t>(o.vis_bias_utts, static_cast<int64_t>(order.size())));

  const int input_dim = train.dim * (2 * options.context + 1);
  const int64_t mb = o.minibatch;
  const int64_t step_period = MomentumStepPeriod(o, train.NumFrames());
  if (o.momentum_ramp_fraction > 0.0) {
    spdlog::info(
        "[pretrain] momentum ramp over {} of an epoch's {} frames: {} steps of {} frames (Kaldi's "
        "300 h recipe: 0.185)",
        o.momentum_ramp_fraction, train.NumFrames(), o.momentum_steps, step_period);
  }
  std::vector<Rbm> stack;
  std::vector<Matrix> acts;  // [k]: hidden probabilities of layer k, [max(mb, chunk) x hidden]
  Matrix x(backend, mb, input_dim);
  std::vector<float> host_x;
  std::vector<int32_t> labels;

  for (size_t layer = 0; layer < hidden_dims.size(); ++layer) {
    const bool gaussian = layer == 0;
    const int visible = gaussian ? input_dim : hidden_dims[layer - 1];
    Rbm rbm(backend, visible, hidden_dims[layer],
            gaussian ? RbmUnits::kGaussian : RbmUnits::kBernoulli);
    rbm.InitRandom(static_cast<float>(o.param_stddev), DeriveSeed(seed, {2, layer}));
    if (!gaussian) {
      rbm.SetVisibleBiasFromMeans(
          MeanActivations(backend, train, bias_utts, options.context, stack, acts));
    }
    const double lr0 = gaussian ? o.lr_gaussian : o.lr;
    const int64_t epochs = gaussian ? o.epochs_gaussian : o.epochs;
    spdlog::info("[pretrain] layer {} ({}-Bernoulli {} -> {}): lr {}, {} epoch(s)", layer + 1,
                 gaussian ? "Gaussian" : "Bernoulli", visible, hidden_dims[layer], lr0, epochs);

    const uint64_t sample_seed = DeriveSeed(seed, {3, layer});
    uint64_t offset = 0;      // draws used from the sampling stream
    int64_t frames_done = 0;  // frames of this layer so far (drives the momentum schedule)
    int64_t step_prev = -1;
    double momentum = o.momentum;
    for (int64_t epoch = 1; epoch <= epochs; ++epoch) {
      Timer timer;
      MinibatchOptions mo;
      mo.minibatch = mb;
      mo.randomizer_size = options.randomizer_size;
      mo.context = options.context;
      mo.seed = DeriveSeed(seed, {4, layer, static_cast<uint64_t>(epoch)});
      MinibatchReader reader(train, order, mo);
      const int64_t epoch_frames = train.NumFrames();
      Progress bar(fmt::format("[pretrain] layer {} epoch {}", layer + 1, epoch), epoch_frames,
                   options.progress);
      // The statistics are read from the device at the ends of the first and the last tenth
      // (for the first/last-tenth errors) and of the epoch, not after every minibatch.
      double err = 0.0, err_first = 0.0, err_last = 0.0;
      int64_t frames = 0, frames_first = 0, frames_last = 0, guards = 0;
      const int64_t tenth = epoch_frames / 10;
      int phase = 0;                   // 0: first tenth, 1: middle, 2: last tenth
      auto take = [&](double* into) {  // into: the tenth being closed, or null (the middle)
        const Cd1Stats st = rbm.TakeStats();
        if (st.non_finite > 0 || !std::isfinite(st.recon_sq_error)) {
          MAVG_FAIL("RBM pretraining diverged: non-finite reconstruction in layer {} epoch {}",
                    layer + 1, epoch);
        }
        if (st.guards > 0 && guards < 5) {
          spdlog::warn(
              "[pretrain] layer {}: {} explosion-guard trigger(s) (Kaldi's): the last with "
              "reconstruction std {:.3g} > 2 x data std {:.3g}; weights scaled by {:.3g} and the "
              "learning rate lowered by 10% each time",
              layer + 1, st.guards, st.guard_neg_std, st.guard_pos_std,
              st.guard_pos_std / st.guard_neg_std);
        }
        guards += st.guards;
        err += st.recon_sq_error;
        if (into != nullptr) *into += st.recon_sq_error;
      };
      while (const int64_t n = reader.Next(host_x, labels)) {
        if (phase == 0 && frames >= tenth) take(&err_first), phase = 1;
        if (phase == 1 && frames >= epoch_frames - tenth) take(nullptr), phase = 2;
        const int64_t step = frames_done / step_period;
        if (step != step_prev) {  // a new momentum step also restores a guard-lowered lr
          step_prev = step;
          momentum = ScheduledMomentum(o, step);
          rbm.SetLearningRate(static_cast<float>(lr0 * (1.0 - momentum)));
        }
        MatrixView xv = x.View().RowRange(0, n);
        backend.CopyFromHost(host_x.data(), xv);
        const ConstMatrixView v = ForwardStack(stack, xv, acts);
        const double m_update = o.momentum_bug ? o.momentum_max : momentum;
        rbm.Cd1(v, static_cast<float>(m_update), static_cast<float>(o.l2), sample_seed, offset);
        offset += static_cast<uint64_t>(n) * static_cast<uint64_t>(rbm.Hidden());
        if (phase == 0) frames_first += n;
        if (phase == 2) frames_last += n;
        frames += n;
        frames_done += n;
        bar.Update(frames);
        if (options.on_minibatch) options.on_minibatch();
      }
      take(phase == 2 ? &err_last : phase == 0 ? &err_first : nullptr);
      bar.Finish();
      const double per = static_cast<double>(visible);
      auto mse = [&](double e, int64_t f) {
        return f > 0 ? e / (static_cast<double>(f) * per) : 0.0;
      };
      PretrainEpoch record;
      record.layer = layer + 1;
      record.units = gaussian ? "gaussian-bernoulli" : "bernoulli-bernoulli";
      record.visible = visible;
      record.hidden = rbm.Hidden();
      record.epoch = epoch;
      record.frames = frames;
      record.recon_mse = mse(err, frames);
      record.recon_mse_first = mse(err_first, frames_first);
      record.recon_mse_last = mse(err_last, frames_last);
      record.lr = rbm.LearningRate();
      record.momentum = o.momentum_bug ? o.momentum_max : momentum;
      record.scheduled_momentum = momentum;
      record.guard_triggers = guards;
      record.dead_fraction = DeadUnitFraction(backend, train, order, options.context, stack, rbm);
      record.seconds = timer.Seconds();
      spdlog::info(
          "[pretrain] layer {} epoch {}: reconstruction MSE {:.5f} (first tenth {:.5f}, last "
          "{:.5f}), {} guard trigger(s), {:.1f}% dead units, {:.1f} s",
          layer + 1, epoch, *record.recon_mse, *record.recon_mse_first, *record.recon_mse_last,
          guards, 100 * *record.dead_fraction, *record.seconds);
      if (on_epoch) on_epoch(ToJson(record));
    }
    acts.emplace_back(backend, std::max(mb, kForwardChunk), rbm.Hidden());
    stack.push_back(std::move(rbm));
  }

  Dbn dbn;
  for (const Rbm& rbm : stack) {
    DbnLayer l;
    l.visible = rbm.Visible();
    l.hidden = rbm.Hidden();
    l.weights.resize(static_cast<size_t>(l.visible) * l.hidden);
    l.hidden_bias.resize(static_cast<size_t>(l.hidden));
    backend.CopyToHost(rbm.Weights(), l.weights.data());
    backend.CopyToHost(rbm.HiddenBias(), l.hidden_bias.data());
    dbn.layers.push_back(std::move(l));
  }
  return dbn;
}

void LoadDbnIntoNetwork(const Dbn& dbn, Network& network) {
  const NetworkSpec& spec = network.Spec();
  MAVG_CHECK(dbn.layers.size() == spec.hidden_dims.size(),
             "pretrained stack has {} layers but the network {} hidden layers", dbn.layers.size(),
             spec.hidden_dims.size());
  Backend& backend = network.GetBackend();
  for (size_t k = 0; k < dbn.layers.size(); ++k) {
    AffineLayer& a = network.Affine(static_cast<int>(k));
    const DbnLayer& l = dbn.layers[k];
    MAVG_CHECK(a.InputDim() == l.visible && a.OutputDim() == l.hidden,
               "pretrained layer {} is {} -> {} but the network's is {} -> {}", k + 1, l.visible,
               l.hidden, a.InputDim(), a.OutputDim());
    backend.CopyFromHost(l.weights.data(), a.Weights());
    backend.CopyFromHost(l.hidden_bias.data(), a.Bias());
  }
}

void SaveDbn(const std::string& path, const Dbn& dbn) {
  nlohmann::json header;
  header["layers"] = nlohmann::json::array();
  std::vector<float> data;
  for (const DbnLayer& l : dbn.layers) {
    header["layers"].push_back({{"visible", l.visible}, {"hidden", l.hidden}});
    data.insert(data.end(), l.weights.begin(), l.weights.end());
    data.insert(data.end(), l.hidden_bias.begin(), l.hidden_bias.end());
  }
  WriteBlobFile(path, kDbnMagic, kDbnFormatVersion, header, data);
}

Dbn LoadDbn(const std::string& path) {
  const BlobFile blob = ReadBlobFile(path, kDbnMagic, kDbnFormatVersion, "pretrained stack");
  Dbn dbn;
  size_t at = 0;
  try {
    for (const auto& l : blob.header.at("layers")) {
      DbnLayer layer;
      layer.visible = l.at("visible").get<int>();
      layer.hidden = l.at("hidden").get<int>();
      MAVG_CHECK(layer.visible > 0 && layer.hidden > 0, "{}: corrupt pretrained stack header",
                 path);
      const size_t w = static_cast<size_t>(layer.visible) * layer.hidden;
      MAVG_CHECK(at + w + layer.hidden <= blob.data.size(),
                 "{}: pretrained stack is shorter than its header says", path);
      layer.weights.assign(blob.data.begin() + at, blob.data.begin() + at + w);
      at += w;
      layer.hidden_bias.assign(blob.data.begin() + at, blob.data.begin() + at + layer.hidden);
      at += layer.hidden;
      dbn.layers.push_back(std::move(layer));
    }
  } catch (const nlohmann::json::exception& e) {
    MAVG_FAIL("{}: corrupt pretrained stack header: {}", path, e.what());
  }
  MAVG_CHECK(at == blob.data.size(), "{}: pretrained stack is longer than its header says", path);
  return dbn;
}

}  // namespace mavg
