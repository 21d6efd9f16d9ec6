// The CUDA backend's asynchronous paths on a device: NG-SGD's small steps of many preconditioners
// as one launch (more than a launch's NgsgdSmallBatch::kMaxTasks too), the layers' updates
// deferred to the end of the backward pass and batched against updates at once (bit for bit:
// the same kernels on the same data), a lane's double-buffered input (page-locked staging,
// copies queued while the device steps, events) reaching every step in order, and event times.
// The same logic runs on the host in tests/unit (testing::QueuedBackend); here the device's own
// streams, events and page-locked copies. Without a visible device each test skips.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/core/rng.h"
#include "engine/nn/init.h"
#include "engine/nn/network.h"
#include "engine/optim/ngsgd.h"
#include "engine/train/step.h"
#include "engine/train/step_lanes.h"
#include "tests/gpu/cuda_vs_cpu.h"

namespace mavg {
namespace {

using testing::ToHost;

class CudaAsync : public CudaVsCpu {};

std::vector<uint32_t> Bits(const std::vector<float>& v) {
  std::vector<uint32_t> bits(v.size());
  if (!v.empty()) std::memcpy(bits.data(), v.data(), v.size() * sizeof(float));
  return bits;
}

TEST_F(CudaAsync, ABatchOfSmallStepsIsEveryStepAloneBitForBit) {
  // 20 gamma steps, each of its own rows: more than one launch takes.
  const int tasks = NgsgdSmallBatch::kMaxTasks + 4, n = 50;
  std::vector<float> a(static_cast<size_t>(tasks) * n), b(a.size());
  Rng rng(4);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(1.0 + rng.Uniform());
    b[i] = static_cast<float>(0.5 + rng.Uniform());
  }
  DeviceBuffer<float> da(Gpu(), a.size()), db(Gpu(), b.size()), one(Gpu(), tasks),
      batched(Gpu(), tasks);
  da.CopyFromHost(a.data(), a.size());
  db.CopyFromHost(b.data(), b.size());
  std::vector<NgsgdSmallTask> all;
  for (int t = 0; t < tasks; ++t) {
    NgsgdSmallTask task;
    task.kind = NgsgdSmallKind::kGamma;
    task.rows = n;
    task.row_a = da.Data() + t * n;
    task.row_b = db.Data() + t * n;
    task.gamma = one.Data() + t;
    Gpu().RunNgsgdSmall(task);
    task.gamma = batched.Data() + t;
    all.push_back(task);
  }
  Gpu().RunNgsgdSmallBatch(all);
  const std::vector<float> g1 = one.ToHost(), g2 = batched.ToHost();
  EXPECT_EQ(Bits(g1), Bits(g2));
  for (int t = 0; t < tasks; ++t) {
    double sa = 0, sb = 0;
    for (int i = 0; i < n; ++i) sa += a[t * n + i], sb += b[t * n + i];
    EXPECT_NEAR(g2[t], std::sqrt(sa / sb), 1e-5 * std::sqrt(sa / sb)) << t;
  }
}

// NG-SGD on a network of nine affine layers (18 preconditioners: two launches a phase), its
// updates deferred and batched (the device's default) against updates at once.
TEST_F(CudaAsync, BatchedNgsgdUpdatesAreTheImmediateOnesBitForBit) {
  NetworkSpec spec;
  spec.input_dim = 20;
  spec.output_dim = 11;
  spec.hidden_dims = std::vector<int>(8, 24);
  spec.activation = LayerKind::kSigmoid;
  const testing::HostMat x = testing::RandomHost(64, 20, 21);
  std::vector<int32_t> labels(64);
  for (int i = 0; i < 64; ++i) labels[i] = (i * 7) % 11;
  auto run = [&](NgsgdBatching batching) {
    Backend& b = Gpu();
    Network net(b, spec);
    InitializeKaldiNnet1(net, 7);
    NgsgdOptions o;
    o.in.rank = 6;
    o.out.rank = 8;
    o.batching = batching;
    NgsgdOptimizer opt(b, o);
    opt.Prepare(net);
    Matrix xm = testing::ToDevice(b, x);
    DeviceBuffer<int32_t> l(b, labels.size());
    l.CopyFromHost(labels.data(), labels.size());
    DeviceBuffer<double> stats(b, 3);
    const double zeros[3] = {0, 0, 0};
    stats.CopyFromHost(zeros, 3);
    for (int step = 0; step < 14; ++step) TrainStep(net, opt, xm, l.Data(), 0.5f, stats.Data());
    std::vector<float> out = ToHost(b, net.Params()).v;
    for (MatrixView v : opt.State()) {
      const std::vector<float> s = ToHost(b, v).v;
      out.insert(out.end(), s.begin(), s.end());
    }
    return Bits(out);
  };
  EXPECT_EQ(run(NgsgdBatching::kAuto), run(NgsgdBatching::kNever));
}

TEST_F(CudaAsync, DoubleBufferedInputReachesEveryStepInOrder) {
  const int64_t rows = 512, cols = 440, steps = 40;
  Backend& b = Gpu();
  Network model(b, NetworkSpec{static_cast<int>(cols), 8, {16}, LayerKind::kSigmoid});
  StepLanes lanes(b, model, 1, rows);  // double-buffered on a GPU
  StepLane& lane = lanes.Lane(0);
  ASSERT_NE(lane.prefetch, nullptr);
  int64_t next = 0;
  const auto value = [](int64_t j, int64_t i) {
    return static_cast<float>((j * 7919 + i) % 100003);
  };
  const MinibatchSource source = [&](std::vector<float>& x, std::vector<int32_t>& labels) {
    x.resize(static_cast<size_t>(rows * cols));
    labels.resize(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows * cols; ++i) x[i] = value(next, i);
    for (int64_t r = 0; r < rows; ++r) labels[r] = static_cast<int32_t>(next + r);
    ++next;
    return rows;
  };
  // Each step: slow device work (so that the host runs ahead), then a copy of its input.
  Matrix big(b, 1024, 1024), product(b, 1024, 1024), seen(b, steps * rows, cols);
  b.RandomUniform(1, 0, big);
  DeviceBuffer<int32_t> seen_labels(b, static_cast<size_t>(steps * rows));
  std::vector<double> compute;
  for (int64_t j = 0; j < steps; ++j) {
    ASSERT_EQ(lane.Take(&next, j, source), rows);  // the step's clock started
    for (int k = 0; k < 4; ++k) b.Gemm(false, false, 1.0f, big, big, 0.0f, product);
    b.Copy(lane.x.View().RowRange(0, rows), seen.View().RowRange(j * rows, rows));
    b.CopyBytesOnDevice(seen_labels.Data() + j * rows, lane.labels.Data(),
                        static_cast<size_t>(rows) * sizeof(int32_t));
    lane.clock.Stop(0, lane.io_s, lane.prefetched);
    if (j + 1 < steps) lane.Prefetch(&next, j + 1, source);
    lane.clock.Collect(2, [&](const StepClock::Times& t) { compute.push_back(t.compute_s); });
  }
  lane.clock.Collect(0, [&](const StepClock::Times& t) { compute.push_back(t.compute_s); });
  const std::vector<float> h = ToHost(b, seen).v;
  const std::vector<int32_t> l = seen_labels.ToHost();
  int64_t wrong = 0;
  for (int64_t j = 0; j < steps; ++j) {
    for (int64_t i = 0; i < rows * cols; ++i) wrong += h[j * rows * cols + i] != value(j, i);
    for (int64_t r = 0; r < rows; ++r) wrong += l[j * rows + r] != j + r;
  }
  EXPECT_EQ(wrong, 0);
  ASSERT_EQ(compute.size(), static_cast<size_t>(steps));
  for (double c : compute) EXPECT_GT(c, 0.0);
}

}  // namespace
}  // namespace mavg
