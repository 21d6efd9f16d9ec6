#include "engine/bench/comm_bench.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/bench/train_bench.h"
#include "engine/comm/mpi/mpi_communicator.h"
#include "engine/core/error.h"
#include "engine/core/logging.h"
#include "engine/core/timer.h"

namespace mavg {
nlohmann::json BenchAllReduce(const AllReduceBenchOptions& options) {
  MAVG_CHECK(LaunchedUnderMpi(),
             "bench allreduce runs under mpirun, e.g. mpirun -np 2 mavg "
             "bench allreduce");
  const int64_t piece = options.piece < 0 ? kAllReducePiece : options.piece;
  auto comm = CreateMpiCommunicator(options.deterministic, /*background_sums=*/false, piece);
  SetLogRank(comm->Rank(), comm->WorldSize());
  const size_t n = static_cast<size_t>(options.floats);
  const double bytes = static_cast<double>(n) * sizeof(float);
  std::vector<float> buf(n), src(n, 2.0f), dst(n, 0.0f);
  // The sum first checked against its closed form, element by element (an algorithm that loses
  // or repeats a contribution fails here): rank r holds (r + 1)(i mod 7 + 1), the sum is
  // p(p + 1)/2 (i mod 7 + 1), exact in floats.
  const int rank = comm->Rank(), ranks = comm->WorldSize();
  for (size_t i = 0; i < n; ++i) buf[i] = static_cast<float>((rank + 1) * (i % 7 + 1));
  comm->AllReduceSum(std::span<float>(buf));
  const auto total = static_cast<float>(ranks * (ranks + 1) / 2);
  for (size_t i = 0; i < n; ++i) {
    MAVG_CHECK(buf[i] == total * static_cast<float>(i % 7 + 1),
               "bench allreduce: element {} of the sum is {}, not {} ({} ranks, {})", i, buf[i],
               total * static_cast<float>(i % 7 + 1), ranks, comm->Name());
  }
  std::fill(buf.begin(), buf.end(), 1.0f);
  std::vector<double> allreduce_s, memcpy_s;
  comm->Barrier();
  for (int i = 0; i < options.repeats + 1; ++i) {  // the first round warms up
    Timer t;
    std::memcpy(dst.data(), src.data(), n * sizeof(float));
    const double mc = t.Seconds();
    comm->Barrier();
    t.Reset();
    comm->AllReduceSum(std::span<float>(buf));
    comm->Barrier();
    const double ar = t.Seconds();
    if (i > 0) memcpy_s.push_back(mc), allreduce_s.push_back(ar);
  }
  const int p = ranks;
  const double ar = Median(allreduce_s), mc = Median(memcpy_s);
  // Bus bandwidth: the bytes each rank must move in an optimal all-reduce, 2 (p-1)/p x size.
  const double bus = 2.0 * (p - 1) / p * bytes / ar;
  nlohmann::json r = {{"ranks", p},
                      {"floats", options.floats},
                      {"megabytes", bytes / 1e6},
                      {"communicator", comm->Name()},
                      {"piece", piece},
                      {"allreduce_s_median", ar},
                      {"allreduce_algbw_gb_per_s", bytes / ar / 1e9},
                      {"allreduce_busbw_gb_per_s", bus / 1e9},
                      {"memcpy_gb_per_s", bytes / mc / 1e9},
                      {"busbw_over_memcpy", bus / (bytes / mc)},
                      {"repeats", options.repeats}};
  spdlog::info(
      "[bench] all-reduce of {:.1f} MB over {} ranks ({}): {:.3f}s, {:.2f} GB/s bus "
      "bandwidth; memcpy {:.2f} GB/s; ratio {:.2f}",
      bytes / 1e6, p, comm->Name(), ar, bus / 1e9, bytes / mc / 1e9, bus / (bytes / mc));
  if (comm->Rank() != 0) r = nlohmann::json();
  return r;
}

}  // namespace mavg
