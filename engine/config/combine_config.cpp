#include "engine/config/combine_config.h"

#include "engine/config/combine_list.h"
#include "engine/config/config.h"
#include "engine/config/key_builder.h"
#include "engine/core/error.h"

namespace mavg {
namespace {

using schema_keys::Binding;
using schema_keys::KeyBuilder;

// Where a key is used (KeyBuilder::UsedWhen).
bool CombineIs(const RunConfig& c, CombinePolicyType t) { return c.parallel.combine.policy == t; }
bool PostLocal(const RunConfig& c) { return CombineIs(c, CombinePolicyType::kPostLocal); }
bool Qsr(const RunConfig& c) { return CombineIs(c, CombinePolicyType::kQsr); }
bool CombineList(const RunConfig& c) { return CombineIs(c, CombinePolicyType::kList); }

}  // namespace

std::vector<Binding> CombineKeys() {
  return {
      KeyBuilder("parallel.combine.policy", MAVG_FIELD(parallel.combine.policy),
                 "when the workers combine: constant = every parallel.average_every minibatches "
                 "(or parallel.average_frames frames); post_local = every step during a warm-up, "
                 "then every K (post-local SGD); qsr = every max(K, floor((qsr_gamma / lr)^2)) "
                 "(the Quadratic Synchronization Rule, lr the epoch's); list = a schedule of "
                 "periods by step (parallel.combine.list)")
          .OmittedAt("constant")
          .OneWorkerFree(),
      KeyBuilder("parallel.combine.warmup_steps", MAVG_FIELD(parallel.combine.warmup_steps),
                 "post_local: combine after every step for the run's first this many steps, then "
                 "after step s when (s - warmup_steps) is a multiple of K (PyTorch's "
                 "PeriodicModelAverager)")
          .Min(0)
          .Max(1e12)
          .UsedWhen(PostLocal, "parallel.combine.policy is post_local")
          .OneWorkerFree(),
      KeyBuilder("parallel.combine.warmup_epochs", MAVG_FIELD(parallel.combine.warmup_epochs),
                 "post_local: ... or for the first this many epochs (0: warmup_steps)")
          .Min(0)
          .Max(100000)
          .UsedWhen(PostLocal, "parallel.combine.policy is post_local")
          .OneWorkerFree(),
      KeyBuilder("parallel.combine.qsr_gamma", MAVG_FIELD(parallel.combine.qsr_gamma),
                 "qsr: the growth coefficient gamma of H = max(K, floor((gamma / lr)^2)), lr the "
                 "schedule's for the epoch (before parallel.lr_scaling)")
          .Min(0)
          .Max(1e6)
          .UsedWhen(Qsr, "parallel.combine.policy is qsr")
          .OneWorkerFree(),
      KeyBuilder("parallel.combine.list", MAVG_FIELD(parallel.combine.list),
                 "list: periods by step, 'STEP:PERIOD, ...' from step 0 (e.g. '0:1, 1000:10'): "
                 "from each step on, combine once PERIOD steps have passed since the last "
                 "combine")
          .UsedWhen(CombineList, "parallel.combine.policy is list")
          .OneWorkerFree()};
}

void CheckCombine(const RunConfig& config, std::vector<std::string>& problems) {
  const ParallelConfig& par = config.parallel;
  if (par.combine.policy == CombinePolicyType::kConstant) return;
  const std::string name = fmt::format("parallel.combine.policy: {}", par.combine.policy);
  if (par.average_frames > 0) {
    problems.push_back(name + " counts minibatches, not frames: unset parallel.average_frames");
  }
  if (par.group_size > 0) {
    problems.push_back(name +
                       " with two-level averaging (parallel.group_size): not available "
                       "(a group combine every K and a global one every K2 assume one "
                       "period)");
  }
  const CombineConfig& cc = par.combine;
  if (cc.policy == CombinePolicyType::kPostLocal) {
    if (cc.warmup_steps > 0 && cc.warmup_epochs > 0) {
      problems.push_back(
          "parallel.combine.warmup_steps and warmup_epochs: give one warm-up, not both");
    }
    if (cc.warmup_epochs >= config.schedule.epochs) {
      problems.push_back(fmt::format(
          "parallel.combine.warmup_epochs: {} is not shorter than the run (schedule.epochs {})",
          cc.warmup_epochs, config.schedule.epochs));
    }
  }
  if (cc.policy == CombinePolicyType::kQsr && !(cc.qsr_gamma > 0)) {
    problems.push_back("parallel.combine.qsr_gamma: qsr needs a growth coefficient > 0");
  }
  if (cc.policy == CombinePolicyType::kList) {
    try {
      ParseCombineList(cc.list);
    } catch (const Error& e) {
      problems.push_back(e.what());
    }
  }
}

}  // namespace mavg
