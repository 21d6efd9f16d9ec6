#include "engine/records/run_result.h"

#include "engine/core/json.h"

namespace mavg {
namespace {

// A part of a result, read leniently (see BuildOf).
template <class R, size_t N>
R PartOf(const std::optional<nlohmann::json>& part, const records::Field<R> (&table)[N]) {
  if (!part) return R{};
  try {
    return records::FromJson(*part, table, "part");
  } catch (const Error&) {
    return R{};
  }
}

records::Cell CellOf(const nlohmann::json& v) {
  if (v.is_null()) return records::Cell();
  if (v.is_boolean()) return records::Cell(static_cast<int64_t>(v.get<bool>()));
  if (v.is_number_integer()) return records::Cell(v.get<int64_t>());
  if (v.is_number()) return records::Cell(v.get<double>());
  if (v.is_string()) return records::Cell(v.get<std::string>());
  return records::Cell(DumpJson(v));
}

std::string TextOf(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : DumpJson(v);
}

}  // namespace

nlohmann::json ToJson(const RunResult& result) { return records::ToJson(result, kRunResultFields); }
void Update(RunResult& result, const RunResult& part) {
  records::Update(result, part, kRunResultFields);
}
RunResult RunResultFromJson(const nlohmann::json& json, std::string_view where) {
  return records::FromJson(json, kRunResultFields, where);
}
nlohmann::json ToJson(const BuildInfo& build) { return records::ToJson(build, kBuildInfoFields); }
nlohmann::json ToJson(const DivergedAt& at) { return records::ToJson(at, kDivergedAtFields); }
nlohmann::json ToJson(const CollapseNote& note) {
  return records::ToJson(note, kCollapseNoteFields);
}

BuildInfo BuildOf(const RunResult& result) { return PartOf(result.build, kBuildInfoFields); }
DivergedAt DivergedAtOf(const RunResult& result) {
  return PartOf(result.diverged_at, kDivergedAtFields);
}
CollapseNote CollapseOf(const RunResult& result) {
  return PartOf(result.collapse, kCollapseNoteFields);
}

std::string RunResultPath(const std::string& run_dir) { return run_dir + "/" + kResultFileName; }

std::vector<ResultEntry> ResultEntries(const nlohmann::json& file) {
  std::vector<ResultEntry> out;
  if (!file.is_object()) return out;
  for (const auto& [key, value] : file.items()) {  // sorted keys
    const records::Field<RunResult>* field = records::FindField(kRunResultFields, key);
    if (value.is_object()) {
      for (const auto& [sub, v] : value.items()) {
        out.push_back({true, key + "." + sub, records::Cell(TextOf(v))});
      }
    } else if (field != nullptr && field->environment) {
      out.push_back({true, key, records::Cell(TextOf(value))});
    } else {
      out.push_back({false, key, CellOf(value)});
    }
  }
  return out;
}

std::string ShownResultName(std::string_view key) {
  return records::ShownName(kRunResultFields, key);
}

std::vector<std::string_view> RunResultNames() { return records::Names(kRunResultFields); }

}  // namespace mavg
