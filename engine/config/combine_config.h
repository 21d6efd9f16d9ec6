#pragma once
// When the workers combine, as the config says it (parallel.combine.*): the policy's choice, the
// fields of every policy, and (combine_config.cpp) their keys with meaning, range and identity
// rule, and the checks across keys. The policies' behaviour is engine/train/combine_policy.h.
// A new policy is its class there and its lines here: an enum value with its text, its fields,
// its keys (UsedWhen it is chosen, OneWorkerFree) and its checks; nothing else changes (the
// schema, `--set`, validation, the run id, the reference table and `sweep plan` take them from
// CombineKeys and CheckCombine).

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/enum_text.h"

namespace mavg {

struct RunConfig;
namespace schema_keys {
struct Binding;
}

// parallel.combine.policy
enum class CombinePolicyType { kConstant, kPostLocal, kQsr, kList };
inline constexpr EnumText<CombinePolicyType> kCombinePolicyTypeTexts[] = {
    {CombinePolicyType::kConstant, "constant"},
    {CombinePolicyType::kPostLocal, "post_local"},
    {CombinePolicyType::kQsr, "qsr"},
    {CombinePolicyType::kList, "list"}};
MAVG_ENUM_TEXTS(CombinePolicyType, kCombinePolicyTypeTexts)

// K is parallel.average_every.
struct CombineConfig {
  CombinePolicyType policy = CombinePolicyType::kConstant;
  int64_t warmup_steps = 0;   // post_local: every step for the run's first steps, then every K
  int64_t warmup_epochs = 0;  // post_local: ... or for its first epochs
  double qsr_gamma = 0.0;     // qsr: H = max(K, floor((qsr_gamma / lr)^2))
  std::string list;           // list: "STEP:PERIOD, ..." from step 0
};

// The keys parallel.combine.*, in the order of the reference table.
std::vector<schema_keys::Binding> CombineKeys();
// Appends a line for every problem of parallel.combine.* in `config`, its own and how it
// composes with the rest (frames-based averaging, two-level averaging, the run's length).
void CheckCombine(const RunConfig& config, std::vector<std::string>& problems);

}  // namespace mavg

MAVG_ENUM_FORMATTER(mavg::CombinePolicyType);
