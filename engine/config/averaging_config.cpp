#include "engine/config/averaging_config.h"

#include "engine/config/config.h"
#include "engine/config/key_builder.h"

namespace mavg {
namespace {

using schema_keys::Binding;
using schema_keys::KeyBuilder;

// Where a key is used (KeyBuilder::UsedWhen).
bool Bmuf(const RunConfig& c) { return c.parallel.algorithm == AveragingAlgorithm::kBmuf; }

}  // namespace

std::vector<Binding> AveragingKeys() {
  return {KeyBuilder("parallel.algorithm", MAVG_FIELD(parallel.algorithm),
                     "average: the model is the workers' mean (Su & Chen); bmuf: block momentum "
                     "over the means (Chen & Huo 2016)")
              .OmittedAt("average")
              .OneWorkerFree(),
          KeyBuilder("parallel.bmuf.block_momentum", MAVG_FIELD(parallel.bmuf.block_momentum),
                     "bmuf: block momentum eta in [0, 1); negative: 1 - 1/N")
              .Min(-1)
              .Max(0.999999)
              .UsedWhen(Bmuf, "parallel.algorithm is bmuf")
              .OneWorkerFree(),
          KeyBuilder("parallel.bmuf.block_lr", MAVG_FIELD(parallel.bmuf.block_lr),
                     "bmuf: block learning rate zeta (the step along the block's mean update)")
              .Min(0, true)
              .Max(1000)
              .UsedWhen(Bmuf, "parallel.algorithm is bmuf")
              .OneWorkerFree(),
          KeyBuilder("parallel.bmuf.nesterov", MAVG_FIELD(parallel.bmuf.nesterov),
                     "bmuf: workers start each block from W_g + eta x Delta (Nesterov); false: "
                     "from W_g (classical block momentum)")
              .UsedWhen(Bmuf, "parallel.algorithm is bmuf")
              .OneWorkerFree()};
}

void CheckAveraging(const RunConfig& config, std::vector<std::string>& problems) {
  const ParallelConfig& par = config.parallel;
  if (par.algorithm == AveragingAlgorithm::kBmuf && par.bmuf.block_momentum >= 1.0) {
    problems.push_back(
        fmt::format("parallel.bmuf.block_momentum: {} must be below 1 (negative: 1 - 1/N)",
                    par.bmuf.block_momentum));
  }
}

}  // namespace mavg
