// Sweep specs: the spec (keys, grid/zip/include/exclude, replicates, resources, max_runs) over a
// valid base config, then the expansion into points. A spec can name other files as its base;
// the base written here is the one it should use.
#include "engine/sweep/spec.h"
#include "tests/fuzz/fuzz_target.h"

MAVG_FUZZ_TARGET(sweep_spec) {
  static const std::string base = mavg::fuzz::WriteWorkFile(
      "base.yaml",
      "data: {train: data/train, dev: data/dev}\nmodel: {hidden_layers: 1, hidden_dim: 8}\n"
      "schedule: {epochs: 2}\n");
  (void)base;
  const std::string path =
      mavg::fuzz::WriteWorkFile("spec.yaml", {reinterpret_cast<const char*>(data), size});
  mavg::fuzz::ExpectCleanFailure([&] {
    const mavg::SweepSpec spec = mavg::LoadSweepSpec(path);
    (void)mavg::ExpandSweep(spec);
  });
}
