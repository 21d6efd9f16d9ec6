#pragma once
// CPU backend: OpenBLAS for GEMM (single-threaded calls on fixed tiles, gemm_tiles.h), a
// ThreadPool (core/thread_pool.h) for the tiles, element-wise kernels and reductions.

#include <memory>

#include "engine/backend/backend.h"

namespace mavg {

// threads <= 0: all hardware threads. The results do not depend on the thread count.
std::unique_ptr<Backend> CreateCpuBackend(int threads);

}  // namespace mavg
