#pragma once
// A sweep's `resources`: what every run of it asks for. `time` and `threads` apply to every
// launcher; the others are requests to SLURM, written into the sbatch script of each job array:
//   resources:
//     time: "02:00:00"        # --time, and the local launcher's timeout (SLURM formats)
//     threads: 2              # CPU threads per process (--cpus-per-task)
//     gpus_per_worker: 1      # --gpus-per-task (default: 1 for device cuda runs, else none)
//     nodes: 2                # --nodes: MPI ranks spread over this many nodes
//     mem: 16G                # --mem, per node (SLURM's units: K, M, G, T; none: megabytes)
//     qos: high               # --qos
//     constraint: "a100&ib"   # --constraint (node features)
//     sbatch: ["--exclusive", "--reservation=paper"]   # any other sbatch options, verbatim
// Every key is checked when the spec is loaded; an option mavg sets itself is refused in
// `sbatch` with the key or flag to use instead, so nothing is silently overridden.

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "engine/config/config.h"

namespace mavg {

struct SweepResources {
  std::string time;          // wall-clock limit per run, "HH:MM:SS" or "MM:SS" (empty: none)
  int threads = 0;           // CPU threads per process (0: the launcher divides the cores)
  int gpus_per_worker = -1;  // GPUs per MPI rank or process; -1: 1 for device cuda, else 0
  int nodes = 0;             // nodes per run (0: unset, SLURM decides; > 1: MPI runs only)
  std::string mem;           // memory per node in SLURM's format (empty: the cluster's default)
  std::string qos;
  std::string constraint;
  std::vector<std::string> sbatch;  // extra sbatch options, one per #SBATCH line

  double TimeSeconds() const;  // 0 when unset
  // GPUs per task for a run with this config.
  int GpusFor(const RunConfig& config) const;
  // The keys given that only a cluster launcher applies (mem, nodes, ...), for the local
  // launcher's warning.
  std::vector<std::string> ClusterOnlyKeys() const;
};

// The resource keys a spec accepts, in the order above.
const std::vector<std::string>& ResourceKeys();

// Parses a spec's `resources` mapping read from `source`; throws one line naming the source,
// the line and the key.
SweepResources ParseResources(const YAML::Node& node, const std::string& source);

// Throws when the resources cannot serve a run with this config (GPUs for a CPU run, several
// nodes for a run that is not MPI ...); `where` names the point.
void CheckResourcesFit(const SweepResources& resources, const RunConfig& config,
                       const std::string& where);

}  // namespace mavg
