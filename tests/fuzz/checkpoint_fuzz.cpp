// Checkpoints as a resume reads them: meta.json (parsed, then validated against the config) and
// the tensor file it names (MAVGTNSR: count, floats, CRC) read into a [1 x 64] parameter set.
// The input is two files (fuzz_target.h: SplitFiles): meta.json, then params.<gen>.bin.
#include <filesystem>

#include "engine/backend/backend.h"
#include "engine/backend/device_buffer.h"
#include "engine/train/checkpoint.h"
#include "tests/fuzz/fuzz_target.h"

MAVG_FUZZ_TARGET(checkpoint) {
  static const std::unique_ptr<mavg::Backend> backend = [] {
    mavg::BackendOptions o;
    o.threads = 1;
    return mavg::CreateBackend(o);
  }();
  const std::vector<std::string> files = mavg::fuzz::SplitFiles(data, size, 2);
  const std::string run = mavg::fuzz::WorkDir() + "/run";
  std::error_code ec;
  std::filesystem::remove_all(run + "/checkpoint", ec);
  mavg::fuzz::WriteWorkFile("run/checkpoint/meta.json", files[0]);
  mavg::RunConfig config;
  config.schedule.epochs = 5;
  config.parallel.workers = 2;
  mavg::fuzz::ExpectCleanFailure([&] {
    const mavg::CheckpointDir dir(run);
    const auto meta = dir.ReadMeta();
    if (!meta) return;
    mavg::ValidateCheckpointMeta(*meta, config, dir.Path() + "/meta.json");
    const int64_t gen = meta->at("generation").get<int64_t>();
    const std::string tensors = dir.TensorPath(gen, "params");
    mavg::fuzz::WriteWorkFile(tensors.substr(mavg::fuzz::WorkDir().size() + 1), files[1]);
    mavg::Matrix params(*backend, 1, 64);
    dir.ReadTensors(*backend, gen, "params", {params.View()});
  });
}
