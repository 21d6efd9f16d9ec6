#pragma once
// CUDA backend entry points. This header includes no CUDA headers: it is the seam between the
// CPU-only build (cuda_stub.cpp, which throws "built without CUDA") and the CUDA build (*.cu).

#include <memory>

#include "engine/backend/backend.h"

namespace mavg {

std::unique_ptr<Backend> CreateCudaBackend(int device_index);

}  // namespace mavg
