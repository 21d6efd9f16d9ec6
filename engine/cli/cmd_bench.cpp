// mavg bench train --config FILE [--set k=v]... [--repeats N] [--json FILE]
#include <iostream>

#include "engine/bench/comm_bench.h"
#include "engine/bench/replica_bench.h"
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

  // bench replicas / bench average: the same options, two measurements.
  struct ReplicaArgs {
    std::string config;
    std::vector<std::string> sets;
    ReplicaBenchOptions options;
    std::string json;
  };
  const auto add_replica_bench =
      [cmd](const char* name, const char* help,
            nlohmann::json (*bench)(const RunConfig&, const ReplicaBenchOptions&)) {
        auto a = std::make_shared<ReplicaArgs>();
        CLI::App* sub = cmd->add_subcommand(name, help);
        sub->add_option("--config", a->config, "Run config giving the network and minibatch")
            ->required();
        sub->add_option("--set", a->sets, "Override a key (repeatable)");
        sub->add_option("--raw-dim", a->options.raw_dim, "Frame dimension before splicing")
            ->capture_default_str();
        sub->add_option("--workers", a->options.workers, "Replicas N")->capture_default_str();
        sub->add_option("--every", a->options.every, "Minibatches between averagings")
            ->capture_default_str();
        sub->add_option("--repeats", a->options.repeats, "Timed rounds")->capture_default_str();
        sub->add_option("--json", a->json, "Also write the measurements to this JSON file");
        sub->callback([a, bench] {
          RunConfig config = LoadConfigFile(a->config);
          for (const std::string& s : a->sets) ApplyOverride(config, s);
          const nlohmann::json r = bench(config, a->options);
          if (!a->json.empty()) WriteFileAtomic(a->json, r.dump(2) + "\n");
          std::cout << r.dump(2) << std::endl;
        });
      };
  add_replica_bench("replicas",
                    "N simulated workers on one device vs one worker, per frame, side by side",
                    BenchReplicas);
  add_replica_bench("average",
                    "One averaging of the parameters: host staging vs the on-device replica mean",
                    BenchAverage);

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
