#include "engine/optim/factory.h"

#include "engine/core/error.h"
#include "engine/optim/adam.h"
#include "engine/optim/ngsgd.h"
#include "engine/optim/sgd.h"

namespace mavg {

std::unique_ptr<Optimizer> CreateOptimizer(Backend& backend, const OptimizerConfig& c) {
  if (c.type == OptimizerType::kNgsgd) {
    NgsgdOptions o;
    const auto& n = c.ngsgd;
    o.in = {static_cast<int>(n.rank_in),
            static_cast<int>(n.update_period),
            static_cast<double>(n.num_samples_history),
            n.alpha,
            n.epsilon,
            n.delta,
            n.eta_max,
            n.rank_cap == RankCap::kNnet2};
    o.out = o.in;
    o.out.rank = static_cast<int>(n.rank_out);
    o.max_change_per_sample = c.max_change_per_sample;
    o.max_change_mode = n.max_change_mode;
    o.reset_each_epoch = n.reset_each_epoch;
    return std::make_unique<NgsgdOptimizer>(backend, o);
  }
  if (c.type == OptimizerType::kAdam) {
    return std::make_unique<AdamOptimizer>(
        backend, AdamOptions{c.adam.beta1, c.adam.beta2, c.adam.epsilon, c.adam.weight_decay,
                             c.adam.reset_each_epoch});
  }
  SgdOptions o;
  o.momentum = static_cast<float>(c.momentum);
  o.l2 = static_cast<float>(c.l2);
  if (c.sgd_max_change) {
    o.max_change_per_sample = c.max_change_per_sample;
    o.max_change_with_lr = c.ngsgd.max_change_mode != MaxChangeMode::kFork;
  }
  return std::make_unique<SgdOptimizer>(backend, o);
}

}  // namespace mavg
