#pragma once
// A one-line progress display (rate and ETA) on stderr, redrawn in place at most a few times a
// second, and only when stderr is a terminal.

#include <cstdint>
#include <string>

#include "engine/core/timer.h"

namespace mavg {

class Progress {
 public:
  // `label` prefixes the line; `total` is the expected amount of work, counted in `unit` (the
  // rate reads "<n> <unit>/s"), 0 if unknown.
  Progress(std::string label, int64_t total, bool enabled, std::string unit = "frames");
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void Update(int64_t done, const std::string& extra = "");
  // Clears the line.
  void Finish();
  // True when stderr is a terminal.
  static bool StderrIsTerminal();

 private:
  std::string label_;
  int64_t total_;
  std::string unit_;
  bool enabled_;
  bool drawn_ = false;
  Timer timer_;
  double last_draw_ = -1.0;
};

// "1h02m", "3m04s", "12s".
std::string FormatDuration(double seconds);

}  // namespace mavg
