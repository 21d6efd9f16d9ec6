// mavg bench train|replicas|average --config FILE [--set k=v]... [--json FILE];
// mavg bench allreduce|data (under mpirun)
#include <iostream>

#include "engine/bench/comm_bench.h"
#include "engine/bench/data_bench.h"
#include "engine/bench/replica_bench.h"
#include "engine/bench/train_bench.h"
#include "engine/cli/commands.h"
#include "engine/config/schema.h"
#include "engine/core/files.h"
#include "engine/core/json.h"

namespace mavg::cli {
namespace {

// What every benchmark of a config's network takes: the config, overrides, the frame
// dimension before splicing, where to write the JSON.
struct ConfigBenchArgs {
  std::string config;
  std::vector<std::string> sets;
  std::string json;
};

void AddConfigBenchOptions(CLI::App* sub, ConfigBenchArgs& a, int& raw_dim) {
  sub->add_option("--config", a.config, "Run config giving the network and minibatch")->required();
  sub->add_option("--set", a.sets, "Override a key (repeatable)");
  sub->add_option("--raw-dim", raw_dim, "Frame dimension before splicing")->capture_default_str();
  sub->add_option("--json", a.json, "Also write the measurements to this JSON file");
}

RunConfig LoadBenchConfig(const ConfigBenchArgs& a) {
  RunConfig config = LoadConfigFile(a.config);
  for (const std::string& s : a.sets) ApplyOverride(config, s);
  return config;
}

// Prints the measurements, and writes them to `json_path` when given.
void Emit(const nlohmann::json& r, const std::string& json_path) {
  if (!json_path.empty()) WriteFileAtomic(json_path, DumpJson(r, 2) + "\n");
  std::cout << DumpJson(r, 2) << std::endl;
}

}  // namespace

void AddBenchCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("bench", "Benchmarks (never part of the test suite)");
  cmd->require_subcommand(1);

  struct TrainArgs {
    ConfigBenchArgs common;
    TrainBenchOptions options;
  };
  auto t = std::make_shared<TrainArgs>();
  CLI::App* train = cmd->add_subcommand(
      "train", "Training step on random data vs the same GEMMs' SGEMM rate, side by side");
  AddConfigBenchOptions(train, t->common, t->options.raw_dim);
  train->add_option("--warmup", t->options.warmup, "Untimed steps")->capture_default_str();
  train->add_option("--repeats", t->options.repeats, "Timed rounds")->capture_default_str();
  train
      ->add_option("--optimizers", t->options.optimizers,
                   "Optimizers to time side by side in the same rounds, e.g. sgd,ngsgd "
                   "(default: the config's)")
      ->delimiter(',')
      ->check(CLI::IsMember({"sgd", "ngsgd"}));
  train->callback(
      [t] { Emit(BenchTrainStep(LoadBenchConfig(t->common), t->options), t->common.json); });

  // bench replicas / bench average: the same options, two measurements.
  struct ReplicaArgs {
    ConfigBenchArgs common;
    ReplicaBenchOptions options;
  };
  const auto add_replica_bench =
      [cmd](const char* name, const char* help,
            nlohmann::json (*bench)(const RunConfig&, const ReplicaBenchOptions&)) {
        auto a = std::make_shared<ReplicaArgs>();
        CLI::App* sub = cmd->add_subcommand(name, help);
        AddConfigBenchOptions(sub, a->common, a->options.raw_dim);
        sub->add_option("--workers", a->options.workers, "Replicas N")->capture_default_str();
        sub->add_option("--every", a->options.every, "Minibatches between averagings")
            ->capture_default_str();
        sub->add_option("--repeats", a->options.repeats, "Timed rounds")->capture_default_str();
        sub->callback(
            [a, bench] { Emit(bench(LoadBenchConfig(a->common), a->options), a->common.json); });
      };
  add_replica_bench("replicas",
                    "N simulated workers on one device vs one worker, per frame, side by side",
                    BenchReplicas);
  add_replica_bench("average",
                    "One averaging of the parameters: host staging vs the on-device replica mean",
                    BenchAverage);

  auto data = std::make_shared<ConfigBenchArgs>();
  auto data_options = std::make_shared<DataBenchOptions>();
  CLI::App* data_cmd = cmd->add_subcommand(
      "data",
      "Memory of loading a run's data per process (under mpirun -np N: rank r reads shard r)");
  data_cmd->add_option("--config", data->config, "Run config giving the data")->required();
  data_cmd->add_option("--set", data->sets, "Override a key (repeatable)");
  data_cmd->add_flag("--whole", data_options->whole,
                     "Every rank loads the whole training set (for comparison)");
  data_cmd->add_option("--json", data->json, "Also write the measurements to this JSON file");
  data_cmd->callback([data, data_options] {
    const nlohmann::json r = BenchDataLoad(LoadBenchConfig(*data), *data_options);
    if (!r.is_null()) Emit(r, data->json);  // null: not rank 0
  });

  auto ar = std::make_shared<AllReduceBenchOptions>();
  auto ar_json = std::make_shared<std::string>();
  CLI::App* allreduce = cmd->add_subcommand(
      "allreduce", "MPI AllReduceSum of a parameter buffer vs memcpy (run under mpirun)");
  allreduce->add_option("--floats", ar->floats, "Buffer size")->capture_default_str();
  allreduce->add_option("--repeats", ar->repeats, "Timed rounds")->capture_default_str();
  allreduce->add_flag("--deterministic", ar->deterministic, "Rank-order reduction");
  allreduce
      ->add_option("--piece", ar->piece,
                   "With --deterministic: elements per pipelined piece (0: one piece; "
                   "default: mavg's)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  allreduce->add_option("--json", *ar_json, "Also write the measurements to this JSON file");
  allreduce->callback([ar, ar_json] {
    const nlohmann::json r = BenchAllReduce(*ar);
    if (!r.is_null()) Emit(r, *ar_json);  // null: not rank 0
  });
}

}  // namespace mavg::cli
