#pragma once
// Wall-clock timing on the steady clock.

#include <chrono>

namespace mavg {

class Timer {
 public:
  Timer() : start_(Clock::now()) {}
  void Reset() { start_ = Clock::now(); }
  double Seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
};

// Adds the lifetime of a scope to an accumulator (seconds).
class ScopedTimer {
 public:
  explicit ScopedTimer(double* total) : total_(total) {}
  ~ScopedTimer() { *total_ += timer_.Seconds(); }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  double* total_;  // [not null], not owned
  Timer timer_;
};

}  // namespace mavg
