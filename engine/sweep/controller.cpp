#include "engine/sweep/controller.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include "engine/config/schema.h"
#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/core/json.h"
#include "engine/core/logging.h"
#include "engine/core/sysinfo.h"
#include "engine/data/data_identity.h"
#include "engine/pretrain/stack_cache.h"
#include "engine/records/run_state_file.h"
#include "engine/sweep/estimate.h"
#include "engine/sweep/plan_checks.h"
#include "engine/sweep/stop_early.h"

namespace mavg {
namespace {

std::string AxesJson(const Assignment& axes) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& [k, v] : axes) a.push_back({k, v});
  return DumpJson(a);
}

}  // namespace

// Resources only a cluster can grant are said to be unused, never dropped silently.
static void WarnClusterOnly(const SweepResources& resources, const Launcher& launcher) {
  const std::vector<std::string> keys = resources.ClusterOnlyKeys();
  if (keys.empty() || launcher.GrantsClusterResources()) return;
  std::string list;
  for (const std::string& k : keys) list += (list.empty() ? "" : ", ") + k;
  spdlog::warn("[sweep] resources {} are requests to SLURM: the {} launcher does not use them",
               list, launcher.Name());
}

// Writes each request's config, launches them, and records/collects every run as it ends.
// `jobs`: runs at once (for the time left as runs end); 0 on a cluster.
static int LaunchAndCollect(Store& store, Launcher& launcher, const std::string& sweep,
                            std::vector<LaunchRequest> requests, int jobs) {
  // Claim every run in the database first (compare-and-set on its status), so that two
  // controllers never launch the same run; the run directory's lock is the second guard.
  // What the launcher cannot carry is refused before anything is claimed or written, and so
  // is a run directory (or the sweep's runs/ folders above it) planted as a link by another
  // user: the runs would land wherever it points. The user's own link (runs/ moved to a
  // scratch disk) is followed.
  launcher.Validate(requests);
  for (const LaunchRequest& q : requests) {
    const std::filesystem::path dir(q.run_dir);
    for (const std::filesystem::path& p :
         {dir, dir.parent_path(), dir.parent_path().parent_path()}) {
      if (p.empty()) continue;
      const std::optional<unsigned> owner = ForeignSymlinkOwner(p.string());
      MAVG_CHECK(!owner,
                 "{}: is a symbolic link made by another user (uid {}); mavg follows only "
                 "its own user's links in a results directory (remove it)",
                 p.string(), owner.value_or(0));
    }
  }
  std::vector<LaunchRequest> claimed;
  std::map<std::string, RunState> final_status;
  const std::string claimer = ClaimerText();
  for (LaunchRequest& q : requests) {
    if (!store.ClaimRun(q.run_id, q.db_status, claimer)) {
      spdlog::warn("[sweep] {} is being launched by another controller; skipped", q.run_id);
      continue;
    }
    // After the claim, every failure ends the run failed with its reason: a claim is never
    // left behind as a "running" run that nothing runs.
    try {
      MakeDirs(q.run_dir);
      WriteFileAtomic(q.config_path, ToYaml(q.config));
    } catch (const std::exception& e) {
      const std::string why = fmt::format("failed to start: {}", ErrorText(e.what()));
      spdlog::error("[sweep] {}: {}", q.run_id, why);
      store.SetRunStatus(q.run_id, RunState::kFailed, why);
      final_status[q.run_id] = RunState::kFailed;
      continue;
    }
    claimed.push_back(std::move(q));
  }
  int done = 0;
  // What is left as runs end: each run's estimate from the like runs in the store (estimate.h).
  // Keyed by the configs as the store registered them (as sweep plan estimates them), not as
  // launched (with this launch's threads).
  std::map<std::string, double> estimate;
  try {
    std::vector<std::string> ids;
    for (const LaunchRequest& q : claimed) ids.push_back(q.run_id);
    const auto records = store.FindRuns(ids);
    std::vector<RunConfig> registered;
    for (const LaunchRequest& q : claimed) {
      const auto it = records.find(q.run_id);
      registered.push_back(it == records.end()
                               ? q.config
                               : ParseConfigYaml(it->second.config_json, "the store's config"));
    }
    std::vector<const RunConfig*> configs;
    for (const RunConfig& c : registered) configs.push_back(&c);
    const std::vector<double> seconds = EstimateRuns(store, configs);
    for (size_t i = 0; i < claimed.size(); ++i) estimate[claimed[i].run_id] = seconds[i];
  } catch (const Error& e) {  // only the progress lines lose their estimate
    spdlog::debug("[sweep] no time estimate: {}", e.what());
  }
  std::set<std::string> finished;
  const auto left = [&]() -> std::string {
    std::vector<double> runs;
    int unknown = 0;
    for (const LaunchRequest& q : claimed) {
      if (finished.count(q.run_id)) continue;
      const auto e = estimate.find(q.run_id);
      const double s = e == estimate.end() ? -1.0 : e->second;
      if (s < 0) {
        ++unknown;
      } else {
        runs.push_back(s);
      }
    }
    if (runs.empty() && unknown == 0) return "";
    if (runs.empty()) return fmt::format("; {} to go", unknown);
    // On a cluster the runs at once are the scheduler's: the run time left, not the wall time.
    return fmt::format("; {} to go, about {} {}{}", runs.size() + unknown,
                       ShortDuration(SecondsAtJobs(runs, std::max(1, jobs))),
                       jobs > 0 ? "left" : "of run time left",
                       unknown ? fmt::format(" and {} with nothing to go on", unknown) : "");
  };
  const std::string host = HostName();
  LaunchCallbacks cb;
  std::set<std::string> started;
  cb.started = [&](const LaunchRequest& q, const std::string& job) {
    started.insert(q.run_id);
    store.StartAttempt(q.run_id, q.attempt, launcher.Name(), job, host);
    spdlog::info("[sweep] started {} ({}{})", q.run_id, job, q.resume ? ", resuming" : "");
  };
  cb.ended = [&](const LaunchRequest& q, const LaunchOutcome& o) {
    // The launcher's view of the attempt first: IngestRun reads it (a time limit or an
    // interruption decides the status of a run that stopped at a checkpoint).
    store.EndAttempt(q.run_id, q.attempt, o.state, o.exit_code);
    RunState status = store.IngestRun(q.run_id, q.run_dir);
    if (!HasEnded(status)) {
      // The process ended without recording an outcome (killed, or it never started).
      status = RunState::kFailed;
      store.SetRunStatus(q.run_id, status,
                         o.state == LaunchState::kFailedToStart
                             ? fmt::format("failed to start: {}", o.detail)
                             : fmt::format("exited with code {} without a result{}", o.exit_code,
                                           o.detail.empty() ? "" : " (" + o.detail + ")"));
    }
    final_status[q.run_id] = status;
    ++done;
    finished.insert(q.run_id);
    spdlog::info("[sweep] {}/{} {} {} (exit {}){}", done, claimed.size(), q.run_id, status,
                 o.exit_code, left());
  };
  std::set<std::string> ended;
  const auto ended_cb = cb.ended;
  cb.ended = [&](const LaunchRequest& q, const LaunchOutcome& o) {
    ended.insert(q.run_id);
    ended_cb(q, o);
  };
  bool completed = false;
  try {
    completed = launcher.Launch(claimed, cb);
  } catch (const std::exception& e) {
    // The launcher gave up part way: its unstarted runs end failed with the reason (a started
    // one is the launcher's, or its job's, to end).
    const std::string why = fmt::format("failed to start: {}", ErrorText(e.what()));
    for (const LaunchRequest& q : claimed) {
      if (started.count(q.run_id) || ended.count(q.run_id)) continue;
      store.SetRunStatus(q.run_id, RunState::kFailed, why);
    }
    throw;
  }
  // Stopped before every run started: the others go back to what they were.
  int released = 0;
  for (const LaunchRequest& q : claimed) {
    if (started.count(q.run_id)) continue;
    // A run taken over from a dead claim goes back as interrupted (resumed from its
    // checkpoint if it has one), never as an unowned "running".
    store.ReleaseClaim(q.run_id,
                       q.db_status == RunState::kRunning ? RunState::kInterrupted : q.db_status,
                       claimer);
    ++released;
  }

  // Summary.
  std::map<RunState, int> counts;
  for (const auto& [id, st] : final_status) ++counts[st];
  std::string summary = fmt::format("sweep {}: launched {}", sweep, claimed.size() - released);
  for (const auto& [st, n] : counts) summary += fmt::format(", {} {}", st, n);
  if (released > 0) summary += fmt::format(", {} not started", released);
  std::cout << summary << "\n";
  bool any_failed = false;
  const auto runs = store.RunsOfSweep(sweep);
  for (const auto& [id, st] : final_status) {
    if (st == RunState::kFailed || IsUnhealthy(st)) {
      any_failed = true;
      std::cout << fmt::format("  {} {}: {}\n", st, id, runs.at(id).reason);
    }
  }
  if (!completed) return 130;
  return any_failed ? 1 : 0;
}

// Launches whose data cannot be read are refused before anything is claimed or written; a dry
// run says it would refuse them.
static void CheckRequestData(const std::string& source, const std::vector<LaunchRequest>& requests,
                             bool dry_run) {
  std::vector<const RunConfig*> configs;
  for (const LaunchRequest& q : requests) configs.push_back(&q.config);
  const std::string data =
      DataProblems(configs, fmt::format("the {} run(s) to launch", configs.size()));
  if (data.empty()) return;
  MAVG_CHECK(dry_run, "{}: {}", source, data);
  std::cout << fmt::format("data: {} (a run refuses to start them)\n", data);
}

std::string FormatPlan(const SweepSpec& spec, const std::vector<PlannedRun>& plan,
                       const std::vector<double>* estimates) {
  const bool timed = estimates != nullptr && estimates->size() == plan.size();
  std::vector<std::string> header = {"run_id", "state"};
  for (const auto& a : spec.axes) header.push_back(a);
  if (spec.replicates > 1) header.push_back("replicate");
  if (timed) header.push_back("estimate");
  std::vector<std::vector<std::string>> rows;
  std::map<PlanState, int> totals;
  for (size_t i = 0; i < plan.size(); ++i) {
    const PlannedRun& r = plan[i];
    std::vector<std::string> row = {r.point.run_id, std::string(ToString(r.state))};
    for (const auto& [k, v] : r.point.axes) row.push_back(v);
    if (spec.replicates > 1) row.push_back(std::to_string(r.point.replicate));
    if (timed) {
      const double e = (*estimates)[i];
      row.push_back(e >= 0 ? ShortDuration(e) : e == -2 ? "?" : "");
    }
    rows.push_back(std::move(row));
    ++totals[r.state];
  }
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
  }
  std::string out = fmt::format("sweep {} ({}): {} runs from {}\n", spec.name, spec.path,
                                plan.size(), spec.base_path);
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c) {
      out += fmt::format("{:<{}}{}", cells[c], width[c], c + 1 < cells.size() ? "  " : "\n");
    }
  };
  line(header);
  for (const auto& row : rows) line(row);
  out += "totals:";
  for (const auto& [s, text] : kPlanStates) out += fmt::format(" {} {}", text, totals[s]);
  out += fmt::format(" (of {})\n", plan.size());
  return out;
}

std::string FormatStopEarly(const SweepSpec& spec, const std::vector<PlannedRun>& plan) {
  if (!spec.stop_early) return "";
  const StopEarly& se = *spec.stop_early;
  std::map<std::string, int> arms, stopped;
  std::vector<std::string> order;
  for (const PlannedRun& r : plan) {
    const std::string arm = ArmOf(se, r.point);
    if (arms[arm]++ == 0) order.push_back(arm);
    if (r.state == PlanState::kStopped) ++stopped[arm];
  }
  std::string rule = se.rule == StopRule::kAsha
                         ? fmt::format("asha (the best 1/{} of the arms go on)", se.eta)
                         : fmt::format(
                               "paired (an arm shown worse than the best by more than {:g} "
                               "at {:g} % stops)",
                               se.margin, 100 * se.level);
  std::string out = fmt::format("stop_early: {} on {} after epoch(s) {}; {} arms:\n", rule,
                                ToString(se.metric), fmt::join(se.rungs, ", "), order.size());
  for (const std::string& arm : order) {
    out += fmt::format("  {} ({} runs{})\n", arm, arms[arm],
                       stopped[arm] ? fmt::format(", {} stopped", stopped[arm]) : "");
  }
  return out;
}

std::string FormatContrasts(const SweepSpec& spec, const std::vector<PlannedRun>& plan) {
  if (spec.contrasts.empty()) return "";
  std::vector<const SweepPoint*> points;
  std::map<std::string, PlanState> states;
  for (const PlannedRun& r : plan) {
    points.push_back(&r.point);
    states[r.point.run_id] = r.state;
  }
  // Ended: a result the contrast can use (completed, or collapsed or diverged: an outcome).
  const auto ended = [&](const std::vector<std::string>& ids) {
    return std::count_if(ids.begin(), ids.end(), [&](const std::string& id) {
      const PlanState s = states.at(id);
      return s == PlanState::kDone || s == PlanState::kStale || s == PlanState::kCollapsed ||
             s == PlanState::kDiverged;
    });
  };
  std::string out = fmt::format("contrasts ({}; report compare {} answers them):\n",
                                spec.contrasts.size(), spec.name);
  for (const Contrast& c : spec.contrasts) {
    const ContrastPlan p = PlanContrast(c, points, spec.replicates);
    const std::string where = SelectionText(c.where);
    out += fmt::format(
        "  {}: {}{}; a {} ({} runs, {} ended), b {} ({} runs, {} ended): "
        "{} pairs planned\n",
        c.name, ClaimText(c), where.empty() ? "" : " where " + where, SelectionText(c.a),
        p.a.size(), ended(p.a), SelectionText(c.b), p.b.size(), ended(p.b), p.pairs);
  }
  return out;
}

std::string FormatPretraining(const std::vector<PlannedRun>& plan, const SweepPaths& paths) {
  struct Stack {
    int runs = 0, pending = 0;
    std::string train;
  };
  std::map<std::string, Stack> stacks;                       // by key
  std::map<std::string, std::string> fingerprints, missing;  // by data.train
  int unknown = 0;
  for (const auto& r : plan) {
    const RunConfig& c = r.point.config;
    if (c.model.init != ModelInit::kRbm) continue;
    if (!fingerprints.count(c.data.train) && !missing.count(c.data.train)) {
      try {
        fingerprints[c.data.train] = DataDirFingerprint(c.data.train);
      } catch (const Error& e) {
        missing[c.data.train] = e.what();
      }
    }
    if (missing.count(c.data.train)) {
      ++unknown;
      continue;
    }
    std::string key;
    try {  // the key also reads data.ali and cmvn.scp, which may not exist yet
      key = RbmStackKey(c, fingerprints[c.data.train]).key;
    } catch (const Error& e) {
      missing[c.data.train] = e.what();
      ++unknown;
      continue;
    }
    Stack& s = stacks[key];
    ++s.runs;
    if (r.state != PlanState::kDone) ++s.pending;
    s.train = c.data.train;
  }
  if (stacks.empty() && unknown == 0) return "";
  std::string out = fmt::format("pretraining (model.init rbm): {} shared stack(s) in {}\n",
                                stacks.size(), paths.Cache());
  for (const auto& [key, s] : stacks) {
    out += fmt::format("  rbm-{}  {}  used by {} run(s) ({} not done), data {}\n", key,
                       StackCached(paths.Cache(), key) ? "cached" : "to pretrain", s.runs,
                       s.pending, s.train);
  }
  for (const auto& [train, why] : missing) {
    out += fmt::format("  stack key unknown until the training data exists: {}\n", why);
  }
  return out;
}

// Records the sweep (refused when a different spec holds its name, unless --force), writes a
// spec made on the command line where it was asked for, and adds the plan's runs not yet stored.
static void RegisterSweep(Store& store, const SweepSpec& spec, const std::vector<PlannedRun>& plan,
                          const SweepRunOptions& options) {
  std::string ids;
  for (const auto& r : plan) ids += r.point.run_id + "\n";
  store.PutSweep({spec.name, spec.yaml, Sha256Hex(ids), ""}, options.force);
  if (!options.write_spec_to.empty()) {
    MakeDirs(std::filesystem::path(options.write_spec_to).parent_path().string());
    WriteFileAtomic(options.write_spec_to, spec.yaml);
    std::cout << fmt::format("sweep {}: spec written to {}\n", spec.name, options.write_spec_to);
  }
  std::vector<RunRecord> runs;
  std::vector<SweepMember> members;
  int position = 0;
  for (const auto& r : plan) {
    runs.push_back(
        {r.point.run_id, CanonicalJson(r.point.config), r.run_dir, RunState::kNew, "", ""});
    members.push_back({r.point.run_id, AxesJson(r.point.axes), r.point.replicate, position++});
  }
  store.RegisterRuns(spec.name, runs, members);
}

// One launch of the sweep's pending runs; `until_epoch` > 0 (a stop_early rung): only the runs
// that have not reached that epoch, each pausing after it.
static int RunPhase(const SweepSpec& spec, Store& store, Launcher& launcher,
                    const SweepPaths& paths, const SweepRunOptions& options, int until_epoch) {
  // Read: the plan and every fact a decision needs, once.
  const SweepState state = ReadSweepState(
      spec, store, paths,
      [&options](const PlannedRun& r, const RunFacts& f) { return WantsLaunch(r, f, options); },
      KnownJobQueues());
  // Decide.
  LaunchChoice choice = ChooseLaunches(state, options);
  if (until_epoch > 0) {
    const auto epochs = store.SweepEpochs(spec.name);
    std::erase_if(choice.launch, [&](size_t i) {
      const auto e = epochs.find(state.plan[i].point.run_id);
      return e != epochs.end() && !e->second.empty() && e->second.back().epoch >= until_epoch;
    });
  }
  for (size_t i : choice.still_queued) {
    const QueuedJob& job = *state.facts[i].queued;
    spdlog::info("[sweep] {} still has {} job {} ({}): not launched again",
                 state.plan[i].point.run_id, job.queue, job.job_id, job.state);
  }
  std::vector<LaunchRequest> requests =
      LaunchRequests(state, choice.launch, options, spec.resources);
  for (LaunchRequest& q : requests) q.until_epoch = until_epoch;
  if (!options.dry_run) CheckRequestData(spec.path, requests, false);
  {
    std::vector<PlannedRun> launching;
    for (size_t i : choice.launch) launching.push_back(state.plan[i]);
    if (const std::string note = FormatSameTraining(launching); !note.empty()) {
      spdlog::info("[sweep] {}", note.substr(0, note.size() - 1));
    }
  }

  // Act.
  WarnClusterOnly(spec.resources, launcher);
  if (options.dry_run) {
    std::cout << FormatPlan(spec, state.plan);
    CheckRequestData(spec.path, requests, true);
    std::cout << fmt::format("dry run: {} run(s) would be launched ({})\n", requests.size(),
                             launcher.Name());
    for (const std::string& cmd : launcher.Describe(requests)) std::cout << "  " << cmd << "\n";
    return 0;
  }
  RegisterSweep(store, spec, state.plan, options);
  // Another controller may have registered a run first: its directory is the run's directory.
  {
    std::vector<std::string> request_ids;
    for (const auto& q : requests) request_ids.push_back(q.run_id);
    const auto registered = store.FindRuns(request_ids);
    for (auto& q : requests) {
      q.run_dir = registered.at(q.run_id).run_dir;
      q.config_path = q.run_dir + "/sweep-config.yaml";
    }
  }
  spdlog::info(
      "[sweep] {}: {} runs, {} to launch with the {} launcher{}", spec.name, state.plan.size(),
      requests.size(), launcher.Name(),
      until_epoch > 0 ? fmt::format(", each to epoch {} (a stop_early rung)", until_epoch) : "");

  return LaunchAndCollect(store, launcher, spec.name, requests, options.cluster ? 0 : options.jobs);
}

// The stop_early decision at `rung`: the arms the rule stops have their runs that are still to
// go (new, paused at the rung, interrupted) marked stopped, with why. Returns the arms stopped.
static int StopLosingArms(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                          Store& store, int rung) {
  const StopEarly& se = *spec.stop_early;
  const auto epochs = store.SweepEpochs(spec.name);
  const auto records = store.RunsOfSweep(spec.name);
  std::vector<RungRun> runs;
  std::map<std::string, std::vector<std::string>> runs_of_arm;
  for (const SweepPoint& p : points) {
    const auto rec = records.find(p.run_id);
    if (rec == records.end()) continue;
    RungRun r;
    r.run_id = p.run_id;
    r.arm = ArmOf(se, p);
    r.replicate = p.replicate;
    // The model the run holds after the rung's epoch: its last accepted epoch up to there.
    if (const auto e = epochs.find(p.run_id);
        e != epochs.end() && !e->second.empty() && e->second.back().epoch >= rung) {
      for (const Store::EpochCv& row : e->second) {
        if (row.epoch > rung || !row.accepted) continue;
        const std::optional<double>& v = se.metric == RungMetric::kCvAcc ? row.cv_acc : row.cv_loss;
        if (v && std::isfinite(*v)) r.value = v;
      }
    }
    // Collapsed or diverged before it reached the rung (a run that ended so later still has its
    // value here: the decision at a rung reads the rung, whenever it is made).
    r.collapsed = IsUnhealthy(rec->second.status) && !r.value;
    runs_of_arm[r.arm].push_back(p.run_id);
    runs.push_back(std::move(r));
  }
  // Runs other sweeps hold too are theirs as well: not stopped for this sweep's rule.
  auto shared = store.Db().Prepare("SELECT 1 FROM sweep_runs WHERE run_id = ? AND sweep != ?");
  int stopped = 0;
  for (const ArmFate& f : DecideRung(se, rung, runs)) {
    if (!f.stop) continue;
    ++stopped;
    int marked = 0, kept = 0;
    for (const std::string& id : runs_of_arm[f.arm]) {
      const RunState st = records.at(id).status;
      if (st != RunState::kNew && !IsResumable(st)) continue;  // ended (or stopped already)
      shared.Reset();
      shared.Bind(1, id).Bind(2, spec.name);
      if (shared.Step()) {
        ++kept;
        continue;
      }
      store.SetRunStatus(id, RunState::kStopped, f.why);
      ++marked;
    }
    if (marked > 0) spdlog::info("[sweep] arm {}: {} run(s) {}", f.arm, marked, f.why);
    if (kept > 0) {
      spdlog::info("[sweep] arm {}: {} run(s) not stopped: other sweeps hold them too", f.arm,
                   kept);
    }
  }
  return stopped;
}

int RunSweep(const SweepSpec& spec, Store& store, Launcher& launcher, const SweepPaths& paths,
             const SweepRunOptions& options) {
  if (!spec.stop_early) return RunPhase(spec, store, launcher, paths, options, 0);
  MAVG_CHECK(options.max_runs == 0,
             "{}: stop_early takes every live run to each rung before it decides: --max-runs "
             "cannot be combined with it",
             spec.path);
  if (options.dry_run) {  // what the first rung launches
    return RunPhase(spec, store, launcher, paths, options, spec.stop_early->rungs[0]);
  }
  // Rung by rung: every live run to the rung's epoch, the losing arms stopped, then the rest to
  // the end. A run already past a rung (an earlier sweep run) is not launched for it.
  const std::vector<SweepPoint> points = ExpandSweep(spec);  // the arms, once for every rung
  int rc = 0;
  for (const int rung : spec.stop_early->rungs) {
    const int phase = RunPhase(spec, store, launcher, paths, options, rung);
    if (phase == 130) return phase;
    rc = std::max(rc, phase);
    const int stopped = StopLosingArms(spec, points, store, rung);
    std::cout << fmt::format("sweep {}: rung at epoch {} ({}): {} arm(s) stopped\n", spec.name,
                             rung, ToString(spec.stop_early->rule), stopped);
  }
  const int last = RunPhase(spec, store, launcher, paths, options, 0);
  return last == 130 ? last : std::max(rc, last);
}

int DefaultJobs(int cores, int threads_option, const SweepResources& resources) {
  const int threads = threads_option > 0 ? threads_option : resources.threads;
  return threads > 0 ? std::max(1, cores / threads) : 1;
}

int RetrySweep(Store& store, const std::string& sweep, const std::vector<PlanState>& states,
               Launcher& launcher, const SweepRunOptions& options) {
  const StoredSweep stored = ReadStoredSweep(store, sweep, states);
  WarnClusterOnly(stored.resources, launcher);
  const std::vector<LaunchRequest> requests = RetryRequests(stored, states, options);
  CheckRequestData(fmt::format("sweep {}", sweep), requests, options.dry_run);
  if (options.dry_run) {
    std::cout << fmt::format("dry run: {} run(s) would be relaunched\n", requests.size());
    for (const std::string& cmd : launcher.Describe(requests)) std::cout << "  " << cmd << "\n";
    return 0;
  }
  std::cout << fmt::format("sweep {}: retrying {} run(s)\n", sweep, requests.size());
  return LaunchAndCollect(store, launcher, sweep, requests, options.cluster ? 0 : options.jobs);
}

namespace {

// The latest attempt of every run of the sweep that may still have a job in a queue, by queue:
// the run is running in the database, or preempted (a collect saw the state file of a job
// waiting to be requeued).
std::map<const JobQueue*, std::vector<AttemptRecord>> AttemptsInQueues(
    Store& store, const std::string& sweep, const std::map<std::string, RunRecord>& runs,
    const JobQueues& queues) {
  std::map<const JobQueue*, std::vector<AttemptRecord>> out;
  for (const auto& [id, a] : store.LatestAttempts(sweep)) {
    const RunState status = runs.at(id).status;
    const JobQueue* queue = QueueOfAttempt(a, queues);
    if (queue && (status == RunState::kRunning || status == RunState::kPreempted)) {
      out[queue].push_back(a);
    }
  }
  return out;
}

// A job that left the queue: what its run wrote decides the run's status (returned).
RunState CollectEndedJob(Store& store, const AttemptRecord& a, const std::string& run_dir,
                         LaunchState attempt_state, int exit_code) {
  store.EndAttempt(a.run_id, a.n, attempt_state, exit_code);
  return store.IngestRun(a.run_id, run_dir);
}

// Seconds since an ISO-8601 UTC time ("2026-11-30T04:52:30Z"); negative if unparsable.
double SecondsSince(const std::string& iso) {
  std::tm tm{};
  if (strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) == nullptr) return -1;
  return std::difftime(std::time(nullptr), timegm(&tm));
}

}  // namespace

std::string ReconcileJobs(Store& store, const std::string& sweep, double hung_after_s,
                          const JobQueues& queues) {
  store.RequireSweep(sweep);
  const auto runs = store.RunsOfSweep(sweep);
  std::string out;
  for (const auto& [queue, in_queue] : AttemptsInQueues(store, sweep, runs, queues)) {
    const std::string name = queue->Name();
    std::vector<std::string> jobs;
    for (const auto& a : in_queue) jobs.push_back(a.job_id);
    const auto states = queue->Queued(jobs);
    std::map<std::string, int> counts;
    std::string details;
    for (const AttemptRecord& a : in_queue) {
      const std::string& id = a.run_id;
      const auto q = states.find(a.job_id);
      if (q != states.end()) {
        const bool running = queue->IsRunning(q->second);
        ++counts[running ? "running" : "pending"];  // the queue's view, not RunStates
        if (!running) continue;
        const std::string& run_dir = runs.at(id).run_dir;
        try {
          const std::optional<RunStateFile> state = ReadRunState(run_dir);
          const double age = state ? SecondsSince(state->heartbeat.value_or("")) : 0.0;
          if (age > hung_after_s) {
            ++counts["hung"];
            details += fmt::format("  hung {} (job {}): no heartbeat for {:.0f} s ({})\n", id,
                                   a.job_id, age, RunStatePath(run_dir));
          }
        } catch (const std::exception&) {  // not started writing yet
        }
        continue;
      }
      RunState status = CollectEndedJob(store, a, runs.at(id).run_dir, LaunchState::kFinished, 0);
      if (!HasEnded(status)) {
        status = RunState::kFailed;
        store.SetRunStatus(id, status,
                           fmt::format("lost: {} job {} is gone and the run left no result "
                                       "(its job log is in the sweep's {}/logs/)",
                                       queue->Title(), a.job_id, name));
        ++counts["lost"];
        details += fmt::format("  lost {} (job {})\n", id, a.job_id);
      } else {
        ++counts["collected"];
      }
    }
    out += fmt::format("{}: {} run(s) were on the cluster:", name, in_queue.size());
    for (const auto& [k, n] : counts) out += fmt::format(" {} {}", k, n);
    out += "\n" + details;
  }
  return out;
}

int CancelSweep(Store& store, const std::string& sweep, const JobQueues& queues) {
  store.RequireSweep(sweep);
  const auto runs = store.RunsOfSweep(sweep);
  int cancelled = 0;
  for (const auto& [queue, active] : AttemptsInQueues(store, sweep, runs, queues)) {
    std::vector<std::string> jobs;
    for (const auto& a : active) jobs.push_back(a.job_id);
    // Jobs that already left the queue are collected, not cancelled: their runs ended.
    const auto states = queue->Queued(jobs);
    std::vector<AttemptRecord> queued;
    for (const auto& a : active) {
      if (states.count(a.job_id)) {
        queued.push_back(a);
      } else {
        CollectEndedJob(store, a, runs.at(a.run_id).run_dir, LaunchState::kFinished, 0);
      }
    }
    jobs.clear();
    for (const auto& a : queued) jobs.push_back(a.job_id);
    if (jobs.empty()) continue;
    const std::string err = queue->Cancel(jobs);
    MAVG_CHECK(err.empty(), "cancelling {} jobs failed: {}", queue->Title(), err);
    // Wait for the jobs to leave the queue (running ones checkpoint first), then the run dirs
    // decide: a run that completed meanwhile stays completed, the others are interrupted.
    for (int i = 0; i < 1200 && !queue->Queued(jobs).empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (const auto& a : queued) {
      const RunState status =
          CollectEndedJob(store, a, runs.at(a.run_id).run_dir, LaunchState::kInterrupted, 130);
      if (IsTerminal(status)) continue;
      store.SetRunStatus(a.run_id, RunState::kInterrupted,
                         fmt::format("cancelled by mavg sweep cancel ({} job {}); sweep run "
                                     "resumes it",
                                     queue->Title(), a.job_id));
      ++cancelled;
    }
  }
  return cancelled;
}

namespace {

// A member's axes as the plan names them, "parallel.workers=4 parallel.average_every=5"; the
// stored text as it is if it is not the [[key, value], ...] the store writes.
std::string AxesText(const std::string& axes_json) {
  const nlohmann::json axes = nlohmann::json::parse(axes_json, nullptr, false);
  if (!axes.is_array()) return axes_json;
  std::string out;
  for (const nlohmann::json& kv : axes) {
    if (!kv.is_array() || kv.size() != 2 || !kv[0].is_string()) return axes_json;
    out += (out.empty() ? "" : " ") + kv[0].get<std::string>() + "=" +
           (kv[1].is_string() ? kv[1].get<std::string>() : kv[1].dump());
  }
  return out;
}

}  // namespace

std::string FormatStatus(Store& store, const std::string& sweep) {
  store.RequireSweep(sweep);
  const auto runs = store.RunsOfSweep(sweep);
  std::map<PlanState, int> counts;
  for (const auto& [id, r] : runs) ++counts[PlanStateOf(&r)];
  std::string out = fmt::format("sweep {}: {} runs:", sweep, runs.size());
  for (const auto& [s, n] : counts) out += fmt::format(" {} {}", s, n);
  out += "\n";
  for (const auto& m : store.MembersOfSweep(sweep)) {
    const RunRecord& r = runs.at(m.run_id);
    if (HasEnded(r.status) && r.status != RunState::kCompleted) {
      out += fmt::format("  {} {} {}: {}\n", r.status, r.run_id, AxesText(m.axes_json),
                         r.reason.empty() ? "(no reason recorded)" : r.reason);
    }
  }
  return out;
}

}  // namespace mavg
