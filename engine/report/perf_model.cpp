#include "engine/report/perf_model.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/yaml.h"

namespace mavg {

const std::vector<Interconnect>& InterconnectPresets() {
  static const std::vector<Interconnect> kPresets = {
      {"ib-fdr", "InfiniBand FDR 4x (56 Gb/s)", 54.55e9 / 8, 1.0e-6,
       "IBTA: 14.0625 Gb/s per lane, 64b/66b coding, 4 lanes; ~1 us MPI latency "
       "(Mellanox ConnectX-3 product brief). Stampede's interconnect."},
      {"ib-edr", "InfiniBand EDR 4x (100 Gb/s)", 100e9 / 8, 0.6e-6,
       "IBTA: 25.78125 Gb/s per lane, 64b/66b, 4 lanes; 0.6 us (ConnectX-4 product brief)"},
      {"ib-hdr", "InfiniBand HDR 4x (200 Gb/s)", 200e9 / 8, 0.6e-6,
       "IBTA: 50 Gb/s per lane (PAM4), 4 lanes; sub-600 ns latency (NVIDIA ConnectX-6 VPI "
       "adapter manual)"},
      {"ib-ndr", "InfiniBand NDR 4x (400 Gb/s)", 400e9 / 8, 0.6e-6,
       "IBTA: 100 Gb/s per lane (PAM4), 4 lanes (ConnectX-7 product brief)"},
      {"eth-1g", "Gigabit Ethernet", 1e9 / 8, 30e-6,
       "IEEE 802.3ab (1000BASE-T); latency: an assumption of ~30 us per message through the "
       "kernel's TCP stack, not a measurement"},
      {"eth-10g", "10 Gigabit Ethernet", 10e9 / 8, 5e-6, "IEEE 802.3ae; TCP latency ~5 us"},
      {"eth-100g", "100 Gigabit Ethernet", 100e9 / 8, 3e-6, "IEEE 802.3ba/bj"},
      {"pcie2-x16", "PCIe 2.0 x16 (host staging of a K20)", 8.0e9, 5e-6,
       "PCI-SIG PCIe 2.0: 5 GT/s per lane, 8b/10b coding = 500 MB/s per lane per direction"},
      {"pcie3-x16", "PCIe 3.0 x16", 15.75e9, 5e-6,
       "PCI-SIG PCIe 3.0: 8 GT/s per lane, 128b/130b = 985 MB/s per lane per direction"},
      {"pcie4-x16", "PCIe 4.0 x16", 31.5e9, 5e-6, "PCI-SIG PCIe 4.0: 16 GT/s per lane, 128b/130b"},
      {"pcie5-x16", "PCIe 5.0 x16", 63.0e9, 5e-6, "PCI-SIG PCIe 5.0: 32 GT/s per lane, 128b/130b"},
      // No datasheet states an NVLink latency: 3.4 us is NCCL's own cost model of one ring step
      // (src/graph/tuning.cc, hwLat[NVLINK][Ring][Simple]), a model input, not a measurement.
      {"nvlink3", "NVLink 3 (A100 SXM)", 300e9, 3.4e-6,
       "NVIDIA A100 datasheet: 600 GB/s total, i.e. 300 GB/s per direction; latency: NCCL's "
       "ring-step cost model (tuning.cc), not a hardware figure"},
      {"nvlink4", "NVLink 4 (H100/H200 SXM)", 450e9, 3.4e-6,
       "NVIDIA H100/H200 datasheets: 900 GB/s total (18 links x 50 GB/s), i.e. 450 GB/s per "
       "direction; latency: NCCL's ring-step cost model (tuning.cc), not a hardware figure"},
  };
  return kPresets;
}

const Interconnect& FindInterconnect(const std::string& name) {
  std::string names;
  for (const Interconnect& i : InterconnectPresets()) {
    if (i.name == name) return i;
    names += (names.empty() ? "" : ", ") + i.name;
  }
  MAVG_FAIL(
      "unknown interconnect '{}' (presets: {}; or a rate such as 100mbit or 1gbit@50us; or --fit "
      "a measured all-reduce)",
      name, names);
}

namespace {

// "12.5mbit" -> 12.5e6 / 8 bytes/s with units {{"kbit", 1e3 / 8}, ...}; nullopt if it is not
// a positive number followed by one of the units.
std::optional<double> NumberWithUnit(const std::string& text,
                                     const std::vector<std::pair<std::string, double>>& units) {
  for (const auto& [unit, scale] : units) {
    if (text.size() <= unit.size() || text.compare(text.size() - unit.size(), unit.size(), unit)) {
      continue;
    }
    const std::string number = text.substr(0, text.size() - unit.size());
    size_t used = 0;
    double v = 0.0;
    try {
      v = std::stod(number, &used);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    if (used != number.size() || !std::isfinite(v) || v < 0) return std::nullopt;
    return v * scale;
  }
  return std::nullopt;
}

}  // namespace

Interconnect ParseInterconnect(const std::string& spec) {
  for (const Interconnect& i : InterconnectPresets()) {
    if (i.name == spec) return i;
  }
  std::string lower = spec;  // tc prints 100Mbit, 1Gbit
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const size_t at = lower.find('@');
  const std::string rate = lower.substr(0, at);
  const std::string latency = at == std::string::npos ? "0s" : lower.substr(at + 1);
  const std::optional<double> bandwidth =
      NumberWithUnit(rate, {{"kbit", 1e3 / 8}, {"mbit", 1e6 / 8}, {"gbit", 1e9 / 8}});
  const std::optional<double> seconds =
      NumberWithUnit(latency, {{"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}});
  if (!bandwidth || !(*bandwidth > 0) || !seconds) {
    FindInterconnect(spec);  // throws, listing the presets
  }
  Interconnect i;
  i.name = spec;
  i.description = fmt::format("a link of {} per direction, {} latency", rate,
                              at == std::string::npos ? "no added" : latency);
  i.bandwidth = *bandwidth;
  i.latency = *seconds;
  i.source = "given on the command line";
  return i;
}

Interconnect FitInterconnect(const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(ReadFile(path));
  } catch (const nlohmann::json::exception& e) {
    MAVG_FAIL("{}: not a JSON file: {}", path, e.what());
  }
  MAVG_CHECK(j.contains("allreduce_busbw_gb_per_s"),
             "{}: not the output of mavg bench allreduce --json", path);
  Interconnect i;
  i.name = "fitted";
  i.description = fmt::format("measured all-reduce ({} ranks, {:.0f} MB, {})", j.value("ranks", 0),
                              j.value("megabytes", 0.0), j.value("communicator", "mpi"));
  i.bandwidth = j["allreduce_busbw_gb_per_s"].get<double>() * 1e9;
  i.latency = 0.0;
  i.source = path;
  return i;
}

AveragingCost AveragingTime(double bytes, int workers, const Interconnect& link,
                            const Interconnect* staging, Collective collective,
                            double staged_bytes) {
  AveragingCost c;
  if (workers <= 1) return c;
  const double n = workers;
  if (collective == Collective::kAllGather) {
    c.allreduce_s = (n - 1) * link.latency + (n - 1) * bytes / link.bandwidth;
  } else {
    c.allreduce_s = 2.0 * (n - 1) * link.latency + 2.0 * (n - 1) / n * bytes / link.bandwidth;
  }
  if (staging != nullptr) {
    c.staging_s = 2.0 * (staged_bytes < 0 ? bytes : staged_bytes) / staging->bandwidth;
  }
  return c;
}

bool IsTwoLevel(const EpochShape& s) {
  return s.group_size >= 1 && s.group_size < s.workers && s.average_every > 0 &&
         s.average_every_global > s.average_every;
}

EpochModel ModelEpoch(const EpochShape& s, const ModelLinks& links) {
  MAVG_CHECK(links.intra != nullptr && links.inter != nullptr, "the model needs its links");
  EpochModel m;
  m.compute_s = s.compute_s;
  if (s.workers <= 1 || s.combines <= 0) return m;
  const double global_one =
      AveragingTime(s.bytes, s.workers, *links.inter, links.staging, s.collective, s.staged_bytes)
          .Total();
  if (IsTwoLevel(s)) {
    // Every (K2/K)-th combine point is global, and so is the epoch's last.
    m.global_combines = s.global_combines >= 0
                            ? s.global_combines
                            : std::ceil(s.combines * static_cast<double>(s.average_every) /
                                            static_cast<double>(s.average_every_global) -
                                        1e-9);
    m.group_combines = std::max(0.0, s.combines - m.global_combines);
    const double group_one =
        AveragingTime(s.bytes, static_cast<int>(s.group_size), *links.intra, links.staging).Total();
    m.group_s = m.group_combines * group_one;
  } else {
    m.global_combines = s.combines;
  }
  m.global_s = m.global_combines * global_one;
  m.exposed_s = m.global_s;
  if (!s.overlap && s.overlap_steps > 0 && s.steps > 0 && m.global_combines > 0) {
    // Streaming: each fragment's exchange runs during the tau steps before its merge, and is
    // hidden up to their compute; the epoch's last point exchanges every fragment at once.
    const double hidden = s.compute_s * static_cast<double>(s.overlap_steps) / s.steps;
    const double sync = std::min(m.global_combines, static_cast<double>(s.stream_fragments));
    m.exposed_s =
        (m.global_combines - sync) * std::max(0.0, global_one - hidden) + sync * global_one;
  }
  if (s.overlap && m.global_combines > 0) {
    // Each block's all-reduce runs while the next block computes and is hidden up to that
    // block's compute; the epoch's last one has no next block and is paid in full.
    const double block_compute = s.compute_s / m.global_combines;
    m.exposed_s = (m.global_combines - 1) * std::max(0.0, global_one - block_compute) + global_one;
  }
  return m;
}

namespace {
std::string PaperProjectionFrom(const PaperProjectionOptions& o,
                                const std::string& reference_yaml) {
  const Interconnect& link = FindInterconnect(o.link);
  const Interconnect* staging = o.staging.empty() ? nullptr : &FindInterconnect(o.staging);
  YAML::Node ref;
  try {
    ref = YAML::LoadFile(reference_yaml)["timing"];
  } catch (const YAML::Exception& e) {
    MAVG_FAIL("{}: cannot read the paper's timing: {}", reference_yaml, e.what());
  }
  MAVG_CHECK(ref && ref["gpus"], "{}: no 'timing' section with 'gpus'", reference_yaml);
  const auto gpus = ref["gpus"].as<std::vector<int>>();
  const auto train = ref["train_time"].as<std::vector<double>>();
  std::vector<double> paper_comm;
  for (const auto& c : ref["comm_time"]) paper_comm.push_back(c.IsNull() ? 0.0 : c.as<double>());

  const double bytes = o.params * 4.0;
  const double t1 = o.t1 * o.time_unit_s;
  std::string out;
  out += fmt::format(
      "Model: ring all-reduce of {:.1f} MB on {} ({:.2f} GB/s, {:.1f} us), host staging over "
      "{} ({:.2f} GB/s); averaging every {} minibatches of {} frames; {:.1f}M training frames "
      "per epoch; compute per worker = the 1-GPU time / N (ideal split); time unit of time.dat "
      "taken as {} s.\n\n",
      bytes / 1e6, link.description, link.bandwidth / 1e9, link.latency * 1e6,
      staging ? staging->description : "none", staging ? staging->bandwidth / 1e9 : 0.0,
      o.average_every, o.minibatch, o.frames / 1e6, o.time_unit_s);
  out +=
      "| GPUs | averagings/epoch | one averaging (s) | model comm | model train | model "
      "speedup | paper comm | paper train | paper speedup | paper compute (train - comm) | "
      "compute / ideal |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (int n : o.workers) {
    const double per_worker = o.frames / n;
    const double r = n > 1 ? std::floor(per_worker / (o.average_every * o.minibatch)) : 0;
    const AveragingCost c = AveragingTime(bytes, n, link, staging);
    const double comm = r * c.Total();
    const double model_train = t1 / n + comm;
    std::string paper = "| – | – | – | – | – |";
    for (size_t i = 0; i < gpus.size(); ++i) {
      if (gpus[i] != n) continue;
      const double compute = train[i] - paper_comm[i];
      paper = fmt::format("| {} | {} | {:.2f} | {:.1f} | {:.2f} |",
                          paper_comm[i] > 0 ? fmt::format("{:.2f}", paper_comm[i]) : "–", train[i],
                          train[0] / train[i], compute, compute / (train[0] / n));
    }
    out += fmt::format("| {} | {:.0f} | {:.3f} | {:.2f} | {:.2f} | {:.2f} {}\n", n, r, c.Total(),
                       comm / o.time_unit_s, model_train / o.time_unit_s, t1 / model_train, paper);
  }
  out += fmt::format("\nSources: {}; {}.\n", link.source, staging ? staging->source : "no staging");
  return out;
}
}  // namespace

std::string PaperProjection(const PaperProjectionOptions& o, const std::string& reference_yaml) {
  return ReadingYaml(reference_yaml, [&] { return PaperProjectionFrom(o, reference_yaml); });
}

}  // namespace mavg
