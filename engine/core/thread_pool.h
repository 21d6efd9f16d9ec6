#pragma once
// A pool of threads that share out the tasks of one job at a time, written so that a thread
// the OS takes away (a core shared with other work) does not hold the others up.
//
// Run(n, fn) calls fn(0) ... fn(n - 1), each exactly once, on the calling thread and the
// pool's helpers, and returns when all n have returned. Tasks are claimed one at a time from a
// shared counter, so whoever is running takes the next task: a helper that is descheduled (or
// still asleep) when a job starts simply claims nothing, and the caller never waits for a
// thread that has no task of the job. There is no barrier at the end of a job, unlike an
// OpenMP parallel region, whose end waits for every thread of its team: beside one busy
// process on two cores, a 2-thread OpenMP loop of short regions waits a scheduler time slice
// at each (measured: 0.26x the speed of one thread; scripts/bench/contention.sh). The only wait
// is for a task already claimed by a thread that was then descheduled, and the waiting thread
// sleeps in the kernel (after a short spin), so that thread gets a core back at once.
//
// Which thread runs a task depends on timing: fn must give the same result whichever thread
// runs it (the callers' tasks write disjoint outputs, each computed in a fixed order).
// A Run from inside a task (of any pool) runs its tasks in order on the calling thread.
//
// On shared cores the OS shares the cores between this pool's threads and other work: a helper
// is descheduled after claiming a task (the caller sleeps until it is back), or spins for
// tasks the caller has already taken, on time the caller could have had. Where the calling
// thread waited for a core (the kernel's run-queue delay) more than kSoloWaitShare of the
// wall time over kAdaptWindow, the pool runs its jobs on the caller alone for kSoloSpan (the
// helpers sleep), then tries them again: a run beside busy processes then trains about as
// fast as on one thread, not slower (scripts/bench/contention.sh).
// The first exception thrown by a task is rethrown by Run once every task has returned
// (the tasks after it are skipped). One Run at a time per pool (it is not re-entrant across
// threads: each CPU backend, each set of step lanes owns its pool).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mavg {

class ThreadPool {
 public:
  // `threads` >= 1 in all: threads - 1 helpers are started; `on_start` runs first on each (e.g.
  // per-thread floating-point modes).
  explicit ThreadPool(int threads, std::function<void()> on_start = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int Threads() const { return static_cast<int>(helpers_.size()) + 1; }

  void Run(int64_t n, const std::function<void(int64_t)>& fn);

  // Whether the calling thread is running a task of some pool (nested work runs in order).
  static bool InTask();

  // Cumulative counts since the pool was made (for tests and benchmarks): tasks run by the
  // helpers, and the times the caller slept waiting for a task a helper had claimed.
  int64_t HelperTasks() const { return helper_tasks_.load(std::memory_order_relaxed); }
  int64_t CallerSleeps() const { return caller_sleeps_.load(std::memory_order_relaxed); }
  // Seconds of the caller in parallel jobs, of which waiting for helpers' tasks; the spans it
  // ran alone (caller's thread only).
  double RunSeconds() const { return run_s_; }
  double WaitSeconds() const { return wait_s_; }
  int64_t SoloSpans() const { return solo_spans_; }

  static constexpr auto kAdaptWindow = std::chrono::milliseconds(50);
  static constexpr double kSoloWaitShare = 0.2;
  static constexpr auto kSoloSpan = std::chrono::milliseconds(500);

 private:
  // A job's ticket: generation (24 bits) | next task (20 bits) | task count (20 bits). A
  // claim is a compare-and-swap on the whole ticket, so a helper that wakes late can never
  // claim a task of a job other than the one whose ticket it read.
  static constexpr int kIndexBits = 20;
  static constexpr int64_t kMaxTasksPerTicket = (int64_t{1} << kIndexBits) - 1;

  void HelperLoop();
  // Claims and runs tasks of the job whose ticket is `ticket` until none is left (adding to
  // *ran, if given); returns the last ticket it read.
  uint64_t Work(uint64_t ticket, int64_t* ran);
  void RunTask(int64_t i);
  // Runs one chunk of a job; returns the seconds the caller waited for helpers' tasks.
  double RunChunk(int64_t n, const std::function<void(int64_t)>& fn);
  // Accounts a parallel job that began at `start` and decides whether to run alone.
  void Adapt(std::chrono::steady_clock::time_point start, double waited);

  std::vector<std::thread> helpers_;
  std::function<void()> on_start_;
  std::atomic<uint64_t> ticket_{0};  // the current job (see above); helpers wait on its change
  std::atomic<int64_t> done_{0};     // tasks of the current job that have returned
  const std::function<void(int64_t)>* fn_ = nullptr;  // the current job's; read only by a
                                                      // thread holding one of its tasks
  int64_t offset_ = 0;  // the current chunk's first task (jobs past kMaxTasksPerTicket)
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;  // the first task's exception (under error_mutex_)
  std::mutex error_mutex_;
  std::atomic<bool> stop_{false};
  std::atomic<int> sleepers_{0};            // helpers asleep in ticket_.wait (or about to be)
  std::atomic<bool> caller_asleep_{false};  // the caller asleep in done_.wait
  std::atomic<int64_t> helper_tasks_{0}, caller_sleeps_{0};
  // The caller's side of adapting (only the thread calling Run touches these).
  std::chrono::steady_clock::time_point window_start_{}, solo_until_{};
  double window_clock_s_ = 0.0;   // the caller's run-queue (else CPU) seconds at its start
  double window_waited_s_ = 0.0;  // seconds the caller waited for helpers' tasks in it
  double run_s_ = 0.0, wait_s_ = 0.0;
  int64_t solo_spans_ = 0;
};

}  // namespace mavg
