#include "engine/core/nearest.h"

#include <algorithm>
#include <cstdint>

namespace mavg {

std::string Nearest(const std::string& key, const std::vector<std::string>& valid) {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const std::string& v : valid) {
    // Levenshtein distance, small strings.
    std::vector<size_t> prev(v.size() + 1), cur(v.size() + 1);
    for (size_t j = 0; j <= v.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= key.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= v.size(); ++j) {
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (key[i - 1] != v[j - 1])});
      }
      std::swap(prev, cur);
    }
    if (prev[v.size()] < best_d) best_d = prev[v.size()], best = v;
  }
  return best;
}

}  // namespace mavg
