#include "engine/report/tables.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "engine/core/error.h"
#include "engine/core/json.h"
#include "engine/report/render.h"
#include "engine/report/time_to_target.h"

namespace mavg {

using report::Cell;
using report::CheckAxis;
using report::Join;
using report::Num;
using report::Ordered;
using report::Render;
using report::Stat;
using report::Summarize;

std::vector<const ReportRun*> SelectRuns(
    const std::vector<ReportRun>& runs,
    const std::vector<std::pair<std::string, std::string>>& where,
    const std::vector<std::string>& free_axes) {
  for (const auto& [k, v] : where) CheckAxis(runs, k);
  for (const auto& a : free_axes) CheckAxis(runs, a);
  std::vector<const ReportRun*> out;
  for (const ReportRun& r : runs) {
    const bool keep = std::all_of(where.begin(), where.end(), [&](const auto& kv) {
      const std::string* v = r.Axis(kv.first);
      return v && *v == kv.second;
    });
    if (keep) out.push_back(&r);
  }
  MAVG_CHECK(!out.empty(), "no run of the sweep matches the --where filters");
  for (const auto& [axis, value] : out[0]->axes) {
    if (std::find(free_axes.begin(), free_axes.end(), axis) != free_axes.end()) continue;
    std::set<std::string> values;
    for (const ReportRun* r : out) values.insert(*r->Axis(axis));
    if (values.size() > 1) {
      std::string list;
      for (const auto& v : values) list += (list.empty() ? "" : ", ") + v;
      MAVG_FAIL("axis {} varies ({}): fix it with --where {}=VALUE or make it the rows/cols", axis,
                list, axis);
    }
  }
  return out;
}

namespace {

// "a,b, c" -> {a, b, c}.
std::vector<std::string> SplitAxes(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    std::string a = list.substr(start, comma - start);
    a.erase(0, a.find_first_not_of(' '));
    a.erase(a.find_last_not_of(' ') + 1);
    if (!a.empty()) out.push_back(a);
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::string MetricTable(const std::string& sweep, const std::vector<ReportRun>& runs,
                        const TableOptions& o) {
  const std::vector<std::string> row_axes = SplitAxes(o.rows);
  MAVG_CHECK(!row_axes.empty(), "--rows needs an axis (or several: --rows A,B)");
  MAVG_CHECK(std::find(row_axes.begin(), row_axes.end(), o.cols) == row_axes.end(),
             "{} is both a row and the column axis", o.cols);
  std::vector<std::string> free = row_axes;
  if (!o.cols.empty()) free.push_back(o.cols);
  // Filter only: whether other axes vary is checked per cell below.
  std::vector<std::string> all_axes = free;
  if (!runs.empty()) {
    for (const auto& [axis, v] : runs[0].axes) all_axes.push_back(axis);
  }
  const std::vector<const ReportRun*> sel = SelectRuns(runs, o.where, all_axes);
  const std::vector<std::string> metrics = MetricNames(runs);
  // time_to_target is not stored per run: it depends on the baseline runs' final CV loss.
  const bool ttt = o.value == kTimeToTarget;
  std::optional<Baselines> baselines;
  if (ttt) {
    CheckAxis(runs, o.baseline_axis);
    baselines.emplace(runs, o.baseline_axis, o.baseline);
    MAVG_CHECK(!baselines->Empty(),
               "no completed run with {}={} to serve as the baseline of time_to_target "
               "(--baseline AXIS=VALUE)",
               o.baseline_axis, o.baseline);
  }
  MAVG_CHECK(ttt || std::find(metrics.begin(), metrics.end(), o.value) != metrics.end() ||
                 std::none_of(runs.begin(), runs.end(),
                              [](const ReportRun& r) { return r.status == RunState::kCompleted; }),
             "no run of sweep '{}' has the metric '{}' (available: {})", sweep, o.value,
             Join(metrics, ", "));

  using RowKey = std::vector<std::string>;  // values of the row axes
  using Key = std::pair<RowKey, std::string>;
  std::vector<RowKey> row_values;  // in plan order of first appearance
  std::map<Key, std::vector<const ReportRun*>> members;
  for (const ReportRun* r : sel) {
    RowKey rk;
    for (const auto& a : row_axes) rk.push_back(*r->Axis(a));
    if (std::find(row_values.begin(), row_values.end(), rk) == row_values.end()) {
      row_values.push_back(rk);
    }
    members[{rk, o.cols.empty() ? "" : *r->Axis(o.cols)}].push_back(r);
  }
  // A cell never mixes settings: any other axis must be constant inside it (an axis that
  // follows from the rows, e.g. a zipped one, may still vary across the table).
  for (const auto& [axis, first] : sel[0]->axes) {
    if (std::find(free.begin(), free.end(), axis) != free.end()) continue;
    for (const auto& [key, rs] : members) {
      std::set<std::string> values;
      for (const ReportRun* r : rs) values.insert(*r->Axis(axis));
      if (values.size() < 2) continue;
      std::vector<std::string> cell;
      for (size_t i = 0; i < row_axes.size(); ++i) {
        cell.push_back(row_axes[i] + "=" + key.first[i]);
      }
      if (!o.cols.empty()) cell.push_back(o.cols + "=" + key.second);
      MAVG_FAIL(
          "axis {} varies ({}) within the cell {}: fix it with --where {}=VALUE or make it the "
          "rows/cols (--rows A,B for several)",
          axis, Join({values.begin(), values.end()}, ", "), Join(cell, " "), axis);
    }
  }
  const std::vector<std::string> col_values =
      o.cols.empty() ? std::vector<std::string>{""} : Ordered(sel, o.cols);
  std::map<Key, std::vector<double>> cells;
  std::map<Key, std::set<std::string>> bad;
  std::map<Key, int> tried;  // time_to_target: runs counted
  for (const auto& [key, rs] : members) {
    if (ttt) {
      const CellTimesToTarget t = TimesToTarget(rs, *baselines);
      cells[key] = t.reached;
      tried[key] = t.counted;
      for (const ReportRun* r : rs) {
        if (!CountsForTimeToTarget(*r)) bad[key].insert(std::string(ToString(r->status)));
      }
      continue;
    }
    for (const ReportRun* r : rs) {
      const auto it = r->values.find(o.value);
      if (r->status == RunState::kCompleted && it != r->values.end() && std::isfinite(it->second)) {
        cells[key].push_back(it->second);
      } else {
        bad[key].insert(r->status == RunState::kCompleted ? "no value"
                                                          : std::string(ToString(r->status)));
      }
    }
  }
  if (o.format == report::Format::kCsv) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& rv : row_values) {
      for (const auto& cv : col_values) {
        Stat s = Summarize(cells[{rv, cv}]);
        std::vector<std::string> row = rv;
        if (!o.cols.empty()) row.push_back(cv);
        if (s.n == 0) {
          // Blank, not 0: e.g. a target never reached has no time.
          row.insert(row.end(), {"", "", "0"});
        } else {
          row.insert(row.end(), {fmt::format("{}", o.agg == report::Aggregate::kMin   ? s.min
                                                   : o.agg == report::Aggregate::kMax ? s.max
                                                                                      : s.mean),
                                 fmt::format("{}", s.std), std::to_string(s.n)});
        }
        if (ttt) row.push_back(std::to_string(tried[{rv, cv}]));
        rows.push_back(row);
      }
    }
    std::vector<std::string> header = row_axes;
    if (!o.cols.empty()) header.push_back(o.cols);
    header.insert(header.end(), {fmt::format("{}_{}", o.value, o.agg), o.value + "_std", "n"});
    if (ttt) header.push_back("runs");
    return Render(header, rows, report::Format::kCsv);
  }
  std::vector<std::string> header = row_axes;
  if (!o.cols.empty()) header.back() += " \\ " + o.cols;
  for (const auto& cv : col_values) header.push_back(o.cols.empty() ? o.value : cv);
  std::vector<std::vector<std::string>> rows;
  const bool latex = o.format == report::Format::kLatex;
  for (const auto& rv : row_values) {
    std::vector<std::string> row = rv;
    for (const auto& cv : col_values) {
      Stat s = Summarize(cells[{rv, cv}]);
      s.bad = bad[{rv, cv}];
      const int m = tried[{rv, cv}];
      if (ttt && m > 0) {
        // The value (blank when no replicate reached the target) and how many of how many did.
        const std::string v = s.n == 0                           ? ""
                              : o.agg == report::Aggregate::kMin ? Num(s.min)
                              : o.agg == report::Aggregate::kMax ? Num(s.max)
                                                                 : report::MeanStd(s, latex);
        row.push_back(fmt::format("{}{}({} of {} reached)", v, v.empty() ? "" : " ", s.n, m));
      } else {
        row.push_back(Cell(s, o.agg, latex));
      }
    }
    rows.push_back(std::move(row));
  }
  std::string out;
  if (!latex && ttt) {
    out += fmt::format(
        "time_to_target of sweep {} ({}{} reached it): seconds of training until the end of the "
        "first accepted epoch whose CV loss is at most the target, the mean final CV loss of the "
        "{}={} runs{}. {}\n\n",
        sweep, o.agg,
        o.agg == report::Aggregate::kMean ? " ± std over the replicates that"
                                          : " over the runs that",
        o.baseline_axis, o.baseline,
        baselines->Varying().empty() ? "" : " with the same " + Join(baselines->Varying(), ", "),
        kTimeToTargetClock);
  } else if (!latex) {
    out += fmt::format("{} of sweep {} ({}{}):\n\n", o.value, sweep, o.agg,
                       o.agg == report::Aggregate::kMean ? " ± std over replicates" : "");
  }
  if (o.format == report::Format::kJson) {
    nlohmann::json t = report::TableJson(out.substr(0, out.find_last_not_of('\n') + 1), header,
                                         rows, row_axes.size());
    // The cells' numbers unrounded, one object per cell as the csv format has them, for a
    // program (the figures) that draws what the table shows.
    t["cells"] = nlohmann::json::array();
    for (const auto& rv : row_values) {
      for (const auto& cv : col_values) {
        const Stat s = Summarize(cells[{rv, cv}]);
        nlohmann::json c = {{"row", rv}, {"n", s.n}};
        if (!o.cols.empty()) c["col"] = cv;
        if (s.n > 0) {
          c["mean"] = s.mean;
          c["std"] = s.std;
          c["min"] = s.min;
          c["max"] = s.max;
        }
        if (ttt) c["runs"] = tried[{rv, cv}];
        t["cells"].push_back(std::move(c));
      }
    }
    return DumpJson(t, 1) + "\n";
  }
  return out + Render(header, rows, o.format, row_axes.size());
}

}  // namespace mavg
