#include "engine/core/progress.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace mavg {

std::string FormatDuration(double seconds) {
  const int64_t s = std::llround(seconds);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

bool Progress::StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::string label, int64_t total, bool enabled, std::string unit)
    : label_(std::move(label)), total_(total), unit_(std::move(unit)), enabled_(enabled) {}

Progress::~Progress() { Finish(); }

void Progress::Update(int64_t done, const std::string& extra) {
  if (!enabled_) return;
  const double t = timer_.Seconds();
  if (last_draw_ >= 0.0 && t - last_draw_ < 0.25) return;
  last_draw_ = t;
  const double rate = t > 0.0 ? static_cast<double>(done) / t : 0.0;
  std::string line = fmt::format("{} {:.0f} {}/s", label_, rate, unit_);
  if (total_ > 0) {
    const double frac = static_cast<double>(done) / static_cast<double>(total_);
    line += fmt::format(" {:5.1f}%", 100.0 * frac);
    if (rate > 0.0 && done < total_) {
      line += " ETA " + FormatDuration(static_cast<double>(total_ - done) / rate);
    }
  }
  if (!extra.empty()) line += " " + extra;
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::Finish() {
  if (drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
  }
}

}  // namespace mavg
