#pragma once
// The config schema: one entry per dotted key ("schedule.lr"), with its type, default, allowed
// values and meaning. Loading, `--set`, validation, `--dump-config`, the canonical JSON behind a
// run id and the README's reference table all come from this one table.

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "engine/config/config.h"

namespace YAML {
class Node;
}

namespace mavg {

enum class ValueType { kInt, kFloat, kString, kBool };

struct KeySpec {
  std::string path;  // dotted key, e.g. "schedule.lr"
  ValueType type = ValueType::kString;
  std::vector<std::string> choices;  // a choice (an enum of config/choices.h): its texts
  double min = 0.0;                  // numeric range (when has_min / has_max)
  double max = 0.0;
  bool has_min = false;
  bool has_max = false;
  bool min_exclusive = false;
  bool identity = true;  // part of the run identity (false: execution-only knobs)
  // When the key enters the run identity, in words: "always", "never", "when <it is used>",
  // "unless <the value runs had before the key existed>" (declared with the key in schema.cpp).
  std::string identity_rule = "always";
  std::string doc;  // one-line meaning for the reference
};

const std::vector<KeySpec>& ConfigKeys();
// The spec of a key, or nullptr.
const KeySpec* FindKey(const std::string& path);
// The valid key closest to `path` (edit distance), for "did you mean" messages.
std::string NearestKey(const std::string& path);

// Reads a YAML file over the defaults. Throws one line naming the file and every problem
// (garbled YAML with its line, unknown keys with the nearest valid one, wrong types).
RunConfig LoadConfigFile(const std::string& path);
// Parses YAML text (source names it in messages) over `base`.
RunConfig ParseConfigYaml(const std::string& text, const std::string& source,
                          const RunConfig& base = {});
// Applies "key=value" (value parsed as a YAML scalar). Throws naming the key.
void ApplyOverride(RunConfig& config, const std::string& assignment);
// Sets one key from a string value; throws naming the key on an unknown key or bad value.
void SetKey(RunConfig& config, const std::string& path, const std::string& value);
// Why a YAML value cannot be the value of `path` although its text could: a quoted scalar
// ('8', "true") for a number or boolean key (YAML makes it a string; unquoted text such as
// `ten` is refused by SetKey). "" when it can, or when `path` is no key.
std::string QuotedValueProblem(const std::string& path, const YAML::Node& value);

// Checks ranges, allowed values and cross-key rules; throws one line listing every problem,
// prefixed by where its value came from: `source` (e.g. the config file), or, for a problem
// that names a key one of `sets` ("KEY=VALUE" as given to --set and applied over the file)
// assigned, that --set.
void Validate(const RunConfig& config, const std::string& source,
              const std::vector<std::string>& sets = {});

// One key's value as ToJson writes it.
nlohmann::json KeyJson(const RunConfig& config, const std::string& path);
// The resolved config as nested JSON (every key) / YAML text.
nlohmann::json ToJson(const RunConfig& config);
std::string ToYaml(const RunConfig& config);
// Rebuilds a config from (possibly partial) nested JSON such as ToJson or CanonicalJson wrote;
// keys not present keep their defaults.
RunConfig ConfigFromJson(const nlohmann::json& json, const std::string& source);
// Canonical JSON of the keys that define the experiment, sorted: each key as its declaration
// says (KeySpec::identity_rule: always; never, for execution knobs such as threads, which must
// never change a run's bits; only where the config uses it; left out at the value runs had
// before the key existed, so that adding a key keeps every existing run id). The ids of the
// shipped configs and sweeps and of the archived runs are pinned by a test.
std::string CanonicalJson(const RunConfig& config);
// The same, but with one worker also without the keys that change nothing for one worker (the
// averaging settings): runs with equal keys train the same model though their ids differ
// (`sweep plan` groups them).
std::string TrainingKey(const RunConfig& config);

// model.init_scheme with auto replaced by the scheme that fits model.activation.
InitScheme ResolvedInitScheme(const ModelConfig& model);
// First 16 hex digits of SHA-256 over CanonicalJson.
std::string RunId(const RunConfig& config);

// A config as a run is made of it: checked and identified once, where it is read. Code after
// takes this and never validates or hashes the config again.
struct ResolvedRun {
  RunConfig config;
  std::string run_id;  // RunId(config)
};
// Validate(config, source, sets), then the run id; throws as Validate does.
ResolvedRun ResolveRun(RunConfig config, const std::string& source,
                       const std::vector<std::string>& sets = {});

// The identity keys of `config` and the keys left out of its identity, each with the rule
// that left it out, for `mavg config check`.
struct IdentitySummary {
  std::vector<std::string> in;                                // keys in the run id
  std::vector<std::pair<std::string, std::string>> left_out;  // (key, rule)
};
IdentitySummary SummarizeIdentity(const RunConfig& config);

// Markdown table of every key: key | type | default | run id | meaning.
std::string ConfigReferenceMarkdown();

}  // namespace mavg
