#include "engine/bench/train_bench.h"

#include <algorithm>
#include <numeric>

#include "engine/backend/device_buffer.h"
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
// product, the input-gradient product (not for the first layer) and the weight gradient.
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

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

BenchSetup MakeBenchSetup(const RunConfig& config, int raw_dim) {
  BenchSetup b;
  b.backend = CreateBackend(RunBackendOptions(config));
  NetworkSpec spec;
  spec.input_dim = raw_dim * static_cast<int>(2 * config.data.context + 1);
  MAVG_CHECK(config.model.num_outputs > 0, "bench: set model.num_outputs (e.g. 8806)");
  spec.output_dim = static_cast<int>(config.model.num_outputs);
  spec.hidden_dims.assign(config.model.hidden_layers, static_cast<int>(config.model.hidden_dim));
  spec.activation = ParseLayerKind(config.model.activation);
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
  BenchSetup setup = MakeBenchSetup(config, options.raw_dim);
  Backend* backend = setup.backend.get();
  Network& net = *setup.net;
  const NetworkSpec& spec = net.Spec();
  const int64_t mb = setup.minibatch;
  Matrix& x = setup.x;
  DeviceBuffer<int32_t>& labels = setup.labels;
  DeviceBuffer<double>& stats = setup.stats;

  std::unique_ptr<Optimizer> optimizer = CreateOptimizer(*backend, config.optimizer);
  optimizer->Prepare(net);
  Optimizer& sgd = *optimizer;
  const float lr = static_cast<float>(1e-4);
  GemmSequence gemms(*backend, net, mb);

  spdlog::info("[bench] network {}-{}x{}({})-{}, {} parameters, minibatch {}, {}", spec.input_dim,
               spec.hidden_dims.size(), config.model.hidden_dim, config.model.activation,
               spec.output_dim, net.NumParams(), mb, backend->Describe());
  for (int i = 0; i < options.warmup; ++i) {
    TrainStep(net, sgd, x, labels.Data(), lr, stats.Data());
    gemms.Run();
  }
  backend->Synchronize();
  std::vector<double> step_s, gemm_s;
  for (int i = 0; i < options.repeats; ++i) {
    Timer t;
    TrainStep(net, sgd, x, labels.Data(), lr, stats.Data());
    backend->Synchronize();
    step_s.push_back(t.Seconds());
    t.Reset();
    gemms.Run();
    gemm_s.push_back(t.Seconds());
  }
  const double step = Median(step_s);
  const double gemm = Median(gemm_s);
  const double model_flops = 6.0 * static_cast<double>(net.NumParams()) * mb;
  nlohmann::json r = {
      {"device", backend->Describe()},
      {"input_dim", spec.input_dim},
      {"hidden", spec.hidden_dims},
      {"output_dim", spec.output_dim},
      {"num_params", net.NumParams()},
      {"minibatch", mb},
      {"optimizer", config.optimizer.type},
      {"repeats", options.repeats},
      {"step_s_median", step},
      // The mean counts steps with periodic extra work (NG-SGD's Fisher update every
      // update_period minibatches), which the median hides; use repeats divisible by it.
      {"step_s_mean", std::accumulate(step_s.begin(), step_s.end(), 0.0) / step_s.size()},
      {"step_s", step_s},
      {"frames_per_s", mb / step},
      {"model_gflops_per_s", model_flops / step / 1e9},
      {"gemm_flops_per_step", gemms.Flops()},
      {"executed_gemm_gflops_per_s", gemms.Flops() / step / 1e9},
      {"sgemm_gflops_per_s", gemms.Flops() / gemm / 1e9},
      {"fraction_of_sgemm", gemm / step},
  };
  spdlog::info(
      "[bench] training step {:.3f}s median of {}: {:.0f} frames/s, {:.1f} GFLOP/s "
      "(6 x params x frames)",
      step, options.repeats, mb / step, model_flops / step / 1e9);
  spdlog::info(
      "[bench] same GEMMs alone {:.3f}s: SGEMM {:.1f} GFLOP/s; training step runs at "
      "{:.1f}% of the SGEMM rate",
      gemm, gemms.Flops() / gemm / 1e9, 100.0 * gemm / step);
  return r;
}

}  // namespace mavg
