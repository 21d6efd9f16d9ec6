#pragma once
// The launcher seam: how planned runs become processes. `local` runs them as subprocesses of
// the controller; a cluster launcher (SLURM) submits jobs. Launchers never write the database:
// they report through the callbacks and the controller records and collects.

#include <functional>
#include <string>
#include <vector>

#include "engine/config/config.h"

namespace mavg {

struct LaunchRequest {
  std::string run_id;
  std::string run_dir;
  std::string config_path;  // resolved config to train (written by the controller)
  std::string cache_dir;    // shared pretrained stacks (<results>/cache)
  RunConfig config;
  bool resume = false;         // the run dir has a checkpoint: continue it
  bool force = false;          // redo a run that completed (stale runs)
  int ranks = 1;               // processes (mpirun -np) for parallel.mode mpi, else 1
  int threads = 1;             // CPU threads per process
  double timeout_s = 0.0;      // 0: none
  int attempt = 1;             // the attempt number this launch will be
  std::string planned_status;  // the plan's state of the run (new, interrupted, ...)
  std::string db_status;       // its status in the store (for the atomic claim)
};

struct LaunchOutcome {
  std::string state;  // finished, timeout, interrupted, failed-to-start
  int exit_code = 0;
  std::string detail;
};

struct LaunchCallbacks {
  std::function<void(const LaunchRequest&, const std::string& job_id)> started;
  std::function<void(const LaunchRequest&, const LaunchOutcome&)> ended;
};

class Launcher {
 public:
  virtual ~Launcher() = default;
  virtual std::string Name() const = 0;
  // Runs (or submits) the requests; returns when the launcher is done with them. Returns false
  // when interrupted (Ctrl-C): runs still active were stopped and reported as interrupted.
  virtual bool Launch(const std::vector<LaunchRequest>& runs, const LaunchCallbacks& cb) = 0;
  // The command lines that would be used, for --dry-run.
  virtual std::vector<std::string> Describe(const std::vector<LaunchRequest>& runs) const = 0;
};

struct LocalLauncherOptions {
  int jobs = 1;                // runs at once
  int cores = 0;               // 0: this machine's
  bool oversubscribe = false;  // allow ranks x threads > cores
  std::string mavg_path;       // the mavg binary (default: this process's executable)
  double kill_grace_s = 60;    // after SIGTERM (checkpoint), SIGKILL
};

std::unique_ptr<Launcher> CreateLocalLauncher(const LocalLauncherOptions& options);

}  // namespace mavg
