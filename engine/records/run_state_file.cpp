#include "engine/records/run_state_file.h"

#include "engine/core/files.h"

namespace mavg {

nlohmann::json ToJson(const RunStateFile& state) { return records::ToJson(state, kRunStateFields); }

RunStateFile RunStateFromJson(const nlohmann::json& json, std::string_view where) {
  return records::FromJson(json, kRunStateFields, where);
}

std::string RunStatePath(const std::string& run_dir) { return run_dir + "/" + kStateFileName; }

std::optional<RunStateFile> ReadRunState(const std::string& run_dir) {
  const std::string path = RunStatePath(run_dir);
  if (!PathExists(path)) return std::nullopt;
  return RunStateFromJson(ReadJsonFile(path), path);
}

}  // namespace mavg
