#pragma once
// The fixture of the GPU tests: the CUDA backend and the CPU backend side by side. Without a
// visible device every test skips with one line saying so.
#include <gtest/gtest.h>

#include <memory>
#include <utility>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cuda/cuda_backend.h"
#include "tests/testing/test_util.h"

namespace mavg {

class CudaVsCpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device visible: the gpu tests need one";
    cpu_ = CreateCpuBackend(2);
    BackendOptions o;
    o.kind = DeviceKind::kCuda;
    gpu_ = CreateBackend(o);
  }
  Backend& Cpu() { return *cpu_; }
  Backend& Gpu() { return *gpu_; }

  // `op` run on each backend with the same inputs; returns (cpu result, gpu result).
  template <typename Op>
  std::pair<testing::HostMat, testing::HostMat> Both(const std::vector<testing::HostMat>& inputs,
                                                     int out, Op op) {
    auto run = [&](Backend& b) {
      std::vector<Matrix> m;
      for (const testing::HostMat& h : inputs) m.push_back(testing::ToDevice(b, h));
      op(b, m);
      return testing::ToHost(b, m[static_cast<size_t>(out)]);
    };
    return {run(Cpu()), run(Gpu())};
  }

  std::unique_ptr<Backend> cpu_, gpu_;
};

}  // namespace mavg
