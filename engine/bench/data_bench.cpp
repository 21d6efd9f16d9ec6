#include "engine/bench/data_bench.h"

#include <vector>

#include "engine/comm/mpi/mpi_communicator.h"
#include "engine/core/sysinfo.h"
#include "engine/core/timer.h"
#include "engine/train/run_data.h"

namespace mavg {

nlohmann::json BenchDataLoad(const RunConfig& config, const DataBenchOptions& options) {
  std::unique_ptr<Communicator> comm =
      LaunchedUnderMpi() ? CreateMpiCommunicator(/*deterministic=*/true, /*background=*/false)
                         : CreateLocalCommunicator();
  const int n = comm->WorldSize(), rank = comm->Rank();
  const int64_t rss_before = ResidentBytes();
  ShardPlan plan;
  plan.num_shards = n;
  if (options.whole) {
    plan.held.resize(n);
    for (int s = 0; s < n; ++s) plan.held[s] = s;
  } else {
    plan.held = {rank};
  }
  RunConfig c = config;
  c.parallel.workers = n;
  double io_s = 0.0;
  const RunData d = LoadRunData(c, plan, *comm, &io_s);
  // One slot per rank and quantity, summed over the ranks (each fills its own).
  constexpr int kFields = 7;
  std::vector<double> all(static_cast<size_t>(n) * kFields, 0.0);
  double* mine = all.data() + static_cast<size_t>(rank) * kFields;
  mine[0] = d.train.NumUtts();
  mine[1] = static_cast<double>(d.train.NumFrames());
  mine[2] = static_cast<double>(d.train.feats.size() * sizeof(float));
  mine[3] = static_cast<double>((d.dev.feats.size() + d.test.feats.size()) * sizeof(float));
  mine[4] = static_cast<double>(rss_before);
  mine[5] = static_cast<double>(PeakResidentBytes());
  mine[6] = io_s;
  comm->AllReduceSum(std::span<double>(all));
  if (rank != 0) return nullptr;
  int64_t total_frames = 0;
  for (int64_t f : d.shard_frames) total_frames += f;
  constexpr double kMiB = 1024.0 * 1024.0;
  nlohmann::json ranks = nlohmann::json::array();
  for (int r = 0; r < n; ++r) {
    const double* v = all.data() + static_cast<size_t>(r) * kFields;
    ranks.push_back({{"rank", r},
                     {"utterances", static_cast<int64_t>(v[0])},
                     {"train_frames", static_cast<int64_t>(v[1])},
                     {"train_features_mib", v[2] / kMiB},
                     {"heldout_features_mib", v[3] / kMiB},
                     {"rss_before_load_mib", v[4] / kMiB},
                     {"peak_rss_mib", v[5] / kMiB},
                     {"load_s", v[6]}});
  }
  return {{"benchmark", "data"},
          {"ranks", n},
          {"mode", options.whole ? "whole corpus on every rank" : "own shard per rank"},
          {"train", config.data.train},
          {"train_frames_total", total_frames},
          {"train_features_total_mib",
           static_cast<double>(total_frames) * d.train.dim * sizeof(float) / kMiB},
          {"per_rank", ranks}};
}

}  // namespace mavg
