#pragma once
// YAML parsing for every file mavg reads (run configs, sweep specs): yaml-cpp, made strict.
// Syntax errors name the file, line and column; a key given twice in one mapping (at any
// depth) is an error naming both places, where yaml-cpp would silently keep one.

#include <yaml-cpp/yaml.h>

#include <string>

namespace mavg {

// Parses `text` (from `source`, for messages); throws mavg::Error on invalid YAML or a
// duplicate key.
YAML::Node LoadYamlStrict(const std::string& text, const std::string& source);

}  // namespace mavg
