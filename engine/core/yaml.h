#pragma once
// YAML parsing for every file mavg reads (run configs, sweep specs): yaml-cpp, made strict.
// Syntax errors name the file, line and column; a key given twice in one mapping (at any
// depth) is an error naming both places, where yaml-cpp would silently keep one.

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <string>

namespace mavg {

// A scalar as JSON: null, a boolean, a number, or text (a quoted scalar stays text: "8" is not
// a number).
nlohmann::json ScalarJson(const YAML::Node& n);

// The finite number `n` gives, unquoted; else throws "<what>: expects a number, not '<text>'".
double RequireNumber(const YAML::Node& n, const std::string& what);

// Parses `text` (from `source`, for messages); throws mavg::Error on invalid YAML or a
// duplicate key.
YAML::Node LoadYamlStrict(const std::string& text, const std::string& source);

// Calls `read`, which reads YAML nodes of `source`: a yaml-cpp exception it lets escape (a node
// of the wrong kind converted, as a fuzzer found: `name: [a]` read as a string) becomes
// mavg::Error "source:line:column: message". Every reader of a YAML file runs inside one.
[[noreturn]] void ThrowYamlError(const std::string& source, const YAML::Exception& e);
template <class Read>
auto ReadingYaml(const std::string& source, Read&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const YAML::Exception& e) {
    ThrowYamlError(source, e);
  }
}

}  // namespace mavg
