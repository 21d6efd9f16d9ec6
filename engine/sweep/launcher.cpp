#include "engine/sweep/launcher.h"

namespace mavg {

const JobQueues& KnownJobQueues() {
  static const JobQueues queues = {{SlurmJobQueue().Name(), &SlurmJobQueue()}};
  return queues;
}

}  // namespace mavg
