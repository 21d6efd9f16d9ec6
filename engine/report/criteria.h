#pragma once
// A reproduction's criteria file: the rules of a round, fixed before its first run, which
// `mavg report verdicts` applies to the store's runs (verdict.h has the rules).
//
//   fixed: 2026-12-07            # required: the date the rules were fixed
//   round: 2                     # free text or a number, printed
//   metric: wer                  # required: the store's metric compared
//   higher_is_better: false      # default false (WER: lower is better)
//   level: 0.95                  # the two-sided interval; each end one-sided at (1 - level) / 2
//   baseline: {sweep: table1, where: {parallel.workers: 1}}   # our baseline: the mean metric
//   paper_baseline: 14.7         # the paper's; effects and margins scale by baseline / this
//   margin: 0.5                  # default margin, in the paper's points
//   effects:
//     - id: t1-16                # required, unique, [a-z0-9-]+
//       table: "1"               # the paper's table, or "scale", "design", ...
//       claim: ...               # required, one line
//       kind: small              # required: direction | beats | small | equivalent | collapses
//       confirmatory: true       # required: the paper's tables (true) or exploratory (false)
//       sweep: table1            # required: the sweep of the arms' runs
//       sweep_b: other           # arm b's (and b2's) runs from another sweep, paired alike
//       where: {}                # values both arms share
//       a: {parallel.workers: 1} # required: arm a's values
//       b: {parallel.workers: 16}
//       a2: {...}                # an interaction, with b2: (b2 - a2) - (b - a)
//       b2: {...}
//       paper: {swb: 0.4, ch: 0.2}  # the paper's b - a (null: none); collapses: {direction:
//                                   # more|less, a: "0/3", b: "3/3"}
//       margin: 0.5              # overrides the file's (the paper's points)
//       planned: 10              # replicates planned
// Every problem is reported at once, on one line naming the file, the line, the effect's id and
// the key. An axis value no run has is not an error here: the effect's verdict says `no runs`.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/report/paired_arms.h"
#include "engine/report/verdict.h"

namespace mavg {

struct BaselineCriteria {
  std::string sweep;
  Selection where;
};

struct EffectCriteria {
  std::string id, table, claim;
  EffectKind kind = EffectKind::kDirection;
  bool confirmatory = false;
  std::string sweep, sweep_b;  // sweep_b: arm b's sweep, empty for `sweep`
  Selection where, a, b, a2, b2;
  bool interaction = false;  // a2 and b2 given
  nlohmann::json paper;      // as the file gives it (null, or an object)
  std::optional<double> paper_swb;
  CollapseSide side = CollapseSide::kMore;  // collapses: paper.direction
  std::optional<double> margin;             // the paper's points
  int planned = -1;                         // -1: not given; 0: cut (not run by design)
  int line = 0;                             // of the effect in the file

  // The arms' selections: a, b (and a2, b2), each with `where`.
  std::vector<ArmSelection> Arms() const;
  std::vector<std::string> ArmNames() const;  // a, b (, a2, b2)
};

struct Criteria {
  std::string path;  // the file, for messages
  std::string fixed;
  nlohmann::json round;  // null when not given
  std::string metric;
  bool higher_is_better = false;
  double level = 0.95;
  std::optional<BaselineCriteria> baseline;
  std::optional<double> paper_baseline;
  std::optional<double> margin;  // the paper's points
  std::vector<EffectCriteria> effects;
};

// Throws mavg::Error, one line: "SOURCE: PROBLEM" or "SOURCE: N problems: A; B; ...".
Criteria ParseCriteria(const std::string& text, const std::string& source);
Criteria LoadCriteria(const std::string& path);

}  // namespace mavg
