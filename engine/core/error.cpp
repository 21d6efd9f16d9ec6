#include "engine/core/error.h"

#include <cstring>

namespace mavg::detail {

void Throw(const char* file, int line, std::string message) {
  const char* base = std::strrchr(file, '/');
  throw Error(std::move(message), fmt::format("{}:{}", base ? base + 1 : file, line));
}

}  // namespace mavg::detail
