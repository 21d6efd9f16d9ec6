#pragma once
// A communicator over threads of one process: N threads each hold one ThreadGroup member and
// call the same collectives in the same order. Sums are formed in rank order (deterministic).
// Used by tests to check algorithms written above Communicator without MPI.

#include <functional>
#include <memory>
#include <vector>

#include "engine/comm/communicator.h"

namespace mavg {

// Runs fn(comm) on `world_size` threads, each with its own member of one group; rethrows the
// first exception after all threads have finished (a throwing rank aborts the group, so the
// others leave their collectives instead of waiting forever).
void RunThreadGroup(int world_size, const std::function<void(Communicator&)>& fn);

}  // namespace mavg
