#include "engine/report/html_report.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "engine/core/build_info.h"
#include "engine/core/error.h"
#include "engine/core/run_state.h"
#include "engine/core/sysinfo.h"
#include "engine/records/epoch_row.h"
#include "engine/records/run_result.h"
#include "engine/report/contrast_report.h"
#include "engine/report/render.h"
#include "engine/report/runs_table.h"
#include "engine/report/sweep_data.h"
#include "engine/report/tables.h"

namespace mavg {
namespace {

// The metric tables a page shows when none is asked for, in this order, if any run has them.
const std::vector<std::string>& DefaultMetrics() {
  static const std::vector<std::string> kMetrics = {
      ResultKey(&RunResult::wer),   "test_error", "cv_error", "final_cv_loss", kEpochSecondsMean,
      ResultKey(&RunResult::wall_s)};
  return kMetrics;
}

// The axes that take more than one value, in the sweep's order.
std::vector<std::string> VaryingAxes(const std::vector<ReportRun>& runs) {
  std::vector<std::string> out;
  if (runs.empty()) return out;
  for (const auto& kv : runs[0].axes) {  // not a structured binding: lambdas capture it
    if (std::any_of(runs.begin(), runs.end(),
                    [&](const ReportRun& r) { return *r.Axis(kv.first) != kv.second; })) {
      out.push_back(kv.first);
    }
  }
  return out;
}

// Numbers in numeric order before other values, in text order.
bool NumericLess(const std::string& a, const std::string& b) {
  char* end_a = nullptr;
  char* end_b = nullptr;
  const double x = std::strtod(a.c_str(), &end_a), y = std::strtod(b.c_str(), &end_b);
  const bool num_a = !a.empty() && *end_a == '\0', num_b = !b.empty() && *end_b == '\0';
  if (num_a && num_b && x != y) return x < y;
  if (num_a != num_b) return num_a;
  return a < b;
}

// Whether one axis's value decides the other's (zipped axes, an include): such a pair across
// rows and columns would leave most cells empty.
bool Follows(const std::vector<ReportRun>& runs, const std::string& a, const std::string& b) {
  std::map<std::string, std::set<std::string>> ab, ba;
  for (const ReportRun& r : runs) {
    ab[*r.Axis(a)].insert(*r.Axis(b));
    ba[*r.Axis(b)].insert(*r.Axis(a));
  }
  auto single = [](const auto& m) {
    return std::all_of(m.begin(), m.end(), [](const auto& kv) { return kv.second.size() == 1; });
  };
  return single(ab) || single(ba);
}

// Rows and columns of the metric tables: the columns are the first varying axis after the
// first that no other varying axis follows; the rows are the other varying axes.
std::pair<std::string, std::string> Layout(const std::vector<ReportRun>& runs) {
  const std::vector<std::string> axes = VaryingAxes(runs);
  if (axes.empty()) return {runs.empty() || runs[0].axes.empty() ? "" : runs[0].axes[0].first, ""};
  std::string cols;
  for (size_t i = 1; i < axes.size() && cols.empty(); ++i) {
    if (std::none_of(axes.begin(), axes.end(), [&](const std::string& other) {
          return other != axes[i] && Follows(runs, axes[i], other);
        })) {
      cols = axes[i];
    }
  }
  std::string rows;
  for (const std::string& a : axes) {
    if (a != cols) rows += (rows.empty() ? "" : ",") + a;
  }
  return {rows, cols};
}

nlohmann::json Status(Store& store, const std::string& sweep, const std::vector<ReportRun>& runs) {
  std::map<std::string, std::string> code_versions;
  auto s = store.Db().Prepare(
      "SELECT r.run_id, r.code_version FROM sweep_runs sr JOIN runs r ON r.run_id = sr.run_id "
      "WHERE sr.sweep = ?");
  s.Bind(1, sweep);
  while (s.Step()) code_versions[s.Text(0)] = s.Text(1);
  std::map<PlanState, int> counts;
  nlohmann::json problems = nlohmann::json::array();
  for (const ReportRun& r : runs) {
    const std::string& cv = code_versions[r.run_id];
    ++counts[PlanStateOf(r.status, cv.empty() || cv == build_info::kCodeVersion)];
    if (HasEnded(r.status) && r.status != RunState::kCompleted) {
      std::string axes;
      for (const auto& [k, v] : r.axes) axes += (axes.empty() ? "" : " ") + k + "=" + v;
      problems.push_back({{"run_id", r.run_id},
                          {"status", std::string(ToString(r.status))},
                          {"axes", axes},
                          {"reason", r.reason.empty() ? "(no reason recorded)" : r.reason}});
    }
  }
  nlohmann::json c = nlohmann::json::array();
  for (const auto& [state, text] : kPlanStates) {
    if (counts[state] > 0) c.push_back({std::string(text), counts[state]});
  }
  return {{"total", runs.size()}, {"counts", c}, {"problems", problems}};
}

std::string First(const std::vector<std::string>& candidates, const std::set<std::string>& have) {
  for (const std::string& c : candidates) {
    if (have.count(c)) return c;
  }
  return "";
}

std::vector<std::pair<std::string, std::string>> Pairs(const nlohmann::json& where) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [k, v] : where.items()) out.emplace_back(k, v.get<std::string>());
  return out;
}

// A figure's table as `report table --format json` prints it.
nlohmann::json TableData(const std::string& sweep, const std::vector<ReportRun>& runs,
                         const std::string& rows, const std::string& cols, const std::string& value,
                         const nlohmann::json& where) {
  TableOptions t;
  t.rows = rows;
  t.cols = cols;
  t.value = value;
  t.where = Pairs(where);
  t.format = report::Format::kJson;
  return nlohmann::json::parse(MetricTable(sweep, runs, t));
}

// What analysis/plot.py draws the page's figures from: the reports plot.py's command line runs
// (`report table|speedup|epochs --format json`) with the options it would give them, computed
// here from the runs this page reads once. A figure that cannot be drawn has {"error": why}.
//   metric      report table --rows X --cols SERIES --value METRIC --where ...
//   speedup     report speedup --baseline X=BASELINE --where ...
//   breakdown   {compute_s, comm_s, io_s, wait_s: report table --rows X --value V --where ...},
//               the parts some epoch recorded
//   epochs      report epochs: {columns, axes, rows} (the CV loss curves)
nlohmann::json FigureData(const std::string& sweep, const std::vector<ReportRun>& runs,
                          const std::string& x, const std::string& series,
                          const std::string& metric, const std::string& baseline,
                          const nlohmann::json& where, const nlohmann::json& breakdown_where) {
  auto attempt = [](const auto& make) -> nlohmann::json {
    try {
      return make();
    } catch (const Error& e) {
      return {{"error", e.what()}};
    }
  };
  nlohmann::json data = nlohmann::json::object();
  if (!x.empty() && !metric.empty()) {
    data["metric"] = attempt([&] { return TableData(sweep, runs, x, series, metric, where); });
  }
  if (!baseline.empty()) {
    data["speedup"] = attempt([&] {
      SpeedupOptions s;
      s.axis = x;
      s.baseline = baseline;
      s.where = Pairs(where);
      s.format = report::Format::kJson;
      return nlohmann::json::parse(SpeedupTable(sweep, runs, s));
    });
  }
  if (!x.empty()) {
    data["breakdown"] = attempt([&] {
      nlohmann::json parts = nlohmann::json::object();
      const std::vector<std::string> names = MetricNames(runs);
      for (const std::string& part : {MeanName(&EpochRow::compute_s), MeanName(&EpochRow::comm_s),
                                      MeanName(&EpochRow::io_s), MeanName(&EpochRow::wait_s)}) {
        // A part no epoch recorded is left out (drawn as 0), as plot.py leaves it out.
        if (std::find(names.begin(), names.end(), part) == names.end()) continue;
        parts[part] = TableData(sweep, runs, x, "", part, breakdown_where);
      }
      return parts;
    });
  }
  const EpochsTable epochs = MakeEpochsTable(sweep, runs);
  data["epochs"] = {{"columns", epochs.columns}, {"axes", epochs.axes}, {"rows", epochs.rows}};
  return data;
}

}  // namespace

nlohmann::json HtmlReportData(Store& store, const std::string& sweep, const HtmlReportOptions& o) {
  const std::vector<ReportRun> runs = LoadSweepRuns(store, sweep);
  MAVG_CHECK(!runs.empty(), "sweep '{}' has no runs", sweep);
  for (const auto& [axis, value] : o.figure_where) report::CheckAxis(runs, axis);
  nlohmann::json doc;
  doc["sweep"] = sweep;
  doc["generated"] = UtcNow();
  doc["db"] = store.Db().Path();
  doc["build"] = {{"git_commit", build_info::kGitCommit},
                  {"code_version", build_info::kCodeVersion}};
  doc["spec_yaml"] = store.GetSweep(sweep)->spec_yaml;
  doc["status"] = Status(store, sweep, runs);
  // The questions the spec declares, answered first (absent without `compare:`).
  try {
    const StoredContrasts stored =
        ParseStoredContrasts(doc["spec_yaml"].get<std::string>(), "sweep " + sweep + "'s spec");
    if (!stored.contrasts.empty()) {
      SweepRunsCache cache(store);
      cache.Add(sweep, runs);
      doc["contrasts"] = ContrastsJson(ComputeContrasts(sweep, stored, {}, cache));
    }
  } catch (const Error& e) {
    doc["contrasts"] = {{"error", e.what()}};
  }

  nlohmann::json axes = nlohmann::json::array();
  for (const auto& [axis, v] : runs[0].axes) {
    std::vector<const ReportRun*> all;
    for (const ReportRun& r : runs) all.push_back(&r);
    axes.push_back({{"name", axis}, {"values", report::Ordered(all, axis)}});
  }
  doc["axes"] = axes;

  // Metric tables, through `report table`'s own code.
  const std::vector<std::string> names = MetricNames(runs);
  const std::set<std::string> have(names.begin(), names.end());
  std::vector<std::string> metrics = o.metrics;
  if (metrics.empty()) {
    for (const std::string& m : DefaultMetrics()) {
      if (have.count(m)) metrics.push_back(m);
    }
  }
  const auto [rows, cols] =
      o.rows.empty() ? Layout(runs) : std::pair<std::string, std::string>{o.rows, o.cols};
  doc["tables"] = nlohmann::json::array();
  for (const std::string& m : metrics) {
    TableOptions t;
    t.rows = rows;
    t.cols = cols;
    t.value = m;
    t.format = report::Format::kJson;
    t.baseline_axis = o.baseline_axis;
    t.baseline = o.baseline;
    nlohmann::json table;
    try {
      table = nlohmann::json::parse(MetricTable(sweep, runs, t));
    } catch (const Error& e) {
      if (!o.metrics.empty()) throw;  // asked for by name: a mistake to report
      table = {{"error", e.what()}};
    }
    table["metric"] = m;
    doc["tables"].push_back(table);
  }

  // The speedup table, through `report speedup`'s own code; a sweep without the baseline's
  // axis or runs has none, and the page says why.
  try {
    SpeedupOptions s;
    s.axis = o.baseline_axis;
    s.baseline = o.baseline;
    s.interconnect = o.interconnect;
    s.format = report::Format::kJson;
    doc["speedup"] = nlohmann::json::parse(SpeedupTable(sweep, runs, s));
  } catch (const Error& e) {
    doc["speedup"] = {{"error", e.what()}};
  }

  const RunsTable table = LoadRunsTable(store, sweep);
  doc["runs"] = {{"columns", table.columns},
                 {"axes", table.axes},
                 {"config_keys", table.config_keys},
                 {"metrics", table.metrics},
                 {"rows", table.rows}};

  // The figures: the metric and speedup against workers (or the first varying axis), one line
  // per value of a second varying axis (the tables' column axis when it varies); every other
  // varying axis is held at one value (stated in the captions), never pooled into a mean --
  // except axes zipped with those two, which move with them.
  const std::vector<std::string> varying = VaryingAxes(runs);
  auto varies = [&](const std::string& a) {
    return std::find(varying.begin(), varying.end(), a) != varying.end();
  };
  const std::string x = varies("parallel.workers") ? "parallel.workers"
                        : varying.empty()          ? ""
                                                   : varying[0];
  std::string series = !cols.empty() && cols != x && varies(cols) ? cols : "";
  for (const std::string& a : varying) {
    if (series.empty() && a != x && !Follows(runs, a, x)) series = a;
  }
  nlohmann::json where = nlohmann::json::object();
  for (const auto& [k, v] : o.figure_where) where[k] = v;
  // Held at its smallest value among the runs that match what is held already, so that axes
  // zipped together are held at a pair that exists.
  auto matches = [&](const ReportRun& r) {
    for (const auto& [k, v] : where.items()) {
      const std::string* value = r.Axis(k);
      if (value == nullptr || *value != v.get<std::string>()) return false;
    }
    return true;
  };
  for (const std::string& a : varying) {
    if (a == x || a == series || where.contains(a)) continue;
    if (!x.empty() && Follows(runs, a, x)) continue;
    if (!series.empty() && Follows(runs, a, series)) continue;
    std::set<std::string, bool (*)(const std::string&, const std::string&)> values(
        [](const std::string& l, const std::string& r) { return NumericLess(l, r); });
    for (const ReportRun& r : runs) {
      if (matches(r)) values.insert(*r.Axis(a));
    }
    if (!values.empty()) where[a] = *values.begin();
  }
  nlohmann::json breakdown_where = where;
  if (!series.empty() && !breakdown_where.contains(series)) {
    breakdown_where[series] = *runs[0].Axis(series);
  }
  const std::string metric =
      First({ResultKey(&RunResult::wer), "test_error", "cv_error", "final_cv_loss"}, have);
  const bool speedup = x == "parallel.workers" && o.baseline_axis == "parallel.workers";
  doc["figures"] = {
      {"x", x},
      {"series", series},
      {"metric", metric},
      {"speedup", speedup},
      {"baseline", o.baseline},
      {"where", where},
      {"curves_where", where},
      {"breakdown_where", breakdown_where},
      {"data", FigureData(sweep, runs, x, series, metric, speedup ? o.baseline : "", where,
                          breakdown_where)},
  };
  return doc;
}

}  // namespace mavg
