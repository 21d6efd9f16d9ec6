#pragma once
// The MPI communicator (OpenMPI). This folder is the only place that includes <mpi.h>; a build
// without MPI compiles mpi_stub.cpp, which says so.

#include <cstdint>
#include <memory>

#include "engine/comm/communicator.h"

namespace mavg {

// True when this process was started by mpirun/srun as one of several ranks (from the
// launcher's environment; does not initialise MPI).
bool LaunchedUnderMpi();

// Initialises MPI (once per process; finalised at exit) and returns the world communicator.
// deterministic: every AllReduceSum adds contributions in rank order (a reduce-scatter by
// rank-owned chunks, then an all-gather) instead of MPI_Allreduce's own order.
// background_sums: ask MPI for MPI_THREAD_MULTIPLE, so that StartAllReduceSum can sum on a
// communication thread (overlapped averaging); otherwise MPI_THREAD_FUNNELED.
// piece: where every rank is on this machine, a sum of more elements goes in rank order in
// pieces of this many, each piece's all-to-all in flight while the one before is added up (the
// same bits as one piece; deterministic or not); 0: never (MPI_Allreduce, or with deterministic
// the rank-order sum in one piece). 1 MiB of floats: the best of 32 Ki to 512 Ki floats on a
// 2-core EPYC, tied with 128 Ki.
inline constexpr int64_t kAllReducePiece = 262144;
std::unique_ptr<Communicator> CreateMpiCommunicator(bool deterministic,
                                                    bool background_sums = false,
                                                    int64_t piece = kAllReducePiece);

}  // namespace mavg
