#include "engine/report/runs_table.h"

#include <algorithm>
#include <map>
#include <set>

#include "engine/core/error.h"
#include "engine/core/json.h"
#include "engine/records/epoch_row.h"
#include "engine/records/run_result.h"
#include "engine/report/sweep_data.h"

namespace mavg {
namespace {

// Nested objects as dotted keys ({"parallel": {"workers": 2}} -> parallel.workers: 2).
void Flatten(const nlohmann::json& j, const std::string& prefix,
             std::map<std::string, nlohmann::json>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) Flatten(v, prefix.empty() ? k : prefix + "." + k, out);
  } else if (!prefix.empty()) {
    out[prefix] = j;
  }
}

// The metrics a researcher looks at first; the others follow in alphabetical order.
const std::vector<std::string>& Leading() {
  static const std::vector<std::string> kLeading = {ResultKey(&RunResult::wer),
                                                    ResultKey(&RunResult::wer_dev),
                                                    ResultKey(&RunResult::ser),
                                                    "test_error",
                                                    ResultKey(&RunResult::test_acc),
                                                    ResultKey(&RunResult::test_loss),
                                                    "cv_error",
                                                    ResultKey(&RunResult::cv_acc),
                                                    ResultKey(&RunResult::cv_loss),
                                                    "final_cv_loss",
                                                    ResultKey(&RunResult::epochs),
                                                    kEpochSecondsMean,
                                                    MeanName(&EpochRow::projected_wall_s),
                                                    ResultKey(&RunResult::wall_s),
                                                    ResultKey(&RunResult::attempts),
                                                    ResultKey(&RunResult::world_size)};
  return kLeading;
}

// Text results that repeat another column.
const std::set<std::string>& TextSkipped() {
  static const std::set<std::string> kSkipped = {
      ResultKey(&RunResult::status), ResultKey(&RunResult::run_id), ResultKey(&RunResult::error)};
  return kSkipped;
}

std::string CsvCell(const nlohmann::json& v) {
  std::string s;
  if (v.is_null()) return "";
  if (v.is_string()) {
    s = v.get<std::string>();
  } else if (v.is_number_float()) {
    s = fmt::format("{}", v.get<double>());  // shortest text that reads back the same
  } else {
    s = DumpJson(v);
  }
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

RunsTable LoadRunsTable(Store& store, const std::string& sweep) {
  const std::vector<ReportRun> runs = LoadSweepRuns(store, sweep);
  // The parts of a run the report rows do not carry: the whole config and the run dir.
  std::map<std::string, std::map<std::string, nlohmann::json>> configs;
  std::map<std::string, std::string> dirs;
  {
    auto s = store.Db().Prepare(
        "SELECT r.run_id, r.config_json, r.run_dir FROM sweep_runs sr JOIN runs r ON r.run_id = "
        "sr.run_id WHERE sr.sweep = ?");
    s.Bind(1, sweep);
    while (s.Step()) {
      const nlohmann::json c = nlohmann::json::parse(s.Text(1), nullptr, false);
      Flatten(c.is_discarded() ? nlohmann::json::object() : c, "", configs[s.Text(0)]);
      dirs[s.Text(0)] = s.Text(2);
    }
  }
  RunsTable t;
  if (!runs.empty()) {
    for (const auto& [axis, value] : runs[0].axes) t.axes.push_back(axis);
  }
  // Config keys whose (present) values differ between runs.
  {
    std::map<std::string, std::set<std::string>> values;
    for (const auto& [id, config] : configs) {
      for (const auto& [key, v] : config) values[key].insert(DumpJson(v));
    }
    for (const auto& [key, seen] : values) {
      if (seen.size() > 1 && std::find(t.axes.begin(), t.axes.end(), key) == t.axes.end()) {
        t.config_keys.push_back(key);
      }
    }
  }
  std::set<std::string> numeric, text;
  for (const ReportRun& r : runs) {
    for (const auto& [k, v] : r.values) numeric.insert(k);
    for (const auto& [k, v] : r.texts) {
      if (!TextSkipped().count(k)) text.insert(k);
    }
  }
  std::vector<std::string> metric_keys;  // the names in ReportRun; columns may be prefixed
  for (const std::string& k : Leading()) {
    if (numeric.count(k)) metric_keys.push_back(k);
  }
  for (const std::string& k : numeric) {
    if (std::find(Leading().begin(), Leading().end(), k) == Leading().end()) {
      metric_keys.push_back(k);
    }
  }
  for (const std::string& k : text) {
    if (!numeric.count(k)) metric_keys.push_back(k);
  }
  t.columns = {"sweep", "run_id", "replicate", "status", "reason"};
  t.columns.insert(t.columns.end(), t.axes.begin(), t.axes.end());
  t.columns.insert(t.columns.end(), t.config_keys.begin(), t.config_keys.end());
  for (const std::string& k : metric_keys) {
    const bool taken =
        std::find(t.columns.begin(), t.columns.end(), k) != t.columns.end() || k == "run_dir";
    // Named as reports show it: a key of earlier builds that does not say it was projected is
    // labelled (frames_per_s).
    t.metrics.push_back(taken ? "result." + k : ShownResultName(k));
    t.columns.push_back(t.metrics.back());
  }
  t.columns.push_back("run_dir");

  for (const ReportRun& r : runs) {
    std::vector<nlohmann::json> row = {sweep, r.run_id, r.replicate,
                                       std::string(ToString(r.status)), r.reason};
    const auto& config = configs[r.run_id];
    for (const auto& [axis, value] : r.axes) {
      // Typed from the config; an axis outside the run id (execution-only) as the plan shows it.
      const auto it = config.find(axis);
      row.push_back(it != config.end() ? it->second : nlohmann::json(value));
    }
    for (const std::string& key : t.config_keys) {
      const auto it = config.find(key);
      row.push_back(it != config.end() ? it->second : nlohmann::json());
    }
    for (const std::string& k : metric_keys) {
      if (const auto v = r.values.find(k); v != r.values.end()) {
        row.push_back(v->second);
      } else if (const auto x = r.texts.find(k); x != r.texts.end()) {
        row.push_back(x->second);
      } else {
        row.push_back(nullptr);
      }
    }
    row.push_back(dirs[r.run_id]);
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string RowsCsv(const std::vector<std::string>& columns,
                    const std::vector<std::vector<nlohmann::json>>& rows) {
  std::string out;
  for (size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + CsvCell(columns[i]);
  out += "\n";
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) out += (i ? "," : "") + CsvCell(row[i]);
    out += "\n";
  }
  return out;
}

std::string RowsJson(const std::vector<std::string>& columns,
                     const std::vector<std::vector<nlohmann::json>>& rows) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const auto& row : rows) {
    nlohmann::ordered_json o = nlohmann::ordered_json::object();
    for (size_t i = 0; i < row.size(); ++i) o[columns[i]] = row[i];
    all.push_back(std::move(o));
  }
  return all.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string RunsCsv(const RunsTable& t) { return RowsCsv(t.columns, t.rows); }

std::string RunsJson(const RunsTable& t) { return RowsJson(t.columns, t.rows); }

EpochsTable MakeEpochsTable(const std::string& sweep, const std::vector<ReportRun>& runs) {
  EpochsTable t;
  if (!runs.empty()) {
    for (const auto& [axis, value] : runs[0].axes) t.axes.push_back(axis);
  }
  // Each epoch's fields as its record writes them; the columns are the fields any epoch has.
  std::vector<std::vector<nlohmann::json>> records;  // per run, per epoch
  std::vector<bool> present(std::size(kEpochFields), false);
  for (const ReportRun& r : runs) {
    records.emplace_back();
    for (const EpochRecord& e : r.epochs) {
      records.back().push_back(ToJson(e.row));
      for (size_t i = 0; i < std::size(kEpochFields); ++i) {
        if (records.back().back().contains(std::string(kEpochFields[i].name))) present[i] = true;
      }
    }
  }
  std::vector<std::string> fields = {"epoch"};
  for (size_t i = 0; i < std::size(kEpochFields); ++i) {
    const std::string name(kEpochFields[i].name);
    if (present[i] && name != "epoch") fields.push_back(name);
  }
  t.columns = {"sweep", "run_id", "replicate", "status"};
  t.columns.insert(t.columns.end(), t.axes.begin(), t.axes.end());
  t.columns.insert(t.columns.end(), fields.begin(), fields.end());
  t.columns.push_back("train_s");

  for (size_t i = 0; i < runs.size(); ++i) {
    const ReportRun& r = runs[i];
    for (size_t k = 0; k < r.epochs.size(); ++k) {
      std::vector<nlohmann::json> row = {sweep, r.run_id, r.replicate,
                                         std::string(ToString(r.status))};
      for (const auto& [axis, value] : r.axes) row.push_back(value);
      const nlohmann::json& record = records[i][k];
      for (const std::string& f : fields) {
        const auto it = record.find(f);
        row.push_back(it == record.end() ? nlohmann::json() : *it);
      }
      row.push_back(r.epochs[k].train_s);
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

}  // namespace mavg
