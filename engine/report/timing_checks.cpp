#include "engine/report/timing_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "engine/records/epoch_row.h"
#include "engine/records/run_result.h"
#include "engine/report/render.h"

namespace mavg {
namespace {

// "a1b2c3 (also in sweep x)" for a run id in a sentence.
std::string RunName(const ReportRun& r) {
  if (r.other_sweeps.empty()) return r.run_id;
  return fmt::format("{} (also in sweep {})", r.run_id, report::Join(r.other_sweeps, ", "));
}

}  // namespace

std::optional<double> MeasuredSecondsPerFrame(const ReportRun& run) {
  if (run.status != RunState::kCompleted) return std::nullopt;
  const auto epoch = run.values.find(kEpochSecondsMean);
  const auto frames = run.values.find(MeanName(&EpochRow::frames));
  if (epoch == run.values.end() || frames == run.values.end() || !(frames->second > 0) ||
      !(epoch->second > 0)) {
    return std::nullopt;
  }
  return epoch->second / frames->second;
}

bool ContendedRun(const ReportRun& run) {
  const auto it = run.values.find(MeanName(&EpochRow::contended));
  return it != run.values.end() && it->second > 0.0;
}

TimedRuns CheckTimedRuns(const std::vector<const ReportRun*>& runs, std::string_view what) {
  TimedRuns t;
  std::vector<const ReportRun*> contended, clear;
  for (const ReportRun* r : runs) (ContendedRun(*r) ? contended : clear).push_back(r);
  t.kept = clear.empty() ? contended : clear;
  if (!contended.empty()) {
    std::vector<std::string> names;
    for (const ReportRun* r : contended) names.push_back(RunName(*r));
    t.flags.push_back(
        clear.empty()
            ? fmt::format("every run of {} had contended epochs (other work shared its cores: "
                          "{}), so its times measure the sharing",
                          what, report::Join(names, ", "))
            : fmt::format("{} of {}'s {} runs had contended epochs (other work shared its cores) "
                          "and are left out of its time: {}",
                          contended.size(), what, runs.size(), report::Join(names, ", ")));
  }
  // Speeds of the runs kept: a spread beyond replicates' noise says one of them did not run as
  // the others did.
  const ReportRun *slow = nullptr, *fast = nullptr;
  double slow_s = 0.0, fast_s = 0.0;
  for (const ReportRun* r : t.kept) {
    const std::optional<double> s = MeasuredSecondsPerFrame(*r);
    if (!s) continue;
    if (slow == nullptr || *s > slow_s) slow = r, slow_s = *s;
    if (fast == nullptr || *s < fast_s) fast = r, fast_s = *s;
  }
  if (slow != nullptr && slow != fast && slow_s > fast_s * (1.0 + kReplicateSpeedTolerance)) {
    t.flags.push_back(fmt::format(
        "{}'s replicates differ in speed beyond their noise: {:.0f} frames/s ({}) against "
        "{:.0f} ({}), {} slower (more than {}; a run that shared its cores or ran elsewhere)",
        what, 1.0 / slow_s, RunName(*slow), 1.0 / fast_s, RunName(*fast),
        report::Percent(1.0 - fast_s / slow_s), report::Percent(kReplicateSpeedTolerance)));
  }
  std::map<std::string, int> cpus;
  for (const ReportRun* r : t.kept) {
    const auto it = r->texts.find(BuildKey(&BuildInfo::cpu));
    if (it != r->texts.end() && !it->second.empty()) ++cpus[it->second];
  }
  if (cpus.size() > 1) {
    std::vector<std::string> list;
    for (const auto& [cpu, n] : cpus) list.push_back(fmt::format("{} ({})", cpu, n));
    t.flags.push_back(fmt::format("{} ran on different CPUs: {}", what, report::Join(list, ", ")));
  }
  return t;
}

}  // namespace mavg
