#include "engine/core/thread_pool.h"

#include <chrono>
#include <ctime>

#include "engine/core/error.h"
#include "engine/core/sysinfo.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace mavg {
namespace {

thread_local int task_depth = 0;  // > 0 while this thread runs a task of some pool

// How long a thread spins before it sleeps in the kernel: a helper between two jobs (the
// backend's calls within a training step come microseconds apart, and a futex wake-up costs
// ~5-10 us), a caller waiting for a claimed task. Beyond it a waiting thread gives its core
// away, which is what a descheduled thread of this process needs on a shared machine.
constexpr auto kSpin = std::chrono::microseconds(1000);

inline void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Spins until `ready()` or kSpin has passed; returns ready().
template <typename F>
bool SpinFor(F&& ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (int i = 1;; ++i) {
    if (ready()) return true;
    Pause();
    if ((i & 63) == 0 && std::chrono::steady_clock::now() > deadline) return ready();
  }
}

constexpr int kCountBits = 20;
constexpr int kGenShift = 40;
constexpr uint64_t kFieldMask = (uint64_t{1} << kCountBits) - 1;

uint64_t Generation(uint64_t t) { return t >> kGenShift; }
int64_t NextIndex(uint64_t t) { return static_cast<int64_t>((t >> kCountBits) & kFieldMask); }
int64_t Count(uint64_t t) { return static_cast<int64_t>(t & kFieldMask); }
uint64_t MakeTicket(uint64_t gen, int64_t next, int64_t count) {
  return ((gen & ((uint64_t{1} << 24) - 1)) << kGenShift) |
         (static_cast<uint64_t>(next) << kCountBits) | static_cast<uint64_t>(count);
}

}  // namespace

ThreadPool::ThreadPool(int threads, std::function<void()> on_start)
    : on_start_(std::move(on_start)) {
  MAVG_CHECK(threads >= 1, "a thread pool needs at least one thread, not {}", threads);
  helpers_.reserve(static_cast<size_t>(threads - 1));
  try {
    for (int i = 1; i < threads; ++i) helpers_.emplace_back([this] { HelperLoop(); });
  } catch (...) {
    stop_ = true;
    ticket_.fetch_add(uint64_t{1} << kGenShift);
    ticket_.notify_all();
    for (std::thread& t : helpers_) t.join();
    throw;
  }
}

ThreadPool::~ThreadPool() {
  stop_ = true;
  // A new generation with no tasks wakes every helper; each sees stop_ and returns.
  ticket_.fetch_add(uint64_t{1} << kGenShift, std::memory_order_acq_rel);
  ticket_.notify_all();
  for (std::thread& t : helpers_) t.join();
}

bool ThreadPool::InTask() { return task_depth > 0; }

void ThreadPool::Run(int64_t n, const std::function<void(int64_t)>& fn) {
  if (n <= 0) return;
  const bool serial = helpers_.empty() || n == 1 || InTask();
  const auto start =
      serial ? std::chrono::steady_clock::time_point{} : std::chrono::steady_clock::now();
  if (serial || start < solo_until_) {
    ++task_depth;
    try {
      for (int64_t i = 0; i < n; ++i) fn(i);
    } catch (...) {
      --task_depth;
      throw;
    }
    --task_depth;
    return;
  }
  double waited = 0.0;
  for (int64_t first = 0; first < n; first += kMaxTasksPerTicket) {
    offset_ = first;
    waited += RunChunk(std::min(kMaxTasksPerTicket, n - first), fn);
  }
  Adapt(start, waited);
}

namespace {

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

void ThreadPool::Adapt(std::chrono::steady_clock::time_point start, double waited) {
  const auto end = std::chrono::steady_clock::now();
  run_s_ += std::chrono::duration<double>(end - start).count();
  wait_s_ += waited;
  window_waited_s_ += waited;
  // Both ends of a window are read at the end of a job, so that the window's wall time and the
  // thread's clocks cover the same span; only there (a read of the kernel's counters is a few
  // system calls, which a small network's jobs, tens of microseconds each, cannot afford).
  const bool starting = window_start_ == std::chrono::steady_clock::time_point{};
  if (!starting && end - window_start_ < kAdaptWindow) return;
  const std::optional<double> queued = ThisThreadRunQueueSeconds();
  const double cpu = queued ? 0.0 : ThreadCpuSeconds();
  if (starting) {
    window_start_ = end;
    window_clock_s_ = queued.value_or(cpu);
    window_waited_s_ = 0.0;
    return;
  }
  const double wall = std::chrono::duration<double>(end - window_start_).count();
  // Over the window, the share of the wall time the calling thread was ready to run but had no
  // core (the kernel's run-queue delay): ~0 alone on its cores; large where the OS shares them
  // with other work, and this pool's helpers then only add threads that compete for them. Run
  // alone for a while, then look again (the tasks' results do not depend on which thread runs
  // them). Where the kernel does not say, the share of the time the thread was off the CPU
  // without waiting for the pool's own tasks stands for it.
  const double off_cpu = queued ? (*queued - window_clock_s_) / wall
                                : 1.0 - (cpu - window_clock_s_ + window_waited_s_) / wall;
  window_start_ = end;
  window_clock_s_ = queued.value_or(cpu);
  window_waited_s_ = 0.0;
  if (off_cpu > kSoloWaitShare) {
    solo_until_ = end + kSoloSpan;
    ++solo_spans_;
    window_start_ = {};  // a fresh window after the span
  }
}

double ThreadPool::RunChunk(int64_t n, const std::function<void(int64_t)>& fn) {
  fn_ = &fn;
  failed_.store(false, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  const uint64_t ticket = MakeTicket(Generation(ticket_.load(std::memory_order_relaxed)) + 1, 0, n);
  // Publishes fn_, offset_, done_ = 0. A wake-up is a system call: made only for helpers that
  // are asleep (each says so before it sleeps, and looks at the ticket again after saying it:
  // with both sides sequentially consistent, either it sees this ticket or this sees it).
  ticket_.store(ticket, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) ticket_.notify_all();
  Work(ticket, nullptr);
  // Every task is claimed: wait for those still running on helpers.
  const auto wait_start = std::chrono::steady_clock::now();
  if (!SpinFor([&] { return done_.load(std::memory_order_acquire) == n; })) {
    caller_sleeps_.fetch_add(1, std::memory_order_relaxed);
    caller_asleep_.store(true, std::memory_order_seq_cst);
    for (int64_t d = done_.load(std::memory_order_seq_cst); d != n;
         d = done_.load(std::memory_order_seq_cst)) {
      done_.wait(d, std::memory_order_acquire);
    }
    caller_asleep_.store(false, std::memory_order_relaxed);
  }
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wait_start).count();
  fn_ = nullptr;
  if (failed_.load(std::memory_order_acquire)) {
    std::exception_ptr e;
    {
      std::lock_guard<std::mutex> lock(error_mutex_);
      std::swap(e, error_);
    }
    std::rethrow_exception(e);
  }
  return waited;
}

uint64_t ThreadPool::Work(uint64_t ticket, int64_t* ran) {
  const uint64_t gen = Generation(ticket);
  uint64_t t = ticket;
  while (Generation(t) == gen && NextIndex(t) < Count(t)) {
    const uint64_t claimed = t + (uint64_t{1} << kCountBits);
    if (!ticket_.compare_exchange_weak(t, claimed, std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
      continue;  // t now holds the current ticket: another claim, or another job
    }
    // This task is ours, so its job cannot end before it does: fn_ and offset_ are its job's.
    RunTask(NextIndex(t));
    if (ran != nullptr) ++*ran;
    const int64_t count = Count(t);
    // (notify_all: an atomic wider than a futex waits on a shared proxy, where notify_one
    // could wake another waiter)
    if (done_.fetch_add(1, std::memory_order_seq_cst) + 1 == count &&
        caller_asleep_.load(std::memory_order_seq_cst)) {
      done_.notify_all();
    }
    t = ticket_.load(std::memory_order_acquire);
  }
  return t;
}

void ThreadPool::RunTask(int64_t i) {
  if (failed_.load(std::memory_order_relaxed)) return;  // an earlier task threw: skip the rest
  ++task_depth;
  try {
    (*fn_)(offset_ + i);
  } catch (...) {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!error_) error_ = std::current_exception();
    failed_.store(true, std::memory_order_release);
  }
  --task_depth;
}

void ThreadPool::HelperLoop() {
  if (on_start_) on_start_();
  uint64_t t = ticket_.load(std::memory_order_acquire);
  while (!stop_.load(std::memory_order_acquire)) {
    if (NextIndex(t) < Count(t)) {  // a job with tasks left: claim them
      int64_t ran = 0;
      t = Work(t, &ran);
      helper_tasks_.fetch_add(ran, std::memory_order_relaxed);
      continue;  // t is the last ticket seen: another job's with tasks, or one with none left
    }
    if (!SpinFor([&] { return ticket_.load(std::memory_order_relaxed) != t; })) {
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      if (ticket_.load(std::memory_order_seq_cst) == t) ticket_.wait(t, std::memory_order_acquire);
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
    t = ticket_.load(std::memory_order_acquire);
  }
}

}  // namespace mavg
