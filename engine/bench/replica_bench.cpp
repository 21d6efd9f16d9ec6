#include "engine/bench/replica_bench.h"

#include "engine/bench/train_bench.h"
#include "engine/core/logging.h"
#include "engine/core/timer.h"
#include "engine/optim/factory.h"
#include "engine/train/step.h"

namespace mavg {
namespace {

// One worker: its parameters and optimizer state.
struct Replica {
  Matrix params;
  std::unique_ptr<Optimizer> optimizer;
};

std::vector<Replica> MakeReplicas(BenchSetup& s, const RunConfig& config, int n) {
  std::vector<Replica> out;
  for (int i = 0; i < n; ++i) {
    Replica r{Matrix(*s.backend, 1, s.net->NumParams()),
              CreateOptimizer(*s.backend, config.optimizer)};
    s.backend->Copy(s.net->Params(), r.params);
    r.optimizer->Prepare(*s.net);
    out.push_back(std::move(r));
  }
  return out;
}

// K steps of every replica in turn, then their mean; returns the seconds.
double Block(BenchSetup& s, std::vector<Replica>& replicas, int every, float lr) {
  Timer t;
  for (Replica& r : replicas) {
    ParamsBinding bind(*s.net, r.params);
    for (int k = 0; k < every; ++k) {
      TrainStep(*s.net, *r.optimizer, s.x, s.labels.Data(), lr, s.stats.Data());
    }
  }
  if (replicas.size() > 1) {
    std::vector<MatrixView> views;
    for (Replica& r : replicas) views.push_back(r.params);
    s.backend->MeanOfReplicas(views);
  }
  s.backend->Synchronize();
  return t.Seconds();
}

}  // namespace

nlohmann::json BenchReplicas(const RunConfig& config, const ReplicaBenchOptions& o) {
  MAVG_CHECK(o.workers >= 1 && o.every >= 1 && o.repeats >= 1,
             "bench replicas: --workers, --every and --repeats must be positive");
  BenchSetup s = MakeBenchSetup(config, o.raw_dim);
  std::vector<Replica> one = MakeReplicas(s, config, 1);
  std::vector<Replica> many = MakeReplicas(s, config, o.workers);
  const float lr = 1e-4f;
  spdlog::info("[bench] {} replicas of {} parameters on {} vs one worker, averaging every {}",
               o.workers, s.net->NumParams(), s.backend->Describe(), o.every);
  Block(s, one, 1, lr);  // warm-up: workspaces, caches, cuBLAS heuristics
  Block(s, many, 1, lr);
  std::vector<double> one_s, many_s;
  for (int i = 0; i < o.repeats; ++i) {  // alternating, so drift affects both alike
    one_s.push_back(Block(s, one, o.every, lr));
    many_s.push_back(Block(s, many, o.every, lr));
  }
  const double frames_one = static_cast<double>(o.every) * s.minibatch;
  const double frames_many = frames_one * o.workers;
  const double per_frame_one = Median(one_s) / frames_one;
  const double per_frame_many = Median(many_s) / frames_many;
  const nlohmann::json r = {
      {"device", s.backend->Describe()},
      {"blas_kernels", s.backend->Kernels()},
      {"num_params", s.net->NumParams()},
      {"minibatch", s.minibatch},
      {"optimizer", ToString(config.optimizer.type)},
      {"workers", o.workers},
      {"average_every", o.every},
      {"repeats", o.repeats},
      {"one_worker_block_s", one_s},
      {"replicas_block_s", many_s},
      {"one_worker_frames_per_s", 1.0 / per_frame_one},
      {"replicas_frames_per_s", 1.0 / per_frame_many},
      {"per_frame_ratio", per_frame_many / per_frame_one},
  };
  spdlog::info("[bench] per frame: {} replicas take {:.3f}x one worker ({:.0f} vs {:.0f} frames/s)",
               o.workers, per_frame_many / per_frame_one, 1.0 / per_frame_many,
               1.0 / per_frame_one);
  return r;
}

nlohmann::json BenchAverage(const RunConfig& config, const ReplicaBenchOptions& o) {
  BenchSetup s = MakeBenchSetup(config, o.raw_dim);
  Backend& b = *s.backend;
  const int64_t p = s.net->NumParams();
  std::vector<Matrix> replicas;
  for (int i = 0; i < std::max(o.workers, 2); ++i) {
    replicas.emplace_back(b, 1, p);
    b.Copy(s.net->Params(), replicas.back());
  }
  HostStaging pinned(b);
  float* host = pinned.Floats(static_cast<size_t>(p));
  std::vector<float> pageable(static_cast<size_t>(p));
  auto mean_of = [&](int n) {
    std::vector<MatrixView> v;
    for (int i = 0; i < n; ++i) v.push_back(replicas[static_cast<size_t>(i)]);
    b.MeanOfReplicas(v);
    b.Synchronize();
  };
  auto stage = [&](float* buffer) {  // what RankGroup adds around the MPI all-reduce
    MatrixView v = replicas[0];
    b.CopyToHost(v, buffer);
    b.CopyFromHost(buffer, v);
    b.Axpby(0.5f, v, 0.0f, v);
    b.Synchronize();
  };
  stage(host);
  mean_of(2);
  std::vector<double> pinned_s, pageable_s, mean2_s, mean_n_s;
  for (int i = 0; i < o.repeats; ++i) {
    Timer t;
    stage(host);
    pinned_s.push_back(t.Seconds());
    t.Reset();
    stage(pageable.data());
    pageable_s.push_back(t.Seconds());
    t.Reset();
    mean_of(2);
    mean2_s.push_back(t.Seconds());
    t.Reset();
    mean_of(o.workers);
    mean_n_s.push_back(t.Seconds());
  }
  const double gb = 4.0 * static_cast<double>(p) / 1e9;
  const nlohmann::json r = {
      {"device", b.Describe()},
      {"blas_kernels", b.Kernels()},
      {"num_params", p},
      {"repeats", o.repeats},
      {"host_staged_s", Median(pinned_s)},
      {"host_staged_pageable_s", Median(pageable_s)},
      {"host_staged_gb_per_s", 2.0 * gb / Median(pinned_s)},
      {"device_s", Median(mean2_s)},
      {"device_replicas", o.workers},
      {"device_n_s", Median(mean_n_s)},
      {"note",
       "host_staged: device -> host -> device copies and the 1/N scaling around an MPI sum "
       "(the sum itself excluded); device: on-device mean of 2 (device_n: of N) replicas"},
  };
  spdlog::info(
      "[bench] averaging {} parameters ({:.0f} MB): host staging {:.4f}s pinned ({:.4f}s "
      "pageable); on device, mean of 2 {:.4f}s, of {} {:.4f}s",
      p, gb * 1000, Median(pinned_s), Median(pageable_s), Median(mean2_s), o.workers,
      Median(mean_n_s));
  return r;
}

}  // namespace mavg
