#pragma once
// parallel.combine.list (engine/train/combine_policy.h): "S0:K0, S1:K1, ..." as (step, period)
// pairs, read where the config is checked and where the policy is made.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mavg {

// Checked: steps increasing from 0, periods >= 1, integers; throws one line naming the key.
std::vector<std::pair<int64_t, int64_t>> ParseCombineList(const std::string& text);

}  // namespace mavg
