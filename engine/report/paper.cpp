#include "engine/report/paper.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <map>

#include "engine/config/choices.h"
#include "engine/core/error.h"
#include "engine/core/yaml.h"
#include "engine/records/epoch_row.h"
#include "engine/records/run_result.h"
#include "engine/report/tables.h"

namespace mavg {

namespace {
std::string PaperComparisonFrom(const std::string& sweep, const std::vector<ReportRun>& runs,
                                const PaperOptions& o) {
  YAML::Node ref;
  try {
    ref = YAML::LoadFile(o.reference);
  } catch (const YAML::Exception& e) {
    MAVG_FAIL("{}: cannot read the paper's numbers: {}", o.reference, e.what());
  }
  const std::vector<const ReportRun*> sel = SelectRuns(runs, o.where, {o.axis});
  // Ours: the mean metric and the speedups per worker count, as `report speedup` computes them
  // (measured across real processes, projected within each run; per training frame).
  std::map<int, std::vector<double>> metric;
  std::map<int, std::vector<const ReportRun*>> by_workers;
  for (const ReportRun* r : sel) {
    const int n = std::stoi(*r->Axis(o.axis));
    by_workers[n].push_back(r);
    if (r->status != RunState::kCompleted) continue;
    if (r->values.count(o.metric)) metric[n].push_back(r->values.at(o.metric));
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? std::nan("") : s / v.size();
  };
  const std::vector<const ReportRun*> baseline =
      by_workers.count(1) ? by_workers[1] : std::vector<const ReportRun*>{};
  std::map<int, RowSpeedups> speedups;
  for (const auto& [n, rs] : by_workers) speedups[n] = SpeedupsOf(rs, baseline, n == 1);
  std::map<int, double> paper_wer, paper_speedup;
  const YAML::Node t1n = ref["table1_wer_vs_gpus"];
  if (t1n) {
    const auto g = t1n["gpus"].as<std::vector<int>>();
    const auto w = t1n["h500_swb"].as<std::vector<double>>();
    for (size_t i = 0; i < g.size(); ++i) paper_wer[g[i]] = w[i];
  }
  const YAML::Node tm = ref["timing"];
  if (tm) {
    const auto g = tm["gpus"].as<std::vector<int>>();
    const auto s = tm["speedup"].as<std::vector<double>>();
    for (size_t i = 0; i < g.size(); ++i) paper_speedup[g[i]] = s[i];
  }
  std::map<int, bool> all;
  for (const auto& [n, v] : metric) all[n] = true;
  for (const auto& [n, v] : paper_wer) all[n] = true;
  for (const auto& [n, v] : paper_speedup) all[n] = true;
  for (const auto& [n, v] : speedups) all[n] = true;
  std::string out = fmt::format(
      "Sweep {} beside Su & Chen 2015 ({}). Ours: {} (mean over replicates) and the speedup "
      "per training frame as `mavg report speedup` gives it: measured across real processes "
      "(the 1-worker runs' seconds per frame over the row's; simulated workers have none) and "
      "projected within each run (N x its workers' own compute and data seconds over its "
      "projected epoch: not a measurement). Paper: WER % on Hub5'00 SWB (Table 1: NG-SGD, RBM, "
      "exponential lr, averaging every 10 minibatches) and the speedup from its time.dat, "
      "measured on GPUs. Different task and hardware: compare trends, not values. Notes say "
      "what makes one of our numbers doubtful.\n\n",
      sweep, o.reference, o.metric);
  if (const std::string mixed = MixedKernelsWarning(sel); !mixed.empty()) out += mixed + "\n\n";
  out += fmt::format(
      "| workers | ours: {} | ours: measured speedup | ours: projected speedup | paper: WER SWB "
      "| paper: speedup | notes |\n",
      o.metric);
  out += "|---:|---:|---:|---:|---:|---:|---|\n";
  auto fmtv = [](double x, int d) { return std::isfinite(x) ? fmt::format("{:.{}f}", x, d) : "–"; };
  for (const auto& [n, unused] : all) {
    const double m = metric.count(n) ? mean(metric[n]) : std::nan("");
    const auto sp = speedups.find(n);
    std::string measured = "–", projected = "–", notes;
    if (sp != speedups.end()) {
      measured = sp->second.simulated ? "simulated" : fmtv(sp->second.measured.speedup, 2);
      projected = fmtv(sp->second.projected.speedup, 2);
      for (const std::string& f : sp->second.flags) notes += (notes.empty() ? "" : "; ") + f;
    }
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", n, fmtv(m, 2), measured, projected,
                       paper_wer.count(n) ? fmtv(paper_wer[n], 1) : "–",
                       paper_speedup.count(n) ? fmtv(paper_speedup[n], 2) : "–", notes);
  }
  return out;
}
}  // namespace

std::string PaperComparison(const std::string& sweep, const std::vector<ReportRun>& runs,
                            const PaperOptions& o) {
  return ReadingYaml(o.reference, [&] { return PaperComparisonFrom(sweep, runs, o); });
}

}  // namespace mavg
