#pragma once
// The outer optimizer, as the config says it (parallel.outer.*): the step a global combine takes
// on the averaged delta (DiLoCo, Douillard et al. 2023: the outer gradient is where the block
// started minus the workers' mean; docs/algorithms.md §1b′). Its choice, its fields, and
// (outer_config.cpp) its keys and checks; the steps themselves are engine/train/combine_filter.h
// and AveragerOptionsFrom (engine/train/averager.cpp) maps the config onto them. A new outer
// optimizer is its filter there and its lines here.

#include <string>
#include <vector>

#include "engine/core/enum_text.h"

namespace mavg {

struct RunConfig;
namespace schema_keys {
struct Binding;
}

// parallel.outer.type
enum class OuterType { kAverage, kNesterov, kMomentum, kAdam };
inline constexpr EnumText<OuterType> kOuterTypeTexts[] = {{OuterType::kAverage, "average"},
                                                          {OuterType::kNesterov, "nesterov"},
                                                          {OuterType::kMomentum, "momentum"},
                                                          {OuterType::kAdam, "adam"}};
MAVG_ENUM_TEXTS(OuterType, kOuterTypeTexts)

struct OuterConfig {
  OuterType type = OuterType::kAverage;  // average: the mean itself (no outer step)
  double lr = 0.7;                       // DiLoCo's outer lr
  double momentum = 0.9;                 // nesterov, momentum: mu; adam: beta1
  double beta2 = 0.999;                  // adam
  double epsilon = 1e-8;                 // adam
};

// The keys parallel.outer.*, in the order of the reference table.
std::vector<schema_keys::Binding> OuterKeys();
// Appends a line for every problem of parallel.outer.* in `config` and how it composes with
// the averaging algorithm.
void CheckOuter(const RunConfig& config, std::vector<std::string>& problems);

}  // namespace mavg

MAVG_ENUM_FORMATTER(mavg::OuterType);
