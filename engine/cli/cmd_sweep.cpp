// mavg sweep plan|run|collect|status|retry|cancel
#include <fmt/core.h>

#include <iostream>
#include <sstream>
#include <thread>

#include "engine/cli/commands.h"
#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/run_state.h"
#include "engine/core/timer.h"
#include "engine/core/words.h"
#include "engine/sweep/cli_spec.h"
#include "engine/sweep/controller.h"
#include "engine/sweep/estimate.h"
#include "engine/sweep/plan_checks.h"

namespace mavg::cli {
namespace {

int Cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// The store for reading: an empty in-memory one when the database does not exist yet, so that
// planning never creates files.
std::unique_ptr<Store> OpenForReading(const SweepPaths& paths) {
  if (!PathExists(paths.Db())) return std::make_unique<Store>(":memory:");
  return std::make_unique<Store>(paths.Db(), sql::OpenMode::kReadOnly);
}

// The database of commands that follow up on a sweep: it must exist already.
Store OpenExisting(const SweepPaths& paths, sql::OpenMode mode = sql::OpenMode::kReadWrite) {
  MAVG_CHECK(PathExists(paths.Db()), "{}: no results database", paths.Db());
  return Store(paths.Db(), mode);
}

std::unique_ptr<Store> OpenForWriting(const SweepPaths& paths) {
  MakeDirs(paths.results);
  return std::make_unique<Store>(paths.Db());
}

void AddPathOptions(CLI::App* cmd, SweepPaths& paths) {
  cmd->add_option("--results", paths.results, "Results directory (runs/, mavg.db)")
      ->capture_default_str();
  cmd->add_option("--db", paths.db, "Results database (default: RESULTS/mavg.db)");
}

void AddSlurmOptions(CLI::App* cmd, SlurmLauncherOptions& o) {
  cmd->add_option("--partition", o.partition, "slurm: partition (default: the cluster's)");
  cmd->add_option("--account", o.account, "slurm: account to charge");
  cmd->add_option("--time", o.time,
                  "slurm: time limit of every job, e.g. 02:00:00 (default: the run's timeout)");
  cmd->add_option("--throttle", o.throttle, "slurm: at most this many tasks of an array at once");
  cmd->add_option("--signal-seconds", o.signal_s,
                  "slurm: SIGUSR1 this long before the time limit; the run checkpoints, exits "
                  "preempted and the job requeues itself")
      ->capture_default_str();
  cmd->add_flag("--wait", o.wait,
                "slurm: wait for the jobs and collect every run as it ends (default: submit "
                "and return; sweep status / collect follow up)");
  cmd->add_option("--poll", o.poll_s, "slurm: seconds between squeue polls while waiting")
      ->capture_default_str();
}

// The spec positional and the options that make or change a spec on the command line.
void AddSpecOptions(CLI::App* cmd, std::string& spec, SweepOverrides& o) {
  cmd->add_option("spec", spec, "Sweep spec (YAML); or give --base CONFIG with --grid/--set");
  cmd->add_option("--base", o.base, "Run config to sweep without a spec file");
  cmd->add_option("--set", o.sets, "KEY=VALUE for every point (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--grid", o.grids,
                  "KEY=V1,V2,...: an axis, crossed with the others (repeatable, in axis order)")
      ->allow_extra_args(false);
  cmd->add_option("--replicates", o.replicates, "Seeds per point (replaces the spec's)");
  cmd->add_option("--name", o.name,
                  "Name of a sweep made with --base/--set/--grid (default: derived from its "
                  "content, the same for the same command line)");
}

}  // namespace

void AddSweepCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("sweep", "Plan, run and collect sweeps of runs (YAML specs)");
  cmd->require_subcommand(1);

  struct Args {
    SweepPaths paths;
    SweepOverrides overrides;
    std::string spec, name, launcher = "local";
    std::string states = fmt::format("{},{}", PlanState::kFailed, PlanState::kDiverged);
    SweepRunOptions run;
    LocalLauncherOptions local;
    SlurmLauncherOptions slurm;
    double hung_after_s = 1800;
    bool timing = false;
    int plan_jobs = 1;  // sweep plan --jobs: the estimate at that many runs at once
  };
  auto a = std::make_shared<Args>();
  // The launcher chosen by --launcher, for sweep `name`.
  auto MakeLauncher = [](Args& args, const std::string& name) -> std::unique_ptr<Launcher> {
    // Part of the paths below; a new sweep's name has passed the name rule already, a stored
    // one (retry) may predate it.
    CheckExistingName("sweep name", name);
    const LauncherKind kind =
        ParseOneOf(args.launcher, {LauncherKind::kLocal, LauncherKind::kSlurm}, "--launcher");
    if (kind == LauncherKind::kSlurm) {
      args.run.cluster = true;
      args.slurm.sweep = name;
      args.slurm.script_dir = args.paths.results + "/runs/" + name + "/slurm";
      return CreateSlurmLauncher(args.slurm);
    }
    args.local.jobs = args.run.jobs;
    return CreateLocalLauncher(args.local);
  };

  CLI::App* plan = cmd->add_subcommand("plan", "List every run of a spec with its state");
  AddSpecOptions(plan, a->spec, a->overrides);
  plan->add_flag("--time", a->timing, "Also print how long planning took");
  plan->add_option("--jobs,-j", a->plan_jobs,
                   "The time estimate for this many runs at once (as sweep run --jobs)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  AddPathOptions(plan, a->paths);
  plan->callback([a] {
    Timer t;
    const SweepSpec spec = ResolveSweepSpec(a->spec, a->overrides);
    auto store = OpenForReading(a->paths);
    const auto p = PlanSweep(spec, *store, a->paths);
    // A plan is a view: it says what `sweep run` would refuse (and exits 0), so that a spec can
    // be planned where its data is not.
    const std::vector<const RunConfig*> need = RunsNeedingData(p);
    const std::string data = DataProblems(need, fmt::format("the {} run(s) not done", need.size()));
    const double seconds = t.Seconds();
    const PlanEstimate estimate = EstimatePlan(*store, p);
    std::cout << FormatPlan(spec, p, &estimate.each) << FormatContrasts(spec, p)
              << FormatStopEarly(spec, p) << FormatPretraining(p, a->paths) << FormatSameTraining(p)
              << FormatReused(*store, spec.name, p) << FormatEstimate(estimate, a->plan_jobs);
    if (!data.empty()) {
      std::cout << fmt::format("data: {} (sweep run refuses to start them)\n", data);
    }
    if (a->timing) std::cout << fmt::format("planned {} runs in {:.3f} s\n", p.size(), seconds);
  });

  CLI::App* run = cmd->add_subcommand("run", "Launch the pending runs of a spec");
  AddSpecOptions(run, a->spec, a->overrides);
  run->add_option("--launcher", a->launcher, "local (subprocesses here) or slurm (job arrays)")
      ->check(CLI::IsMember({"local", "slurm"}))
      ->capture_default_str();
  CLI::Option* run_jobs = run->add_option(
      "--jobs,-j", a->run.jobs,
      "Runs at once (default: cores / --threads, else cores / the spec's resources.threads, "
      "else 1 with every core)");
  AddSlurmOptions(run, a->slurm);
  run->add_flag("--dry-run", a->run.dry_run, "Print the plan and the commands; launch nothing");
  run->add_option("--max-runs", a->run.max_runs, "Launch at most this many runs");
  run->add_option("--timeout", a->run.timeout_s,
                  "Seconds per run before it is stopped (default: the spec's resources.time)");
  run->add_option("--threads", a->run.threads, "CPU threads per process (default: cores / jobs)");
  run->add_flag("--oversubscribe", a->local.oversubscribe, "Allow more ranks x threads than cores");
  run->add_flag("--force", a->run.force, "Replace a sweep of this name with a different spec");
  run->add_flag("--rerun-stale", a->run.rerun_stale, "Also rerun runs made by older code");
  AddPathOptions(run, a->paths);
  run->callback([a, MakeLauncher, run_jobs] {
    const SweepSpec spec = ResolveSweepSpec(a->spec, a->overrides);
    if (run_jobs->count() == 0) a->run.jobs = DefaultJobs(Cores(), a->run.threads, spec.resources);
    MAVG_CHECK(!spec.stop_early || a->launcher == "local",
               "{}: stop_early runs the sweep rung by rung, waiting for every run at each: it "
               "needs --launcher local (the {} launcher returns before its jobs end)",
               spec.path, a->launcher);
    // The launcher first: what it refuses (a flag a batch script cannot carry) creates nothing.
    auto launcher = MakeLauncher(*a, spec.name);
    auto store = a->run.dry_run ? OpenForReading(a->paths) : OpenForWriting(a->paths);
    a->run.cache_dir = a->paths.Cache();
    if (spec.generated) a->run.write_spec_to = GeneratedSpecPath(a->paths.results, spec.name);
    ExitCode() = RunSweep(spec, *store, *launcher, a->paths, a->run);
  });

  CLI::App* collect = cmd->add_subcommand("collect", "Ingest the sweep's run directories");
  collect->add_option("name", a->name, "Sweep name")->required();
  AddPathOptions(collect, a->paths);
  collect->callback([a] {
    Store store = OpenExisting(a->paths);
    store.RequireSweep(a->name);
    const CollectSummary s = store.Collect(a->name);
    std::string line = fmt::format("sweep {}: {} runs, {} ingested, {} without files yet", a->name,
                                   s.runs, s.ingested, s.missing);
    for (const auto& [status, n] : s.by_status) line += fmt::format(", {} {}", status, n);
    std::cout << line << "\n";
  });

  CLI::App* status = cmd->add_subcommand("status", "Counts per state and every failure's reason");
  status->add_option("name", a->name, "Sweep name")->required();
  AddPathOptions(status, a->paths);
  status->callback([a] {
    // A database this process cannot write (an archive) is read as it is, without updating
    // the states of SLURM jobs.
    const bool writable = sql::Writable(a->paths.Db());
    Store store =
        OpenExisting(a->paths, writable ? sql::OpenMode::kReadWrite : sql::OpenMode::kReadOnly);
    store.RequireSweep(a->name);
    if (writable) {
      std::cout << ReconcileJobs(store, a->name, a->hung_after_s);
    } else {
      std::cout << "(read-only database: SLURM job states not reconciled)\n";
    }
    std::cout << FormatStatus(store, a->name);
  });
  status
      ->add_option("--hung-after", a->hung_after_s,
                   "SLURM: a running job whose run wrote no heartbeat for this many seconds "
                   "is reported as hung")
      ->capture_default_str();

  CLI::App* cancel = cmd->add_subcommand("cancel", "Cancel the sweep's SLURM jobs");
  cancel->add_option("name", a->name, "Sweep name")->required();
  AddPathOptions(cancel, a->paths);
  cancel->callback([a] {
    Store store = OpenExisting(a->paths);
    store.RequireSweep(a->name);
    const int n = CancelSweep(store, a->name);
    std::cout << fmt::format(
        "sweep {}: cancelled {} run(s) on SLURM (now interrupted; "
        "mavg sweep run resumes them)\n",
        a->name, n);
  });

  CLI::App* retry = cmd->add_subcommand("retry", "Relaunch runs in the given states");
  retry->add_option("name", a->name, "Sweep name")->required();
  retry
      ->add_option("--state", a->states,
                   fmt::format("States to retry, comma-separated (of {})", PlanStateNames()))
      ->capture_default_str();
  CLI::Option* retry_jobs = retry->add_option(
      "--jobs,-j", a->run.jobs,
      "Runs at once (default: cores / --threads, else cores / the spec's resources.threads, "
      "else 1)");
  retry->add_option("--launcher", a->launcher, "local or slurm")
      ->check(CLI::IsMember({"local", "slurm"}))
      ->capture_default_str();
  AddSlurmOptions(retry, a->slurm);
  retry->add_flag("--dry-run", a->run.dry_run, "Print the commands; launch nothing");
  retry->add_option("--timeout", a->run.timeout_s, "Seconds per run");
  retry->add_option("--threads", a->run.threads, "CPU threads per process");
  retry->add_flag("--oversubscribe", a->local.oversubscribe,
                  "Allow more ranks x threads than cores");
  AddPathOptions(retry, a->paths);
  retry->callback([a, MakeLauncher, retry_jobs] {
    std::vector<PlanState> states;
    for (const std::string& s : SplitComma(a->states)) {
      states.push_back(ParsePlanStateOrThrow(s, "--state"));
    }
    CheckExistingName("sweep name", a->name);
    Store store = OpenExisting(a->paths);
    store.RequireSweep(a->name);
    if (retry_jobs->count() == 0) {
      a->run.jobs = DefaultJobs(Cores(), a->run.threads, StoredResources(store, a->name));
    }
    auto launcher = MakeLauncher(*a, a->name);
    a->run.cache_dir = a->paths.Cache();
    ExitCode() = RetrySweep(store, a->name, states, *launcher, a->run);
  });
}

}  // namespace mavg::cli
