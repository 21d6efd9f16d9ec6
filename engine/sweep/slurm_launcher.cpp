// The SLURM launcher: one job array per resource shape, a manifest mapping array tasks to runs,
// and a batch script that starts (or resumes) its run with mpirun or directly, forwards SLURM's
// warning signal so the run checkpoints before its time limit, and requeues itself when the run
// exits "preempted" (75). Under Debian's OpenMPI, mpirun inside the allocation starts the ranks
// through SLURM's own launcher (its plm/slurm component), so no host list is needed.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/logging.h"
#include "engine/core/subprocess.h"
#include "engine/core/sysinfo.h"
#include "engine/core/words.h"
#include "engine/records/checkpoint_meta.h"
#include "engine/sweep/launcher.h"

namespace mavg {
namespace {

// The SLURM state of jobs ("123_4" -> PENDING, RUNNING, ...) for the given array task ids that
// are still known to squeue; ids absent from the result have left the queue.
std::map<std::string, std::string> SlurmQueueState(const std::vector<std::string>& job_ids) {
  std::map<std::string, std::string> state;
  if (job_ids.empty()) return state;
  std::map<std::string, bool> wanted;
  std::string arrays;
  for (const auto& id : job_ids) {
    wanted[id] = true;
    const std::string array = id.substr(0, id.find('_'));
    if (arrays.find("," + array + ",") == std::string::npos) arrays += "," + array + ",";
  }
  std::string list;
  for (size_t i = 0; i < arrays.size(); ++i) {
    if (arrays[i] == ',' && (i == 0 || arrays[i - 1] == ',')) continue;
    list += arrays[i];
  }
  if (!list.empty() && list.back() == ',') list.pop_back();
  // -r: one line per array task (pending tasks of an array are otherwise folded together).
  const CommandResult r = RunCommand({"squeue", "-h", "-r", "-j", list, "-o", "%i %T"});
  if (r.exit_code != 0) {
    // squeue refuses job ids that the controller has already forgotten: then none is queued.
    if (r.err.find("Invalid job id") != std::string::npos) return state;
    MAVG_FAIL("squeue failed (exit {}): {}", r.exit_code, r.err.empty() ? r.out : r.err);
  }
  std::istringstream in(r.out);
  std::string id, st;
  while (in >> id >> st) {
    if (wanted.count(id)) state[id] = st;
  }
  return state;
}

std::string SlurmCancel(const std::vector<std::string>& job_ids) {
  if (job_ids.empty()) return "";
  std::vector<std::string> argv = {"scancel"};
  argv.insert(argv.end(), job_ids.begin(), job_ids.end());
  const CommandResult r = RunCommand(argv);
  return r.exit_code == 0 ? "" : (r.err.empty() ? r.out : r.err);
}

class SlurmQueue : public JobQueue {
 public:
  std::string Name() const override { return "slurm"; }
  std::string Title() const override { return "SLURM"; }
  std::map<std::string, std::string> Queued(
      const std::vector<std::string>& job_ids) const override {
    return SlurmQueueState(job_ids);
  }
  bool IsRunning(const std::string& state) const override { return state == "RUNNING"; }
  std::string Cancel(const std::vector<std::string>& job_ids) const override {
    return SlurmCancel(job_ids);
  }
};

volatile std::sig_atomic_t g_slurm_interrupted = 0;
extern "C" void OnSlurmWaitInterrupt(int) { g_slurm_interrupted = 1; }

// "D-HH:MM:SS" for sbatch --time (minutes rounded up).
std::string SlurmTime(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 59) / 60 * 60;
  return fmt::format("{}-{:02}:{:02}:{:02}", s / 86400, s % 86400 / 3600, s % 3600 / 60, s % 60);
}

int MaxArraySize() {
  const CommandResult r = RunCommand({"scontrol", "show", "config"});
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("MaxArraySize", 0) == 0) {
      const auto eq = line.find('=');
      if (eq != std::string::npos) return std::max(1, std::atoi(line.c_str() + eq + 1));
    }
  }
  return 1001;  // SLURM's default
}

// What the jobs of one array share. The spec's resources are the same for every run of a
// launch; they are part of the shape so that an array never mixes two requests.
struct Shape {
  int ranks = 1, threads = 1, gpus = 0, nodes = 0;
  bool mpi = false;
  std::string time, mem, qos, constraint;
  std::vector<std::string> sbatch;
  auto operator<=>(const Shape&) const = default;
  std::string Name() const {
    return fmt::format("r{}-t{}{}{}{}", ranks, threads, gpus > 0 ? fmt::format("-g{}", gpus) : "",
                       nodes > 0 ? fmt::format("-n{}", nodes) : "", mpi ? "-mpi" : "");
  }
};

// How an array task starts its run: "resume" continues a checkpoint, "fresh" starts over,
// "force" redoes a completed (stale) run. After a requeue every mode resumes its checkpoint.
std::string Mode(const LaunchRequest& q) {
  return q.force ? "force" : q.resume ? "resume" : "fresh";
}

class SlurmLauncher final : public Launcher {
 public:
  explicit SlurmLauncher(SlurmLauncherOptions o) : options_(std::move(o)) {
    if (options_.mavg_path.empty()) options_.mavg_path = SelfExecutable();
    // Jobs start in this directory (relative data paths in configs keep their meaning); the
    // files they read are named absolutely.
    workdir_ = std::filesystem::current_path().string();
    // Files of one submission never replace another's: a pending or requeued task reads its
    // manifest when it starts.
    stamp_ = fmt::format("{}-{}", UtcNow(), getpid());
    for (char& c : stamp_) c = c == ':' ? '-' : c;
    options_.script_dir = Absolute(options_.script_dir);
    MAVG_CHECK(options_.signal_s >= 0, "--signal-seconds must be >= 0, got {}", options_.signal_s);
    MAVG_CHECK(options_.throttle >= 0, "--throttle must be >= 0, got {}", options_.throttle);
    // Everything the batch script is made of, checked before anything is written or claimed.
    CheckExistingName("sweep name", options_.sweep);  // a stored sweep's may predate the rule
    CheckNoControlCharacter("--partition", options_.partition);
    CheckNoControlCharacter("--account", options_.account);
    CheckNoControlCharacter("--time", options_.time);
    CheckNoControlCharacter("the working directory", workdir_);
    CheckNoControlCharacter("the sweep's slurm directory", options_.script_dir);
    CheckNoControlCharacter("the mavg executable's path", options_.mavg_path);
  }
  std::string Name() const override { return SlurmJobQueue().Name(); }
  bool GrantsClusterResources() const override { return true; }

  // Builds every script and manifest these runs would need (their checks throw), writing none.
  void Validate(const std::vector<LaunchRequest>& runs) const override {
    for (const Chunk& c : Chunks(runs, 1001)) {
      Manifest(c);
      Script(c);
    }
  }

  std::vector<std::string> Describe(const std::vector<LaunchRequest>& runs) const override {
    std::vector<std::string> out;
    for (const Chunk& c : Chunks(runs, 1001)) {
      out.push_back(fmt::format("# {} ({} task(s)), manifest {}:\n{}", ScriptPath(c), c.runs.size(),
                                ManifestPath(c), Manifest(c)));
      out.push_back(Script(c));
    }
    return out;
  }

  bool Launch(const std::vector<LaunchRequest>& runs, const LaunchCallbacks& cb) override {
    if (runs.empty()) return true;
    MakeDirs(options_.script_dir + "/logs");
    std::vector<std::pair<std::string, const LaunchRequest*>> submitted;  // task id, run
    for (const Chunk& c : Chunks(runs, MaxArraySize())) {
      WriteFileAtomic(ManifestPath(c), Manifest(c));
      WriteFileAtomic(ScriptPath(c), Script(c));
      const CommandResult r = RunCommand({"sbatch", "--parsable", ScriptPath(c)});
      if (r.exit_code != 0) {  // SLURM's own message, on every run of the array
        std::string msg = r.err.empty() ? r.out : r.err;
        while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
        for (auto& ch : msg) ch = ch == '\n' ? ' ' : ch;
        const std::string why = fmt::format("sbatch failed (exit {}): {}", r.exit_code,
                                            msg.empty() ? "no message" : msg);
        spdlog::error("[sweep] {}: {}", ScriptPath(c), why);
        for (const LaunchRequest* q : c.runs)
          cb.ended(*q, LaunchOutcome{LaunchState::kFailedToStart, -1, why});
        continue;
      }
      std::string job = r.out.substr(0, r.out.find_first_of(";\n"));
      spdlog::info("[sweep] submitted job array {} ({} task(s), {})", job, c.runs.size(),
                   c.shape.Name());
      for (size_t i = 0; i < c.runs.size(); ++i) {
        const std::string task = fmt::format("{}_{}", job, i);
        cb.started(*c.runs[i], task);
        submitted.emplace_back(task, c.runs[i]);
      }
    }
    if (!options_.wait) return true;
    return Wait(submitted, cb);
  }

 private:
  struct Chunk {
    Shape shape;
    int index = 0;  // chunk of the shape
    std::vector<const LaunchRequest*> runs;
  };

  std::vector<Chunk> Chunks(const std::vector<LaunchRequest>& runs, int max_array) const {
    std::map<Shape, std::vector<const LaunchRequest*>> groups;
    for (const LaunchRequest& q : runs) {
      Shape s;
      s.mpi = q.mpi;
      s.ranks = q.ranks;
      s.threads = q.threads;
      s.gpus = q.resources.GpusFor(q.config);
      s.nodes = q.resources.nodes;
      s.mem = q.resources.mem;
      s.qos = q.resources.qos;
      s.constraint = q.resources.constraint;
      s.sbatch = q.resources.sbatch;
      s.time = !options_.time.empty() ? options_.time
               : q.timeout_s > 0      ? SlurmTime(q.timeout_s)
                                      : "";
      groups[s].push_back(&q);
    }
    std::vector<Chunk> chunks;
    for (auto& [shape, list] : groups) {
      for (size_t b = 0; b < list.size(); b += static_cast<size_t>(max_array)) {
        Chunk c;
        c.shape = shape;
        c.index = static_cast<int>(b / static_cast<size_t>(max_array));
        c.runs.assign(list.begin() + static_cast<std::ptrdiff_t>(b),
                      list.begin() + static_cast<std::ptrdiff_t>(std::min(
                                         list.size(), b + static_cast<size_t>(max_array))));
        chunks.push_back(std::move(c));
      }
    }
    return chunks;
  }

  std::string Base(const Chunk& c) const {
    return fmt::format("{}/{}-{}-{}", options_.script_dir, c.shape.Name(), c.index, stamp_);
  }
  std::string ScriptPath(const Chunk& c) const { return Base(c) + ".sbatch"; }
  std::string ManifestPath(const Chunk& c) const { return Base(c) + ".manifest"; }

  // One line per array task: run id, run dir, config, mode, cache dir (tab-separated).
  static std::string Manifest(const Chunk& c) {
    std::string m;
    for (const LaunchRequest* q : c.runs) {
      CheckNoControlCharacter("run id", q->run_id);
      CheckNoControlCharacter(fmt::format("run {}: its directory", q->run_id), q->run_dir);
      CheckNoControlCharacter(fmt::format("run {}: its config", q->run_id), q->config_path);
      CheckNoControlCharacter("the cache directory", q->cache_dir);
      m += fmt::format("{}\t{}\t{}\t{}\t{}\n", q->run_id, Absolute(q->run_dir),
                       Absolute(q->config_path), Mode(*q), Absolute(q->cache_dir));
    }
    return m;
  }

  // Every value is checked for control characters and written as one #SBATCH argument
  // (SbatchWord) or one bash word (ShellWord); numbers are mavg's own.
  std::string Script(const Chunk& c) const {
    const Shape& s = c.shape;
    auto option = [](const char* name, const std::string& what, const std::string& value) {
      CheckNoControlCharacter(what, value);
      return fmt::format("#SBATCH {}={}\n", name, SbatchWord(value));
    };
    std::string h = "#!/bin/bash\n";
    h += option("--job-name", "sweep name", "mavg-" + options_.sweep);
    h += fmt::format("#SBATCH --array=0-{}{}\n", c.runs.size() - 1,
                     options_.throttle > 0 ? fmt::format("%{}", options_.throttle) : "");
    h += fmt::format("#SBATCH --ntasks={}\n#SBATCH --cpus-per-task={}\n", s.ranks, s.threads);
    if (s.nodes > 0) h += fmt::format("#SBATCH --nodes={}\n", s.nodes);
    if (s.gpus > 0) h += fmt::format("#SBATCH --gpus-per-task={}\n", s.gpus);
    if (!s.mem.empty()) h += option("--mem", "resources.mem", s.mem);
    if (!s.time.empty()) h += option("--time", "the time limit", s.time);
    if (!s.qos.empty()) h += option("--qos", "resources.qos", s.qos);
    if (!s.constraint.empty()) h += option("--constraint", "resources.constraint", s.constraint);
    if (!options_.partition.empty()) h += option("--partition", "--partition", options_.partition);
    if (!options_.account.empty()) h += option("--account", "--account", options_.account);
    h += option("--chdir", "the working directory", workdir_);
    h += "#SBATCH --requeue\n";
    if (options_.signal_s > 0) h += fmt::format("#SBATCH --signal=B:USR1@{}\n", options_.signal_s);
    // The spec's own sbatch options (resources.sbatch), one argument each; none is one mavg
    // sets (resources.h).
    for (const std::string& o : s.sbatch) {
      CheckNoControlCharacter("resources.sbatch entry", o);
      h += fmt::format("#SBATCH {}\n", SbatchWord(o));
    }
    std::string logs = options_.script_dir + "/logs";
    for (size_t i = logs.find('%'); i != std::string::npos; i = logs.find('%', i + 2)) {
      logs.insert(i, "%");  // a literal % in sbatch's filename pattern
    }
    h += option("--output", "the sweep's slurm directory", logs + "/%A_%a.out");
    h += "#SBATCH --open-mode=append\n";
    const std::string mpirun =
        s.mpi ? fmt::format("mpirun -np {} --bind-to none ", s.ranks) : std::string();
    h += fmt::format(
        R"SH(
# Written by mavg sweep run --launcher slurm for sweep {sweep}. Task i runs line i+1 of the
# manifest: run id, run dir, config, mode (fresh | resume | force), cache dir.
set -u
IFS=$'\t' read -r run_id run_dir config mode cache_dir < <(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" {manifest})
[ -n "${{run_id:-}}" ] || {{ echo "mavg: no manifest line for task $SLURM_ARRAY_TASK_ID" >&2; exit 1; }}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
echo "mavg: task $SLURM_ARRAY_TASK_ID of job $SLURM_ARRAY_JOB_ID: run $run_id (mode $mode, restart ${{SLURM_RESTART_COUNT:-0}}) on $(hostname)"
# A run with a checkpoint is never restarted from scratch once it has started under SLURM.
if [ -f "$run_dir/"{checkpoint_meta} ] && {{ [ "$mode" = resume ] || [ "${{SLURM_RESTART_COUNT:-0}}" -gt 0 ]; }}; then
  args=(train --resume "$run_dir")
elif [ "$mode" = force ]; then
  args=(train "$config" --out "$run_dir" --force)
else
  args=(train "$config" --out "$run_dir")
fi
args+=(--set device_options.threads={threads} --no-progress --cache-dir "$cache_dir")
# SLURM's warning before the time limit (--signal=B:USR1) and a requeue or cancel (TERM) reach
# this shell: they are passed on as USR1, on which the run checkpoints and exits "preempted"
# (mpirun forwards USR1 to its ranks; it ignores TERM here, which would make it kill them).
# Only the time limit makes the job requeue itself: after scontrol requeue SLURM requeues it,
# after scancel nobody does.
# The run's status comes from a subshell that waits for it and has no traps: this shell's
# traps interrupt its own `wait`, which then returns 128+n even when the run has just ended
# (bash has reaped it, and its status is gone). The subshell also passes on a signal that came
# before the run's pid was known (each side writes its file before it reads the other's); one
# that came before the run was launched stops it from launching (preempted, as if checkpointed
# at once). The subshell ignores USR1 (a scancel --full reaches it too), the run does not.
sig=
st=$(mktemp -d "${{TMPDIR:-/tmp}}/mavg-task.XXXXXX" 2>/dev/null) ||
  st=$(mktemp -d "$PWD/.mavg-task.XXXXXX") ||
  {{ echo "mavg: no temporary directory in ${{TMPDIR:-/tmp}} or $PWD" >&2; exit 1; }}
forward() {{ : > "$st/signal"; [ ! -s "$st/pid" ] || kill -USR1 "$(cat "$st/pid")" 2>/dev/null; }}
trap 'sig=USR1; forward' USR1
trap 'sig=TERM; forward' TERM
(
  trap '' TERM USR1
  if [ -e "$st/signal" ]; then echo 75 > "$st/rc"; exit 0; fi
  (trap - USR1; exec {mpirun}{mavg} "${{args[@]}}") &
  echo $! > "$st/pid"
  [ ! -e "$st/signal" ] || kill -USR1 $! 2>/dev/null
  wait $!
  echo $? > "$st/rc"
) &
pid=$!
while kill -0 $pid 2>/dev/null; do wait $pid; done
rc=$(cat "$st/rc" 2>/dev/null || true)
rm -rf "$st"
[ -n "$rc" ] || {{ echo "mavg: the run's status was not recorded" >&2; rc=1; }}
if [ $rc -eq 75 ] && [ "$sig" = USR1 ]; then
  echo "mavg: run $run_id checkpointed before the time limit: requeueing"
  scontrol requeue "${{SLURM_ARRAY_JOB_ID}}_${{SLURM_ARRAY_TASK_ID}}"
fi
exit $rc
)SH",
        fmt::arg("sweep", options_.sweep), fmt::arg("manifest", ShellWord(ManifestPath(c))),
        fmt::arg("checkpoint_meta", ShellWord(kCheckpointMetaFile)), fmt::arg("threads", s.threads),
        fmt::arg("mpirun", mpirun), fmt::arg("mavg", ShellWord(options_.mavg_path)));
    return h;
  }

  bool Wait(const std::vector<std::pair<std::string, const LaunchRequest*>>& submitted,
            const LaunchCallbacks& cb) {
    g_slurm_interrupted = 0;
    struct Handlers {  // installed for the wait, restored however it ends
      struct sigaction old_int = {}, old_term = {};
      Handlers() {
        struct sigaction sa = {};
        sa.sa_handler = OnSlurmWaitInterrupt;
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
      }
      ~Handlers() {
        sigaction(SIGINT, &old_int, nullptr);
        sigaction(SIGTERM, &old_term, nullptr);
      }
    } handlers;
    std::map<std::string, const LaunchRequest*> active(submitted.begin(), submitted.end());
    while (!active.empty() && !g_slurm_interrupted) {
      std::vector<std::string> ids;
      for (const auto& [id, q] : active) ids.push_back(id);
      std::map<std::string, std::string> queued;
      try {
        queued = SlurmQueueState(ids);
      } catch (const Error&) {
        if (g_slurm_interrupted) break;  // squeue got the same Ctrl-C
        throw;
      }
      for (auto it = active.begin(); it != active.end();) {
        if (queued.count(it->first)) {
          ++it;
          continue;
        }
        cb.ended(*it->second,
                 LaunchOutcome{LaunchState::kFinished, 0, "SLURM job " + it->first + " ended"});
        it = active.erase(it);
      }
      for (int i = 0;
           i < static_cast<int>(options_.poll_s * 10) && !g_slurm_interrupted && !active.empty();
           ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    if (g_slurm_interrupted) {
      spdlog::warn(
          "[sweep] stopped waiting; {} job(s) keep running under SLURM (mavg sweep status "
          "reconciles, mavg sweep cancel stops them)",
          active.size());
    }
    return !g_slurm_interrupted;
  }

  static std::string Absolute(const std::string& p) {
    return p.empty() ? p : std::filesystem::absolute(p).lexically_normal().string();
  }

  SlurmLauncherOptions options_;
  std::string workdir_;
  std::string stamp_;  // UTC time and pid of this submission
};

}  // namespace

std::unique_ptr<Launcher> CreateSlurmLauncher(const SlurmLauncherOptions& options) {
  return std::make_unique<SlurmLauncher>(options);
}

const JobQueue& SlurmJobQueue() {
  static const SlurmQueue queue;
  return queue;
}

}  // namespace mavg
