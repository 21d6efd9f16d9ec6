#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include "engine/backend/cuda/cublas_api.cuh"
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/core/error.h"

namespace mavg::cuda {
namespace {

// The loader's path first (LD_LIBRARY_PATH, the binary's runpath, ld.so.cache), then the
// toolkit this build was compiled against.
void* OpenCublas(const std::string& soname) {
  void* lib = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib != nullptr) return lib;
  const std::string first = dlerror();
#ifdef MAVG_CUDA_LIBRARY_DIR
  const std::string fallback = std::string(MAVG_CUDA_LIBRARY_DIR) + "/" + soname;
  lib = dlopen(fallback.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib != nullptr) return lib;
#endif
  MAVG_FAIL(
      "device 'cuda' needs cuBLAS, which cannot be loaded: {} (put the CUDA toolkit's library "
      "folder on LD_LIBRARY_PATH)",
      first);
}

template <typename Fn>
void Bind(void* lib, const std::string& soname, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
  MAVG_CHECK(fn != nullptr, "{} has no {}: not the cuBLAS this mavg was built against", soname,
             symbol);
}

CublasApi Load() {
  CublasApi api;
  const std::string soname = CublasSoname();
  void* lib = OpenCublas(soname);  // kept open for the process's life
  Bind(lib, soname, "cublasCreate_v2", api.create);
  Bind(lib, soname, "cublasDestroy_v2", api.destroy);
  Bind(lib, soname, "cublasSetStream_v2", api.set_stream);
  Bind(lib, soname, "cublasSetMathMode", api.set_math_mode);
  Bind(lib, soname, "cublasSgemm_v2", api.sgemm);
  Bind(lib, soname, "cublasGetProperty", api.get_property);
  Bind(lib, soname, "cublasGetStatusString", api.status_string);
  link_map* map = nullptr;
  if (dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr) {
    api.file = map->l_name;
  }
  int part[3] = {0, 0, 0};
  const libraryPropertyType kinds[3] = {MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL};
  bool known = true;
  for (int i = 0; i < 3; ++i)
    known = known && api.get_property(kinds[i], &part[i]) == CUBLAS_STATUS_SUCCESS;
  api.version = known ? fmt::format("{}.{}.{}", part[0], part[1], part[2]) : "?";
  return api;
}

}  // namespace

std::string CublasSoname() { return fmt::format("libcublas.so.{}", CUBLAS_VER_MAJOR); }

const CublasApi& Cublas() {
  static const CublasApi api = Load();  // a failed load throws and is retried on the next call
  return api;
}

}  // namespace mavg::cuda

namespace mavg {

CublasLibraryInfo ProbeCublas() {
  CublasLibraryInfo info;
  info.soname = cuda::CublasSoname();
  try {
    const cuda::CublasApi& api = cuda::Cublas();
    info.file = api.file;
    info.version = api.version;
  } catch (const Error& e) {
    info.error = e.what();
  }
  return info;
}

}  // namespace mavg
