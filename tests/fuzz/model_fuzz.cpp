// Model files (MAVGNNET): magic, version, JSON header (architecture, transform, counts),
// parameter count against the header and the file size, CRC.
#include "engine/backend/backend.h"
#include "engine/nn/model.h"
#include "tests/fuzz/fuzz_target.h"

MAVG_FUZZ_TARGET(model) {
  static const std::unique_ptr<mavg::Backend> backend = [] {
    mavg::BackendOptions o;
    o.threads = 1;
    return mavg::CreateBackend(o);
  }();
  const std::string path =
      mavg::fuzz::WriteWorkFile("model.bin", {reinterpret_cast<const char*>(data), size});
  mavg::fuzz::ExpectCleanFailure([&] { (void)mavg::LoadModel(path, *backend); });
}
