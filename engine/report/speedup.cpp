// `mavg report speedup`: epoch time, speedup per training frame and efficiency per value of one
// axis and per combination of the other varying axes, with measured, projected and modelled times
// in separate columns, and the time to the baseline's CV loss.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "engine/config/choices.h"
#include "engine/core/error.h"
#include "engine/core/json.h"
#include "engine/core/logging.h"
#include "engine/records/epoch_row.h"
#include "engine/records/run_result.h"
#include "engine/report/perf_model.h"
#include "engine/report/render.h"
#include "engine/report/tables.h"
#include "engine/report/time_to_target.h"
#include "engine/report/timing_checks.h"

namespace mavg {
namespace {

using Strings = std::vector<std::string>;
using report::Join;
using report::Mean;
using report::Num;
using report::Ordered;
using report::Percent;
using report::Render;
using report::Stat;
using report::Summarize;

double ValueOr(const ReportRun& r, const std::string& key, double fallback) {
  const auto it = r.values.find(key);
  return it == r.values.end() ? fallback : it->second;
}

// A key of the run config's parallel section (absent in runs made before the key existed).
int64_t ParallelInt(const ReportRun& r, const char* key) {
  const auto it = r.parallel.find(key);
  if (it == r.parallel.end()) return 0;
  if (it->is_number()) return it->get<int64_t>();
  if (it->is_string()) return std::strtoll(it->get<std::string>().c_str(), nullptr, 10);
  return 0;
}

// parallel.stream.<key> (0 where the run has none).
int64_t StreamInt(const ReportRun& r, const char* key) {
  const auto it = r.parallel.find("stream");
  if (it == r.parallel.end() || !it->is_object()) return 0;
  const auto v = it->find(key);
  return v != it->end() && v->is_number() ? v->get<int64_t>() : 0;
}

// parallel.compress.format ("fp32" where the run has none).
std::string CompressFormat(const ReportRun& r) {
  const auto it = r.parallel.find("compress");
  if (it == r.parallel.end() || !it->is_object()) return "fp32";
  const auto f = it->find("format");
  return f != it->end() && f->is_string() ? f->get<std::string>() : "fp32";
}

bool ParallelBool(const ReportRun& r, const char* key) {
  const auto it = r.parallel.find(key);
  if (it == r.parallel.end()) return false;
  if (it->is_boolean()) return it->get<bool>();
  if (it->is_number()) return it->get<double>() != 0;
  return it->is_string() && it->get<std::string>() == "true";
}

bool Simulated(const ReportRun& r) {
  const auto mode = r.texts.find(ResultKey(&RunResult::mode));
  return mode != r.texts.end() && mode->second == ToString(ParallelMode::kSimulated);
}

// The model's links, from the options: one for everything, or intra + inter.
struct Links {
  std::optional<Interconnect> inter, intra;
  const Interconnect* staging = nullptr;  // [nullable], a preset
  bool two = false;                       // --intra given
  std::string label;                      // for the column header
};

Links ResolveLinks(const SpeedupOptions& o) {
  Links l;
  MAVG_CHECK(o.interconnect.empty() || (o.intra.empty() && o.inter.empty()),
             "--interconnect prices every combine on one link: give it alone, or --intra and "
             "--inter");
  MAVG_CHECK(o.fit.empty() || (o.interconnect.empty() && o.inter.empty()),
             "--fit is the model's (inter-node) link: give it instead of --interconnect/--inter");
  if (!o.fit.empty()) l.inter = FitInterconnect(o.fit);
  if (!o.interconnect.empty()) l.inter = ParseInterconnect(o.interconnect);
  if (!o.inter.empty()) l.inter = ParseInterconnect(o.inter);
  MAVG_CHECK(o.intra.empty() || l.inter,
             "--intra {} needs --inter (or --fit): the link of flat and global combines", o.intra);
  if (!l.inter) return l;
  l.two = !o.intra.empty();
  l.intra = l.two ? ParseInterconnect(o.intra) : *l.inter;
  l.staging = o.staging.empty() ? nullptr : &FindInterconnect(o.staging);
  l.label = l.two ? l.intra->name + " / " + l.inter->name : l.inter->name;
  return l;
}

// The model's epoch for one run: its compute (this machine's averaging removed) plus the
// modelled combines.
double ModelledEpoch(const ReportRun& r, double projected, const Links& links) {
  const int n = static_cast<int>(ValueOr(r, ResultKey(&RunResult::world_size), 1));
  EpochShape s;
  s.workers = n;
  const double param_bytes = 4.0 * ValueOr(r, ResultKey(&RunResult::num_params), 0);
  s.bytes = param_bytes;
  s.combines = ValueOr(r, MeanName(&EpochRow::averagings), 0);
  // What a worker sent per combine, as the run recorded it (compressed deltas, optimizer state
  // averaged with the parameters), where it did.
  const double sent = ValueOr(r, ResultKey(&RunResult::comm_bytes), -1.0);
  const double epochs = ValueOr(r, ResultKey(&RunResult::epochs), 0.0);
  if (sent > 0 && epochs > 0 && s.combines > 0) s.bytes = sent / (epochs * s.combines);
  if (CompressFormat(r) != "fp32") {
    s.collective = Collective::kAllGather;
    // The deltas are coded on the host: the parameters exchanged (a streamed run's exchange is
    // a fragment, 1 / F of them on average) are staged uncompressed.
    s.staged_bytes =
        param_bytes / static_cast<double>(std::max<int64_t>(1, StreamInt(r, "fragments")));
  }
  s.group_size = ParallelInt(r, "group_size");
  s.average_every = ParallelInt(r, "average_every");
  s.average_every_global = ParallelInt(r, "average_every_global");
  s.global_combines = ValueOr(r, MeanName(&EpochRow::global_averagings), -1.0);
  s.overlap = ParallelBool(r, "overlap");
  s.stream_fragments = std::max<int64_t>(1, StreamInt(r, "fragments"));
  s.overlap_steps = StreamInt(r, "overlap_steps");
  s.steps = ValueOr(r, MeanName(&EpochRow::minibatches), 0.0);
  // Compute: the projection's own compute part when the run wrote it; else the projection less
  // this machine's averaging time, which is exact without overlap. An overlapped run's (or a
  // streamed one's, tau > 0) projection hides part of comm_s, so there the slowest worker's
  // compute + data time.
  const std::string projected_compute = MeanName(&EpochRow::projected_compute_s);
  if (Simulated(r) && r.values.count(projected_compute)) {
    s.compute_s = r.values.at(projected_compute);
  } else if ((s.overlap || s.overlap_steps > 0) && n > 1) {
    s.compute_s = ValueOr(r, MeanName(&EpochRow::compute_s), 0.0) +
                  ValueOr(r, MeanName(&EpochRow::io_s), 0.0);
  } else {
    s.compute_s = projected - (n > 1 ? ValueOr(r, MeanName(&EpochRow::comm_s), 0.0) : 0.0);
  }
  return ModelEpoch(s, {&*links.intra, &*links.inter, links.staging}).Total();
}

// The seconds one device would take for the run's epoch of work, from the run's own workers:
// N x the mean worker's compute + data seconds; nullopt without them.
std::optional<double> SerialWork(const ReportRun& r, int workers) {
  const auto compute = r.values.find(MeanName(&EpochRow::compute_s_mean));
  if (compute == r.values.end() || !(compute->second > 0)) return std::nullopt;
  return workers * (compute->second + ValueOr(r, MeanName(&EpochRow::io_s_mean), 0.0));
}

int Workers(const ReportRun& r) {
  return static_cast<int>(ValueOr(r, ResultKey(&RunResult::world_size), 1));
}

// A run's projected epoch: simulated workers' projection, or the measured time of real
// processes (nullopt without an epoch time).
std::optional<double> ProjectedEpoch(const ReportRun& r) {
  const auto epoch = r.values.find(kEpochSecondsMean);
  if (epoch == r.values.end()) return std::nullopt;
  const std::string projected = MeanName(&EpochRow::projected_wall_s);
  return Simulated(r) && r.values.count(projected) ? r.values.at(projected) : epoch->second;
}

// (max - min) / mean of the runs' measured seconds per training frame; NaN for fewer than two.
double Spread(const std::vector<const ReportRun*>& runs) {
  std::vector<double> per_frame;
  for (const ReportRun* r : runs) {
    if (const auto s = MeasuredSecondsPerFrame(*r)) per_frame.push_back(*s);
  }
  if (per_frame.size() < 2) return std::nan("");
  const auto [lo, hi] = std::minmax_element(per_frame.begin(), per_frame.end());
  return (*hi - *lo) / Mean(per_frame);
}

std::string Fixed2(double x) { return std::isfinite(x) ? fmt::format("{:.2f}", x) : "–"; }

// A speedup beyond the worker ratio, or an efficiency above 1 beyond the baseline's noise, is
// said, never printed bare.
constexpr double kRatioTolerance = 0.02;

}  // namespace

RowSpeedups SpeedupsOf(const std::vector<const ReportRun*>& row,
                       const std::vector<const ReportRun*>& baseline, bool baseline_row,
                       const std::function<std::optional<double>(const ReportRun&)>& modelled) {
  RowSpeedups out;
  std::vector<const ReportRun*> done, base_done;
  for (const ReportRun* r : row) {
    if (r->status == RunState::kCompleted && r->values.count(kEpochSecondsMean)) done.push_back(r);
  }
  for (const ReportRun* r : baseline) {
    if (r->status == RunState::kCompleted && r->values.count(kEpochSecondsMean)) {
      base_done.push_back(r);
    }
  }
  if (done.empty()) return out;
  out.workers = Workers(*done[0]);
  if (!base_done.empty()) out.base_workers = Workers(*base_done[0]);
  const double ratio = static_cast<double>(out.workers) / out.base_workers;
  std::vector<double> frames, dropped;
  for (const ReportRun* r : done) {
    const double f = ValueOr(*r, MeanName(&EpochRow::frames), 0.0);
    if (f > 0) frames.push_back(f);
    const std::string d = MeanName(&EpochRow::frames_dropped);
    if (r->values.count(d)) dropped.push_back(r->values.at(d));
  }
  out.frames = Mean(frames);
  out.dropped = Mean(dropped);

  // Measured: real processes of the row against real processes of the baseline, each set's
  // contended runs left out where others are not, per training frame.
  std::vector<const ReportRun*> real, base_real;
  for (const ReportRun* r : done) {
    if (!Simulated(*r)) real.push_back(r);
  }
  for (const ReportRun* r : base_done) {
    if (!Simulated(*r)) base_real.push_back(r);
  }
  out.simulated = real.empty();
  const TimedRuns base_timed = CheckTimedRuns(base_real, "the baseline");
  if (!real.empty()) {
    const TimedRuns timed = baseline_row ? base_timed : CheckTimedRuns(real, "this row");
    for (const std::string& f : base_timed.flags) out.flags.push_back(f);
    if (!baseline_row) {
      for (const std::string& f : timed.flags) out.flags.push_back(f);
    }
    std::vector<double> epochs, per_frame, base_per_frame;
    for (const ReportRun* r : timed.kept) {
      epochs.push_back(r->values.at(kEpochSecondsMean));
      if (const auto s = MeasuredSecondsPerFrame(*r)) per_frame.push_back(*s);
    }
    for (const ReportRun* r : base_timed.kept) {
      if (const auto s = MeasuredSecondsPerFrame(*r)) base_per_frame.push_back(*s);
    }
    out.measured.epoch_s = Mean(epochs);
    if (!per_frame.empty() && !base_per_frame.empty()) {
      out.measured.speedup = Mean(base_per_frame) / Mean(per_frame);
      out.measured.efficiency = out.measured.speedup / ratio;
    }
    const double e = out.measured.efficiency;
    const double spread = Spread(base_timed.kept);
    if (!baseline_row && std::isfinite(e)) {
      if (out.measured.speedup > ratio * (1.0 + kRatioTolerance)) {
        out.flags.push_back(fmt::format(
            "measured speedup {} is above the {} workers per baseline worker: faster than "
            "possible per training frame, so the baseline's or this row's times are not "
            "comparable",
            Fixed2(out.measured.speedup), fmt::format("{:g}", ratio)));
      }
      if (std::isfinite(spread) && spread > std::fabs(e - 1.0)) {
        out.noisy.push_back("measured");
        out.flags.push_back(fmt::format(
            "measured efficiency {} is within the baseline's noise (its {} runs' seconds per "
            "training frame differ by {}, more than this efficiency's {} from 1)",
            Fixed2(e), base_timed.kept.size(), Percent(spread, false),
            Percent(std::fabs(e - 1.0), false)));
      } else if (e > 1.0 + kRatioTolerance) {
        out.flags.push_back(fmt::format(
            "measured efficiency {} is above 1 beyond the baseline's noise{}: a superlinear "
            "speedup, or a slow baseline",
            Fixed2(e),
            std::isfinite(spread) ? fmt::format(" (its runs differ by {})", Percent(spread, false))
                                  : std::string(" (one baseline run: its noise is unknown)")));
      }
    }
  }

  // Projected and modelled: within each run (N x its workers' own compute and data seconds
  // over its projected or modelled epoch; one worker: 1), never against another run's time.
  auto within = [&](KindSpeedup& kind, const char* name,
                    const std::function<std::optional<double>(const ReportRun&)>& epoch_of) {
    std::vector<double> epochs, speedups;
    int missing = 0;
    for (const ReportRun* r : done) {
      const std::optional<double> epoch = epoch_of(*r);
      if (!epoch) continue;
      epochs.push_back(*epoch);
      const int n = Workers(*r);
      const std::optional<double> serial = SerialWork(*r, n);
      if (n == 1) {
        speedups.push_back(1.0);
      } else if (serial && *epoch > 0) {
        speedups.push_back(*serial / *epoch);
      } else {
        ++missing;
      }
    }
    kind.epoch_s = Mean(epochs);
    if (missing > 0) {
      out.flags.push_back(fmt::format(
          "{} speedup: {} of the row's runs recorded no workers' compute times (made before they "
          "were), so it is not given{}",
          name, missing, speedups.empty() ? "" : " for them"));
    }
    if (speedups.empty()) return;
    kind.speedup = Mean(speedups);
    kind.efficiency = kind.speedup / out.workers;
    if (kind.speedup > out.workers * (1.0 + kRatioTolerance)) {
      out.flags.push_back(fmt::format(
          "{} speedup {} is above the row's {} workers: its workers' compute times exceed the "
          "projected epoch",
          name, Fixed2(kind.speedup), out.workers));
    }
  };
  within(out.projected, "projected", ProjectedEpoch);
  if (modelled) {
    within(out.modelled, "modelled", [&](const ReportRun& r) -> std::optional<double> {
      const std::optional<double> p = ProjectedEpoch(r);
      if (!p) return std::nullopt;
      return modelled(r);
    });
  }
  // The row's measured times: contended runs (simulated ones' wall times are shown too).
  if (out.simulated) {
    std::vector<std::string> contended;
    for (const ReportRun* r : done) {
      if (ContendedRun(*r)) contended.push_back(r->run_id);
    }
    if (!contended.empty()) {
      out.flags.push_back(fmt::format(
          "{} of the row's {} runs had contended epochs (other work shared their cores): their "
          "workers' compute times, and so the projection, include the sharing ({})",
          contended.size(), done.size(), report::Join(contended, ", ")));
    }
  }
  return out;
}

namespace {

// The devices the timings came from, named by the runs' GEMM kernels: "GPU" (cuBLAS), "CPU".
std::vector<std::string> Devices(const std::vector<const ReportRun*>& runs) {
  std::set<std::string> out;
  for (const ReportRun* r : runs) {
    if (r->status != RunState::kCompleted) continue;
    const auto it = r->texts.find(ResultKey(&RunResult::blas_kernels));
    if (it != r->texts.end()) out.insert(it->second.starts_with("cuBLAS") ? "GPU" : "CPU");
  }
  return {out.begin(), out.end()};
}

}  // namespace

std::string SpeedupTable(const std::string& sweep, const std::vector<ReportRun>& runs,
                         const SpeedupOptions& o) {
  const bool csv = o.format == report::Format::kCsv, latex = o.format == report::Format::kLatex;
  report::CheckAxis(runs, o.axis);
  // Every axis may vary: rows are split by the other axes instead of refusing them.
  std::vector<std::string> all_axes;
  if (!runs.empty()) {
    for (const auto& [a, v] : runs[0].axes) all_axes.push_back(a);
  }
  const std::vector<const ReportRun*> sel = SelectRuns(runs, o.where, all_axes);
  const Links links = ResolveLinks(o);
  const Baselines baselines(runs, o.axis, o.baseline);
  MAVG_CHECK(!baselines.Empty(), "no completed run with {}={} to serve as the baseline", o.axis,
             o.baseline);

  // The other axes that vary among the selected runs, in the sweep's order.
  std::vector<std::string> group_axes;
  for (const std::string& a : all_axes) {
    if (a == o.axis) continue;
    std::set<std::string> values;
    for (const ReportRun* r : sel) values.insert(*r->Axis(a));
    if (values.size() > 1) group_axes.push_back(a);
  }
  using Combo = std::vector<std::string>;
  std::vector<Combo> combos;  // in plan order of first appearance
  std::map<std::pair<Combo, std::string>, std::vector<const ReportRun*>> members;
  for (const ReportRun* r : sel) {
    Combo c;
    for (const auto& a : group_axes) c.push_back(*r->Axis(a));
    if (std::find(combos.begin(), combos.end(), c) == combos.end()) combos.push_back(c);
    members[{c, *r->Axis(o.axis)}].push_back(r);
  }
  const std::vector<std::string> order = Ordered(sel, o.axis);

  std::vector<std::string> header = group_axes;
  header.insert(header.end(), {o.axis, "frames/epoch", "frames dropped/epoch", "measured epoch s",
                               "measured speedup", "measured efficiency", "projected epoch s",
                               "projected speedup", "projected efficiency"});
  if (links.inter) {
    header.insert(header.end(),
                  {"model epoch s (" + links.label + ")", "model speedup", "model efficiency"});
  }
  header.insert(header.end(), {"target CV loss", "time to baseline CV loss s"});
  if (csv) header.push_back("time to baseline CV loss std");
  header.insert(header.end(), {"reached target", "runs"});
  if (!csv) header.pop_back();  // md/latex: "k of m" in one cell
  header.push_back("notes");

  std::vector<std::vector<std::string>> rows;
  nlohmann::json noise = nlohmann::json::array();  // per row: the columns within noise
  for (const Combo& c : combos) {
    for (const std::string& v : order) {
      const auto it = members.find({c, v});
      if (it == members.end()) continue;
      const std::vector<const ReportRun*>& rs = it->second;
      std::vector<std::string> row = c;
      row.push_back(v);
      const std::function<std::optional<double>(const ReportRun&)> model =
          links.inter ? std::function<std::optional<double>(const ReportRun&)>(
                            [&](const ReportRun& r) -> std::optional<double> {
                              const std::optional<double> p = ProjectedEpoch(r);
                              if (!p) return std::nullopt;
                              return ModelledEpoch(r, *p, links);
                            })
                      : nullptr;
      const RowSpeedups sp = SpeedupsOf(rs, baselines.For(*rs[0]), v == o.baseline, model);
      // Counts as whole numbers, in every format.
      row.push_back(std::isfinite(sp.frames) ? report::Count(sp.frames) : "–");
      row.push_back(std::isfinite(sp.dropped) ? report::Count(sp.dropped) : "–");
      auto cells = [&](const KindSpeedup& k) {
        row.push_back(std::isfinite(k.epoch_s) ? Num(k.epoch_s) : "–");
        row.push_back(Fixed2(k.speedup));
        row.push_back(Fixed2(k.efficiency));
      };
      if (sp.simulated && std::isfinite(sp.projected.epoch_s)) {
        row.insert(row.end(), {"simulated", "–", "–"});
      } else {
        cells(sp.measured);
      }
      cells(sp.projected);
      if (links.inter) cells(sp.modelled);
      noise.push_back(sp.noisy);
      // Time to the baseline's final CV loss, over the replicates that reached it.
      const auto [target, reached, counted] = TimesToTarget(rs, baselines);
      const Stat s = Summarize(reached);
      row.push_back(target ? Num(*target) : "–");
      if (csv) {
        // Blank, not 0, when no replicate reached the target.
        row.push_back(s.n ? fmt::format("{}", s.mean) : "");
        row.push_back(s.n > 1 ? fmt::format("{}", s.std) : "");
        row.push_back(std::to_string(s.n));
        row.push_back(std::to_string(counted));
      } else {
        row.push_back(report::MeanStd(s, latex));
        row.push_back(fmt::format("{} of {}", s.n, counted));
      }
      row.push_back(Join(sp.flags, "; "));
      rows.push_back(std::move(row));
    }
  }

  // Timings from different kernels are not comparable: said in every format (md and json in
  // the text, csv and latex, which have none, on standard error).
  std::vector<const ReportRun*> timed = sel;
  for (const ReportRun* b : baselines.All()) {
    if (std::find(timed.begin(), timed.end(), b) == timed.end()) timed.push_back(b);
  }
  const std::string mixed = MixedKernelsWarning(timed);
  if (!mixed.empty() && (csv || latex)) spdlog::warn("[report] {}", mixed);
  std::string out;
  if (o.format == report::Format::kMd || o.format == report::Format::kJson) {
    std::string model;
    if (links.inter && links.two) {
      model = fmt::format(
          "; model: the projection's compute plus alpha-beta ring all-reduces: group combines of "
          "two-level runs on {} ({:.2f} GB/s), flat and global combines on {} ({:.2f} GB/s){}, "
          "overlapped runs paying only what a block's compute does not hide",
          links.intra->description, links.intra->bandwidth / 1e9, links.inter->description,
          links.inter->bandwidth / 1e9,
          links.staging ? ", host staging over " + links.staging->description : "");
    } else if (links.inter) {
      model = fmt::format(
          "; model: the projection's compute plus an alpha-beta all-reduce on {} ({:.2f} GB/s){}, "
          "overlapped runs paying only what a block's compute does not hide",
          links.inter->description, links.inter->bandwidth / 1e9,
          links.staging ? " with host staging over " + links.staging->description : "");
    }
    const std::string same =
        baselines.Varying().empty()
            ? ""
            : fmt::format(" (the baseline runs with the same {})", Join(baselines.Varying()));
    out += fmt::format(
        "Speedup of sweep {} against {}={}{} (epoch = training time without CV){}. One "
        "definition per kind, in every report, figure and page. measured: real processes only "
        "(MPI ranks, or one worker), the baseline's measured epoch seconds per training frame "
        "over this row's (equal work; frames/epoch: frames trained, all workers; frames "
        "dropped/epoch: frames not trained, e.g. after a shard's last full averaging interval); "
        "simulated workers have none. projected: within each run, N x the mean worker's "
        "measured compute and data seconds (the same frames on one device, at that run's own "
        "speed) over the run's projected epoch (simulated workers: the slowest worker per "
        "averaging interval plus this machine's measured averaging, no network: not a "
        "measurement; 1 worker: 1), so no row divides by another run's time{}. Efficiency: "
        "measured, speedup x the baseline's workers / the row's; projected and model, speedup / "
        "the row's workers (against one device). Time to target: time to the baseline's "
        "CV loss, the mean over the baseline replicates of their last accepted epoch's CV loss, "
        "until the end of the first accepted epoch at or below it, mean ± std over the "
        "replicates that reached it (blank: none did; reached: k of the completed or diverged "
        "runs). {} Notes: what makes a number doubtful is said beside it, never left out: a "
        "speedup above the worker ratio; a measured efficiency above 1 beyond the baseline's "
        "noise, or within it ((max - min) / mean of its replicates' seconds per training frame: "
        "no evidence of a superlinear speedup); baseline or row runs with contended epochs "
        "(left out of the measured time where others are not), replicates whose speeds differ "
        "by more than {} or that ran on different CPUs.\n\n",
        sweep, o.axis, o.baseline, same,
        group_axes.empty() ? "" : fmt::format("; one row per {} and {}", Join(group_axes), o.axis),
        model.empty() ? "" : "; model: within each run likewise, over the modelled epoch" + model,
        kTimeToTargetClock, report::Percent(kReplicateSpeedTolerance));
    if (!mixed.empty()) out += mixed + "\n\n";
  }
  if (o.format == report::Format::kJson) {
    // For the figure: which rows' efficiencies are within the baseline's noise, and the
    // devices the timings came from.
    nlohmann::json j = report::TableJson(out.substr(0, out.find_last_not_of('\n') + 1), header,
                                         rows, group_axes.size() + 1);
    j["noise"] = std::move(noise);
    j["devices"] = Devices(timed);
    return DumpJson(j, 1) + "\n";
  }
  return out + Render(header, rows, o.format, group_axes.size() + 1);
}

}  // namespace mavg
