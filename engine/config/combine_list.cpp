#include "engine/config/combine_list.h"

#include <fmt/format.h>

#include <stdexcept>

#include "engine/core/error.h"
#include "engine/core/words.h"

namespace mavg {

std::vector<std::pair<int64_t, int64_t>> ParseCombineList(const std::string& text) {
  std::vector<std::pair<int64_t, int64_t>> out;
  const auto bad = [&](const std::string& why) {
    return Error(
        fmt::format("parallel.combine.list: '{}' {} (write 'STEP:PERIOD, ...', the "
                    "steps increasing from 0, e.g. '0:1, 1000:10')",
                    text, why));
  };
  if (text.find_first_not_of(" \t") == std::string::npos) throw bad("is empty");
  for (const std::string& item : SplitTrimmed(text, ',')) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos) throw bad(fmt::format("has '{}', not STEP:PERIOD", item));
    int64_t from = 0, k = 0;
    try {
      size_t used_a = 0, used_b = 0;
      const std::string a = item.substr(0, colon), b = item.substr(colon + 1);
      from = std::stoll(a, &used_a);
      k = std::stoll(b, &used_b);
      if (used_a != a.size() || used_b != b.size()) throw std::invalid_argument("");
    } catch (const std::exception&) {
      throw bad(fmt::format("has '{}', not two integers", item));
    }
    if (out.empty() && from != 0) throw bad("does not start at step 0");
    if (!out.empty() && from <= out.back().first) throw bad("has steps that do not increase");
    if (k < 1) throw bad(fmt::format("has a period of {}", k));
    out.emplace_back(from, k);
  }
  if (out.empty()) throw bad("is empty");
  return out;
}

}  // namespace mavg
