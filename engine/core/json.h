#pragma once
// JSON text for run files, the database and hashes. nlohmann::json::dump throws on a string
// that is not UTF-8; strings here can hold bytes from outside (Kaldi utterance keys, paths, host
// names), so they are written with each invalid byte replaced by U+FFFD: a run file can always
// be written. Values that must round-trip exactly (configs) are checked for UTF-8 where they
// enter (config/schema.cpp, core/yaml.cpp).

#include <nlohmann/json.hpp>
#include <string>

namespace mavg {

inline std::string DumpJson(const nlohmann::json& value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace mavg
