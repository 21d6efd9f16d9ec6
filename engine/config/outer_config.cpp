#include "engine/config/outer_config.h"

#include "engine/config/config.h"
#include "engine/config/key_builder.h"

namespace mavg {
namespace {

using schema_keys::Binding;
using schema_keys::KeyBuilder;

// Where a key is used (KeyBuilder::UsedWhen).
bool OuterStep(const RunConfig& c) { return c.parallel.outer.type != OuterType::kAverage; }
bool OuterAdam(const RunConfig& c) { return c.parallel.outer.type == OuterType::kAdam; }

}  // namespace

std::vector<Binding> OuterKeys() {
  return {KeyBuilder("parallel.outer.type", MAVG_FIELD(parallel.outer.type),
                     "the outer optimizer a global combine steps with, on the outer gradient "
                     "(the block's start minus the workers' mean): average = take the mean (no "
                     "step); nesterov / momentum = SGD with Nesterov / heavy-ball momentum "
                     "(DiLoCo's outer step; BMUF with eta = momentum, zeta = lr); adam")
              .OmittedAt("average")
              .OneWorkerFree(),
          KeyBuilder("parallel.outer.lr", MAVG_FIELD(parallel.outer.lr),
                     "outer: learning rate of the outer step (DiLoCo: 0.7; 1 with momentum 0 is "
                     "plain averaging)")
              .Min(0, true)
              .Max(1000)
              .UsedWhen(OuterStep, "parallel.outer.type is not average")
              .OneWorkerFree(),
          KeyBuilder("parallel.outer.momentum", MAVG_FIELD(parallel.outer.momentum),
                     "outer: momentum mu of nesterov and momentum, beta1 of adam (DiLoCo: 0.9)")
              .Min(0)
              .Max(0.999999)
              .UsedWhen(OuterStep, "parallel.outer.type is not average")
              .OneWorkerFree(),
          KeyBuilder("parallel.outer.beta2", MAVG_FIELD(parallel.outer.beta2),
                     "outer adam: decay of the second moment")
              .Min(0)
              .Max(0.999999)
              .UsedWhen(OuterAdam, "parallel.outer.type is adam")
              .OneWorkerFree(),
          KeyBuilder("parallel.outer.epsilon", MAVG_FIELD(parallel.outer.epsilon),
                     "outer adam: added to sqrt(v) in the step's denominator")
              .Min(0, true)
              .Max(1)
              .UsedWhen(OuterAdam, "parallel.outer.type is adam")
              .OneWorkerFree()};
}

void CheckOuter(const RunConfig& config, std::vector<std::string>& problems) {
  const ParallelConfig& par = config.parallel;
  if (par.algorithm == AveragingAlgorithm::kBmuf && par.outer.type != OuterType::kAverage) {
    problems.push_back(fmt::format(
        "parallel.outer.type: {} with parallel.algorithm bmuf: BMUF is itself an outer optimizer "
        "(parallel.outer.type nesterov or momentum, lr = block_lr, momentum = block_momentum); "
        "choose one",
        par.outer.type));
  }
}

}  // namespace mavg
