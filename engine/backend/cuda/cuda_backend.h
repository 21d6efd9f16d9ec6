#pragma once
// CUDA backend entry points. This header includes no CUDA headers: it is the seam between the
// CPU-only build (cuda_stub.cpp, which throws "built without CUDA") and the CUDA build (*.cu).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend/backend.h"

namespace mavg {

struct CudaDeviceInfo {
  int index = 0;
  std::string name;
  uint64_t memory_bytes = 0;
  int compute_major = 0, compute_minor = 0;
  int multiprocessors = 0;
  std::string pci_bus_id;  // e.g. "0000:3B:00.0": tells ranks sharing a GPU apart
};

// The visible CUDA devices (none in a CPU-only build or without a driver).
std::vector<CudaDeviceInfo> CudaDevices();

// cuBLAS as a CUDA backend loads it (on first use, not at start-up): the soname it asks for
// and, when the loader finds it, the file and version; else the loader's reason. All empty in
// a CPU-only build.
struct CublasLibraryInfo {
  std::string soname, file, version, error;
};
CublasLibraryInfo ProbeCublas();

// The backend on options.device_index (cuBLAS, mavg's kernels, a caching allocator).
std::unique_ptr<Backend> CreateCudaBackend(const BackendOptions& options);

}  // namespace mavg
