#pragma once
// The valid name closest to a mistyped one, for "did you mean ...?" in errors (spec keys,
// resources, stored sweeps).

#include <string>
#include <vector>

namespace mavg {

// The entry of `valid` at the smallest edit (Levenshtein) distance from `key`.
std::string Nearest(const std::string& key, const std::vector<std::string>& valid);

}  // namespace mavg
