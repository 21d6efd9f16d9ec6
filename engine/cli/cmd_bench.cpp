// mavg bench train --config FILE [--set k=v]... [--repeats N] [--json FILE]
#include <iostream>

#include "engine/bench/comm_bench.h"
#include "engine/bench/train_bench.h"
#include "engine/cli/commands.h"
#include "engine/config/schema.h"
#include "engine/core/files.h"

namespace mavg::cli {

void AddBenchCommand(CLI::App& app) {
  struct Args {
    std::string config;
    std::vector<std::string> sets;
    TrainBenchOptions options;
    std::string json;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("bench", "Benchmarks (never part of the test suite)");
  cmd->require_subcommand(1);
  CLI::App* train = cmd->add_subcommand(
      "train", "Training step on random data vs the same GEMMs' SGEMM rate, side by side");
  train->add_option("--config", args->config, "Run config giving the network and minibatch")
      ->required();
  train->add_option("--set", args->sets, "Override a key (repeatable)");
  train->add_option("--raw-dim", args->options.raw_dim, "Frame dimension before splicing")
      ->capture_default_str();
  train->add_option("--warmup", args->options.warmup, "Untimed steps")->capture_default_str();
  train->add_option("--repeats", args->options.repeats, "Timed rounds")->capture_default_str();
  train->add_option("--json", args->json, "Also write the measurements to this JSON file");
  train->callback([args] {
    RunConfig config = LoadConfigFile(args->config);
    for (const std::string& s : args->sets) ApplyOverride(config, s);
    const nlohmann::json r = BenchTrainStep(config, args->options);
    if (!args->json.empty()) WriteFileAtomic(args->json, r.dump(2) + "\n");
    std::cout << r.dump(2) << std::endl;
  });

  auto ar = std::make_shared<AllReduceBenchOptions>();
  auto ar_json = std::make_shared<std::string>();
  CLI::App* allreduce = cmd->add_subcommand(
      "allreduce", "MPI AllReduceSum of a parameter buffer vs memcpy (run under mpirun)");
  allreduce->add_option("--floats", ar->floats, "Buffer size")->capture_default_str();
  allreduce->add_option("--repeats", ar->repeats, "Timed rounds")->capture_default_str();
  allreduce->add_flag("--deterministic", ar->deterministic, "Rank-order reduction");
  allreduce->add_option("--json", *ar_json, "Also write the measurements to this JSON file");
  allreduce->callback([ar, ar_json] {
    const nlohmann::json r = BenchAllReduce(*ar);
    if (r.is_null()) return;  // not rank 0
    if (!ar_json->empty()) WriteFileAtomic(*ar_json, r.dump(2) + "\n");
    std::cout << r.dump(2) << std::endl;
  });
}

}  // namespace mavg::cli
