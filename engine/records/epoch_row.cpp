#include "engine/records/epoch_row.h"

#include <sstream>

#include "engine/core/files.h"

namespace mavg {

nlohmann::json ToJson(const EpochRow& row) { return records::ToJson(row, kEpochFields); }

EpochRow EpochRowFromJson(const nlohmann::json& line, std::string_view where) {
  return records::FromJson(line, kEpochFields, where);
}

EpochLines ReadEpochLines(const std::string& path) {
  EpochLines out;
  if (!PathExists(path)) return out;
  const std::string text = ReadFile(path);
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    const std::string where = fmt::format("{}:{}", path, n);
    nlohmann::json json;
    try {
      json = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      // The last line without its newline is a write cut short: not an error.
      if (in.eof() && !text.ends_with('\n')) break;
      out.skipped.push_back(fmt::format("{}: not a JSON line", where));
      continue;
    }
    try {
      EpochRow row = EpochRowFromJson(json, where);
      out.lines.push_back({std::move(row), std::move(json)});
    } catch (const Error& e) {
      out.skipped.push_back(e.what());
    }
  }
  return out;
}

const std::vector<EpochMean>& EpochMeans() {
  static const std::vector<EpochMean> kMeans = [] {
    std::vector<EpochMean> means;
    const auto expr = [](const records::Field<EpochRow>& f) {
      return f.column != records::Column::kNone
                 ? fmt::format("e.{}", f.name)
                 : fmt::format("json_extract(e.metrics_json, '$.{}')", f.name);
    };
    std::string wall, cv;
    for (const auto& f : kEpochFields) {
      if (std::holds_alternative<std::optional<double> EpochRow::*>(f.member)) {
        const auto member = std::get<std::optional<double> EpochRow::*>(f.member);
        if (member == &EpochRow::wall_s) wall = expr(f);
        if (member == &EpochRow::cv_s) cv = expr(f);
      }
    }
    // TrainSeconds in SQL.
    means.push_back({"epoch_s", fmt::format("{} - COALESCE({}, 0)", wall, cv)});
    for (const auto& f : kEpochFields) {
      if (!f.report_mean.empty()) means.push_back({std::string(f.report_mean), expr(f)});
    }
    return means;
  }();
  return kMeans;
}

}  // namespace mavg
