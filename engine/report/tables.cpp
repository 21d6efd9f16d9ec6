#include "engine/report/tables.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "engine/core/error.h"
#include "engine/report/perf_model.h"

namespace mavg {
namespace {

struct Stat {
  int n = 0;
  double mean = 0, std = 0, min = 0, max = 0;
  std::set<std::string> bad;  // statuses of runs without a value (failed, diverged, ...)
};

Stat Summarize(const std::vector<double>& v) {
  Stat s;
  s.n = static_cast<int>(v.size());
  if (v.empty()) return s;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  for (double x : v) s.mean += x / s.n;
  if (s.n > 1) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.std = std::sqrt(ss / (s.n - 1));
  }
  return s;
}

// 4 significant digits.
std::string Num(double x) {
  if (x == 0 || !std::isfinite(x)) return fmt::format("{}", x);
  const int digits = std::clamp(3 - static_cast<int>(std::floor(std::log10(std::fabs(x)))), 0, 6);
  return fmt::format("{:.{}f}", x, digits);
}

std::string Cell(const Stat& s, const std::string& agg, bool latex) {
  if (s.n == 0) {
    if (s.bad.empty()) return latex ? "--" : "–";
    std::string b;
    for (const auto& x : s.bad) b += (b.empty() ? "" : "/") + x;
    return b;
  }
  if (agg == "min") return fmt::format("{} (n={})", Num(s.min), s.n);
  if (agg == "max") return fmt::format("{} (n={})", Num(s.max), s.n);
  if (s.n == 1) return fmt::format("{} (n=1)", Num(s.mean));
  // Standard deviation with the mean's decimals.
  const std::string mean = Num(s.mean);
  const size_t dot = mean.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(mean.size() - dot - 1);
  return fmt::format("{} {} {:.{}f} (n={})", mean, latex ? "$\\pm$" : "±", s.std, decimals, s.n);
}

std::vector<std::string> Ordered(const std::vector<const ReportRun*>& runs,
                                 const std::string& axis) {
  std::vector<std::string> out;
  for (const ReportRun* r : runs) {
    const std::string* v = r->Axis(axis);
    if (v && std::find(out.begin(), out.end(), *v) == out.end()) out.push_back(*v);
  }
  return out;
}

void CheckAxis(const std::vector<ReportRun>& runs, const std::string& axis) {
  if (runs.empty() || runs[0].Axis(axis) != nullptr) return;
  std::string axes;
  for (const auto& [k, v] : runs[0].axes) axes += (axes.empty() ? "" : ", ") + k;
  MAVG_FAIL("'{}' is not an axis of this sweep (axes: {})", axis, axes);
}

std::string Render(const std::vector<std::string>& header,
                   const std::vector<std::vector<std::string>>& rows, const std::string& format) {
  std::string out;
  if (format == "csv") {
    auto csv = [](const std::string& s) {
      if (s.find_first_of(",\"\n") == std::string::npos) return s;
      std::string q = "\"";
      for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
      return q + "\"";
    };
    for (size_t i = 0; i < header.size(); ++i) out += (i ? "," : "") + csv(header[i]);
    out += "\n";
    for (const auto& r : rows) {
      for (size_t i = 0; i < r.size(); ++i) out += (i ? "," : "") + csv(r[i]);
      out += "\n";
    }
  } else if (format == "latex") {
    out += "\\begin{tabular}{l" + std::string(header.size() - 1, 'r') + "}\n\\hline\n";
    auto esc = [](std::string s) {
      std::string o;
      for (char c : s)
        o += (c == '_' || c == '%' || c == '&') ? std::string("\\") + c : std::string(1, c);
      return o;
    };
    for (size_t i = 0; i < header.size(); ++i) out += (i ? " & " : "") + esc(header[i]);
    out += " \\\\\n\\hline\n";
    for (const auto& r : rows) {
      // The first cell is an axis value (text); the others are numbers we formatted.
      for (size_t i = 0; i < r.size(); ++i) out += (i ? " & " + r[i] : esc(r[i]));
      out += " \\\\\n";
    }
    out += "\\hline\n\\end{tabular}\n";
  } else {
    for (const auto& h : header) out += "| " + h + " ";
    out += "|\n";
    for (size_t i = 0; i < header.size(); ++i) out += i ? "|---:" : "|---";
    out += "|\n";
    for (const auto& r : rows) {
      for (const auto& c : r) out += "| " + c + " ";
      out += "|\n";
    }
  }
  return out;
}

}  // namespace

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

std::string MetricTable(const std::string& sweep, const std::vector<ReportRun>& runs,
                        const TableOptions& o) {
  MAVG_CHECK(o.agg == "mean" || o.agg == "min" || o.agg == "max",
             "--agg must be mean, min or max, not '{}'", o.agg);
  MAVG_CHECK(o.format == "md" || o.format == "csv" || o.format == "latex",
             "--format must be md, csv or latex, not '{}'", o.format);
  std::vector<std::string> free = {o.rows};
  if (!o.cols.empty()) free.push_back(o.cols);
  const std::vector<const ReportRun*> sel = SelectRuns(runs, o.where, free);
  const std::vector<std::string> metrics = MetricNames(runs);
  MAVG_CHECK(std::find(metrics.begin(), metrics.end(), o.value) != metrics.end() ||
                 std::none_of(runs.begin(), runs.end(),
                              [](const ReportRun& r) { return r.status == "completed"; }),
             "no run of sweep '{}' has the metric '{}' (available: {})", sweep, o.value, [&] {
               std::string s;
               for (const auto& m : metrics) s += (s.empty() ? "" : ", ") + m;
               return s;
             }());
  const std::vector<std::string> row_values = Ordered(sel, o.rows);
  const std::vector<std::string> col_values =
      o.cols.empty() ? std::vector<std::string>{""} : Ordered(sel, o.cols);
  std::map<std::pair<std::string, std::string>, std::vector<double>> cells;
  std::map<std::pair<std::string, std::string>, std::set<std::string>> bad;
  for (const ReportRun* r : sel) {
    const auto key = std::make_pair(*r->Axis(o.rows), o.cols.empty() ? "" : *r->Axis(o.cols));
    const auto it = r->values.find(o.value);
    if (r->status == "completed" && it != r->values.end() && std::isfinite(it->second)) {
      cells[key].push_back(it->second);
    } else {
      bad[key].insert(r->status == "completed" ? "no value" : r->status);
    }
  }
  if (o.format == "csv") {
    std::vector<std::vector<std::string>> rows;
    for (const auto& rv : row_values) {
      for (const auto& cv : col_values) {
        Stat s = Summarize(cells[{rv, cv}]);
        std::vector<std::string> row = {rv};
        if (!o.cols.empty()) row.push_back(cv);
        if (s.n == 0) {
          row.insert(row.end(), {"", "", "0"});
        } else {
          row.insert(row.end(), {fmt::format("{}", o.agg == "min"   ? s.min
                                                   : o.agg == "max" ? s.max
                                                                    : s.mean),
                                 fmt::format("{}", s.std), std::to_string(s.n)});
        }
        rows.push_back(row);
      }
    }
    std::vector<std::string> header = {o.rows};
    if (!o.cols.empty()) header.push_back(o.cols);
    header.insert(header.end(), {o.value + "_" + o.agg, o.value + "_std", "n"});
    return Render(header, rows, "csv");
  }
  std::vector<std::string> header = {o.cols.empty() ? o.rows : o.rows + " \\ " + o.cols};
  for (const auto& cv : col_values) header.push_back(o.cols.empty() ? o.value : cv);
  std::vector<std::vector<std::string>> rows;
  for (const auto& rv : row_values) {
    std::vector<std::string> row = {rv};
    for (const auto& cv : col_values) {
      Stat s = Summarize(cells[{rv, cv}]);
      s.bad = bad[{rv, cv}];
      row.push_back(Cell(s, o.agg, o.format == "latex"));
    }
    rows.push_back(std::move(row));
  }
  std::string out;
  if (o.format == "md") {
    out += fmt::format("{} of sweep {} ({}{}):\n\n", o.value, sweep, o.agg,
                       o.agg == "mean" ? " ± std over replicates" : "");
  }
  return out + Render(header, rows, o.format);
}

std::string SpeedupTable(const std::string& sweep, const std::vector<ReportRun>& runs,
                         const SpeedupOptions& o) {
  MAVG_CHECK(o.format == "md" || o.format == "csv" || o.format == "latex",
             "--format must be md, csv or latex, not '{}'", o.format);
  const std::vector<const ReportRun*> sel = SelectRuns(runs, o.where, {o.axis});
  std::optional<Interconnect> link;
  if (!o.fit.empty()) link = FitInterconnect(o.fit);
  if (!o.interconnect.empty()) link = FindInterconnect(o.interconnect);
  const Interconnect* staging = o.staging.empty() ? nullptr : &FindInterconnect(o.staging);

  struct Row {
    std::vector<double> measured, projected, modelled, frames, comm;
    int workers = 1;
    bool simulated = false;
  };
  std::map<std::string, Row> by_value;
  std::vector<std::string> order = Ordered(sel, o.axis);
  for (const ReportRun* r : sel) {
    if (r->status != "completed" || !r->values.count("epoch_s")) continue;
    Row& row = by_value[*r->Axis(o.axis)];
    const double n = r->values.count("world_size") ? r->values.at("world_size") : 1;
    row.workers = static_cast<int>(n);
    const auto mode = r->texts.find("mode");
    row.simulated = mode != r->texts.end() && mode->second == "simulated";
    const double epoch = r->values.at("epoch_s");
    const double comm = r->values.count("comm_s") ? r->values.at("comm_s") : 0.0;
    if (!row.simulated) row.measured.push_back(epoch);
    // Projected: simulated workers' projection, or the measured time when nothing is simulated.
    const double projected = row.simulated && r->values.count("projected_epoch_s")
                                 ? r->values.at("projected_epoch_s")
                                 : epoch;
    row.projected.push_back(projected);
    row.comm.push_back(comm);
    if (r->values.count("frames_per_epoch")) row.frames.push_back(r->values.at("frames_per_epoch"));
    if (link) {
      // Compute part of the projection (this machine's averaging removed) + the model's.
      const double averagings = r->values.count("averagings") ? r->values.at("averagings") : 0;
      const double bytes = 4.0 * (r->values.count("num_params") ? r->values.at("num_params") : 0);
      const double compute = projected - (n > 1 ? comm : 0.0);
      row.modelled.push_back(
          compute + averagings * AveragingTime(bytes, static_cast<int>(n), *link, staging).Total());
    }
  }
  MAVG_CHECK(by_value.count(o.baseline), "no completed run with {}={} to serve as the baseline",
             o.axis, o.baseline);
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? std::nan("") : s / v.size();
  };
  const Row& base = by_value.at(o.baseline);
  const double base_measured = mean(base.measured), base_projected = mean(base.projected);
  const double base_model = mean(base.modelled);
  std::vector<std::string> header = {o.axis,
                                     "frames/epoch",
                                     "measured epoch s",
                                     "measured speedup",
                                     "measured efficiency",
                                     "projected epoch s",
                                     "projected speedup",
                                     "projected efficiency"};
  if (link) {
    header.insert(header.end(),
                  {"model epoch s (" + link->name + ")", "model speedup", "model efficiency"});
  }
  std::vector<std::vector<std::string>> rows;
  // Efficiency = speedup x baseline workers / workers (the baseline need not be 1 worker).
  auto triple = [&](double t, double base_t, int n) -> std::vector<std::string> {
    if (!std::isfinite(t) || !std::isfinite(base_t)) return {"–", "–", "–"};
    return {Num(t), fmt::format("{:.2f}", base_t / t),
            fmt::format("{:.2f}", base_t / t * base.workers / n)};
  };
  for (const auto& v : order) {
    if (!by_value.count(v)) {
      std::vector<std::string> row = {v};
      row.resize(header.size(), "–");
      rows.push_back(row);
      continue;
    }
    const Row& r = by_value.at(v);
    std::vector<std::string> row = {v, r.frames.empty() ? "–" : Num(mean(r.frames))};
    auto m = triple(mean(r.measured), base_measured, r.workers);
    if (r.measured.empty()) m = {"simulated", "–", "–"};
    row.insert(row.end(), m.begin(), m.end());
    auto p = triple(mean(r.projected), base_projected, r.workers);
    row.insert(row.end(), p.begin(), p.end());
    if (link) {
      auto q = triple(mean(r.modelled), base_model, r.workers);
      row.insert(row.end(), q.begin(), q.end());
    }
    rows.push_back(std::move(row));
  }
  std::string out;
  if (o.format == "md") {
    out += fmt::format(
        "Speedup of sweep {} against {}={} (epoch = training time without CV). measured: real "
        "processes (MPI ranks or one worker); projected: simulated workers' slowest worker per "
        "averaging interval plus this machine's measured averaging time (a projection, not a "
        "measurement){}.\n\n",
        sweep, o.axis, o.baseline,
        link ? fmt::format("; model: the projection's compute plus an alpha-beta all-reduce on {} "
                           "({:.2f} GB/s){}",
                           link->description, link->bandwidth / 1e9,
                           staging ? " with host staging over " + staging->description : "")
             : "");
  }
  return out + Render(header, rows, o.format);
}

}  // namespace mavg
