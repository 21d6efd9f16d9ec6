#include "engine/sweep/launch_decisions.h"

#include <algorithm>

#include "engine/config/schema.h"
#include "engine/core/json.h"

namespace mavg {

bool WantsLaunch(const PlannedRun& run, const RunFacts& facts, const SweepRunOptions& options) {
  const bool retry = std::find(options.retry_states.begin(), options.retry_states.end(),
                               run.state) != options.retry_states.end();
  return run.state == PlanState::kNew || run.state == PlanState::kInterrupted || retry ||
         (run.state == PlanState::kStale && options.rerun_stale) ||
         (run.state == PlanState::kRunning && !facts.alive);
}

LaunchChoice ChooseLaunches(const SweepState& state, const SweepRunOptions& options) {
  LaunchChoice choice;
  for (size_t i = 0; i < state.plan.size(); ++i) {
    if (!WantsLaunch(state.plan[i], state.facts[i], options)) continue;
    (state.facts[i].queued ? choice.still_queued : choice.launch).push_back(i);
  }
  std::stable_sort(choice.launch.begin(), choice.launch.end(), [&](size_t a, size_t b) {
    return state.plan[a].point.replicate < state.plan[b].point.replicate;
  });
  if (options.max_runs > 0 && static_cast<int>(choice.launch.size()) > options.max_runs) {
    choice.launch.resize(options.max_runs);
  }
  return choice;
}

LaunchRequest MakeRequest(const std::string& run_id, const std::string& run_dir,
                          const RunConfig& config, PlanState state, const RunFacts& facts,
                          const SweepRunOptions& options, const SweepResources& resources,
                          int cores) {
  LaunchRequest q;
  q.run_id = run_id;
  q.run_dir = run_dir;
  q.config_path = run_dir + "/sweep-config.yaml";
  q.cache_dir = options.cache_dir;
  q.config = config;
  q.mpi = config.parallel.mode == ParallelMode::kMpi;
  q.ranks = q.mpi ? static_cast<int>(config.parallel.workers) : 1;
  q.threads = options.threads > 0     ? options.threads
              : resources.threads > 0 ? resources.threads
              : options.cluster       ? 1
                                      : std::max(1, cores / (options.jobs * q.ranks));
  // Threads are not part of the run's identity: the launcher chooses them for every attempt.
  q.config.device_options.threads = q.threads;
  q.timeout_s = options.timeout_s > 0 ? options.timeout_s : resources.TimeSeconds();
  q.resources = resources;
  // A run with a checkpoint continues from it (interrupted, timed out, crashed); a diverged or
  // collapsed run would end the same way from there and starts over; a stale or done run is
  // redone (--force).
  q.force = state == PlanState::kStale || state == PlanState::kDone;
  q.resume = !q.force && state != PlanState::kDiverged && state != PlanState::kCollapsed &&
             facts.has_checkpoint;
  q.attempt = facts.next_attempt;
  q.planned_state = state;
  // The claim is a compare-and-set from the status this decision was made on.
  q.db_status = facts.db_status;
  return q;
}

std::vector<LaunchRequest> LaunchRequests(const SweepState& state,
                                          const std::vector<size_t>& launch,
                                          const SweepRunOptions& options,
                                          const SweepResources& resources) {
  std::vector<LaunchRequest> requests;
  for (size_t i : launch) {
    const PlannedRun& r = state.plan[i];
    requests.push_back(MakeRequest(r.point.run_id, r.run_dir, r.point.config, r.state,
                                   state.facts[i], options, resources, state.cores));
  }
  return requests;
}

std::vector<LaunchRequest> RetryRequests(const StoredSweep& sweep,
                                         const std::vector<PlanState>& states,
                                         const SweepRunOptions& options) {
  const std::string source = fmt::format("{}: the spec of sweep '{}'", sweep.db_path, sweep.name);
  std::vector<LaunchRequest> requests;
  for (const SweepMember& m : sweep.members) {
    const RunRecord& r = sweep.runs.at(m.run_id);
    const PlanState state = PlanStateOf(&r);
    if (std::find(states.begin(), states.end(), state) == states.end()) continue;
    const RunConfig config = ConfigFromJson(nlohmann::json::parse(r.config_json), sweep.db_path);
    CheckResourcesFit(sweep.resources, config, fmt::format("{} run {}", source, r.run_id));
    requests.push_back(MakeRequest(r.run_id, r.run_dir, config, state, sweep.facts.at(r.run_id),
                                   options, sweep.resources, sweep.cores));
    if (options.max_runs > 0 && static_cast<int>(requests.size()) >= options.max_runs) break;
  }
  return requests;
}

}  // namespace mavg
