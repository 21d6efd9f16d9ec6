#pragma once
// cuBLAS, loaded when the first CUDA backend is made rather than when mavg starts: libcublasLt
// alone takes ~150 ms to load and relocate, which every mavg process would pay (a `mavg report`,
// each run a sweep starts, each test) whether or not it uses a GPU. The CUDA runtime and NCCL
// are cheap to load and stay linked; only the cuBLAS entry points mavg calls go through here.

#include <cublas_v2.h>

#include <string>

namespace mavg::cuda {

struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasGetProperty) get_property = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
  std::string file;     // the file the loader found
  std::string version;  // "13.1.0", read from the library once loaded
};

// The soname this build was compiled against (libcublas.so.<major>).
std::string CublasSoname();

// cuBLAS, loaded on the first call (thread-safe); throws mavg::Error naming the library and the
// loader's reason when it cannot be loaded or lacks an entry point.
const CublasApi& Cublas();

}  // namespace mavg::cuda
