#pragma once
// CPU backend: OpenBLAS for GEMM, OpenMP for element-wise kernels and reductions.

#include <memory>

#include "engine/backend/backend.h"

namespace mavg {

// threads <= 0: all hardware threads. Sets OpenBLAS's and this backend's OpenMP thread count.
std::unique_ptr<Backend> CreateCpuBackend(int threads);

}  // namespace mavg
