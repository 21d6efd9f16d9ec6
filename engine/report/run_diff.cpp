#include "engine/report/run_diff.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "engine/config/schema.h"
#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/json.h"
#include "engine/core/yaml.h"
#include "engine/records/run_result.h"
#include "engine/report/render.h"
#include "engine/report/sweep_data.h"
#include "engine/store/store.h"

namespace mavg {
namespace {

// Nested mappings as dotted keys, values as the file writes them.
void Flatten(const YAML::Node& n, const std::string& prefix,
             std::map<std::string, std::string>& out) {
  if (n.IsMap()) {
    for (const auto& kv : n) {
      const std::string k = kv.first.as<std::string>();
      Flatten(kv.second, prefix.empty() ? k : prefix + "." + k, out);
    }
  } else if (n.IsScalar()) {
    out[prefix] = n.Scalar();
  } else if (n.IsNull()) {
    out[prefix] = "";
  } else {
    YAML::Emitter e;
    e << YAML::Flow << n;
    out[prefix] = e.c_str();
  }
}

// The run's resolved config: config.yaml (written by mavg train), or the config a sweep wrote
// for a run that has not started.
std::map<std::string, std::string> ReadConfig(const std::string& dir) {
  std::string path = dir + "/config.yaml";
  if (!PathExists(path)) path = dir + "/sweep-config.yaml";
  MAVG_CHECK(PathExists(path), "{}: no config.yaml (not a run directory?)", dir);
  std::map<std::string, std::string> out;
  ReadingYaml(path, [&] { Flatten(LoadYamlStrict(ReadFile(path), path), "", out); });
  return out;
}

std::string Cell(const std::map<std::string, std::string>& m, const std::string& key) {
  const auto it = m.find(key);
  return it == m.end() ? "(absent)" : it->second.empty() ? "''" : it->second;
}

// Counts (epochs, frames) as whole numbers.
std::string Number(const std::map<std::string, double>& m, const std::string& key) {
  const auto it = m.find(key);
  return it == m.end() ? "–" : report::NumOf(key, it->second);
}

}  // namespace

std::string ResolveRunDir(const std::string& arg, const std::string& db) {
  if (IsDirectory(arg)) return arg;
  MAVG_CHECK(PathExists(db),
             "'{}' is not a run directory, and there is no results database {} "
             "to look it up as a run id",
             arg, db);
  MAVG_CHECK(arg.size() >= 4 && arg.find('/') == std::string::npos,
             "'{}' is neither a run directory nor a run id (or at least its first 4 characters)",
             arg);
  Store store(db, sql::OpenMode::kReadOnly);
  auto s = store.Db().Prepare("SELECT run_id, run_dir FROM runs WHERE substr(run_id, 1, ?) = ?");
  s.Bind(1, static_cast<int64_t>(arg.size())).Bind(2, arg);
  std::vector<std::pair<std::string, std::string>> found;
  while (s.Step()) found.emplace_back(s.Text(0), s.Text(1));
  MAVG_CHECK(!found.empty(), "'{}' is neither a run directory nor a run id in {}", arg, db);
  MAVG_CHECK(found.size() == 1, "run id prefix '{}' is ambiguous in {}: {}, {}{}", arg, db,
             found[0].first, found[1].first, found.size() > 2 ? ", ..." : "");
  MAVG_CHECK(IsDirectory(found[0].second), "run {}: its directory {} is gone", found[0].first,
             found[0].second);
  return found[0].second;
}

std::string RunDiff(const std::string& dir_a, const std::string& dir_b, const RunDiffOptions& o) {
  MAVG_CHECK(o.format == report::Format::kMd || o.format == report::Format::kJson,
             "--format must be md or json, not '{}'", o.format);
  const auto config_a = ReadConfig(dir_a), config_b = ReadConfig(dir_b);
  // The runs' files through the store's ingestion into a private in-memory database, then read
  // back as a report reads a sweep: the same metrics, derived the same way.
  Store mem(":memory:");
  mem.PutSweep({"diff", "", "diff", ""}, false);
  std::vector<RunRecord> records(2);
  records[0].run_id = "A", records[0].config_json = "{}", records[0].run_dir = dir_a;
  records[1].run_id = "B", records[1].config_json = "{}", records[1].run_dir = dir_b;
  mem.RegisterRuns("diff", records, {{"A", "[]", 0, 0}, {"B", "[]", 0, 1}});
  mem.IngestRun("A", dir_a);
  mem.IngestRun("B", dir_b);
  const std::vector<ReportRun> runs = LoadSweepRuns(mem, "diff");
  const ReportRun& a = runs.at(0);
  const ReportRun& b = runs.at(1);
  auto run_id = [](const ReportRun& r, const std::string& dir) {
    const auto it = r.texts.find(ResultKey(&RunResult::run_id));
    return it != r.texts.end() ? it->second : std::filesystem::path(dir).filename().string();
  };

  std::set<std::string> keys;
  for (const auto& [k, v] : config_a) keys.insert(k);
  for (const auto& [k, v] : config_b) keys.insert(k);
  std::vector<std::vector<std::string>> config_rows;
  int differ = 0;
  for (const std::string& k : keys) {
    const std::string va = Cell(config_a, k), vb = Cell(config_b, k);
    if (va != vb) ++differ;
    if (va == vb && !o.all) continue;
    const KeySpec* spec = FindKey(k);
    const bool outside = spec != nullptr && !spec->identity;
    config_rows.push_back({k + (outside ? " (not in the run id)" : ""), va, vb});
  }
  std::set<std::string> metrics;
  for (const auto& [k, v] : a.values) metrics.insert(k);
  for (const auto& [k, v] : b.values) metrics.insert(k);
  std::vector<std::vector<std::string>> metric_rows;
  for (const std::string& m : metrics) {
    std::string d = "–";
    if (a.values.count(m) && b.values.count(m))
      d = report::NumOf(m, b.values.at(m) - a.values.at(m));
    metric_rows.push_back({ShownResultName(m), Number(a.values, m), Number(b.values, m), d});
  }
  // Text results (mode, ...) after the numbers; what the header lines show is left out.
  const std::set<std::string> shown = {ResultKey(&RunResult::run_id), ResultKey(&RunResult::status),
                                       ResultKey(&RunResult::error)};
  std::set<std::string> texts;
  for (const ReportRun* r : {&a, &b}) {
    for (const auto& [k, v] : r->texts) {
      if (!shown.count(k) && !metrics.count(k)) texts.insert(k);
    }
  }
  for (const std::string& t : texts) {
    auto text = [&](const ReportRun& r) {
      const auto it = r.texts.find(t);
      return it == r.texts.end() ? std::string("–") : it->second;
    };
    metric_rows.push_back({t, text(a), text(b), "–"});
  }
  std::map<int, std::pair<std::string, std::string>> curve;
  for (const EpochRecord& e : a.epochs) {
    curve[e.epoch].first = e.cv_loss ? report::Num(*e.cv_loss) : "–";
  }
  for (const EpochRecord& e : b.epochs) {
    curve[e.epoch].second = e.cv_loss ? report::Num(*e.cv_loss) : "–";
  }
  std::vector<std::vector<std::string>> epoch_rows;
  for (const auto& [epoch, ab] : curve) {
    epoch_rows.push_back({std::to_string(epoch), ab.first.empty() ? "–" : ab.first,
                          ab.second.empty() ? "–" : ab.second});
  }

  if (o.format == report::Format::kJson) {
    auto side = [&](const ReportRun& r, const std::string& dir) {
      return nlohmann::json{{"run_dir", dir},
                            {"run_id", run_id(r, dir)},
                            {"status", std::string(ToString(r.status))},
                            {"reason", r.reason}};
    };
    nlohmann::json j = {{"a", side(a, dir_a)},
                        {"b", side(b, dir_b)},
                        {"config_keys", keys.size()},
                        {"config_differ", differ},
                        {"config", nlohmann::json::array()},
                        {"metrics", nlohmann::json::array()},
                        {"cv_loss", nlohmann::json::array()}};
    for (const auto& r : config_rows)
      j["config"].push_back({{"key", r[0]}, {"a", r[1]}, {"b", r[2]}});
    auto value = [](const ReportRun& r, const std::string& m) {
      const auto it = r.values.find(m);
      return it == r.values.end() ? nlohmann::json() : nlohmann::json(it->second);
    };
    for (const std::string& m : metrics) {
      j["metrics"].push_back(
          {{"name", ShownResultName(m)}, {"a", value(a, m)}, {"b", value(b, m)}});
    }
    for (size_t i = metrics.size(); i < metric_rows.size(); ++i) {
      const auto& r = metric_rows[i];
      auto text = [](const std::string& t) {
        return t == "–" ? nlohmann::json() : nlohmann::json(t);
      };
      j["metrics"].push_back({{"name", r[0]}, {"a", text(r[1])}, {"b", text(r[2])}});
    }
    for (const EpochRecord& e : a.epochs) {
      if (e.cv_loss)
        j["cv_loss"].push_back({{"run", "a"}, {"epoch", e.epoch}, {"cv_loss", *e.cv_loss}});
    }
    for (const EpochRecord& e : b.epochs) {
      if (e.cv_loss)
        j["cv_loss"].push_back({{"run", "b"}, {"epoch", e.epoch}, {"cv_loss", *e.cv_loss}});
    }
    return DumpJson(j, 1) + "\n";
  }
  std::string out;
  for (const auto& [label, r, dir] : {std::tuple{"A", &a, &dir_a}, std::tuple{"B", &b, &dir_b}}) {
    out += fmt::format("{}: {} (run {}, {}{})\n", label, *dir, run_id(*r, *dir), r->status,
                       r->reason.empty() ? "" : ": " + r->reason);
  }
  out += "\n";
  if (differ == 0) {
    out += fmt::format("Config: the same ({} keys).\n\n", keys.size());
  } else {
    out += fmt::format("Config: {} of {} keys differ{}.\n\n", differ, keys.size(),
                       o.all ? " (all keys shown)" : "");
  }
  if (!config_rows.empty())
    out += report::Render({"key", "A", "B"}, config_rows, report::Format::kMd, 3) + "\n";
  if (metric_rows.empty()) {
    out += "Metrics: neither run has any yet.\n";
  } else {
    out += "Metrics (B - A: the difference; – where a run has none):\n\n";
    out += report::Render({"metric", "A", "B", "B - A"}, metric_rows, report::Format::kMd);
  }
  if (!epoch_rows.empty()) {
    out += "\nCV loss per epoch:\n\n" +
           report::Render({"epoch", "A", "B"}, epoch_rows, report::Format::kMd);
  }
  return out;
}

}  // namespace mavg
