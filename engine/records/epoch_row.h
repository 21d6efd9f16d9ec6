#pragma once
// One epoch of a run: a line of <run>/metrics.jsonl, a row of the store's table `epochs`, and
// what the reports average per run. The trainer writes it (train/metrics.cpp fills it), the store
// inserts it, the reports read it back; all from the one table kEpochFields.

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/records/field_table.h"
#include "engine/records/record_lines.h"

namespace mavg {

inline constexpr const char* kMetricsFileName = "metrics.jsonl";

struct EpochRow {
  int64_t epoch = 0;
  std::optional<double> lr;      // per-worker learning rate
  std::optional<bool> accepted;  // newbob rejects epochs (absent: accepted)
  std::optional<double> train_loss, train_acc, cv_loss, cv_acc;
  std::optional<int64_t> frames;          // trained, over all workers
  std::optional<int64_t> frames_dropped;  // not used (partial minibatch, beyond the plan)
  std::optional<int64_t> minibatches;     // per worker
  std::optional<int64_t> averagings;      // combine points
  // Bytes every worker put into the epoch's combines, by the algorithm's count: per combine
  // point (group or global) the parameters, and the optimizer state where it is averaged, as
  // 4-byte floats (not the stop flags or the statistics' sums). A ring all-reduce moves about
  // 2 (N - 1) / N times this over each worker's link.
  std::optional<int64_t> comm_bytes;
  // Bytes every worker took out of them, by the same count: the mean it gets back (an
  // all-reduce: as many as it put in), or the N - 1 other workers' packed deltas (the all-gather
  // of compressed deltas).
  std::optional<int64_t> comm_bytes_received;
  std::optional<int64_t> world_size;
  // Times are measured unless their name says projected (records::Timing, in the table).
  std::optional<double> wall_s;  // this epoch, over the attempts that ran it (resumed inside it)
  // Timings of the slowest worker, and their means over the workers; each worker's measured on
  // its own. Simulated workers' comm_s is the measured in-process mean of the replicas (a group
  // combine of two-level averaging: one group's share, the groups combining at once).
  std::optional<double> compute_s, compute_s_mean, io_s, io_s_mean, comm_s, comm_s_mean, wait_s,
      wait_s_mean;
  std::optional<double> cv_s;              // of wall_s, evaluating the dev set
  std::optional<double> projected_wall_s;  // simulated workers: the epoch on N devices
  // CPU runs (train/contention.h): this process's CPU seconds over the epoch's wall seconds x
  // its compute threads (the lowest over the processes); the seconds its threads waited for a
  // core over the wall seconds x those threads (the highest); and whether other work shared the
  // cores, so that the epoch's times measure the sharing, not the run.
  std::optional<double> cpu_util, cpu_wait;
  std::optional<bool> contended;
  std::optional<double> max_change_limited;  // fraction of updates the max-change limited
  // Quantiles of the factor max-change scaled the layer updates by (1: not limited), over all
  // workers' updates of the epoch, from a histogram (backend/scale_histogram.h: within 2.9 %).
  std::optional<double> max_change_scale_p50, max_change_scale_p10;
  // Written by earlier builds only; read so that their runs report as before.
  std::optional<double> projected_compute_s, global_averagings;

  bool Accepted() const { return accepted.value_or(true); }
  // The epoch's measured training time: wall_s less the dev-set evaluation (0 without a finite
  // wall_s; a cv_s that is absent or not finite counts 0).
  double TrainSeconds() const {
    if (!wall_s || !std::isfinite(*wall_s)) return 0.0;
    return *wall_s - (cv_s && std::isfinite(*cv_s) ? *cv_s : 0.0);
  }
};

// The fields in the order of the store's columns (kNone: in epochs.metrics_json only), and the
// names under which reports show their means per run.
inline constexpr records::Field<EpochRow> kEpochFields[] = {
    {"epoch", &EpochRow::epoch, records::Column::kInteger},
    {"lr", &EpochRow::lr, records::Column::kReal},
    {"accepted", &EpochRow::accepted, records::Column::kInteger},
    {"train_loss", &EpochRow::train_loss, records::Column::kReal},
    {"train_acc", &EpochRow::train_acc, records::Column::kReal},
    {"cv_loss", &EpochRow::cv_loss, records::Column::kReal},
    {"cv_acc", &EpochRow::cv_acc, records::Column::kReal},
    {"frames", &EpochRow::frames, records::Column::kInteger, "frames_per_epoch"},
    {"frames_dropped", &EpochRow::frames_dropped, records::Column::kInteger,
     "frames_dropped_per_epoch"},
    {"minibatches", &EpochRow::minibatches, records::Column::kNone, "minibatches_per_epoch"},
    {"averagings", &EpochRow::averagings, records::Column::kInteger, "averagings"},
    {"comm_bytes", &EpochRow::comm_bytes, records::Column::kNone, "comm_bytes_per_epoch"},
    {"comm_bytes_received", &EpochRow::comm_bytes_received, records::Column::kNone,
     "comm_bytes_received_per_epoch"},
    {"world_size", &EpochRow::world_size, records::Column::kInteger},
    {.name = "wall_s",
     .member = &EpochRow::wall_s,
     .column = records::Column::kReal,
     .timing = records::Timing::kMeasured},
    {.name = "compute_s",
     .member = &EpochRow::compute_s,
     .column = records::Column::kReal,
     .report_mean = "compute_s",
     .timing = records::Timing::kMeasured},
    {.name = "compute_s_mean",
     .member = &EpochRow::compute_s_mean,
     .report_mean = "worker_compute_s",
     .timing = records::Timing::kMeasured},
    {.name = "io_s",
     .member = &EpochRow::io_s,
     .column = records::Column::kReal,
     .report_mean = "io_s",
     .timing = records::Timing::kMeasured},
    {.name = "io_s_mean",
     .member = &EpochRow::io_s_mean,
     .report_mean = "worker_io_s",
     .timing = records::Timing::kMeasured},
    {.name = "comm_s",
     .member = &EpochRow::comm_s,
     .column = records::Column::kReal,
     .report_mean = "comm_s",
     .timing = records::Timing::kMeasured},
    {.name = "comm_s_mean", .member = &EpochRow::comm_s_mean, .timing = records::Timing::kMeasured},
    {.name = "wait_s",
     .member = &EpochRow::wait_s,
     .column = records::Column::kReal,
     .report_mean = "wait_s",
     .timing = records::Timing::kMeasured},
    {.name = "wait_s_mean", .member = &EpochRow::wait_s_mean, .timing = records::Timing::kMeasured},
    {.name = "cv_s",
     .member = &EpochRow::cv_s,
     .column = records::Column::kReal,
     .timing = records::Timing::kMeasured},
    {.name = "projected_wall_s",
     .member = &EpochRow::projected_wall_s,
     .column = records::Column::kReal,
     .report_mean = "projected_epoch_s",
     .timing = records::Timing::kProjected},
    {"cpu_util", &EpochRow::cpu_util, records::Column::kReal, "cpu_util"},
    {"cpu_wait", &EpochRow::cpu_wait, records::Column::kReal, "cpu_wait"},
    {"contended", &EpochRow::contended, records::Column::kInteger, "contended_fraction"},
    {"max_change_limited", &EpochRow::max_change_limited, records::Column::kNone,
     "max_change_limited"},
    {"max_change_scale_p50", &EpochRow::max_change_scale_p50, records::Column::kNone,
     "max_change_scale_p50"},
    {"max_change_scale_p10", &EpochRow::max_change_scale_p10, records::Column::kNone,
     "max_change_scale_p10"},
    {.name = "projected_compute_s",
     .member = &EpochRow::projected_compute_s,
     .report_mean = "projected_compute_s",
     .timing = records::Timing::kProjected},
    {"global_averagings", &EpochRow::global_averagings, records::Column::kNone,
     "global_averagings"},
};
static_assert(records::UniqueNames(kEpochFields), "kEpochFields: one unique name per field");
static_assert(records::NamesSayTiming(kEpochFields),
              "kEpochFields: a projection's name starts with projected_, no other's does");

// A metrics.jsonl line; where: "<file>:<line>" for errors.
nlohmann::json ToJson(const EpochRow& row);
EpochRow EpochRowFromJson(const nlohmann::json& line, std::string_view where);

// One parsed line of metrics.jsonl: the row and the whole line as written (kept whole in the
// store, keys outside the table too); the lines of a file, those left out named
// (records/record_lines.h).
using EpochLine = records::RecordLine<EpochRow>;
using EpochLines = records::RecordLines<EpochRow>;
EpochLines ReadEpochLines(const std::string& path);

// A per-run mean the reports show: its name there, and the SQL expression over a row `e` of
// table epochs whose AVG it is (a column, or a key of metrics_json for fields without one).
struct EpochMean {
  std::string name;
  std::string expr;
  records::Timing timing = records::Timing::kNone;  // the field's (epoch_s: measured)
};
// epoch_s (the mean TrainSeconds), then every field with a report_mean, in table order.
const std::vector<EpochMean>& EpochMeans();

// The per-run mean of the epochs' TrainSeconds, as reports name it.
inline constexpr const char* kEpochSecondsMean = "epoch_s";
// The name under which reports show `member`'s per-run mean, e.g. MeanName(&EpochRow::frames)
// is "frames_per_epoch" (empty for a field reports do not average).
template <class T>
std::string MeanName(T EpochRow::*member) {
  const records::Field<EpochRow>* f = records::FieldOf(kEpochFields, member);
  return f ? std::string(f->report_mean) : std::string();
}

}  // namespace mavg
