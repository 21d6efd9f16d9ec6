#pragma once
// The arms of a comparison read from the store and paired by replicate (`mavg report compare
// SWEEP --a AXIS=V --b AXIS=V`, `report verdicts`). An arm is the runs of one sweep whose values
// match: a sweep's axis as the store keeps it, or for a key the sweep does not vary, the run's
// config value. Values compare as numbers when both are numbers (16 matches 16.0 and 1.6e1),
// else as text. Runs of the same replicate share their seed across the arms of a sweep (and
// across sweeps of one base seed: sweep/spec.h's ReplicateSeed), so replicate r of every arm
// is one pair. A collapsed or diverged run is an outcome of its pair; a run not ended yet, a
// failed one or one without the metric leaves its replicate out of the pairs.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/report/sweep_data.h"
#include "engine/report/verdict.h"
#include "engine/store/store.h"
#include "engine/sweep/contrasts.h"

namespace mavg {

using Selection = std::vector<std::pair<std::string, std::string>>;  // key = value, in order

struct ArmSelection {
  std::string sweep;
  Selection values;  // the arm's own values and the ones every arm shares (where)
};

// SelectionText (sweep/contrasts.h): "parallel.workers=1, model.hidden_dim=512".

// The runs of one sweep (LoadSweepRuns' order) whose values all match. Throws on a key that no
// run of the sweep has, as an axis or a config key (naming the sweep's axes). When nothing
// matches, `missing` (if not null) says why: "no run of sweep t1 has parallel.workers=7 (its
// values: 1, 16)"; it is emptied otherwise.
std::vector<const ReportRun*> MatchRuns(const std::string& sweep,
                                        const std::vector<ReportRun>& runs, const Selection& values,
                                        std::string* missing);

// One arm's runs by replicate, and their counts.
struct ArmOutcomes {
  std::map<int, ArmValue> ended;         // replicate -> the metric's value, or collapsed
  std::map<int, const ReportRun*> runs;  // replicate -> its ended run (not owned)
  ArmCounts counts;
};
// Throws when two runs share a replicate (an axis the selection leaves free varies), naming
// `what` (e.g. "arm a") and that axis.
ArmOutcomes OutcomesByReplicate(const std::vector<const ReportRun*>& runs,
                                const std::string& metric, const std::string& what);

// The replicates every arm has ended, ascending, and each arm's outcome there; the builds (code
// versions) and GEMM kernel families of the paired runs. Throws when the runs of one pair were
// not trained from the same seed (naming both runs): a replicate index alone does not make a
// pair (a sweep with a seed of its own numbers its replicates alike).
EffectRuns PairByReplicate(const std::vector<ArmOutcomes>& arms);

// Each sweep's runs, read from the store once.
class SweepRunsCache {
 public:
  explicit SweepRunsCache(Store& store) : store_(store) {}
  // nullptr for a sweep the store does not hold.
  const std::vector<ReportRun>* Find(const std::string& sweep);
  // Runs already read (LoadSweepRuns'), so that they are not read again.
  void Add(const std::string& sweep, std::vector<ReportRun> runs);

 private:
  Store& store_;  // not owned
  std::map<std::string, std::optional<std::vector<ReportRun>>> runs_;
};

// The arms' runs from the store, paired by replicate; `names` name the arms in messages (a, b,
// a2, b2). A sweep the store does not hold, or a selection no run matches, sets `missing`
// ("arm b: no run of sweep t1 has parallel.workers=7") and leaves that arm empty.
EffectRuns LoadPairedArms(SweepRunsCache& cache, const std::vector<ArmSelection>& arms,
                          const std::vector<std::string>& names, const std::string& metric);

}  // namespace mavg
