#include "engine/report/tables.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "engine/core/error.h"
#include "engine/core/json.h"
#include "engine/core/logging.h"
#include "engine/core/words.h"
#include "engine/records/epoch_row.h"
#include "engine/records/run_result.h"
#include "engine/report/render.h"
#include "engine/report/time_to_target.h"
#include "engine/report/timing_checks.h"

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
  std::vector<std::string> out = SplitTrimmed(list);
  out.erase(std::remove(out.begin(), out.end(), std::string()), out.end());
  return out;
}

using RowKey = std::vector<std::string>;     // values of the row axes
using Key = std::pair<RowKey, std::string>;  // a cell: row values, column value

// "parallel.workers=2 parallel.average_every=5".
std::string CellName(const std::vector<std::string>& row_axes, const std::string& cols,
                     const Key& key) {
  std::vector<std::string> cell;
  for (size_t i = 0; i < row_axes.size(); ++i) cell.push_back(row_axes[i] + "=" + key.first[i]);
  if (!cols.empty()) cell.push_back(cols + "=" + key.second);
  return Join(cell, " ");
}

// The axes that change how many frames a run trains per epoch (a shard's frames after its last
// full averaging interval or minibatch are dropped): a table across one of them shows each
// cell's frames beside its metric, since a cell that trained fewer did less work.
bool ChangesFrames(const std::string& axis) {
  static const std::set<std::string> kAxes = {"parallel.average_every", "parallel.workers",
                                              "parallel.average_frames", "optimizer.minibatch"};
  return kAxes.count(axis) > 0;
}

// Frames per epoch differing by more than this fraction of the most are warned about.
constexpr double kFramesTolerance = 0.03;

// Frames trained per epoch, per cell, and what the table says about them.
struct CellFrames {
  std::map<Key, double> frames;    // mean over the cell's completed runs that recorded frames
  bool differ = false;             // not the same in every cell: shown in each
  std::vector<std::string> notes;  // lines under the table
  std::string warning;             // differ by more than kFramesTolerance (in notes too)
};

CellFrames FramesOfCells(const std::map<Key, std::vector<const ReportRun*>>& members,
                         const std::vector<Key>& order, const std::vector<std::string>& row_axes,
                         const std::string& cols, const std::string& value) {
  CellFrames c;
  const std::string name = MeanName(&EpochRow::frames);
  for (const Key& key : order) {
    const auto it = members.find(key);
    if (it == members.end()) continue;
    std::vector<double> frames;
    for (const ReportRun* r : it->second) {
      const auto f = r->values.find(name);
      if (r->status == RunState::kCompleted && f != r->values.end() && f->second > 0) {
        frames.push_back(f->second);
      }
    }
    if (!frames.empty()) c.frames[key] = report::Mean(frames);
  }
  if (c.frames.empty()) return c;
  Key most = order.front();
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const Key& key : order) {
    const auto it = c.frames.find(key);
    if (it == c.frames.end()) continue;
    lo = std::min(lo, it->second);
    if (it->second > hi) {
      most = key;
      hi = it->second;
    }
  }
  c.differ = lo != hi;
  if (!c.differ) {
    c.notes.push_back(fmt::format("Frames trained per epoch (all workers): {} in every cell.",
                                  report::Count(hi)));
    return c;
  }
  c.notes.push_back(
      "[N frames/epoch]: frames trained per epoch (all workers), mean over the cell's completed "
      "runs.");
  std::vector<std::string> fewer;
  for (const Key& key : order) {
    const auto it = c.frames.find(key);
    if (it == c.frames.end() || it->second >= hi * (1.0 - kFramesTolerance)) continue;
    fewer.push_back(fmt::format("{} trained {} ({} fewer)", CellName(row_axes, cols, key),
                                report::Count(it->second), report::Percent(1.0 - it->second / hi)));
  }
  if (!fewer.empty()) {
    c.warning = fmt::format(
        "Warning: frames trained per epoch differ by more than {} between cells: {}, against {} "
        "in {}. Their {} comes from unequal amounts of training (frames are dropped, e.g. after "
        "a shard's last full averaging interval).",
        report::Percent(kFramesTolerance), Join(fewer, "; "), report::Count(hi),
        CellName(row_axes, cols, most), value);
    c.notes.push_back(c.warning);
  }
  return c;
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
      MAVG_FAIL(
          "axis {} varies ({}) within the cell {}: fix it with --where {}=VALUE or make it the "
          "rows/cols (--rows A,B for several)",
          axis, Join({values.begin(), values.end()}, ", "), CellName(row_axes, o.cols, key), axis);
    }
  }
  const std::vector<std::string> col_values =
      o.cols.empty() ? std::vector<std::string>{""} : Ordered(sel, o.cols);
  // Across an axis that changes the frames trained, each cell's frames per epoch.
  std::vector<Key> cell_order;
  for (const auto& rv : row_values) {
    for (const auto& cv : col_values) cell_order.push_back({rv, cv});
  }
  const bool show_frames =
      std::any_of(free.begin(), free.end(), [](const std::string& a) { return ChangesFrames(a); });
  const CellFrames frames =
      show_frames ? FramesOfCells(members, cell_order, row_axes, o.cols, o.value) : CellFrames{};
  const bool count = report::IsCount(o.value);
  const bool timing = report::IsMeasuredTiming(o.value);
  std::vector<std::string> timing_notes;  // lines under the table (timing_checks.h)
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
    std::vector<const ReportRun*> with_value;
    for (const ReportRun* r : rs) {
      const auto it = r->values.find(o.value);
      if (r->status == RunState::kCompleted && it != r->values.end() && std::isfinite(it->second)) {
        with_value.push_back(r);
      } else {
        bad[key].insert(r->status == RunState::kCompleted ? "no value"
                                                          : std::string(ToString(r->status)));
      }
    }
    // A measured time: contended replicates are left out where others are not, and what makes
    // the cell's replicates disagree is said under the table.
    if (timing && !with_value.empty()) {
      const TimedRuns timed = CheckTimedRuns(with_value, CellName(row_axes, o.cols, key));
      with_value = timed.kept;
      for (const std::string& f : timed.flags) timing_notes.push_back("Warning: " + f + ".");
    }
    for (const ReportRun* r : with_value) cells[key].push_back(r->values.at(o.value));
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
        if (frames.differ) {
          const auto f = frames.frames.find({rv, cv});
          row.push_back(f == frames.frames.end() ? "" : fmt::format("{}", f->second));
        }
        rows.push_back(row);
      }
    }
    std::vector<std::string> header = row_axes;
    if (!o.cols.empty()) header.push_back(o.cols);
    header.insert(header.end(), {fmt::format("{}_{}", o.value, o.agg), o.value + "_std", "n"});
    if (ttt) header.push_back("runs");
    if (frames.differ) header.push_back(MeanName(&EpochRow::frames));
    if (!frames.warning.empty()) spdlog::warn("[report] {}", frames.warning);
    for (const std::string& n : timing_notes) spdlog::warn("[report] {}", n);
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
        row.push_back(Cell(s, o.agg, latex, count));
      }
      const auto f = frames.frames.find({rv, cv});
      if (frames.differ && f != frames.frames.end()) {
        row.back() += fmt::format(" [{} frames/epoch]", report::Count(f->second));
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
        const auto f = frames.frames.find({rv, cv});
        if (f != frames.frames.end()) c["frames_per_epoch"] = f->second;
        // How the cell's runs ran: a figure marks what simulated workers' times project.
        std::set<std::string> modes;
        if (const auto m = members.find({rv, cv}); m != members.end()) {
          for (const ReportRun* r : m->second) {
            const auto mode = r->texts.find(ResultKey(&RunResult::mode));
            if (r->status == RunState::kCompleted && mode != r->texts.end()) {
              modes.insert(mode->second);
            }
          }
        }
        if (!modes.empty()) c["modes"] = modes;
        t["cells"].push_back(std::move(c));
      }
    }
    std::vector<std::string> notes = frames.notes;
    notes.insert(notes.end(), timing_notes.begin(), timing_notes.end());
    t["notes"] = notes;
    return DumpJson(t, 1) + "\n";
  }
  if (latex) {
    if (!frames.warning.empty()) spdlog::warn("[report] {}", frames.warning);
    for (const std::string& n : timing_notes) spdlog::warn("[report] {}", n);
    return out + Render(header, rows, o.format, row_axes.size());
  }
  out += Render(header, rows, o.format, row_axes.size());
  for (const std::string& note : frames.notes) out += "\n" + note + "\n";
  for (const std::string& note : timing_notes) out += "\n" + note + "\n";
  return out;
}

}  // namespace mavg
