// The local launcher: runs as subprocesses (mpirun -np N for parallel.mode mpi), at most
// `jobs` at once and never more ranks x threads than cores unless oversubscribing; each run in
// its own process group with its output in <run_dir>/launcher.log; a timeout or Ctrl-C sends
// SIGTERM (the run checkpoints and exits "preempted"), then SIGKILL after a grace period.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/logging.h"
#include "engine/core/subprocess.h"
#include "engine/core/timer.h"
#include "engine/sweep/launcher.h"

namespace mavg {
namespace {

volatile std::sig_atomic_t g_local_interrupted = 0;
extern "C" void OnInterrupt(int) { g_local_interrupted = 1; }

std::vector<std::string> Command(const LaunchRequest& r, const std::string& mavg) {
  std::vector<std::string> argv;
  if (r.mpi) {
    argv = {"mpirun", "-np", std::to_string(r.ranks), "--bind-to", "none"};
    if (r.ranks * r.threads > static_cast<int>(std::thread::hardware_concurrency())) {
      argv.push_back("--oversubscribe");
    }
  }
  argv.push_back(mavg);
  argv.push_back("train");
  if (r.resume) {
    argv.insert(argv.end(), {"--resume", r.run_dir});
  } else {
    argv.insert(argv.end(), {r.config_path, "--out", r.run_dir});
  }
  if (r.force) argv.push_back("--force");
  if (!r.cache_dir.empty()) argv.insert(argv.end(), {"--cache-dir", r.cache_dir});
  // Execution-only: the launcher's thread budget for this attempt (not part of the run id).
  argv.insert(argv.end(), {"--set", fmt::format("device_options.threads={}", r.threads)});
  argv.push_back("--no-progress");
  if (r.until_epoch > 0) argv.insert(argv.end(), {"--until-epoch", std::to_string(r.until_epoch)});
  return argv;
}

std::string Join(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

class LocalLauncher final : public Launcher {
 public:
  explicit LocalLauncher(const LocalLauncherOptions& o) : options_(o) {
    MAVG_CHECK(options_.jobs >= 1, "--jobs must be at least 1, got {}", options_.jobs);
    if (options_.cores <= 0) options_.cores = static_cast<int>(std::thread::hardware_concurrency());
    if (options_.mavg_path.empty()) options_.mavg_path = SelfExecutable();
    if (geteuid() == 0) {  // OpenMPI refuses root unless told; set once, inherited by children
      setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
      setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    }
  }

  std::string Name() const override { return "local"; }

  std::vector<std::string> Describe(const std::vector<LaunchRequest>& runs) const override {
    std::vector<std::string> out;
    for (const auto& r : runs) out.push_back(Join(Command(r, options_.mavg_path)));
    return out;
  }

  bool Launch(const std::vector<LaunchRequest>& runs, const LaunchCallbacks& cb) override {
    for (const auto& r : runs) {
      MAVG_CHECK(options_.oversubscribe || r.ranks * r.threads <= options_.cores,
                 "run {} needs {} rank(s) x {} thread(s) but this machine has {} cores (use "
                 "--oversubscribe to run it anyway)",
                 r.run_id, r.ranks, r.threads, options_.cores);
    }
    struct sigaction sa {
    }, old_int{}, old_term{};
    sa.sa_handler = OnInterrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    g_local_interrupted = 0;

    struct Active {
      const LaunchRequest* req;
      pid_t pid;
      Timer started;
      bool term_sent = false;
      Timer since_term;
      LaunchState state = LaunchState::kFinished;
    };
    std::vector<Active> active;
    // If anything below throws, no child is left running unattended and the handlers return.
    struct Guard {
      std::vector<Active>* active;
      struct sigaction old_int, old_term;
      ~Guard() {
        for (const Active& a : *active) kill(-a.pid, SIGTERM);
        for (const Active& a : *active) {
          for (int i = 0; i < 100 && waitpid(a.pid, nullptr, WNOHANG) == 0; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
          }
          kill(-a.pid, SIGKILL);
          waitpid(a.pid, nullptr, 0);
        }
        sigaction(SIGINT, &old_int, nullptr);
        sigaction(SIGTERM, &old_term, nullptr);
      }
    } guard{&active, old_int, old_term};
    auto notify = [&](const auto& fn) {  // a failing callback (e.g. the database) is logged
      try {
        fn();
      } catch (const std::exception& e) {
        spdlog::error("[sweep] {}", e.what());
      }
    };
    size_t next = 0;
    int used = 0;
    auto cost = [](const LaunchRequest& r) { return r.ranks * r.threads; };
    while (next < runs.size() || !active.empty()) {
      // Start what fits.
      while (
          !g_local_interrupted && next < runs.size() &&
          static_cast<int>(active.size()) < options_.jobs &&
          (active.empty() || options_.oversubscribe || used + cost(runs[next]) <= options_.cores)) {
        const LaunchRequest& r = runs[next++];
        pid_t pid = -1;
        std::string why;
        try {
          pid = Spawn(r);
          if (pid < 0) why = std::strerror(errno);
        } catch (const std::exception& e) {
          why = e.what();
        }
        if (pid < 0) {
          notify([&] { cb.ended(r, LaunchOutcome{LaunchState::kFailedToStart, -1, why}); });
          continue;
        }
        setpgid(pid, pid);  // also here: a signal may come before the child sets it
        used += cost(r);
        active.push_back(Active{&r, pid, Timer(), false, Timer()});
        notify([&] { cb.started(r, std::to_string(pid)); });
      }
      if (g_local_interrupted && next < runs.size()) next = runs.size();  // start nothing more
      // Reap, time out, interrupt.
      for (size_t i = 0; i < active.size();) {
        Active& a = active[i];
        int status = 0;
        const pid_t done = waitpid(a.pid, &status, WNOHANG);
        if (done == a.pid) {
          LaunchOutcome o;
          o.state = a.state;
          o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
          if (WIFSIGNALED(status)) o.detail = fmt::format("killed by signal {}", WTERMSIG(status));
          used -= cost(*a.req);
          const LaunchRequest* req = a.req;
          active.erase(active.begin() + static_cast<std::ptrdiff_t>(i));
          notify([&] { cb.ended(*req, o); });
          continue;
        }
        const bool timed_out = a.req->timeout_s > 0 && a.started.Seconds() > a.req->timeout_s;
        if (!a.term_sent && (timed_out || g_local_interrupted)) {
          a.state = g_local_interrupted ? LaunchState::kInterrupted : LaunchState::kTimeout;
          kill(-a.pid, SIGTERM);  // the run checkpoints at its next safe point
          a.term_sent = true;
          a.since_term.Reset();
        } else if (a.term_sent && a.since_term.Seconds() > options_.kill_grace_s) {
          kill(-a.pid, SIGKILL);
        }
        ++i;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return !g_local_interrupted;
  }

 private:
  pid_t Spawn(const LaunchRequest& r) {
    const std::vector<std::string> argv = Command(r, options_.mavg_path);
    const std::string log = r.run_dir + "/launcher.log";
    MakeDirs(r.run_dir);
    AppendLine(log, fmt::format("# attempt {}: {}", r.attempt, Join(argv)));
    std::vector<char*> args;  // built before fork: the child only execs
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t pid = fork();
    if (pid != 0) return pid;
    // Child: own process group (Ctrl-C reaches only the controller, which forwards SIGTERM),
    // output to the run's launcher.log.
    setpgid(0, 0);
    // Never through a link planted in the run directory (files.h OpenNoFollow; the child cannot
    // throw, and the launcher checked the path before the fork).
    const int fd = open(log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    execvp(args[0], args.data());
    std::fprintf(stderr, "mavg sweep: cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }

  LocalLauncherOptions options_;
};

}  // namespace

std::unique_ptr<Launcher> CreateLocalLauncher(const LocalLauncherOptions& options) {
  return std::make_unique<LocalLauncher>(options);
}

}  // namespace mavg
