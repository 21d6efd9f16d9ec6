#include "engine/sweep/cli_spec.h"

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>

#include "engine/config/schema.h"
#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/core/json.h"
#include "engine/core/words.h"
#include "engine/core/yaml.h"

namespace mavg {
namespace {

std::string Trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

// A value as `mavg train --set` reads it: YAML quoting is taken off ('a b' -> a b). Only a
// quoted value goes through the YAML parser (a long --grid list would spend seconds there).
std::string Unquote(const std::string& value) {
  if (value.empty() || (value[0] != '\'' && value[0] != '"')) return value;
  try {
    const YAML::Node node = YAML::Load(value);
    if (node.IsScalar()) return node.Scalar();
  } catch (const YAML::Exception&) {
  }
  return value;
}

// Checks that `key` is a config key; `option` names the flag in messages.
void CheckKey(const std::string& option, const std::string& key) {
  MAVG_CHECK(FindKey(key) != nullptr, "{}: unknown config key '{}' (did you mean '{}'?)", option,
             key, NearestKey(key));
}

// Checks that `value` fits `key`; `option()` names the flag in messages (made only on an
// error: with a long --grid list, building it per value made the checks quadratic).
template <typename Option>
void CheckValue(const Option& option, const std::string& key, const std::string& value) {
  thread_local RunConfig scratch;  // one for every check
  try {
    SetKey(scratch, key, value);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", option(), e.what()));
  }
}

// A value as the points print it ("1.0" and "1" are the same number); `value` as given when it
// does not fit `key` (the spec's parser says why).
std::string Normalized(const std::string& key, const std::string& value) {
  thread_local RunConfig scratch;
  try {
    SetKey(scratch, key, value);
  } catch (const Error&) {
    return value;
  }
  return DumpJson(KeyJson(scratch, key));
}

std::pair<std::string, std::string> SplitAssignment(const std::string& flag,
                                                    const std::string& text, const char* expected) {
  const size_t eq = text.find('=');
  const std::string key = eq == std::string::npos ? "" : Trim(text.substr(0, eq));
  MAVG_CHECK(!key.empty(), "{} '{}': expected {}", flag, text, expected);
  return {key, text.substr(eq + 1)};
}

struct Parsed {
  std::vector<std::pair<std::string, std::string>> sets;                // sorted by key
  std::vector<std::pair<std::string, std::vector<std::string>>> grids;  // as given
};

Parsed ParseOptions(const SweepOverrides& o) {
  Parsed p;
  for (const std::string& s : o.sets) {
    // Plain variables, not structured bindings: the lambdas below capture them (Clang 14).
    const auto assignment = SplitAssignment("--set", s, "KEY=VALUE");
    const std::string key = assignment.first, value = Unquote(assignment.second);
    CheckKey("--set " + s, key);
    CheckValue([&] { return "--set " + s; }, key, value);
    MAVG_CHECK(
        std::none_of(p.sets.begin(), p.sets.end(), [&](auto& kv) { return kv.first == key; }),
        "--set {}: '{}' is set twice", s, key);
    p.sets.emplace_back(key, value);
  }
  // --set in any order is the same sweep: one key each, so their order means nothing.
  std::sort(p.sets.begin(), p.sets.end());
  for (const std::string& g : o.grids) {
    const auto assignment = SplitAssignment("--grid", g, "KEY=V1,V2,...");
    const std::string key = assignment.first, list = assignment.second;
    CheckKey("--grid " + key, key);
    std::vector<std::string> values;
    size_t start = 0;
    while (true) {
      const size_t comma = list.find(',', start);
      const std::string v = Unquote(Trim(list.substr(start, comma - start)));
      MAVG_CHECK(!v.empty(), "--grid {}: an empty value (values are separated by commas)", key);
      values.push_back(v);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    MAVG_CHECK(
        std::none_of(p.grids.begin(), p.grids.end(), [&](auto& kv) { return kv.first == key; }),
        "--grid {}: '{}' is given twice (give every value in one --grid)", g, key);
    MAVG_CHECK(
        std::none_of(p.sets.begin(), p.sets.end(), [&](auto& kv) { return kv.first == key; }),
        "--grid {}: '{}' is also given to --set (a key is fixed or an axis, not both)", g, key);
    p.grids.emplace_back(key, std::move(values));
  }
  MAVG_CHECK(o.replicates >= 0 && o.replicates <= 1000,
             "--replicates must be between 1 and 1000, got {}", o.replicates);
  if (!o.name.empty()) CheckName("--name", o.name);
  return p;
}

std::string Emit(const YAML::Node& node) {
  YAML::Emitter out;
  out << node;
  MAVG_CHECK(out.good(), "writing the sweep spec as YAML failed: {}", out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

bool Has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

std::string GeneratedSpecPath(const std::string& results, const std::string& name) {
  return results + "/sweeps/" + name + ".yaml";
}

SweepSpec ResolveSweepSpec(const std::string& spec_path, const SweepOverrides& o) {
  MAVG_CHECK(spec_path.empty() || o.base.empty(),
             "give a sweep spec or --base CONFIG, not both (--set and --grid apply to either)");
  MAVG_CHECK(!spec_path.empty() || !o.base.empty(),
             "a sweep needs a spec file or --base CONFIG (with --grid KEY=V1,V2 and --set "
             "KEY=VALUE)");
  if (!spec_path.empty() && !o.Any()) return LoadSweepSpec(spec_path);
  const Parsed p = ParseOptions(o);

  // The body of the spec: the file's (checked first, so its own errors name its lines), or
  // one made from --base. Its `base` is the path the config was found at, relative to the
  // working directory like a spec's own, so the written spec works from where it was made.
  YAML::Node root(YAML::NodeType::Map);
  std::string stem, source;
  std::vector<std::string> axes, zipped;
  // The size of the sweep from the lengths alone (the spec's axes, which --grid replaces, and
  // the command line's), before a value of a long list is checked; the spec's own size does not
  // count, as --grid and --replicates may narrow it.
  const auto check_size = [&](const SpecSize& spec) {
    std::vector<size_t> dims;
    for (const auto& axis : spec.grid) {  // (no structured bindings in lambdas: Clang 14)
      if (std::none_of(p.grids.begin(), p.grids.end(),
                       [&](auto& g) { return g.first == axis.first; })) {
        dims.push_back(axis.second);
      }
    }
    for (const auto& g : p.grids) dims.push_back(g.second.size());
    dims.insert(dims.end(), spec.zips.begin(), spec.zips.end());
    CheckRunCount(source, dims, o.replicates > 0 ? o.replicates : spec.replicates, spec.includes,
                  spec.max_runs);
  };
  if (!spec_path.empty()) {
    source = spec_path + " + command line";
    MAVG_CHECK(PathExists(spec_path), "{}: sweep spec not found", spec_path);
    SpecSize scanned = ScanSpecSize(ReadFile(spec_path));
    if (scanned.known) check_size(scanned);  // before the spec is read as a tree
    const SweepSpec file = LoadSweepSpec(spec_path, SizeCheck::kCaller);
    if (!scanned.known) {  // sized from the spec as read
      scanned.known = true;
      for (const auto& axis : file.grid) scanned.grid.emplace_back(axis.first, axis.second.size());
      for (const auto& g : file.zips) scanned.zips.push_back(g[0].second.size());
      scanned.includes = file.includes.size();
      scanned.replicates = file.replicates;
      scanned.max_runs = file.max_runs;
      check_size(scanned);
    }
    root = LoadYamlStrict(file.yaml, spec_path);
    stem = file.name;
    axes = file.axes;
    for (const auto& g : file.zips) {
      for (const auto& [key, values] : g) zipped.push_back(key);
    }
    root["base"] = file.base_path;
  } else {
    LoadConfigFile(o.base);  // exists and is valid, or one line naming it
    stem = std::filesystem::path(o.base).stem().string();
    source = "command line";
    root["base"] = std::filesystem::path(o.base).lexically_normal().string();
    check_size(SpecSize{});
  }
  for (const auto& axis : p.grids) {
    for (const std::string& v : axis.second) {
      CheckValue([&] { return fmt::format("--grid {}={}", axis.first, v); }, axis.first, v);
    }
  }

  YAML::Node body(YAML::NodeType::Map);
  body["base"] = root["base"];
  for (const auto& item : root) {
    const std::string key = item.first.as<std::string>();
    if (key != "name" && key != "base") body[key] = item.second;
  }
  for (const auto& [key, value] : p.sets) {
    MAVG_CHECK(!Has(axes, key),
               "--set {}={}: '{}' is an axis of {}; narrow it with --grid {}={} instead", key,
               value, key, spec_path, key, value);
    body["set"][key] = value;
  }
  for (const auto& [key, values] : p.grids) {
    MAVG_CHECK(!Has(zipped, key), "--grid {}: '{}' is a zipped axis of {}; change it in the spec",
               key, key, spec_path);
    const YAML::Node& read = body;  // a non-const operator[] would add the key
    if (read["set"] && read["set"][key]) body["set"].remove(key);  // the axis replaces it
    YAML::Node list(YAML::NodeType::Sequence);
    list.SetStyle(YAML::EmitterStyle::Flow);
    for (const std::string& v : values) list.push_back(v);
    body["grid"][key] = list;  // an axis of the spec keeps its place with the new values
  }
  // An exclude entry naming a value that --grid took out of its axis cannot match a point any
  // more: it goes with the value, instead of being reported as a typo.
  const YAML::Node& read = body;
  if (!p.grids.empty() && read["exclude"] && read["exclude"].IsSequence()) {
    YAML::Node kept(YAML::NodeType::Sequence);
    for (const auto& entry : read["exclude"]) {
      bool can_match = true;
      if (entry.IsMap()) {
        for (const auto& kv : entry) {
          const std::string key = kv.first.as<std::string>();
          const auto g = std::find_if(p.grids.begin(), p.grids.end(),
                                      [&](const auto& grid) { return grid.first == key; });
          if (g == p.grids.end() || !kv.second.IsScalar()) continue;
          const std::string v = Normalized(key, kv.second.Scalar());
          can_match = can_match &&
                      std::any_of(g->second.begin(), g->second.end(),
                                  [&](const std::string& x) { return Normalized(key, x) == v; });
        }
      }
      if (can_match) kept.push_back(entry);
    }
    if (kept.size() == 0) {
      body.remove("exclude");
    } else {
      body["exclude"] = kept;
    }
  }
  if (o.replicates > 0) body["replicates"] = o.replicates;
  // Likewise a contrast whose arm --grid (or --replicates 1) took out cannot be answered by the
  // narrowed sweep, and a stop_early it leaves one arm or one replicate cannot be used: they go,
  // said in the log, instead of refusing the narrowing. The narrowed points without either.
  const bool narrowing = !p.grids.empty() || o.replicates > 0;
  if (narrowing && (read["compare"] || read["stop_early"])) {
    YAML::Node probe = YAML::Clone(body);
    probe.remove("compare");
    probe.remove("stop_early");
    probe["name"] = "probe";
    const SweepSpec narrowed = ParseSweepSpec(Emit(probe), source, "");
    const std::vector<SweepPoint> points = ExpandSweep(narrowed);
    if (read["compare"]) {
      for (const Contrast& c : ParseContrasts(read["compare"], source)) {
        const std::string problem = ContrastProblem(c, points, narrowed.replicates);
        if (problem.empty()) continue;
        spdlog::info("[sweep] contrast {} left out of the narrowed sweep: {}", c.name, problem);
        body["compare"].remove(c.name);
      }
      if (read["compare"].size() == 0) body.remove("compare");
    }
    if (read["stop_early"]) {
      try {
        CheckStopEarly(ParseStopEarly(read["stop_early"], source), narrowed.axes,
                       narrowed.replicates, points, source);
      } catch (const Error& e) {
        spdlog::info("[sweep] stop_early left out of the narrowed sweep: {}", e.what());
        body.remove("stop_early");
      }
    }
  }

  const std::string text = Emit(body);
  // A generated name follows the name rule whatever the file is called: other characters
  // become '_', and the stem is cut to leave room for the hash.
  for (char& c : stem) {
    if (!NameProblem(std::string(1, c)).empty() && c != '.' && c != '-' && c != '+') c = '_';
  }
  if (stem.empty() || !NameProblem(stem.substr(0, 1)).empty()) stem = "sweep" + stem;
  stem = stem.substr(0, kMaxNameLength - 9);
  const std::string name =
      !o.name.empty() ? o.name : fmt::format("{}-{}", stem, Sha256Hex(text).substr(0, 8));
  YAML::Node named(YAML::NodeType::Map);
  named["name"] = name;
  for (const auto& item : body) named[item.first] = item.second;
  SweepSpec spec = ParseSweepSpec(Emit(named), source, "");
  spec.generated = true;
  return spec;
}

}  // namespace mavg
