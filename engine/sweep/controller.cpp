#include "engine/sweep/controller.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <thread>

#include "engine/config/schema.h"
#include "engine/core/build_info.h"
#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/core/logging.h"
#include "engine/core/sysinfo.h"

namespace mavg {
namespace {

std::string AxesJson(const Assignment& axes) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& [k, v] : axes) a.push_back({k, v});
  return a.dump();
}

std::string PlanState(const RunRecord* rec) {
  if (rec == nullptr || rec->status == "new") return "new";
  if (rec->status == "completed") {
    return rec->code_version.empty() || rec->code_version == build_info::kCodeVersion ? "done"
                                                                                      : "stale";
  }
  if (rec->status == "preempted" || rec->status == "interrupted") return "interrupted";
  return rec->status;  // failed, diverged, running
}

// A run recorded as running whose process is gone (same host) is resumable.
bool RunningButDead(const std::string& run_dir) {
  try {
    const auto state = nlohmann::json::parse(ReadFile(run_dir + "/state.json"));
    if (state.value("status", "") != "running") return false;
    if (state.value("host", "") != HostName()) return false;
    const int pid = state.value("pid", 0);
    return pid <= 0 || kill(pid, 0) != 0;
  } catch (const std::exception&) {
    return true;
  }
}

}  // namespace

// Writes each request's config, launches them, and records/collects every run as it ends.
static int LaunchAndCollect(Store& store, Launcher& launcher, const std::string& sweep,
                            const std::vector<LaunchRequest>& requests) {
  for (const LaunchRequest& q : requests) {
    MakeDirs(q.run_dir);
    WriteFileAtomic(q.config_path, ToYaml(q.config));
  }
  std::map<std::string, std::string> final_status;
  int done = 0;
  const std::string host = HostName();
  LaunchCallbacks cb;
  cb.started = [&](const LaunchRequest& q, const std::string& job) {
    store.SetRunStatus(q.run_id, "running");
    int attempt = 1;
    try {
      attempt = nlohmann::json::parse(ReadFile(q.run_dir + "/state.json")).value("attempt", 0) + 1;
    } catch (const std::exception&) {
    }
    store.StartAttempt(q.run_id, attempt, launcher.Name(), job, host);
    spdlog::info("[sweep] started {} ({}{})", q.run_id, job, q.resume ? ", resuming" : "");
  };
  cb.ended = [&](const LaunchRequest& q, const LaunchOutcome& o) {
    std::string status = store.IngestRun(q.run_id, q.run_dir);
    int attempt = 1;
    try {
      attempt = nlohmann::json::parse(ReadFile(q.run_dir + "/state.json")).value("attempt", 1);
    } catch (const std::exception&) {
    }
    if (o.state == "timeout") {
      status = "failed";
      store.SetRunStatus(
          q.run_id, status,
          fmt::format("timed out after {:.0f} s (checkpointed; retry resumes it)", q.timeout_s));
    } else if (o.state == "interrupted") {
      status = "interrupted";
      store.SetRunStatus(q.run_id, status, "interrupted by the sweep controller");
    } else if (status == "running" || status == "new") {
      // The process ended without recording an outcome (killed, or it never started).
      status = "failed";
      store.SetRunStatus(q.run_id, status,
                         fmt::format("exited with code {} without a result{}", o.exit_code,
                                     o.detail.empty() ? "" : " (" + o.detail + ")"));
    }
    store.EndAttempt(q.run_id, attempt, o.state == "finished" ? status : o.state, o.exit_code);
    final_status[q.run_id] = status;
    ++done;
    spdlog::info("[sweep] {}/{} {} {} (exit {})", done, requests.size(), q.run_id, status,
                 o.exit_code);
  };
  const bool completed = launcher.Launch(requests, cb);

  // Summary.
  std::map<std::string, int> counts;
  for (const auto& [id, s] : final_status) ++counts[s];
  std::string summary = fmt::format("sweep {}: launched {}", sweep, requests.size());
  for (const auto& [s, n] : counts) summary += fmt::format(", {} {}", s, n);
  std::cout << summary << "\n";
  bool any_failed = false;
  const auto runs = store.RunsOfSweep(sweep);
  for (const auto& [id, s] : final_status) {
    if (s == "failed" || s == "diverged") {
      any_failed = true;
      std::cout << fmt::format("  {} {}: {}\n", s, id, runs.at(id).reason);
    }
  }
  if (!completed) return 130;
  return any_failed ? 1 : 0;
}

std::vector<PlannedRun> PlanSweep(const SweepSpec& spec, Store& store, const SweepPaths& paths) {
  std::vector<SweepPoint> points = ExpandSweep(spec);
  std::vector<std::string> ids;
  for (const auto& p : points) ids.push_back(p.run_id);
  const std::map<std::string, RunRecord> known = store.FindRuns(ids);
  std::vector<PlannedRun> plan;
  plan.reserve(points.size());
  for (auto& p : points) {
    PlannedRun r;
    const auto it = known.find(p.run_id);
    const RunRecord* rec = it == known.end() ? nullptr : &it->second;
    // The same point in another sweep is the same run: its directory is reused.
    r.run_dir = rec ? rec->run_dir : paths.results + "/runs/" + spec.name + "/" + p.run_id;
    r.state = PlanState(rec);
    r.reason = rec ? rec->reason : "";
    r.point = std::move(p);
    plan.push_back(std::move(r));
  }
  return plan;
}

std::string FormatPlan(const SweepSpec& spec, const std::vector<PlannedRun>& plan) {
  std::vector<std::string> header = {"run_id", "state"};
  for (const auto& a : spec.axes) header.push_back(a);
  if (spec.replicates > 1) header.push_back("replicate");
  std::vector<std::vector<std::string>> rows;
  std::map<std::string, int> totals;
  for (const auto& r : plan) {
    std::vector<std::string> row = {r.point.run_id, r.state};
    for (const auto& [k, v] : r.point.axes) row.push_back(v);
    if (spec.replicates > 1) row.push_back(std::to_string(r.point.replicate));
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
  for (const char* s : {"new", "done", "stale", "running", "interrupted", "failed", "diverged"}) {
    out += fmt::format(" {} {}", s, totals.count(s) ? totals[s] : 0);
  }
  out += fmt::format(" (of {})\n", plan.size());
  return out;
}

int RunSweep(const SweepSpec& spec, Store& store, Launcher& launcher, const SweepPaths& paths,
             const SweepRunOptions& options) {
  std::vector<PlannedRun> plan = PlanSweep(spec, store, paths);
  std::string ids;
  for (const auto& r : plan) ids += r.point.run_id + "\n";
  const SweepRecord record{spec.name, ReadFile(spec.path), Sha256Hex(ids), ""};

  std::vector<PlannedRun*> pending;
  for (auto& r : plan) {
    const bool retry = std::find(options.retry_states.begin(), options.retry_states.end(),
                                 r.state) != options.retry_states.end();
    if (r.state == "new" || r.state == "interrupted" || retry ||
        (r.state == "stale" && options.rerun_stale) ||
        (r.state == "running" && RunningButDead(r.run_dir))) {
      pending.push_back(&r);
    }
  }
  if (options.max_runs > 0 && static_cast<int>(pending.size()) > options.max_runs) {
    pending.resize(options.max_runs);
  }

  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<LaunchRequest> requests;
  for (PlannedRun* r : pending) {
    LaunchRequest q;
    q.run_id = r->point.run_id;
    q.run_dir = r->run_dir;
    q.config_path = r->run_dir + "/sweep-config.yaml";
    q.config = r->point.config;
    q.ranks = q.config.parallel.mode == "mpi" ? static_cast<int>(q.config.parallel.workers) : 1;
    q.threads = options.threads > 0          ? options.threads
                : spec.resources.threads > 0 ? spec.resources.threads
                                             : std::max(1, cores / (options.jobs * q.ranks));
    // Threads are not part of the run's identity: the launcher may choose them.
    q.config.device_options.threads = q.threads;
    q.timeout_s = options.timeout_s > 0 ? options.timeout_s : spec.resources.TimeSeconds();
    q.resume = PathExists(r->run_dir + "/checkpoint/meta.json") && r->state != "failed" &&
               r->state != "diverged" && r->state != "stale";
    requests.push_back(std::move(q));
  }

  if (options.dry_run) {
    std::cout << FormatPlan(spec, plan);
    std::cout << fmt::format("dry run: {} run(s) would be launched ({})\n", requests.size(),
                             launcher.Name());
    for (const std::string& cmd : launcher.Describe(requests)) std::cout << "  " << cmd << "\n";
    return 0;
  }

  store.PutSweep(record, options.force);
  {
    std::vector<RunRecord> runs;
    std::vector<SweepMember> members;
    int position = 0;
    for (const auto& r : plan) {
      runs.push_back({r.point.run_id, CanonicalJson(r.point.config), r.run_dir, "new", "", ""});
      members.push_back({r.point.run_id, AxesJson(r.point.axes), r.point.replicate, position++});
    }
    store.RegisterRuns(spec.name, runs, members);
  }
  spdlog::info("[sweep] {}: {} runs, {} to launch with the {} launcher", spec.name, plan.size(),
               requests.size(), launcher.Name());

  return LaunchAndCollect(store, launcher, spec.name, requests);
}

int RetrySweep(Store& store, const std::string& sweep, const std::vector<std::string>& states,
               Launcher& launcher, const SweepRunOptions& options) {
  MAVG_CHECK(store.GetSweep(sweep).has_value(), "{}: no sweep named '{}'", store.Db().Path(),
             sweep);
  const auto runs = store.RunsOfSweep(sweep);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<LaunchRequest> requests;
  for (const SweepMember& m : store.MembersOfSweep(sweep)) {
    const RunRecord& r = runs.at(m.run_id);
    if (std::find(states.begin(), states.end(), PlanState(&r)) == states.end()) continue;
    LaunchRequest q;
    q.run_id = r.run_id;
    q.run_dir = r.run_dir;
    q.config_path = r.run_dir + "/sweep-config.yaml";
    q.config = ConfigFromJson(nlohmann::json::parse(r.config_json), store.Db().Path());
    q.ranks = q.config.parallel.mode == "mpi" ? static_cast<int>(q.config.parallel.workers) : 1;
    q.threads =
        options.threads > 0 ? options.threads : std::max(1, cores / (options.jobs * q.ranks));
    q.config.device_options.threads = q.threads;
    q.timeout_s = options.timeout_s;
    // A failed or diverged run starts over; an interrupted one continues from its checkpoint.
    q.resume = PlanState(&r) == "interrupted" && PathExists(r.run_dir + "/checkpoint/meta.json");
    requests.push_back(std::move(q));
    if (options.max_runs > 0 && static_cast<int>(requests.size()) >= options.max_runs) break;
  }
  if (options.dry_run) {
    std::cout << fmt::format("dry run: {} run(s) would be relaunched\n", requests.size());
    for (const std::string& cmd : launcher.Describe(requests)) std::cout << "  " << cmd << "\n";
    return 0;
  }
  std::cout << fmt::format("sweep {}: retrying {} run(s)\n", sweep, requests.size());
  return LaunchAndCollect(store, launcher, sweep, requests);
}

std::string FormatStatus(Store& store, const std::string& sweep) {
  MAVG_CHECK(store.GetSweep(sweep).has_value(), "{}: no sweep named '{}'", store.Db().Path(),
             sweep);
  const auto runs = store.RunsOfSweep(sweep);
  std::map<std::string, int> counts;
  for (const auto& [id, r] : runs) ++counts[PlanState(&r)];
  std::string out = fmt::format("sweep {}: {} runs:", sweep, runs.size());
  for (const auto& [s, n] : counts) out += fmt::format(" {} {}", s, n);
  out += "\n";
  for (const auto& m : store.MembersOfSweep(sweep)) {
    const RunRecord& r = runs.at(m.run_id);
    if (r.status == "failed" || r.status == "diverged" || r.status == "interrupted" ||
        r.status == "preempted") {
      out += fmt::format("  {} {} {}: {}\n", r.status, r.run_id, m.axes_json,
                         r.reason.empty() ? "(no reason recorded)" : r.reason);
    }
  }
  return out;
}

}  // namespace mavg
