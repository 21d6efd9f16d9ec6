#pragma once
// Metrics computed outside mavg (a Kaldi decode's WER on eval2000, a human rating, ...),
// attached to a finished run: <run>/extra_metrics.json, written atomically,
//   {"metrics": {"wer_eval2000": 15.1, ...}, "updated": "2026-12-01T12:00:00Z"}
// and read into the results store beside the run's own result.json keys whenever the run is
// ingested (`mavg run metric`, `sweep collect`), so reports and tables use them like any other.
// A name is letters, digits, '_', '.' or '-' (at most 64, a letter first) and may not be one of
// result.json's own keys: a metric measured by mavg is never overwritten from outside.

#include <map>
#include <string>

namespace mavg {

inline constexpr char kExtraMetricsFile[] = "extra_metrics.json";

// The run's extra metrics (none without the file); throws naming the file when it is malformed.
std::map<std::string, double> ReadExtraMetrics(const std::string& run_dir);

// Parses KEY=VALUE (a finite number); throws naming the text.
std::pair<std::string, double> ParseMetricAssignment(const std::string& text);

// Adds (or replaces) `metrics` in the run's file, atomically. The run must have a result.json;
// a name that is one of its keys is refused. Returns the file's metrics after the write.
std::map<std::string, double> WriteExtraMetrics(const std::string& run_dir,
                                                const std::map<std::string, double>& metrics);

}  // namespace mavg
