#pragma once
// Helpers shared by the unit tests: backends to run on, host <-> device matrices, references.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "engine/backend/device_buffer.h"
#include "engine/core/error.h"
#include "engine/core/rng.h"

namespace mavg::testing {

// The keys of a JSON object (a checkpoint's state, a record), sorted.
inline std::set<std::string> Keys(const nlohmann::json& j) {
  std::set<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.insert(it.key());
  return keys;
}

// The message of the mavg::Error `f` throws; empty when it throws none.
inline std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Every backend usable on this machine: the CPU always; CUDA when built with it and a device
// is visible (the CUDA backend's own tests carry the `gpu` label).
inline std::vector<std::string> BackendNames() {
  std::vector<std::string> names = {"cpu"};
  if (CudaDeviceCount() > 0) names.push_back("cuda");
  return names;
}

inline std::unique_ptr<Backend> MakeBackend(const std::string& name) {
  BackendOptions o;
  o.kind = name == "cuda" ? DeviceKind::kCuda : DeviceKind::kCpu;
  o.threads = 2;
  return CreateBackend(o);
}

// A test parameterised by backend name (BackendNames()): B() is that backend.
class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { backend_ = MakeBackend(GetParam()); }
  Backend& B() { return *backend_; }
  std::unique_ptr<Backend> backend_;
};

// Host matrix, row-major.
struct HostMat {
  int64_t rows = 0, cols = 0;
  std::vector<float> v;
  HostMat() = default;
  HostMat(int64_t r, int64_t c, float fill = 0.0f) : rows(r), cols(c), v(r * c, fill) {}
  float& operator()(int64_t r, int64_t c) { return v[r * cols + c]; }
  float operator()(int64_t r, int64_t c) const { return v[r * cols + c]; }
};

inline HostMat RandomHost(int64_t rows, int64_t cols, uint64_t seed, double scale = 1.0) {
  HostMat m(rows, cols);
  Rng rng(seed);
  for (float& x : m.v) x = static_cast<float>(scale * rng.Gaussian());
  return m;
}

inline Matrix ToDevice(Backend& b, const HostMat& h) {
  Matrix m(b, h.rows, h.cols);
  b.CopyFromHost(h.v.data(), m);
  return m;
}

inline HostMat ToHost(Backend& b, ConstMatrixView m) {
  HostMat h(m.rows, m.cols);
  b.CopyToHost(m, h.v.data());
  return h;
}

// max |a - b| / (max |b| + tiny): normalized error, as in ggml's test-backend-ops.
inline double NormalizedError(const HostMat& a, const HostMat& b) {
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  double num = 0.0, den = 1e-30;
  for (size_t i = 0; i < a.v.size(); ++i) {
    num = std::max(num, static_cast<double>(std::fabs(a.v[i] - b.v[i])));
    den = std::max(den, static_cast<double>(std::fabs(b.v[i])));
  }
  return num / den;
}

// A per-test scratch directory, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& Path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace mavg::testing
