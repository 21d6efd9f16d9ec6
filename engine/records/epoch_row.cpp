#include "engine/records/epoch_row.h"

#include "engine/core/files.h"

namespace mavg {

nlohmann::json ToJson(const EpochRow& row) { return records::ToJson(row, kEpochFields); }

EpochRow EpochRowFromJson(const nlohmann::json& line, std::string_view where) {
  return records::FromJson(line, kEpochFields, where);
}

EpochLines ReadEpochLines(const std::string& path) {
  return records::ReadRecordLines(path, kEpochFields);
}

const std::vector<EpochMean>& EpochMeans() {
  static const std::vector<EpochMean> kMeans = [] {
    std::vector<EpochMean> means;
    const auto expr = [](const records::Field<EpochRow>& f) {
      return f.column != records::Column::kNone
                 ? fmt::format("e.{}", f.name)
                 : fmt::format("json_extract(e.metrics_json, '$.{}')", f.name);
    };
    // The SQL of the field holding `member`.
    const auto expr_of = [&](std::optional<double> EpochRow::*member) {
      for (const auto& f : kEpochFields) {
        if (f.member == records::Member<EpochRow>(member)) return expr(f);
      }
      return std::string("NULL");  // unreachable: both members below are in the table
    };
    // TrainSeconds in SQL.
    means.push_back(
        {kEpochSecondsMean,
         fmt::format("{} - COALESCE({}, 0)", expr_of(&EpochRow::wall_s), expr_of(&EpochRow::cv_s)),
         records::Timing::kMeasured});
    for (const auto& f : kEpochFields) {
      if (!f.report_mean.empty()) means.push_back({std::string(f.report_mean), expr(f), f.timing});
    }
    return means;
  }();
  return kMeans;
}

}  // namespace mavg
