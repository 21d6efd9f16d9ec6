#pragma once
// The launcher seam: how planned runs become processes. `local` runs them as subprocesses of
// the controller; a cluster launcher (SLURM) submits jobs. Launchers never write the database:
// they report through the callbacks and the controller records and collects.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/config/config.h"
#include "engine/core/enum_text.h"
#include "engine/core/run_state.h"
#include "engine/sweep/resources.h"

namespace mavg {

struct LaunchRequest {
  std::string run_id;
  std::string run_dir;
  std::string config_path;  // resolved config to train (written by the controller)
  std::string cache_dir;    // shared pretrained stacks (<results>/cache)
  RunConfig config;
  bool resume = false;       // the run dir has a checkpoint: continue it
  bool force = false;        // redo a run that completed (stale runs)
  bool mpi = false;          // parallel.mode mpi: launched under mpirun (decided once, here)
  int ranks = 1;             // processes (mpirun -np) for parallel.mode mpi, else 1
  int threads = 1;           // CPU threads per process
  double timeout_s = 0.0;    // 0: none
  int attempt = 1;           // the attempt number this launch will be
  int until_epoch = 0;       // > 0: pause after this epoch (stop_early's rungs: --until-epoch)
  SweepResources resources;  // the spec's (a cluster launcher writes them into its jobs)
  // The plan's state of the run, and its status in the store (for the atomic claim).
  PlanState planned_state = PlanState::kNew;
  RunState db_status = RunState::kNew;
};

struct LaunchOutcome {
  LaunchState state = LaunchState::kFinished;
  int exit_code = 0;
  std::string detail;
};

struct LaunchCallbacks {
  std::function<void(const LaunchRequest&, const std::string& job_id)> started;
  std::function<void(const LaunchRequest&, const LaunchOutcome&)> ended;
};

// A batch queue that keeps jobs between mavg processes (SLURM's): what the controller asks of
// the jobs of runs launched earlier, perhaps by another controller, to reconcile, cancel or
// relaunch them. A launcher whose runs are children of the controller (local) has none.
class JobQueue {
 public:
  virtual ~JobQueue() = default;
  // The name of the launcher whose attempts hold its job ids ("slurm"), and how messages name
  // the queue ("SLURM").
  virtual std::string Name() const = 0;
  virtual std::string Title() const = 0;
  // The queue's state of the jobs still in it ("PENDING", "RUNNING", ...), by job id; a job
  // absent from the result has left the queue.
  virtual std::map<std::string, std::string> Queued(
      const std::vector<std::string>& job_ids) const = 0;
  // Whether a queued job's state means it is running now (not waiting).
  virtual bool IsRunning(const std::string& state) const = 0;
  // Cancels the jobs; the queue's message on failure, "" on success.
  virtual std::string Cancel(const std::vector<std::string>& job_ids) const = 0;
};

// The queues attempts may name, by launcher name; a launcher name absent has no queue.
using JobQueues = std::map<std::string, const JobQueue*>;
// Every queue this build knows (SLURM's).
const JobQueues& KnownJobQueues();

class Launcher {
 public:
  virtual ~Launcher() = default;
  virtual std::string Name() const = 0;
  // Whether it grants the resources only a cluster can (memory, nodes, QoS, sbatch options);
  // those of a spec are warned about as unused otherwise.
  virtual bool GrantsClusterResources() const { return false; }
  // Runs (or submits) the requests; returns when the launcher is done with them. Returns false
  // when interrupted (Ctrl-C): runs still active were stopped and reported as interrupted.
  virtual bool Launch(const std::vector<LaunchRequest>& runs, const LaunchCallbacks& cb) = 0;
  // The command lines that would be used, for --dry-run.
  virtual std::vector<std::string> Describe(const std::vector<LaunchRequest>& runs) const = 0;
  // Throws (one line naming the value) if a request holds anything this launcher cannot carry
  // safely: called before any run is claimed.
  virtual void Validate(const std::vector<LaunchRequest>& /*runs*/) const {}
};

struct LocalLauncherOptions {
  int jobs = 1;                // runs at once
  int cores = 0;               // 0: this machine's
  bool oversubscribe = false;  // allow ranks x threads > cores
  std::string mavg_path;       // the mavg binary (default: this process's executable)
  double kill_grace_s = 60;    // after SIGTERM (checkpoint), SIGKILL
};

std::unique_ptr<Launcher> CreateLocalLauncher(const LocalLauncherOptions& options);

// The launchers `sweep run --launcher` chooses from.
enum class LauncherKind { kLocal, kSlurm };
inline constexpr EnumText<LauncherKind> kLauncherKindTexts[] = {{LauncherKind::kLocal, "local"},
                                                                {LauncherKind::kSlurm, "slurm"}};
MAVG_ENUM_TEXTS(LauncherKind, kLauncherKindTexts)

struct SlurmLauncherOptions {
  std::string sweep;       // job names: mavg-<sweep>
  std::string script_dir;  // sbatch scripts, manifests and job logs (<sweep dir>/slurm)
  std::string partition;   // --partition (empty: the cluster's default)
  std::string account;     // --account
  std::string time;        // --time for every job (empty: from the run's timeout)
  int throttle = 0;        // at most this many tasks of an array at once (%M; 0: no limit)
  int signal_s = 120;      // --signal=B:USR1@<s>: checkpoint this long before the limit
  bool wait = false;       // wait for the jobs and collect each run as it ends
  double poll_s = 5;       // squeue polling interval while waiting
  std::string mavg_path;   // the mavg binary (default: this process's executable)
};

// Submits one job array per resource shape (ranks, threads, GPUs, time limit), chunked to the
// cluster's MaxArraySize; array tasks find their run in a manifest. Without `wait` it returns
// after submitting (the runs stay "running" with their job ids; `sweep status` reconciles).
std::unique_ptr<Launcher> CreateSlurmLauncher(const SlurmLauncherOptions& options);

// SLURM's queue: job ids are array tasks ("123_4"), states squeue's (PENDING, RUNNING, ...),
// cancelling is scancel.
const JobQueue& SlurmJobQueue();

}  // namespace mavg
