#include "engine/bench/train_bench.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/backend/device_buffer.h"
#include "engine/config/schema.h"
#include "engine/core/logging.h"
#include "engine/core/rng.h"
#include "engine/core/timer.h"
#include "engine/nn/init.h"
#include "engine/optim/factory.h"
#include "engine/train/device_choice.h"
#include "engine/train/step.h"

namespace mavg {
namespace {

// The GEMMs of one training step, on buffers of their own: per affine layer the forward
// product, the input-gradient product (not for the first layer) and the weight gradient. The
// operands hold random values of a network's scale (inputs N(0, 1), weights N(0, 1 / in)): a
// recent GPU multiplies zeros faster than data (less switching power, higher clocks), which
// would make the reference rate one no training step can reach.
class GemmSequence {
 public:
  GemmSequence(Backend& backend, const Network& net, int64_t rows) : backend_(&backend) {
    for (int k = 0; k < net.NumAffine(); ++k) {
      const AffineLayer& layer = net.Affine(k);
      Shapes s;
      s.x = Matrix(backend, rows, layer.InputDim());
      s.w = Matrix(backend, layer.OutputDim(), layer.InputDim());
      s.y = Matrix(backend, rows, layer.OutputDim());
      s.dx = k > 0 ? Matrix(backend, rows, layer.InputDim()) : Matrix();
      s.dw = Matrix(backend, layer.OutputDim(), layer.InputDim());
      const uint64_t seed = 1000 + 3 * static_cast<uint64_t>(k);
      const auto w_std = static_cast<float>(1.0 / std::sqrt(static_cast<double>(layer.InputDim())));
      backend.RandomGaussian(seed, 0, 1.0f, s.x);
      backend.RandomGaussian(seed + 1, 0, w_std, s.w);
      backend.RandomGaussian(seed + 2, 0, w_std, s.dw);
      flops_ += 2.0 * rows * layer.InputDim() * layer.OutputDim() * (k > 0 ? 3 : 2);
      layers_.push_back(std::move(s));
    }
  }
  void Run() {
    for (Shapes& s : layers_) {
      backend_->Gemm(false, true, 1.0f, s.x, s.w, 0.0f, s.y);
      if (s.dx.Rows() > 0) backend_->Gemm(false, false, 1.0f, s.y, s.w, 0.0f, s.dx);
      backend_->Gemm(true, false, 1.0f, s.y, s.x, 1.0f, s.dw);
    }
    backend_->Synchronize();
  }
  double Flops() const { return flops_; }

 private:
  struct Shapes {
    Matrix x, w, y, dx, dw;
  };
  Backend* backend_;
  std::vector<Shapes> layers_;
  double flops_ = 0.0;
};

}  // namespace

BenchSetup MakeBenchSetup(const RunConfig& config, int raw_dim) {
  BenchSetup b;
  b.backend = CreateBackend(RunBackendOptions(config));
  NetworkSpec spec;
  spec.input_dim = raw_dim * static_cast<int>(2 * config.data.context + 1);
  MAVG_CHECK(config.model.num_outputs > 0, "bench: set model.num_outputs (e.g. 8806)");
  spec.output_dim = static_cast<int>(config.model.num_outputs);
  spec.hidden_dims.assign(config.model.hidden_layers, static_cast<int>(config.model.hidden_dim));
  spec.activation = HiddenLayerKind(config.model.activation);
  b.net = std::make_unique<Network>(*b.backend, spec);
  InitializeKaldiNnet1(*b.net, 1);
  b.minibatch = config.optimizer.minibatch;

  // Random inputs ~ N(0,1) (like CMVN-normalised features) and uniform labels.
  Rng rng(123);
  std::vector<float> host_x(static_cast<size_t>(b.minibatch * spec.input_dim));
  for (float& v : host_x) v = static_cast<float>(rng.Gaussian());
  std::vector<int32_t> host_labels(static_cast<size_t>(b.minibatch));
  for (int32_t& l : host_labels) l = static_cast<int32_t>(rng.Below(spec.output_dim));
  b.x = Matrix(*b.backend, b.minibatch, spec.input_dim);
  b.backend->CopyFromHost(host_x.data(), b.x);
  b.labels = DeviceBuffer<int32_t>(*b.backend, host_labels.size());
  b.labels.CopyFromHost(host_labels.data(), host_labels.size());
  b.stats = DeviceBuffer<double>(*b.backend, 3);
  const double zeros[3] = {0, 0, 0};
  b.stats.CopyFromHost(zeros, 3);
  return b;
}

nlohmann::json BenchTrainStep(const RunConfig& config, const TrainBenchOptions& options) {
  MAVG_CHECK(options.repeats >= 1 && options.warmup >= 0,
             "bench train: --repeats must be positive and --warmup not negative");
  BenchSetup setup = MakeBenchSetup(config, options.raw_dim);
  Backend* backend = setup.backend.get();
  const NetworkSpec& spec = setup.net->Spec();
  const int64_t mb = setup.minibatch;
  Matrix& x = setup.x;
  DeviceBuffer<int32_t>& labels = setup.labels;
  DeviceBuffer<double>& stats = setup.stats;

  // One arm per optimizer: its own network (the same initial parameters) and optimizer.
  struct Arm {
    std::string type;
    std::unique_ptr<Network> owned;
    Network* net = nullptr;
    std::unique_ptr<Optimizer> optimizer;
    std::vector<double> step_s;
  };
  std::vector<std::string> types = options.optimizers;
  if (types.empty()) types.emplace_back(ToString(config.optimizer.type));
  std::vector<Arm> arms(types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    Arm& a = arms[i];
    a.type = types[i];
    if (i == 0) {
      a.net = setup.net.get();
    } else {
      a.owned = std::make_unique<Network>(*backend, spec);
      a.owned->CopyParamsFrom(*setup.net);
      a.net = a.owned.get();
    }
    RunConfig arm = config;  // the arm's optimizer.type, read as the config reads it
    SetKey(arm, "optimizer.type", a.type);
    a.optimizer = CreateOptimizer(*backend, arm.optimizer);
    a.optimizer->Prepare(*a.net);
  }
  const float lr = static_cast<float>(1e-4);
  GemmSequence gemms(*backend, *setup.net, mb);

  spdlog::info("[bench] network {}-{}x{}({})-{}, {} parameters, minibatch {}, {}", spec.input_dim,
               spec.hidden_dims.size(), config.model.hidden_dim, config.model.activation,
               spec.output_dim, setup.net->NumParams(), mb, backend->Describe());
  for (int i = 0; i < options.warmup; ++i) {
    for (Arm& a : arms) TrainStep(*a.net, *a.optimizer, x, labels.Data(), lr, stats.Data());
    gemms.Run();
  }
  backend->Synchronize();
  std::vector<double> gemm_s;
  for (int i = 0; i < options.repeats; ++i) {
    for (Arm& a : arms) {
      Timer t;
      TrainStep(*a.net, *a.optimizer, x, labels.Data(), lr, stats.Data());
      backend->Synchronize();
      a.step_s.push_back(t.Seconds());
    }
    Timer t;
    gemms.Run();
    gemm_s.push_back(t.Seconds());
  }
  const double gemm = Median(gemm_s);
  const double gemm_mean = std::accumulate(gemm_s.begin(), gemm_s.end(), 0.0) / gemm_s.size();
  const double model_flops = 6.0 * static_cast<double>(setup.net->NumParams()) * mb;
  nlohmann::json arm_list = nlohmann::json::array();
  double first_mean = 0.0;
  for (size_t i = 0; i < arms.size(); ++i) {
    const Arm& a = arms[i];
    const double median = Median(a.step_s);
    // The mean counts steps with periodic extra work (NG-SGD's Fisher update every
    // update_period minibatches), which the median hides; use repeats divisible by it.
    const double mean = std::accumulate(a.step_s.begin(), a.step_s.end(), 0.0) / a.step_s.size();
    if (i == 0) first_mean = mean;
    arm_list.push_back({{"optimizer", a.type},
                        {"step_s_median", median},
                        {"step_s_mean", mean},
                        {"step_s", a.step_s},
                        {"frames_per_s", mb / median},
                        {"frames_per_s_mean", mb / mean},
                        {"fraction_of_sgemm", gemm / median},
                        {"fraction_of_sgemm_mean", gemm_mean / mean},
                        {"frames_per_s_mean_vs_first", first_mean / mean}});
    spdlog::info(
        "[bench] {:6} step {:.4f}s median, {:.4f}s mean of {}: {:.0f} frames/s (mean {:.0f}), "
        "{:.1f}% of the same GEMMs' SGEMM rate{}",
        a.type, median, mean, options.repeats, mb / median, mb / mean, 100.0 * gemm / median,
        i == 0 ? "" : fmt::format("; frames/s (means) {:.3f} x {}'s", first_mean / mean, types[0]));
  }
  spdlog::info("[bench] the same GEMMs alone {:.4f}s: SGEMM {:.1f} GFLOP/s", gemm,
               gemms.Flops() / gemm / 1e9);
  const nlohmann::json& first = arm_list[0];
  const double step = first["step_s_median"].get<double>();
  nlohmann::json r = {
      {"device", backend->Describe()},
      {"blas_kernels", backend->Kernels()},
      {"input_dim", spec.input_dim},
      {"hidden", spec.hidden_dims},
      {"output_dim", spec.output_dim},
      {"num_params", setup.net->NumParams()},
      {"minibatch", mb},
      {"optimizer", types[0]},
      {"repeats", options.repeats},
      {"warmup", options.warmup},
      {"step_s_median", step},
      {"step_s_mean", first["step_s_mean"]},
      {"step_s", first["step_s"]},
      {"frames_per_s", mb / step},
      {"model_gflops_per_s", model_flops / step / 1e9},
      {"gemm_flops_per_step", gemms.Flops()},
      {"executed_gemm_gflops_per_s", gemms.Flops() / step / 1e9},
      {"sgemm_gflops_per_s", gemms.Flops() / gemm / 1e9},
      {"gemm_s_median", gemm},
      {"fraction_of_sgemm", gemm / step},
      {"arms", arm_list},
  };
  return r;
}

}  // namespace mavg
