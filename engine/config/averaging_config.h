#pragma once
// What a global combine makes of the workers' mean, as the config says it (parallel.algorithm,
// parallel.bmuf.*): plain averaging (Su & Chen) or block momentum (BMUF, Chen & Huo 2016;
// docs/algorithms.md §1b). Its choice, its fields, and (averaging_config.cpp) its keys and
// checks; the filters themselves are engine/train/combine_filter.h, and AveragerOptionsFrom
// (engine/train/averager.cpp) maps the config onto them. When the workers combine is
// combine_config.h's, an outer optimizer outer_config.h's.

#include <string>
#include <vector>

#include "engine/core/enum_text.h"

namespace mavg {

struct RunConfig;
namespace schema_keys {
struct Binding;
}

// parallel.algorithm
enum class AveragingAlgorithm { kAverage, kBmuf };
inline constexpr EnumText<AveragingAlgorithm> kAveragingAlgorithmTexts[] = {
    {AveragingAlgorithm::kAverage, "average"}, {AveragingAlgorithm::kBmuf, "bmuf"}};
MAVG_ENUM_TEXTS(AveragingAlgorithm, kAveragingAlgorithmTexts)

// parallel.bmuf.*
struct BmufConfig {
  double block_momentum = -1.0;  // eta; < 0: 1 - 1/N
  double block_lr = 1.0;         // zeta
  bool nesterov = true;          // workers start each block from W_g + eta * Delta
};

// The keys parallel.algorithm and parallel.bmuf.*, in the order of the reference table.
std::vector<schema_keys::Binding> AveragingKeys();
// Appends a line for every problem of parallel.algorithm and parallel.bmuf.* in `config`.
void CheckAveraging(const RunConfig& config, std::vector<std::string>& problems);

}  // namespace mavg

MAVG_ENUM_FORMATTER(mavg::AveragingAlgorithm);
