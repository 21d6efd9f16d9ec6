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
  // Ours: mean metric and the speedup per worker count, per training frame (equal work, as
  // `report speedup`: a run that drops frames gets no credit for them).
  std::map<int, std::vector<double>> metric, epoch;
  for (const ReportRun* r : sel) {
    if (r->status != RunState::kCompleted) continue;
    const int n = std::stoi(*r->Axis(o.axis));
    if (r->values.count(o.metric)) metric[n].push_back(r->values.at(o.metric));
    const auto mode = r->texts.find(ResultKey(&RunResult::mode));
    const bool simulated =
        mode != r->texts.end() && mode->second == ToString(ParallelMode::kSimulated);
    const std::string key =
        simulated ? MeanName(&EpochRow::projected_wall_s) : std::string(kEpochSecondsMean);
    const auto frames = r->values.find(MeanName(&EpochRow::frames));
    if (r->values.count(key) && frames != r->values.end() && frames->second > 0) {
      epoch[n].push_back(r->values.at(key) / frames->second);
    }
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? std::nan("") : s / v.size();
  };
  const double t1 = epoch.count(1) ? mean(epoch[1]) : std::nan("");
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
  std::string out = fmt::format(
      "Sweep {} beside Su & Chen 2015 ({}). Ours: {} (mean over replicates) and the speedup "
      "per training frame (epoch time over frames trained; projected for simulated workers). "
      "Paper: WER % on Hub5'00 SWB (Table 1: "
      "NG-SGD, RBM, exponential lr, averaging every 10 minibatches) and the speedup from its "
      "time.dat. Different task and hardware: compare trends, not values.\n\n",
      sweep, o.reference, o.metric);
  if (const std::string mixed = MixedKernelsWarning(sel); !mixed.empty()) out += mixed + "\n\n";
  out += fmt::format("| workers | ours: {} | ours: speedup | paper: WER SWB | paper: speedup |\n",
                     o.metric);
  out += "|---:|---:|---:|---:|---:|\n";
  auto fmtv = [](double x, int d) { return std::isfinite(x) ? fmt::format("{:.{}f}", x, d) : "–"; };
  for (const auto& [n, unused] : all) {
    const double m = metric.count(n) ? mean(metric[n]) : std::nan("");
    const double s = epoch.count(n) ? t1 / mean(epoch[n]) : std::nan("");
    out += fmt::format("| {} | {} | {} | {} | {} |\n", n, fmtv(m, 2), fmtv(s, 2),
                       paper_wer.count(n) ? fmtv(paper_wer[n], 1) : "–",
                       paper_speedup.count(n) ? fmtv(paper_speedup[n], 2) : "–");
  }
  return out;
}
}  // namespace

std::string PaperComparison(const std::string& sweep, const std::vector<ReportRun>& runs,
                            const PaperOptions& o) {
  return ReadingYaml(o.reference, [&] { return PaperComparisonFrom(sweep, runs, o); });
}

}  // namespace mavg
