#include "engine/train/averaging.h"

#include "engine/core/error.h"

namespace mavg {

AveragingPlan PlanAveraging(int64_t min_shard_frames, int64_t minibatch,
                            int64_t frames_per_reduce) {
  MAVG_CHECK(minibatch > 0 && frames_per_reduce > 0, "averaging needs positive sizes");
  AveragingPlan p;
  p.minibatch = minibatch;
  p.frames_per_reduce = frames_per_reduce;
  const int64_t full_minibatches = min_shard_frames / minibatch;
  // The R-th crossing happens at minibatch ceil(R F / mb); it must be a full minibatch.
  int64_t r = min_shard_frames / frames_per_reduce;
  while (r > 0 && (r * frames_per_reduce + minibatch - 1) / minibatch > full_minibatches) --r;
  MAVG_CHECK(r > 0,
             "the smallest shard has {} frames: not enough for one averaging every {} frames "
             "(use fewer workers, a smaller minibatch or more frequent averaging)",
             min_shard_frames, frames_per_reduce);
  p.reduces = r;
  p.minibatches = (r * frames_per_reduce + minibatch - 1) / minibatch;
  return p;
}

}  // namespace mavg
