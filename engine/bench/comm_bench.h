#pragma once
// `mavg bench allreduce` (run under mpirun): AllReduceSum of a parameter-sized buffer against
// this machine's memcpy bandwidth, measured in the same run.

#include <nlohmann/json.hpp>

namespace mavg {

struct AllReduceBenchOptions {
  int64_t floats = 39928422;  // the paper network's parameters (440-6x2048-8806)
  int repeats = 5;
  bool deterministic = false;
  // Elements per pipelined rank-order piece where every rank is on this machine (0: none, the
  // sum is MPI_Allreduce or, deterministic, the rank-order sum in one piece; < 0: mavg's).
  int64_t piece = -1;
};

nlohmann::json BenchAllReduce(const AllReduceBenchOptions& options);

}  // namespace mavg
