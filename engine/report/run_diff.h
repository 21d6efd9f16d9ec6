#pragma once
// `mavg run diff RUN_A RUN_B`: two runs side by side. The config keys whose values differ
// (from each run's config.yaml, every key; keys outside the run id are marked), every metric
// of either run with the difference, and the CV loss per epoch. The metrics come from the run
// directories through the store's own ingestion and LoadSweepRuns (an in-memory database), so
// they are the numbers `report` shows for the same runs.

#include <string>

#include "engine/report/render.h"

namespace mavg {

struct RunDiffOptions {
  bool all = false;                             // every config key, not only those that differ
  report::Format format = report::Format::kMd;  // md | json
};

// A run directory for `arg`: the directory itself, or the run dir the database at `db` records
// for a run id or a unique prefix of one (at least 4 characters).
std::string ResolveRunDir(const std::string& arg, const std::string& db);

std::string RunDiff(const std::string& dir_a, const std::string& dir_b,
                    const RunDiffOptions& options);

}  // namespace mavg
