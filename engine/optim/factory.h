#pragma once
// The optimizer a config asks for.

#include <memory>

#include "engine/config/config.h"
#include "engine/optim/optimizer.h"

namespace mavg {

std::unique_ptr<Optimizer> CreateOptimizer(Backend& backend, const OptimizerConfig& config);

}  // namespace mavg
