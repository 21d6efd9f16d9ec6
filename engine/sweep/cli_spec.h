#pragma once
// Sweeps from the command line: `--set KEY=VALUE` (applied to every point) and
// `--grid KEY=V1,V2,...` (an axis, cartesian with the others), on a spec file or on a base run
// config alone (`--base CONFIG`), with `--replicates N` and `--name NAME`.
//
// The result is an ordinary spec, written out as YAML: that text is what the store keeps
// (sweeps.spec_yaml), what `sweep run` writes to <results>/sweeps/<name>.yaml (a spec file like
// any other), and what names the sweep. Unless --name gives one, the name is the spec's name
// (or the base config's file name without .yaml) + "-" + the first 8 hex digits of the
// SHA-256 of that text without its name line. So the same command line -- the same base path,
// the same spec contents (comments aside), the same --grid axes in the same order, --set in any
// order -- gives the same name and the same run ids: `sweep run` again resumes it, and `plan`,
// `status`, `retry` and `report` work on it by that name.

#include <string>
#include <vector>

#include "engine/sweep/spec.h"

namespace mavg {

struct SweepOverrides {
  std::string base;                // --base: the run config of a sweep without a spec file
  std::vector<std::string> sets;   // --set KEY=VALUE
  std::vector<std::string> grids;  // --grid KEY=V1,V2,...
  int replicates = 0;              // --replicates (0: the spec's, else 1)
  std::string name;                // --name (empty: derived from the content, see above)
  bool Any() const { return !sets.empty() || !grids.empty() || replicates > 0 || !name.empty(); }
};

// The spec to plan and run: the spec file unchanged when no option is given, else the spec
// composed from it (or from --base) and the options. Exactly one of `spec_path` and
// `overrides.base` must be given; bad options are one line naming the option.
SweepSpec ResolveSweepSpec(const std::string& spec_path, const SweepOverrides& overrides);

// Where `sweep run` writes a generated spec.
std::string GeneratedSpecPath(const std::string& results, const std::string& name);

}  // namespace mavg
