#include "engine/report/sweep_data.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "engine/core/error.h"
#include "engine/records/epoch_row.h"
#include "engine/records/run_result.h"

namespace mavg {

const std::string* ReportRun::Axis(const std::string& name) const {
  for (const auto& [k, v] : axes) {
    if (k == name) return &v;
  }
  return nullptr;
}

std::vector<ReportRun> LoadSweepRuns(Store& store, const std::string& sweep) {
  store.RequireSweep(sweep);
  sql::Database& db = store.Db();
  std::vector<ReportRun> runs;
  std::map<std::string, size_t> index;
  {
    auto s = db.Prepare(
        "SELECT sr.run_id, r.status, r.reason, sr.replicate, sr.axes_json, r.config_json, "
        "r.code_version FROM "
        "sweep_runs sr JOIN runs r ON r.run_id = sr.run_id WHERE sr.sweep = ? ORDER BY "
        "sr.position");
    s.Bind(1, sweep);
    while (s.Step()) {
      ReportRun r;
      r.run_id = s.Text(0);
      r.status = ParseRunStateOrThrow(s.Text(1), "runs.status");
      r.reason = s.Text(2);
      r.replicate = static_cast<int>(s.Int(3));
      for (const auto& kv : nlohmann::json::parse(s.Text(4))) {
        r.axes.emplace_back(kv[0].get<std::string>(), kv[1].get<std::string>());
      }
      const nlohmann::json config = nlohmann::json::parse(s.Text(5), nullptr, false);
      if (config.is_object() && config.contains("parallel") && config["parallel"].is_object()) {
        r.parallel = config["parallel"];
      }
      if (config.is_object()) r.config = config;
      // The build that made the run, as the store keeps it (set when the run settled).
      if (!s.Text(6).empty()) r.texts[BuildKey(&BuildInfo::code_version)] = s.Text(6);
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
    // Runs recorded before result.json had blas_kernels: the kernels from the build's device.
    auto s = db.Prepare(
        "SELECT e.run_id, e.value FROM env e JOIN sweep_runs sr ON sr.run_id = e.run_id "
        "WHERE sr.sweep = ? AND e.key = ?");
    s.Bind(1, sweep).Bind(2, BuildKey(&BuildInfo::device));
    while (s.Step()) {
      ReportRun& r = runs[index.at(s.Text(0))];
      if (r.texts.count(ResultKey(&RunResult::blas_kernels)) == 0) {
        const std::string k = KernelsFromDevice(s.Text(1));
        if (!k.empty()) r.texts[ResultKey(&RunResult::blas_kernels)] = k;
      }
    }
  }
  {
    // The CPU each run's build recorded (timings from different CPUs do not compare).
    auto s = db.Prepare(
        "SELECT e.run_id, e.value FROM env e JOIN sweep_runs sr ON sr.run_id = e.run_id "
        "WHERE sr.sweep = ? AND e.key = ?");
    s.Bind(1, sweep).Bind(2, BuildKey(&BuildInfo::cpu));
    while (s.Step()) runs[index.at(s.Text(0))].texts[BuildKey(&BuildInfo::cpu)] = s.Text(1);
  }
  {
    // Runs this sweep shares with others (a run reused from an earlier sweep).
    auto s = db.Prepare(
        "SELECT o.run_id, o.sweep FROM sweep_runs o JOIN sweep_runs sr ON sr.run_id = o.run_id "
        "WHERE sr.sweep = ? AND o.sweep != ? ORDER BY o.sweep");
    s.Bind(1, sweep).Bind(2, sweep);
    while (s.Step()) runs[index.at(s.Text(0))].other_sweeps.push_back(s.Text(1));
  }
  {
    // The per-run means of the epoch records (records/epoch_row.h).
    const std::vector<EpochMean>& means = EpochMeans();
    std::string select;
    for (const EpochMean& m : means) select += fmt::format(", AVG({})", m.expr);
    auto s = db.Prepare(
        fmt::format("SELECT e.run_id{} FROM epochs e JOIN sweep_runs sr ON sr.run_id = e.run_id "
                    "WHERE sr.sweep = ? GROUP BY e.run_id",
                    select));
    s.Bind(1, sweep);
    while (s.Step()) {
      ReportRun& r = runs[index.at(s.Text(0))];
      for (size_t i = 0; i < means.size(); ++i) {
        const int column = static_cast<int>(i) + 1;
        if (!s.IsNull(column)) r.values[means[i].name] = s.Real(column);
      }
    }
  }
  {
    // Each epoch's record, read back from the line the run wrote.
    auto s = db.Prepare(
        "SELECT e.run_id, e.metrics_json FROM epochs e JOIN sweep_runs sr ON sr.run_id = "
        "e.run_id WHERE sr.sweep = ? ORDER BY e.run_id, e.epoch");
    s.Bind(1, sweep);
    while (s.Step()) {
      const std::string run_id = s.Text(0);
      const std::string where = fmt::format("{}: epochs of run {}", db.Path(), run_id);
      const nlohmann::json line = nlohmann::json::parse(s.Text(1), nullptr, false);
      MAVG_CHECK(!line.is_discarded(), "{}: metrics_json is not JSON", where);
      const EpochRow row = EpochRowFromJson(line, where);
      EpochRecord e;
      e.epoch = static_cast<int>(row.epoch);
      e.accepted = row.Accepted();
      if (row.cv_loss && std::isfinite(*row.cv_loss)) e.cv_loss = row.cv_loss;
      e.train_s = row.TrainSeconds();
      if (row.projected_wall_s && std::isfinite(*row.projected_wall_s)) {
        e.projected_wall_s = row.projected_wall_s;
      }
      e.row = row;
      runs[index.at(run_id)].epochs.push_back(std::move(e));
    }
  }
  for (ReportRun& r : runs) {
    for (auto e = r.epochs.rbegin(); e != r.epochs.rend(); ++e) {
      if (e->accepted && e->cv_loss) {
        r.values["final_cv_loss"] = *e->cv_loss;
        break;
      }
    }
    const auto error_from = [&](const std::string& accuracy, const char* error) {
      if (r.values.count(accuracy)) r.values[error] = 100.0 * (1.0 - r.values[accuracy]);
    };
    error_from(ResultKey(&RunResult::test_acc), "test_error");
    error_from(ResultKey(&RunResult::cv_acc), "cv_error");
  }
  return runs;
}

std::string KernelsFromDevice(const std::string& device) {
  if (device.starts_with("cuda")) {
    return device.find("tf32 on") != std::string::npos ? "cuBLAS TF32" : "cuBLAS FP32";
  }
  // "cpu (OpenBLAS 0.3.21 ... USE_OPENMP Prescott MAX_THREADS=64; 2 threads)": the family is
  // the word before MAX_THREADS=.
  const size_t open = device.find("(OpenBLAS ");
  const size_t max = device.find(" MAX_THREADS=");
  if (open == std::string::npos || max == std::string::npos || max < open) return "";
  const size_t space = device.rfind(' ', max - 1);
  if (space == std::string::npos || space < open) return "";
  return "OpenBLAS " + device.substr(space + 1, max - space - 1);
}

std::string MixedKernelsWarning(const std::vector<const ReportRun*>& runs) {
  std::map<std::string, int> counts;
  for (const ReportRun* r : runs) {
    if (r->status != RunState::kCompleted) continue;
    const auto it = r->texts.find(ResultKey(&RunResult::blas_kernels));
    if (it != r->texts.end()) ++counts[it->second];
  }
  if (counts.size() < 2) return "";
  std::string list;
  for (const auto& [k, n] : counts) {
    list += fmt::format("{}{}: {} run{}", list.empty() ? "" : "; ", k, n, n == 1 ? "" : "s");
  }
  return fmt::format(
      "Warning: these runs' timings come from more than one kernel family ({}): compare times "
      "only between runs on the same kernels.",
      list);
}

std::vector<std::string> MetricNames(const std::vector<ReportRun>& runs) {
  std::set<std::string> names;
  for (const auto& r : runs) {
    for (const auto& [k, v] : r.values) names.insert(k);
  }
  return {names.begin(), names.end()};
}

}  // namespace mavg
