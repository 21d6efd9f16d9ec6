#include "engine/sweep/sweep_state.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "engine/core/build_info.h"
#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/nearest.h"
#include "engine/core/sysinfo.h"
#include "engine/core/yaml.h"
#include "engine/records/checkpoint_meta.h"
#include "engine/records/run_state_file.h"

namespace mavg {
namespace {

int MachineCores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// A run directory's state.json as read once: absent, a state, or unreadable (not JSON, not a
// state: a crash mid-write of an earlier build, or a file planted there).
struct StateRead {
  std::optional<RunStateFile> state;
  bool unreadable = false;
};

StateRead ReadStateOf(const std::string& run_dir) {
  StateRead r;
  try {
    r.state = ReadRunState(run_dir);
  } catch (const std::exception&) {
    r.unreadable = true;
  }
  return r;
}

// A claimed run that never wrote state.json: dead when the controller that claimed it, on this
// host, is gone (killed before it started the run or gave the claim back).
bool ClaimerDead(const std::string& reason) {
  const std::string prefix = "claimed by " + HostName() + ":";
  if (!reason.starts_with(prefix)) return false;  // another host's, or a SLURM job queued
  return !ProcessAlive(std::atoi(reason.c_str() + prefix.size()));
}

// Whether a run recorded as running may still be alive. Without a state.json the run may be
// starting right now (another controller just launched it): alive while its claimer is. Without
// even its run directory (a controller creates it right after claiming the run, before
// launching) it was deleted or lost: dead. If another controller is between its claim and that
// mkdir, the run directory's lock still keeps the run from being trained twice.
bool RunningAlive(bool dir_exists, const StateRead& read, const std::string& reason) {
  if (!dir_exists || read.unreadable) return false;
  // No state.json, or a previous attempt's resumable one: the claim is all there is to check.
  if (!read.state) return !ClaimerDead(reason);
  const RunStateFile& state = *read.state;
  if (state.status == RunState::kRunning) {
    return state.host.value_or("") != HostName() ||
           ProcessAlive(static_cast<int>(state.pid.value_or(0)));
  }
  // A run that ended (completed, failed, ...) is left for `sweep collect` to record.
  return (state.status && IsTerminal(*state.status)) || !ClaimerDead(reason);
}

// The attempt number the next launch of a run will have (the run writes the same number).
int NextAttempt(const StateRead& read) {
  if (read.unreadable) return 1;
  return (read.state ? read.state->Attempt() : 0) + 1;
}

bool HasCheckpoint(const std::string& run_dir) { return PathExists(CheckpointMetaPath(run_dir)); }

// The queue's view of the jobs of `attempts`, one question per queue: job id -> state, for the
// jobs still queued.
std::map<std::string, std::string> QueuedJobs(const std::vector<AttemptRecord>& attempts,
                                              const JobQueues& queues) {
  std::map<const JobQueue*, std::vector<std::string>> jobs;
  for (const AttemptRecord& a : attempts) {
    if (const JobQueue* q = QueueOfAttempt(a, queues)) jobs[q].push_back(a.job_id);
  }
  std::map<std::string, std::string> queued;
  for (const auto& [queue, ids] : jobs) queued.merge(queue->Queued(ids));
  return queued;
}

}  // namespace

std::string ClaimerText() { return fmt::format("claimed by {}:{}", HostName(), getpid()); }

PlanState PlanStateOf(const RunRecord* record) {
  if (record == nullptr) return PlanState::kNew;
  return PlanStateOf(record->status, record->code_version.empty() ||
                                         record->code_version == build_info::kCodeVersion);
}

const JobQueue* QueueOfAttempt(const AttemptRecord& attempt, const JobQueues& queues) {
  if (attempt.job_id.empty()) return nullptr;
  const auto it = queues.find(attempt.launcher);
  return it == queues.end() ? nullptr : it->second;
}

namespace {

std::vector<std::string> RunIds(const std::vector<SweepPoint>& points) {
  std::vector<std::string> ids;
  for (const auto& p : points) ids.push_back(p.run_id);
  return ids;
}

// The plan of the spec's points, given the store's records of them (`known`, by run id).
std::vector<PlannedRun> PlanOf(const SweepSpec& spec, const SweepPaths& paths,
                               std::vector<SweepPoint> points,
                               const std::map<std::string, RunRecord>& known) {
  std::vector<PlannedRun> plan;
  plan.reserve(points.size());
  for (auto& p : points) {
    PlannedRun r;
    const auto it = known.find(p.run_id);
    const RunRecord* rec = it == known.end() ? nullptr : &it->second;
    // The same point in another sweep is the same run: its directory is reused.
    r.run_dir = rec ? rec->run_dir : paths.results + "/runs/" + spec.name + "/" + p.run_id;
    r.state = PlanStateOf(rec);
    r.reason = rec ? rec->reason : "";
    r.point = std::move(p);
    plan.push_back(std::move(r));
  }
  return plan;
}

}  // namespace

std::vector<PlannedRun> PlanSweep(const SweepSpec& spec, Store& store, const SweepPaths& paths) {
  std::vector<SweepPoint> points = ExpandSweep(spec);
  const std::map<std::string, RunRecord> known = store.FindRuns(RunIds(points));
  return PlanOf(spec, paths, std::move(points), known);
}

SweepState ReadSweepState(const SweepSpec& spec, Store& store, const SweepPaths& paths,
                          const MayLaunch& may_launch, const JobQueues& queues) {
  SweepState out;
  out.cores = MachineCores();
  // The store, once: the plan's records, and the status each decision and each claim start from.
  std::vector<SweepPoint> points = ExpandSweep(spec);
  const std::map<std::string, RunRecord> known = store.FindRuns(RunIds(points));
  out.plan = PlanOf(spec, paths, std::move(points), known);
  out.facts.resize(out.plan.size());
  std::vector<size_t> candidates;  // runs may_launch accepts, in plan order
  for (size_t i = 0; i < out.plan.size(); ++i) {
    const PlannedRun& r = out.plan[i];
    RunFacts& f = out.facts[i];
    const auto it = known.find(r.point.run_id);
    if (it != known.end()) f.db_status = it->second.status;
    // The run directory, once, for the runs whose state needs it.
    std::optional<StateRead> read;
    if (r.state == PlanState::kRunning) {
      read = ReadStateOf(r.run_dir);
      f.alive = RunningAlive(PathExists(r.run_dir), *read, r.reason);
    }
    if (!may_launch(r, f)) continue;
    if (!read) read = ReadStateOf(r.run_dir);
    f.next_attempt = NextAttempt(*read);
    f.has_checkpoint = HasCheckpoint(r.run_dir);
    candidates.push_back(i);
  }
  // The queues, once, about the candidates' latest jobs.
  if (candidates.empty() || !store.GetSweep(spec.name)) return out;
  const std::map<std::string, AttemptRecord> attempts = store.LatestAttempts(spec.name);
  std::vector<AttemptRecord> in_queues;
  for (size_t i : candidates) {
    const auto it = attempts.find(out.plan[i].point.run_id);
    if (it != attempts.end() && QueueOfAttempt(it->second, queues)) in_queues.push_back(it->second);
  }
  if (in_queues.empty()) return out;
  const std::map<std::string, std::string> queued = QueuedJobs(in_queues, queues);
  for (size_t i : candidates) {
    const auto it = attempts.find(out.plan[i].point.run_id);
    if (it == attempts.end()) continue;
    const JobQueue* queue = QueueOfAttempt(it->second, queues);
    const auto job = queued.find(it->second.job_id);
    if (queue && job != queued.end()) {
      out.facts[i].queued = QueuedJob{queue->Title(), it->second.job_id, job->second};
    }
  }
  return out;
}

SweepResources StoredResources(Store& store, const std::string& sweep) {
  const SweepRecord stored = store.RequireSweep(sweep);
  SweepResources resources;
  const std::string source = fmt::format("{}: the spec of sweep '{}'", store.Db().Path(), sweep);
  ReadingYaml(source, [&] {
    const YAML::Node res = LoadYamlStrict(stored.spec_yaml, source)["resources"];
    if (res) resources = ParseResources(res, source);
  });
  return resources;
}

StoredSweep ReadStoredSweep(Store& store, const std::string& sweep,
                            const std::vector<PlanState>& states) {
  store.RequireSweep(sweep);
  StoredSweep out;
  out.name = sweep;
  out.db_path = store.Db().Path();
  out.cores = MachineCores();
  out.runs = store.RunsOfSweep(sweep);
  // The spec's resources apply to retries too.
  out.resources = StoredResources(store, sweep);
  out.members = store.MembersOfSweep(sweep);
  for (const SweepMember& m : out.members) {
    const RunRecord& r = out.runs.at(m.run_id);
    if (std::find(states.begin(), states.end(), PlanStateOf(&r)) == states.end()) continue;
    RunFacts f;
    f.db_status = r.status;
    f.next_attempt = NextAttempt(ReadStateOf(r.run_dir));
    f.has_checkpoint = HasCheckpoint(r.run_dir);
    out.facts[m.run_id] = f;
  }
  return out;
}

}  // namespace mavg
