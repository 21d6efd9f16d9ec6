// A sweep's `resources`: every key parsed and checked where the spec is read, every SLURM
// request written into the generated sbatch script (the launcher's own --dry-run text), and
// options mavg sets itself refused in the `sbatch` passthrough.
#include "engine/sweep/resources.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/core/error.h"
#include "engine/core/yaml.h"
#include "engine/sweep/launcher.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

SweepResources Parse(const std::string& yaml) {
  return ParseResources(LoadYamlStrict(yaml, "spec.yaml"), "spec.yaml");
}

// The one-line error of parsing `yaml`, or "" when it parses.
std::string ErrorOf(const std::string& yaml) {
  try {
    Parse(yaml);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Resources, EveryKeyParsed) {
  const SweepResources r = Parse(
      "time: '1-02:00:00'\nthreads: 2\ngpus_per_worker: 1\nnodes: 3\nmem: 16G\nqos: high\n"
      "constraint: 'a100&ib'\nsbatch: ['--exclusive', '--reservation=paper', '-wnode7']\n");
  EXPECT_EQ(r.time, "1-02:00:00");
  EXPECT_DOUBLE_EQ(r.TimeSeconds(), 86400 + 7200);
  EXPECT_EQ(r.threads, 2);
  EXPECT_EQ(r.gpus_per_worker, 1);
  EXPECT_EQ(r.nodes, 3);
  EXPECT_EQ(r.mem, "16G");
  EXPECT_EQ(r.qos, "high");
  EXPECT_EQ(r.constraint, "a100&ib");
  EXPECT_EQ(r.sbatch, (std::vector<std::string>{"--exclusive", "--reservation=paper", "-wnode7"}));
  EXPECT_EQ(r.ClusterOnlyKeys(), (std::vector<std::string>{"gpus_per_worker", "nodes", "mem", "qos",
                                                           "constraint", "sbatch"}));
  // Unset: nothing for a cluster, GPUs follow the device.
  const SweepResources none = Parse("time: '10:00'\n");
  EXPECT_TRUE(none.ClusterOnlyKeys().empty());
  RunConfig cpu, cuda;
  cuda.device = Device::kCuda;
  EXPECT_EQ(none.GpusFor(cpu), 0);
  EXPECT_EQ(none.GpusFor(cuda), 1);
  EXPECT_EQ(r.GpusFor(cuda), 1);
}

TEST(Resources, BadValuesNameTheKeyAndLine) {
  EXPECT_EQ(ErrorOf("time: '10:00'\nmemory: 4G\n"),
            "spec.yaml: line 2: unknown resource 'memory' (did you mean 'mem'? resources: time, "
            "threads, gpus_per_worker, nodes, mem, qos, constraint, sbatch)");
  EXPECT_EQ(ErrorOf("mem: 8GB\n"),
            "spec.yaml: line 1: resources.mem '8GB' is not a SLURM memory size: an integer with "
            "an optional unit K, M, G or T (e.g. 8G, 512M; no unit: megabytes)");
  EXPECT_EQ(ErrorOf("mem: 8G\nnodes: 0\n"),
            "spec.yaml: line 2: resources.nodes must be an integer >= 1, got '0'");
  EXPECT_EQ(ErrorOf("gpus_per_worker: two\n"),
            "spec.yaml: line 1: resources.gpus_per_worker must be an integer >= 0, got 'two'");
  EXPECT_EQ(ErrorOf("threads: -1\n"),
            "spec.yaml: line 1: resources.threads must be an integer >= 0, got '-1'");
  EXPECT_NE(ErrorOf("time: soon\n").find("line 1: resources.time 'soon' is not a time"),
            std::string::npos);
  EXPECT_NE(ErrorOf("qos: 'a b'\n").find("resources.qos 'a b' is not a QoS name"),
            std::string::npos);
  EXPECT_NE(ErrorOf("constraint: 'a b'\n").find("resources.constraint 'a b' must be"),
            std::string::npos);
  EXPECT_NE(ErrorOf("sbatch: --exclusive\n").find("resources.sbatch is a list"), std::string::npos);
  EXPECT_NE(ErrorOf("sbatch: [exclusive]\n").find("'exclusive' is not an sbatch option"),
            std::string::npos);
  EXPECT_NE(ErrorOf("qos: [a, b]\n").find("resources.qos must be a single value"),
            std::string::npos);
  EXPECT_NE(ErrorOf("[1, 2]\n").find("'resources' must be a mapping"), std::string::npos);
}

TEST(Resources, SbatchRefusesWhatMavgSets) {
  // Exactly, by its short form, and by a prefix sbatch's parser would take for it.
  EXPECT_EQ(ErrorOf("sbatch: ['--exclusive', '--mem=4G']\n"),
            "spec.yaml: line 1: resources.sbatch entry '--mem=4G': mavg sets --mem itself (use "
            "resources.mem)");
  EXPECT_NE(ErrorOf("sbatch: ['-p gpu']\n")
                .find("mavg sets --partition itself (use the "
                      "--partition flag)"),
            std::string::npos);
  EXPECT_NE(ErrorOf("sbatch: ['--partit=gpu']\n").find("mavg sets --partition itself"),
            std::string::npos);
  EXPECT_NE(ErrorOf("sbatch: ['-o', 'x']\n").find("mavg sets --output itself"), std::string::npos);
  EXPECT_NE(ErrorOf("sbatch: ['--array=0-3']\n").find("mavg sets --array itself"),
            std::string::npos);
  EXPECT_NE(ErrorOf("sbatch: ['--time=1:00:00']\n").find("resources.time or the --time flag"),
            std::string::npos);
  // Options that conflict with mavg's (sbatch would refuse the pair, or one would silently
  // win) are refused too; other options of the same families pass.
  EXPECT_NE(ErrorOf("sbatch: ['--mem-per-cpu=2G']\n").find("use resources.mem"), std::string::npos);
  EXPECT_NE(ErrorOf("sbatch: ['--gres=gpu:a100:1']\n").find("resources.gpus_per_worker"),
            std::string::npos);
  EXPECT_NE(ErrorOf("sbatch: ['-G', '2']\n").find("mavg sets --gpus itself"), std::string::npos);
  EXPECT_NE(ErrorOf("sbatch: ['--gpus=2']\n").find("mavg sets --gpus itself"), std::string::npos);
  EXPECT_NE(ErrorOf("sbatch: ['--ntasks-per-node=2']\n").find("resources.nodes"),
            std::string::npos);
  EXPECT_NE(ErrorOf("sbatch: ['--comment=two words']\n").find("holds a blank"), std::string::npos);
  EXPECT_EQ(ErrorOf("sbatch: ['--gres=tmpfs:10G', '--mem-bind=local', '--exclusive']\n"), "");
  // A worker trains on one GPU: more per worker would sit idle.
  EXPECT_NE(ErrorOf("gpus_per_worker: 2\n").find("a worker trains on one GPU"), std::string::npos);
}

TEST(Resources, FitThePoints) {
  RunConfig cpu, cuda, mpi4;
  cuda.device = Device::kCuda;
  mpi4.parallel.mode = ParallelMode::kMpi;
  mpi4.parallel.workers = 4;
  auto error = [](const SweepResources& r, const RunConfig& c) -> std::string {
    try {
      CheckResourcesFit(r, c, "s.yaml point [x=1]");
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  SweepResources gpus;
  gpus.gpus_per_worker = 1;
  EXPECT_EQ(error(gpus, cpu),
            "s.yaml point [x=1]: resources.gpus_per_worker is 1 but the run trains on device cpu "
            "(set device: cuda, or leave gpus_per_worker out)");
  EXPECT_EQ(error(gpus, cuda), "");
  SweepResources no_gpus;
  no_gpus.gpus_per_worker = 0;
  EXPECT_NE(error(no_gpus, cuda).find("gpus_per_worker is 0 but the run trains on device cuda"),
            std::string::npos);
  SweepResources two_nodes;
  two_nodes.nodes = 2;
  EXPECT_NE(error(two_nodes, cpu).find("resources.nodes is 2, but only an MPI run"),
            std::string::npos);
  EXPECT_EQ(error(two_nodes, mpi4), "");
  two_nodes.nodes = 8;
  EXPECT_NE(error(two_nodes, mpi4).find("(this run: mode mpi, 4 worker(s))"), std::string::npos);
}

// The sbatch script `sweep run --launcher slurm --dry-run` prints: one line per request.
std::string Script(const SweepResources& r, RunConfig config = {}) {
  SlurmLauncherOptions o;
  o.sweep = "s";
  o.script_dir = "slurm";
  o.partition = "gpu";
  o.mavg_path = "/bin/mavg";
  LaunchRequest q;
  q.run_id = "0123456789abcdef";
  q.run_dir = "runs/0123456789abcdef";
  q.config_path = q.run_dir + "/sweep-config.yaml";
  q.cache_dir = "cache";
  q.config = config;
  q.mpi = config.parallel.mode == ParallelMode::kMpi;
  q.ranks = q.mpi ? static_cast<int>(config.parallel.workers) : 1;
  q.threads = r.threads > 0 ? r.threads : 1;
  q.timeout_s = r.TimeSeconds();
  q.resources = r;
  std::string all;
  for (const std::string& s : CreateSlurmLauncher(o)->Describe({q})) all += s + "\n";
  return all;
}

TEST(Resources, EveryRequestInTheSbatchScript) {
  RunConfig config;
  config.device = Device::kCuda;
  config.parallel.mode = ParallelMode::kMpi;
  config.parallel.workers = 4;
  const std::string s = Script(
      Parse("time: '02:00:00'\nthreads: 3\ngpus_per_worker: 1\nnodes: 2\nmem: 16G\nqos: high\n"
            "constraint: 'a100&ib'\nsbatch: ['--exclusive', '--reservation=paper']\n"),
      config);
  for (const char* line :
       {"#SBATCH --ntasks=4\n", "#SBATCH --cpus-per-task=3\n", "#SBATCH --nodes=2\n",
        "#SBATCH --gpus-per-task=1\n", "#SBATCH --mem=16G\n", "#SBATCH --time=0-02:00:00\n",
        "#SBATCH --qos=high\n", "#SBATCH --constraint=a100&ib\n", "#SBATCH --exclusive\n",
        "#SBATCH --reservation=paper\n", "#SBATCH --partition=gpu\n",
        "mpirun -np 4 --bind-to none"}) {
    EXPECT_NE(s.find(line), std::string::npos) << "missing " << line << " in\n" << s;
  }
  // The passthrough options come after mavg's, before the first command (sbatch reads no
  // #SBATCH line after it).
  EXPECT_LT(s.find("#SBATCH --reservation=paper"), s.find("\nset -u"));
  // Nothing asked: none of these lines; a CPU run asks no GPU.
  const std::string plain = Script(Parse("time: '10:00'\n"));
  for (const char* opt :
       {"--nodes", "--gpus-per-task", "--mem", "--qos", "--constraint", "--exclusive"}) {
    EXPECT_EQ(plain.find(opt), std::string::npos) << opt << " in\n" << plain;
  }
  // A cuda run without gpus_per_worker gets one GPU per task, as before the key existed.
  RunConfig cuda;
  cuda.device = Device::kCuda;
  EXPECT_NE(Script(Parse("time: '10:00'\n"), cuda).find("#SBATCH --gpus-per-task=1\n"),
            std::string::npos);
}

}  // namespace
}  // namespace mavg
