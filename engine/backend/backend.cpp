#include "engine/backend/backend.h"

#include <chrono>
#include <cstdlib>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cuda/cuda_backend.h"

namespace mavg {

void* Backend::AllocateHostStaging(size_t bytes) {
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + (bytes == 0 ? 64 : 0));
  MAVG_CHECK(p != nullptr, "out of host memory allocating {} bytes", bytes);
  return p;
}

void Backend::FreeHostStaging(void* ptr) { std::free(ptr); }

namespace {

// The event of a backend whose operations finish in the call: when it was recorded, all the
// work queued before was done.
struct HostClockEvent {
  std::chrono::steady_clock::time_point at{};
};

HostClockEvent& AsHostClock(void* event) {
  MAVG_CHECK(event != nullptr, "an event that was never created");
  return *static_cast<HostClockEvent*>(event);
}

}  // namespace

void* Backend::CreateEvent() { return new HostClockEvent; }
void Backend::DestroyEvent(void* event) { delete static_cast<HostClockEvent*>(event); }
void Backend::RecordEvent(void* event) { AsHostClock(event).at = std::chrono::steady_clock::now(); }
void Backend::WaitEvent(void* event) { AsHostClock(event); }
double Backend::SecondsBetween(void* start, void* end) {
  return std::chrono::duration<double>(AsHostClock(end).at - AsHostClock(start).at).count();
}

void Backend::RunNgsgdSmallBatch(const std::vector<NgsgdSmallTask>& tasks) {
  for (const NgsgdSmallTask& t : tasks) RunNgsgdSmall(t);
}

void Backend::MeanOfReplicas(const std::vector<MatrixView>& replicas) {
  MAVG_CHECK(!replicas.empty(), "no replicas to average");
  MatrixView acc = replicas[0];
  for (size_t k = 1; k < replicas.size(); ++k) {
    MAVG_CHECK(SameShape(replicas[k], acc), "replica {} is {}x{}, replica 0 {}x{}", k,
               replicas[k].rows, replicas[k].cols, acc.rows, acc.cols);
    Axpby(1.0f, replicas[k], 1.0f, acc);
  }
  Axpby(1.0f / static_cast<float>(replicas.size()), acc, 0.0f, acc);
  for (size_t k = 1; k < replicas.size(); ++k) Copy(acc, replicas[k]);
}

std::unique_ptr<Backend> CreateBackend(const BackendOptions& options) {
  switch (options.kind) {
    case DeviceKind::kCpu:
      return CreateCpuBackend(options.threads);
    case DeviceKind::kCuda:
      return CreateCudaBackend(options);
  }
  MAVG_FAIL("unknown device kind");
}

const char* DeviceKindName(DeviceKind kind) { return kind == DeviceKind::kCuda ? "cuda" : "cpu"; }

}  // namespace mavg
