#pragma once
// What `mavg report html` puts on its page, as one JSON document that analysis/report_html.py
// lays out (Jinja2), its figures drawn by analysis/plot.py's drawing code. Every number on the
// page comes from here, the code behind `report table`, `report speedup`, `report runs` and
// `report epochs`: the page recomputes nothing, and the database is read once.
//   sweep, generated, db, build       what and when
//   spec_yaml                         the spec as the store keeps it
//   status                            runs per plan state (as `sweep status`), the problems
//   contrasts                         the spec's `compare:` answered (ContrastsJson; absent
//                                     without one; {"error": why} when it cannot be)
//   axes                              every axis with its values in plan order
//   tables                            one metric table per metric (MetricTable, json format)
//   speedup                           SpeedupTable (json format), or {"error": why not}
//   runs                              LoadRunsTable: columns, axes, config_keys, metrics, rows
//   figures                           what plot.py draws: x, series, metric, where per figure,
//                                     and under "data" the reports each figure is drawn from
//                                     (as plot.py's command line gets them from mavg)

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "engine/store/store.h"

namespace mavg {

struct HtmlReportOptions {
  std::vector<std::string> metrics;  // one table each (empty: the main ones the runs have)
  std::string rows, cols;            // table layout (empty: chosen from the axes)
  std::string baseline_axis = "parallel.workers", baseline = "1";  // speedup's reference runs
  std::string interconnect = "ib-fdr";  // the speedup table's model column ("": none)
  // Fixes other axes in the time-breakdown and CV-curve figures (default: the breakdown at the
  // first value of the series axis, every run's curve).
  std::vector<std::pair<std::string, std::string>> figure_where;
};

nlohmann::json HtmlReportData(Store& store, const std::string& sweep,
                              const HtmlReportOptions& options);

}  // namespace mavg
