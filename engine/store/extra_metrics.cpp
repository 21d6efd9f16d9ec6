#include "engine/store/extra_metrics.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/json.h"
#include "engine/core/sysinfo.h"
#include "engine/records/epoch_row.h"
#include "engine/records/run_result.h"

namespace mavg {

namespace {

// What reports derive per run beyond the result's fields and the epochs' means (report/): an
// outside metric never takes one of these names either.
constexpr const char* kReportDerivedNames[] = {"test_error", "cv_error", "final_cv_loss",
                                               "time_to_target", "time_to_target_s"};

// Every result and report metric mavg writes or derives itself: result.json's fields
// (records/run_result.h), the per-run means of the epochs (records/epoch_row.h) and the
// reports' own.
bool IsOwnName(const std::string& name) {
  for (std::string_view own : RunResultNames()) {
    if (own == name) return true;
  }
  for (const EpochMean& mean : EpochMeans()) {
    if (mean.name == name) return true;
  }
  return std::find(std::begin(kReportDerivedNames), std::end(kReportDerivedNames), name) !=
         std::end(kReportDerivedNames);
}

void CheckMetricName(const std::string& name, const std::string& where) {
  bool ok = !name.empty() && name.size() <= 64 && std::isalpha(static_cast<unsigned char>(name[0]));
  for (char c : name) {
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-');
  }
  MAVG_CHECK(ok,
             "{}: '{}' is not a metric name (a letter, then letters, digits, '_', '.' or '-', "
             "at most 64)",
             where, name);
}

nlohmann::json ReadObject(const std::string& path) {
  const nlohmann::json j = ReadJsonFile(path);
  MAVG_CHECK(j.is_object(), "{}: not a JSON object", path);
  return j;
}

}  // namespace

std::map<std::string, double> ReadExtraMetrics(const std::string& run_dir) {
  const std::string path = run_dir + "/" + kExtraMetricsFile;
  std::map<std::string, double> out;
  if (!PathExists(path)) return out;
  const nlohmann::json j = ReadObject(path);
  MAVG_CHECK(j.contains("metrics") && j["metrics"].is_object(),
             "{}: 'metrics' must be an object of name: number", path);
  for (const auto& [name, value] : j["metrics"].items()) {
    CheckMetricName(name, path);
    MAVG_CHECK(value.is_number() && std::isfinite(value.get<double>()),
               "{}: metric '{}' is {}, expected a finite number", path, name, DumpJson(value));
    out[name] = value.get<double>();
  }
  return out;
}

std::pair<std::string, double> ParseMetricAssignment(const std::string& text) {
  const size_t eq = text.find('=');
  MAVG_CHECK(eq != std::string::npos, "--set '{}': expected NAME=VALUE", text);
  const std::string name = text.substr(0, eq), value = text.substr(eq + 1);
  CheckMetricName(name, "--set");
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  MAVG_CHECK(!value.empty() && end == value.c_str() + value.size() && std::isfinite(v),
             "--set {}: '{}' is not a finite number", name, value);
  return {name, v};
}

std::map<std::string, double> WriteExtraMetrics(const std::string& run_dir,
                                                const std::map<std::string, double>& metrics) {
  const std::string result_path = RunResultPath(run_dir);
  MAVG_CHECK(PathExists(result_path),
             "{}: no result.json: metrics are attached to a run that has finished", run_dir);
  const nlohmann::json result = ReadObject(result_path);
  for (const auto& [name, value] : metrics) {
    CheckMetricName(name, run_dir);
    // mavg's own names are refused whether or not this run has them (a run without a test set
    // has no wer, but its wer is still mavg's word), and so is anything its result.json holds.
    MAVG_CHECK(!IsOwnName(name) && !result.contains(name),
               "{}: '{}' is the name of a result mavg measures itself; give the outside metric "
               "its own name, e.g. {}_external",
               run_dir, name, name);
  }
  std::map<std::string, double> all = ReadExtraMetrics(run_dir);
  for (const auto& [name, value] : metrics) all[name] = value;
  nlohmann::json out = {{"metrics", nlohmann::json::object()}, {"updated", UtcNow()}};
  for (const auto& [name, value] : all) out["metrics"][name] = value;
  WriteFileAtomic(run_dir + "/" + kExtraMetricsFile, DumpJson(out, 2) + "\n");
  return all;
}

}  // namespace mavg
