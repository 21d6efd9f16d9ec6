#pragma once
// The MPI communicator (OpenMPI). This folder is the only place that includes <mpi.h>; a build
// without MPI compiles mpi_stub.cpp, which says so.

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
std::unique_ptr<Communicator> CreateMpiCommunicator(bool deterministic,
                                                    bool background_sums = false);

}  // namespace mavg
