// Build without MPI (MAVG_WITH_MPI=OFF): the entry points exist and say why they cannot work.
#include <cstdlib>

#include "engine/comm/mpi/mpi_communicator.h"
#include "engine/core/error.h"

namespace mavg {

bool LaunchedUnderMpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
}

std::unique_ptr<Communicator> CreateMpiCommunicator(bool /*deterministic*/,
                                                    bool /*background_sums*/, int64_t /*piece*/) {
  MAVG_FAIL("parallel.mode 'mpi' requested but mavg was built without MPI (MAVG_WITH_MPI=OFF)");
}

}  // namespace mavg
