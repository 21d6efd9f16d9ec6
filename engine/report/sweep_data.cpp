#include "engine/report/sweep_data.h"

#include <set>

#include "engine/core/error.h"

namespace mavg {

const std::string* ReportRun::Axis(const std::string& name) const {
  for (const auto& [k, v] : axes) {
    if (k == name) return &v;
  }
  return nullptr;
}

std::vector<ReportRun> LoadSweepRuns(Store& store, const std::string& sweep) {
  MAVG_CHECK(store.GetSweep(sweep).has_value(), "{}: no sweep named '{}'", store.Db().Path(),
             sweep);
  sql::Database& db = store.Db();
  std::vector<ReportRun> runs;
  std::map<std::string, size_t> index;
  {
    auto s = db.Prepare(
        "SELECT sr.run_id, r.status, r.reason, sr.replicate, sr.axes_json FROM sweep_runs sr "
        "JOIN runs r ON r.run_id = sr.run_id WHERE sr.sweep = ? ORDER BY sr.position");
    s.Bind(1, sweep);
    while (s.Step()) {
      ReportRun r;
      r.run_id = s.Text(0);
      r.status = s.Text(1);
      r.reason = s.Text(2);
      r.replicate = static_cast<int>(s.Int(3));
      for (const auto& kv : nlohmann::json::parse(s.Text(4))) {
        r.axes.emplace_back(kv[0].get<std::string>(), kv[1].get<std::string>());
      }
      index[r.run_id] = runs.size();
      runs.push_back(std::move(r));
    }
  }
  {
    auto s = db.Prepare(
        "SELECT x.run_id, x.key, x.value FROM results x JOIN sweep_runs sr ON sr.run_id = "
        "x.run_id WHERE sr.sweep = ?");
    s.Bind(1, sweep);
    while (s.Step()) {
      ReportRun& r = runs[index.at(s.Text(0))];
      const sql::Value v = s.Column(2);
      if (std::holds_alternative<std::string>(v)) {
        r.texts[s.Text(1)] = std::get<std::string>(v);
      } else if (!std::holds_alternative<std::monostate>(v)) {
        r.values[s.Text(1)] = s.Real(2);
      }
    }
  }
  {
    auto s = db.Prepare(
        "SELECT e.run_id, AVG(e.wall_s - COALESCE(e.cv_s, 0)), AVG(e.projected_wall_s), "
        "AVG(e.compute_s), AVG(e.comm_s), AVG(e.io_s), AVG(e.wait_s), AVG(e.frames), "
        "AVG(e.averagings), "
        "(SELECT cv_loss FROM epochs z WHERE z.run_id = e.run_id ORDER BY epoch DESC LIMIT 1) "
        "FROM epochs e JOIN sweep_runs sr ON sr.run_id = e.run_id WHERE sr.sweep = ? "
        "GROUP BY e.run_id");
    s.Bind(1, sweep);
    const char* names[] = {"epoch_s", "projected_epoch_s", "compute_s",  "comm_s",       "io_s",
                           "wait_s",  "frames_per_epoch",  "averagings", "final_cv_loss"};
    while (s.Step()) {
      ReportRun& r = runs[index.at(s.Text(0))];
      for (int i = 0; i < 9; ++i) {
        if (!s.IsNull(i + 1)) r.values[names[i]] = s.Real(i + 1);
      }
    }
  }
  for (ReportRun& r : runs) {
    if (r.values.count("test_acc")) r.values["test_error"] = 100.0 * (1.0 - r.values["test_acc"]);
    if (r.values.count("cv_acc")) r.values["cv_error"] = 100.0 * (1.0 - r.values["cv_acc"]);
  }
  return runs;
}

std::vector<std::string> MetricNames(const std::vector<ReportRun>& runs) {
  std::set<std::string> names;
  for (const auto& r : runs) {
    for (const auto& [k, v] : r.values) names.insert(k);
  }
  return {names.begin(), names.end()};
}

}  // namespace mavg
