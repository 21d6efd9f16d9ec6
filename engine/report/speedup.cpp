// `mavg report speedup`: epoch time, speedup per training frame and efficiency per value of one
// axis and per combination of the other varying axes, with measured, projected and modelled times
// in separate columns, and the time to the baseline's CV loss.
#include <algorithm>
#include <cmath>
#include <cstdlib>
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
  if (!o.interconnect.empty()) l.inter = FindInterconnect(o.interconnect);
  if (!o.inter.empty()) l.inter = FindInterconnect(o.inter);
  MAVG_CHECK(o.intra.empty() || l.inter,
             "--intra {} needs --inter (or --fit): the link of flat and global combines", o.intra);
  if (!l.inter) return l;
  l.two = !o.intra.empty();
  l.intra = l.two ? FindInterconnect(o.intra) : *l.inter;
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
  s.bytes = 4.0 * ValueOr(r, ResultKey(&RunResult::num_params), 0);
  s.combines = ValueOr(r, MeanName(&EpochRow::averagings), 0);
  s.group_size = ParallelInt(r, "group_size");
  s.average_every = ParallelInt(r, "average_every");
  s.average_every_global = ParallelInt(r, "average_every_global");
  s.global_combines = ValueOr(r, MeanName(&EpochRow::global_averagings), -1.0);
  s.overlap = ParallelBool(r, "overlap");
  // Compute: the projection's own compute part when the run wrote it; else the projection less
  // this machine's averaging time, which is exact without overlap. An overlapped run's
  // projection hides part of comm_s, so there the slowest worker's compute + data time.
  const std::string projected_compute = MeanName(&EpochRow::projected_compute_s);
  if (Simulated(r) && r.values.count(projected_compute)) {
    s.compute_s = r.values.at(projected_compute);
  } else if (s.overlap && n > 1) {
    s.compute_s = ValueOr(r, MeanName(&EpochRow::compute_s), 0.0) +
                  ValueOr(r, MeanName(&EpochRow::io_s), 0.0);
  } else {
    s.compute_s = projected - (n > 1 ? ValueOr(r, MeanName(&EpochRow::comm_s), 0.0) : 0.0);
  }
  return ModelEpoch(s, {&*links.intra, &*links.inter, links.staging}).Total();
}

// Epoch times of a set of completed runs (one row's, or a row's baseline), and the same times
// per training frame (*_per_frame; of the runs that recorded frames), which the speedups
// compare: equal work, so a run that drops frames (averaging's last partial interval, a
// shorter shard) does not look faster for doing less.
// The projected and modelled speedups also come from within each run (*_within): the seconds
// its workers' own compute and data took, summed over the workers (the same frames on one
// device at this run's own per-frame speed), over its projected or modelled epoch: both from
// the same epochs of the same run, so a baseline run that happened to be slow or fast does not
// make a row super- or sublinear. A 1-worker run's is 1. Empty when a run lacks the workers'
// compute times (runs from before they were recorded), which then fall back to the baseline's.
struct Times {
  std::vector<double> measured, projected, modelled, frames, dropped;
  std::vector<double> measured_per_frame, projected_per_frame, modelled_per_frame;
  std::vector<double> projected_within, modelled_within;
  int workers = 1;
  bool Empty() const { return projected.empty(); }
};

// The seconds one device would take for the run's epoch of work, from the run's own workers:
// N x the mean worker's compute + data seconds; nullopt without them.
std::optional<double> SerialWork(const ReportRun& r, int workers) {
  const auto compute = r.values.find(MeanName(&EpochRow::compute_s_mean));
  if (compute == r.values.end() || !(compute->second > 0)) return std::nullopt;
  return workers * (compute->second + ValueOr(r, MeanName(&EpochRow::io_s_mean), 0.0));
}

Times TimesOf(const std::vector<const ReportRun*>& runs, const Links& links) {
  Times t;
  for (const ReportRun* r : runs) {
    if (r->status != RunState::kCompleted || !r->values.count(kEpochSecondsMean)) continue;
    t.workers = static_cast<int>(ValueOr(*r, ResultKey(&RunResult::world_size), 1));
    const double epoch = r->values.at(kEpochSecondsMean);
    // A run without frames (none recorded) counts in the epoch times, not in the speedups.
    const double frames = ValueOr(*r, MeanName(&EpochRow::frames), 0.0);
    const bool per_frame = frames > 0;
    if (!Simulated(*r)) {
      t.measured.push_back(epoch);
      if (per_frame) t.measured_per_frame.push_back(epoch / frames);
    }
    // Projected: simulated workers' projection, or the measured time when nothing is simulated.
    const std::string projected_epoch = MeanName(&EpochRow::projected_wall_s);
    const double projected =
        Simulated(*r) && r->values.count(projected_epoch) ? r->values.at(projected_epoch) : epoch;
    t.projected.push_back(projected);
    if (per_frame) t.projected_per_frame.push_back(projected / frames);
    if (frames > 0) t.frames.push_back(frames);
    const std::optional<double> serial = SerialWork(*r, t.workers);
    if (t.workers == 1) {
      t.projected_within.push_back(1.0);
    } else if (serial && projected > 0) {
      t.projected_within.push_back(*serial / projected);
    }
    const std::string dropped = MeanName(&EpochRow::frames_dropped);
    if (r->values.count(dropped)) t.dropped.push_back(r->values.at(dropped));
    if (links.inter) {
      const double modelled = ModelledEpoch(*r, projected, links);
      t.modelled.push_back(modelled);
      if (per_frame) t.modelled_per_frame.push_back(modelled / frames);
      if (t.workers == 1) {
        t.modelled_within.push_back(1.0);
      } else if (serial && modelled > 0) {
        t.modelled_within.push_back(*serial / modelled);
      }
    }
  }
  return t;
}

// How much a set of runs disagree: (max - min) / mean of their seconds per training frame; NaN
// for fewer than two.
double Spread(const std::vector<double>& per_frame) {
  if (per_frame.size() < 2) return std::nan("");
  const auto [lo, hi] = std::minmax_element(per_frame.begin(), per_frame.end());
  return (*hi - *lo) / Mean(per_frame);
}

// An efficiency whose distance from 1 the baseline's own replicates exceed: kind is measured,
// projected or model.
struct Noisy {
  std::string kind;
  double efficiency, spread;
  size_t runs;  // baseline runs with a time per frame
};

// The row's note on the efficiencies within the baseline's noise, columns with the same numbers
// named together ("measured and projected efficiency 1.14 is within ...").
std::string NoiseNote(const std::vector<Noisy>& noisy, bool latex) {
  std::string note;
  for (size_t i = 0; i < noisy.size();) {
    const Noisy& n = noisy[i];
    const std::string e = fmt::format("{:.2f}", n.efficiency);
    std::vector<std::string> kinds = {n.kind};
    size_t j = i + 1;
    for (; j < noisy.size() && fmt::format("{:.2f}", noisy[j].efficiency) == e &&
           Percent(noisy[j].spread, latex) == Percent(n.spread, latex);
         ++j) {
      kinds.push_back(noisy[j].kind);
    }
    note += fmt::format(
        "{}{} efficiency {} is within the baseline's noise (its {} runs' seconds per training "
        "frame differ by {}, more than this efficiency's {} from 1)",
        note.empty() ? "" : "; ", Join(kinds, " and "), e, n.runs, Percent(n.spread, latex),
        Percent(std::fabs(n.efficiency - 1.0), latex));
    i = j;
  }
  return note;
}

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
      const Times t = TimesOf(rs, links);
      const Times base = TimesOf(baselines.For(*rs[0]), links);
      // Speedup = the baseline's seconds per training frame / this row's (equal work);
      // efficiency = speedup x baseline workers / workers (the baseline need not be 1 worker).
      auto triple = [&](const std::vector<double>& times, const std::vector<double>& per_frame,
                        const std::vector<double>& base_per_frame) -> std::vector<std::string> {
        const double m = Mean(times), f = Mean(per_frame), b = Mean(base_per_frame);
        if (!std::isfinite(m)) return {"–", "–", "–"};
        if (!std::isfinite(b) || !std::isfinite(f)) return {Num(m), "–", "–"};
        return {Num(m), fmt::format("{:.2f}", b / f),
                fmt::format("{:.2f}", b / f * base.workers / t.workers)};
      };
      // Counts as whole numbers, in every format.
      row.push_back(t.frames.empty() ? "–" : report::Count(Mean(t.frames)));
      row.push_back(t.dropped.empty() ? "–" : report::Count(Mean(t.dropped)));
      std::vector<std::string> m =
          triple(t.measured, t.measured_per_frame, base.measured_per_frame);
      if (t.measured.empty() && !t.Empty()) m = {"simulated", "–", "–"};
      row.insert(row.end(), m.begin(), m.end());
      // Within each run when every run of the row has it; else against the baseline.
      auto within = [&](const std::vector<double>& times,
                        const std::vector<double>& speedups) -> std::optional<Strings> {
        if (times.empty() || speedups.size() != times.size()) return std::nullopt;
        const double s = Mean(speedups);
        return Strings{Num(Mean(times)), fmt::format("{:.2f}", s),
                       fmt::format("{:.2f}", s / t.workers)};
      };
      const std::optional<Strings> p_within = within(t.projected, t.projected_within);
      const Strings p =
          p_within.value_or(triple(t.projected, t.projected_per_frame, base.projected_per_frame));
      row.insert(row.end(), p.begin(), p.end());
      std::optional<Strings> q_within;
      if (links.inter) {
        q_within = within(t.modelled, t.modelled_within);
        const Strings q =
            q_within.value_or(triple(t.modelled, t.modelled_per_frame, base.modelled_per_frame));
        row.insert(row.end(), q.begin(), q.end());
      }
      // An efficiency whose distance from 1 is smaller than the disagreement between the
      // baseline's own replicates (e.g. 1.14 against 1-worker runs 21 % apart) is noise, not a
      // superlinear speedup: the row says so. The baseline's own rows compare it with itself.
      std::vector<Noisy> noisy;
      auto check = [&](const char* kind, const std::vector<double>& per_frame,
                       const std::vector<double>& base_per_frame) {
        const double e = Mean(base_per_frame) / Mean(per_frame) * base.workers / t.workers;
        const double spread = Spread(base_per_frame);
        if (v != o.baseline && std::isfinite(e) && std::isfinite(spread) &&
            spread > std::fabs(e - 1.0)) {
          noisy.push_back({kind, e, spread, base_per_frame.size()});
        }
      };
      check("measured", t.measured_per_frame, base.measured_per_frame);
      if (!p_within) check("projected", t.projected_per_frame, base.projected_per_frame);
      if (links.inter && !q_within) check("model", t.modelled_per_frame, base.modelled_per_frame);
      nlohmann::json kinds = nlohmann::json::array();
      for (const Noisy& n : noisy) kinds.push_back(n.kind);
      noise.push_back(kinds);
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
      row.push_back(NoiseNote(noisy, latex));
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
        "Speedup of sweep {} against {}={}{} (epoch = training time without CV){}. Speedups "
        "compare equal work: measured, the baseline's epoch seconds per training frame over this "
        "row's (frames/epoch: frames trained, all workers; frames dropped/epoch: frames not "
        "trained, e.g. after a shard's last full averaging interval). measured: "
        "real processes (MPI ranks or one worker); projected: simulated workers' slowest worker "
        "per averaging interval plus this machine's measured averaging time (projected from "
        "simulated workers, no network: not a measurement){}. Projected and model speedups are "
        "projected within each run: N x the mean worker's measured compute and data seconds (the "
        "same frames on one device, at that run's own speed) over the run's projected or "
        "modelled epoch, so the baseline runs' noise does not enter them (1 worker: 1; runs "
        "without the workers' times: against the baseline). Time to target: time to the baseline's "
        "CV loss, the mean over the "
        "baseline replicates of their last accepted epoch's CV loss, until the end of the first "
        "accepted epoch at or below it, mean ± std over the replicates that reached it (blank: "
        "none did; reached: k of the completed or diverged runs). {} Notes: an efficiency whose "
        "distance from 1 is smaller than the spread of the baseline's replicates ((max - min) / "
        "mean of their seconds per training frame) is within their noise, and its row says so: "
        "such an efficiency above 1 is no evidence of a superlinear speedup.\n\n",
        sweep, o.axis, o.baseline, same,
        group_axes.empty() ? "" : fmt::format("; one row per {} and {}", Join(group_axes), o.axis),
        model, kTimeToTargetClock);
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
