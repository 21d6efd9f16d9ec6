#pragma once
// When the workers combine: one policy decides, epoch by epoch, after which of its minibatches
// every worker combines (parallel.combine.*; docs/algorithms.md §1a′). How they combine is the
// schedule's and the filter's business (combine_schedule.h, combine_filter.h). A policy sees
// the run's step (the minibatches per worker of the accepted epochs before this one: the step a
// resumed run continues from) and the epoch's learning rate, and nothing that differs between
// processes, so every process plans the same points. The built-in policies:
//   constant    every K minibatches, or every F frames (parallel.average_frames: Su & Chen's
//               crossing rule, averaging.h); today's, the same points as before policies
//   post_local  post-local SGD (Lin et al. 2020; PyTorch's PeriodicModelAverager): a combine
//               after every step while the run's step s (0-based) is below the warm-up, then
//               when (s - warm-up) is a multiple of K
//   qsr         the Quadratic Synchronization Rule (Gu et al. 2024): a period of
//               H = max(K, floor((gamma / lr)^2)) steps, the lr the epoch's
//   list        a user's schedule "S0:K0, S1:K1, ...": from the run's step Si on, combine once
//               Ki steps have passed since the last combine
// Every epoch ends on a combine: the workers stop after the epoch's last combine point, the
// frames beyond it dropped (counted). To add a policy: its class in combine_policy.cpp and its
// line in CreateCombinePolicy; its config (enum value, fields, keys, checks) in
// config/combine_config.{h,cpp}. Two files; the schema, the run id and the reference take the
// keys from there.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/config/config.h"

namespace mavg {

// What a policy plans an epoch from.
struct EpochCombineInput {
  int64_t epoch = 1;             // 1-based
  int64_t steps_before = 0;      // minibatches per worker in the accepted epochs before it
  double lr = 0.0;               // the schedule's lr for the epoch (before parallel.lr_scaling)
  int64_t minibatch = 0;         // frames per minibatch
  int64_t min_shard_frames = 0;  // the smallest worker's shard
};

// An epoch's combine points.
struct CombinePlan {
  std::vector<int64_t> points;  // the minibatches (1-based, increasing) after which to combine

  bool CombineAfter(int64_t minibatch) const;
  int64_t Combines() const { return static_cast<int64_t>(points.size()); }
  // Minibatches per worker: the epoch ends at its last combine point.
  int64_t Minibatches() const { return points.empty() ? 0 : points.back(); }
};

class CombinePolicy {
 public:
  virtual ~CombinePolicy() = default;
  // The epoch's combine points; throws when not one fits the smallest shard.
  virtual CombinePlan PlanEpoch(const EpochCombineInput& in) const = 0;
  // For the log: "every 10 minibatches", "post-local SGD: every step for 500 steps, then ...".
  virtual std::string Describe() const = 0;
};

// The policy parallel.* asks for (minibatch: optimizer.minibatch).
std::unique_ptr<CombinePolicy> CreateCombinePolicy(const ParallelConfig& parallel,
                                                   int64_t minibatch);

}  // namespace mavg
