// mavg run metric RUN_DIR --set NAME=VALUE ... [--results DIR] [--db PATH]: attach metrics
// computed outside mavg (e.g. a Kaldi decode's WER) to a finished run, in its
// extra_metrics.json and, when the run is in the results database, there too.
// mavg run diff RUN_A RUN_B: the config keys that differ and the metrics side by side.
#include <fmt/core.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "engine/cli/commands.h"
#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/records/run_result.h"
#include "engine/report/run_diff.h"
#include "engine/store/extra_metrics.h"
#include "engine/store/store.h"

namespace mavg::cli {

void AddRunCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("run", "Work on one run directory");
  cmd->require_subcommand(1);
  struct Args {
    std::string run_dir, results = "results", db, diff_format = "md";
    std::vector<std::string> sets;
    std::string run_a, run_b;
    RunDiffOptions diff;
  };
  auto a = std::make_shared<Args>();
  CLI::App* metric = cmd->add_subcommand(
      "metric", "Record metrics computed outside mavg (e.g. --set wer_eval2000=15.1)");
  metric->add_option("run_dir", a->run_dir, "The run's directory (with result.json)")->required();
  metric->add_option("--set", a->sets, "NAME=VALUE, a finite number (repeatable)")->required();
  metric->add_option("--results", a->results, "Results directory (mavg.db)")->capture_default_str();
  metric->add_option("--db", a->db, "Results database (default: RESULTS/mavg.db)");
  metric->callback([a] {
    std::map<std::string, double> set;
    for (const std::string& s : a->sets) {
      const auto [name, value] = ParseMetricAssignment(s);
      MAVG_CHECK(!set.count(name), "--set {} is given twice", name);
      set[name] = value;
    }
    const std::map<std::string, double> all = WriteExtraMetrics(a->run_dir, set);
    const std::string path = RunResultPath(a->run_dir);
    const RunResult result = RunResultFromJson(ReadJsonFile(path), path);
    const std::string run_id =
        result.run_id.value_or(std::filesystem::path(a->run_dir).filename().string());
    std::string where = fmt::format("{}/{}", a->run_dir, kExtraMetricsFile);
    const std::string db = a->db.empty() ? a->results + "/mavg.db" : a->db;
    if (PathExists(db)) {
      Store store(db);
      if (store.FindRuns({run_id}).count(run_id)) {
        store.IngestRun(run_id, a->run_dir);
        where += " and " + db;
      } else {
        where +=
            fmt::format(" ({} has no run {}: `sweep collect` reads the file later)", db, run_id);
      }
    }
    for (const auto& [name, value] : set) {
      std::cout << fmt::format("run {}: {} = {}\n", run_id, name, value);
    }
    std::cout << fmt::format("recorded in {}; the run has {} extra metric(s)\n", where, all.size());
  });

  CLI::App* diff = cmd->add_subcommand(
      "diff", "Two runs side by side: the config keys that differ, every metric, the CV loss");
  diff->add_option("run_a", a->run_a, "A run directory, or a run id (or its first 4+ digits)")
      ->required();
  diff->add_option("run_b", a->run_b, "The other run")->required();
  diff->add_flag("--all", a->diff.all, "Show every config key, not only those that differ");
  diff->add_option("--format", a->diff_format, "md | json")
      ->check(CLI::IsMember({"md", "json"}))
      ->capture_default_str();
  diff->add_option("--results", a->results, "Results directory (mavg.db, to look up run ids)")
      ->capture_default_str();
  diff->add_option("--db", a->db, "Results database (default: RESULTS/mavg.db)");
  diff->callback([a] {
    a->diff.format =
        ParseOneOf(a->diff_format, {report::Format::kMd, report::Format::kJson}, "--format");
    const std::string db = a->db.empty() ? a->results + "/mavg.db" : a->db;
    std::cout << RunDiff(ResolveRunDir(a->run_a, db), ResolveRunDir(a->run_b, db), a->diff);
  });
}

}  // namespace mavg::cli
