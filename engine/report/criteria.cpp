#include "engine/report/criteria.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/nearest.h"
#include "engine/core/yaml.h"
#include "engine/report/render.h"

namespace mavg {
namespace {

const std::vector<std::string> kTopKeys = {
    "fixed",    "round",          "metric", "higher_is_better", "level",
    "baseline", "paper_baseline", "margin", "effects"};
const std::vector<std::string> kEffectKeys = {"id",    "table",   "claim", "kind",   "confirmatory",
                                              "sweep", "sweep_b", "where", "a",      "b",
                                              "a2",    "b2",      "paper", "margin", "planned"};
const std::vector<std::string> kPaperKeys = {"swb", "ch", "direction", "a", "b"};
const std::vector<std::string> kBaselineKeys = {"sweep", "where"};

// Collects problems, each "line N: [effect 'ID': ]key 'K': what".
class Problems {
 public:
  void Add(const YAML::Node& at, const std::string& where, const std::string& key,
           const std::string& what) {
    std::string text = fmt::format("line {}: ", at.Mark().line + 1);
    if (!where.empty()) text += where + ": ";
    if (!key.empty()) text += fmt::format("key '{}': ", key);
    list_.push_back(text + what);
  }
  void Throw(const std::string& source) const {
    if (list_.empty()) return;
    if (list_.size() == 1) throw Error(fmt::format("{}: {}", source, list_[0]));
    std::string joined;
    for (size_t i = 0; i < list_.size(); ++i) joined += (i ? "; " : "") + list_[i];
    throw Error(fmt::format("{}: {} problems: {}", source, list_.size(), joined));
  }

 private:
  std::vector<std::string> list_;
};

// The keys of a mapping: unknown ones are problems.
void CheckKeys(const YAML::Node& map, const std::vector<std::string>& valid,
               const std::string& where, const std::string& prefix, Problems& p) {
  for (const auto& item : map) {
    const std::string key = item.first.IsScalar() ? item.first.Scalar() : "?";
    if (std::find(valid.begin(), valid.end(), key) != valid.end()) continue;
    p.Add(item.first, where, prefix + key,
          fmt::format("unknown (did you mean '{}'? keys: {})", Nearest(key, valid),
                      report::Join(valid)));
  }
}

std::optional<double> Number(const YAML::Node& n, const std::string& where, const std::string& key,
                             Problems& p) {
  const nlohmann::json j = n.IsScalar() ? ScalarJson(n) : nlohmann::json();
  if (!j.is_number()) {
    p.Add(n, where, key, "expects a number");
    return std::nullopt;
  }
  return j.get<double>();
}

std::optional<std::string> Text(const YAML::Node& n, const std::string& where,
                                const std::string& key, Problems& p) {
  if (!n.IsScalar() || n.Scalar().empty()) {
    p.Add(n, where, key, "expects a value");
    return std::nullopt;
  }
  return n.Scalar();
}

std::optional<bool> Bool(const YAML::Node& n, const std::string& where, const std::string& key,
                         Problems& p) {
  const nlohmann::json j = n.IsScalar() ? ScalarJson(n) : nlohmann::json();
  if (!j.is_boolean()) {
    p.Add(n, where, key, "expects true or false");
    return std::nullopt;
  }
  return j.get<bool>();
}

// {axis: value, ...}: each value one scalar.
Selection Values(const YAML::Node& n, const std::string& where, const std::string& key,
                 Problems& p) {
  Selection out;
  if (n.IsNull()) return out;
  if (!n.IsMap()) {
    p.Add(n, where, key, "expects a mapping of axis values, e.g. {parallel.workers: 16}");
    return out;
  }
  for (const auto& item : n) {
    const std::string axis = item.first.IsScalar() ? item.first.Scalar() : "?";
    if (!item.second.IsScalar()) {
      p.Add(item.second, where, key + "." + axis, "expects one value");
      continue;
    }
    out.emplace_back(axis, item.second.Scalar());
  }
  return out;
}

bool ValidId(const std::string& id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

EffectCriteria ReadEffect(const YAML::Node& n, size_t index, const Criteria& c, Problems& p) {
  EffectCriteria e;
  e.line = n.Mark().line + 1;
  std::string where = fmt::format("effect {}", index + 1);
  if (!n.IsMap()) {
    p.Add(n, where, "", "expects a mapping (id, claim, kind, ...)");
    return e;
  }
  if (n["id"] && n["id"].IsScalar()) {
    e.id = n["id"].Scalar();
    where = fmt::format("effect '{}'", e.id);
    if (!ValidId(e.id)) p.Add(n["id"], where, "id", "expects lower-case letters, digits and -");
  }
  CheckKeys(n, kEffectKeys, where, "", p);
  for (const char* key : {"id", "claim", "kind", "confirmatory", "sweep", "a", "b"}) {
    if (!n[key]) p.Add(n, where, key, "missing");
  }
  if (n["table"]) e.table = Text(n["table"], where, "table", p).value_or("");
  if (n["claim"]) e.claim = Text(n["claim"], where, "claim", p).value_or("");
  bool kind_known = false;  // what a kind needs is checked only for a known kind
  if (n["kind"]) {
    const std::string kind = n["kind"].IsScalar() ? n["kind"].Scalar() : "";
    if (const std::optional<EffectKind> k = ParseEnum<EffectKind>(kind)) {
      e.kind = *k;
      kind_known = true;
    } else {
      p.Add(n["kind"], where, "kind",
            fmt::format("'{}' is not a kind ({})", kind, EnumNames<EffectKind>(" | ")));
    }
  }
  if (n["confirmatory"]) {
    e.confirmatory = Bool(n["confirmatory"], where, "confirmatory", p).value_or(false);
  }
  if (n["sweep"]) e.sweep = Text(n["sweep"], where, "sweep", p).value_or("");
  if (n["sweep_b"]) e.sweep_b = Text(n["sweep_b"], where, "sweep_b", p).value_or("");
  if (n["where"]) e.where = Values(n["where"], where, "where", p);
  if (n["a"]) e.a = Values(n["a"], where, "a", p);
  if (n["b"]) e.b = Values(n["b"], where, "b", p);
  if (n["a2"]) e.a2 = Values(n["a2"], where, "a2", p);
  if (n["b2"]) e.b2 = Values(n["b2"], where, "b2", p);
  e.interaction = n["a2"] || n["b2"];
  if (n["a2"].IsDefined() != n["b2"].IsDefined()) {
    p.Add(n, where, n["a2"] ? "b2" : "a2", "missing (an interaction needs both a2 and b2)");
  }
  if (e.interaction && e.kind == EffectKind::kCollapses) {
    p.Add(n["a2"] ? n["a2"] : n["b2"], where, "a2",
          "a collapses effect counts two arms; it has no interaction");
  }
  e.paper = nullptr;
  if (const YAML::Node paper = n["paper"]; paper && !paper.IsNull()) {
    if (!paper.IsMap()) {
      p.Add(paper, where, "paper", "expects a mapping ({swb: 0.4, ch: 0.2}) or null");
    } else {
      CheckKeys(paper, kPaperKeys, where, "paper.", p);
      e.paper = nlohmann::json::object();
      for (const auto& item : paper) {
        const std::string key = item.first.IsScalar() ? item.first.Scalar() : "?";
        if (!item.second.IsScalar() && !item.second.IsNull()) {
          p.Add(item.second, where, "paper." + key, "expects one value");
          continue;
        }
        e.paper[key] = ScalarJson(item.second);
      }
      if (paper["swb"] && !paper["swb"].IsNull()) {
        e.paper_swb = Number(paper["swb"], where, "paper.swb", p);
      }
      if (paper["ch"] && !paper["ch"].IsNull()) Number(paper["ch"], where, "paper.ch", p);
      if (paper["direction"]) {
        const std::string d = paper["direction"].IsScalar() ? paper["direction"].Scalar() : "";
        if (const std::optional<CollapseSide> s = ParseEnum<CollapseSide>(d)) {
          e.side = *s;
        } else {
          p.Add(paper["direction"], where, "paper.direction",
                fmt::format("'{}' is not more or less", d));
        }
      }
    }
  }
  if (n["margin"]) {
    e.margin = Number(n["margin"], where, "margin", p);
    if (e.margin && !(*e.margin > 0)) p.Add(n["margin"], where, "margin", "must be positive");
  }
  if (n["planned"]) {
    const nlohmann::json j = n["planned"].IsScalar() ? ScalarJson(n["planned"]) : nlohmann::json();
    if (!j.is_number_integer() || j.get<int64_t>() < 0 || j.get<int64_t>() > 100000) {
      p.Add(n["planned"], where, "planned",
            "expects a whole number of replicates (0: an arm cut from the plan)");
    } else {
      e.planned = static_cast<int>(j.get<int64_t>());
    }
  }
  // What each kind needs.
  if (kind_known) {
    switch (e.kind) {
      case EffectKind::kDirection:
        if (!e.paper_swb || *e.paper_swb == 0) {
          p.Add(n["paper"] ? n["paper"] : n, where, "paper.swb",
                "a direction effect needs the paper's b - a, non-zero (its sign is the claim)");
        }
        break;
      case EffectKind::kBeats:
        break;
      case EffectKind::kSmall:
      case EffectKind::kEquivalent:
        if (!n["margin"] && !c.margin) {
          p.Add(n, where, "margin",
                fmt::format("missing: a {} effect needs a margin (here or the file's)",
                            ToString(e.kind)));
        }
        break;
      case EffectKind::kCollapses:
        if (!n["paper"] || !n["paper"].IsMap() || !n["paper"]["direction"]) {
          p.Add(n["paper"] ? n["paper"] : n, where, "paper.direction",
                "missing: a collapses effect needs the paper's side (more | less: does b "
                "collapse more often than a, or less)");
        }
        break;
    }
  }
  return e;
}

}  // namespace

std::vector<ArmSelection> EffectCriteria::Arms() const {
  auto with_where = [this](const Selection& arm) {
    Selection s = where;
    s.insert(s.end(), arm.begin(), arm.end());
    return s;
  };
  const std::string& other = sweep_b.empty() ? sweep : sweep_b;
  std::vector<ArmSelection> arms = {{sweep, with_where(a)}, {other, with_where(b)}};
  if (interaction) {
    arms.push_back({sweep, with_where(a2)});
    arms.push_back({other, with_where(b2)});
  }
  return arms;
}

std::vector<std::string> EffectCriteria::ArmNames() const {
  if (interaction) return {"a", "b", "a2", "b2"};
  return {"a", "b"};
}

Criteria ParseCriteria(const std::string& text, const std::string& source) {
  return ReadingYaml(source, [&] {
    const YAML::Node root = LoadYamlStrict(text, source);
    MAVG_CHECK(root.IsMap(), "{}: a criteria file is a mapping (fixed, metric, effects, ...)",
               source);
    Criteria c;
    c.path = source;
    Problems p;
    CheckKeys(root, kTopKeys, "", "", p);
    for (const char* key : {"fixed", "metric", "effects"}) {
      if (!root[key]) p.Add(root, "", key, "missing");
    }
    if (root["fixed"]) c.fixed = Text(root["fixed"], "", "fixed", p).value_or("");
    c.round = root["round"] && root["round"].IsScalar() ? ScalarJson(root["round"]) : nullptr;
    if (root["round"] && !root["round"].IsScalar() && !root["round"].IsNull()) {
      p.Add(root["round"], "", "round", "expects one value");
    }
    if (root["metric"]) c.metric = Text(root["metric"], "", "metric", p).value_or("");
    if (root["higher_is_better"]) {
      c.higher_is_better =
          Bool(root["higher_is_better"], "", "higher_is_better", p).value_or(false);
    }
    if (root["level"]) {
      c.level = Number(root["level"], "", "level", p).value_or(0.95);
      if (!(c.level > 0 && c.level < 1)) {
        p.Add(root["level"], "", "level", "must lie between 0 and 1 (0.95)");
        c.level = 0.95;
      }
    }
    if (root["margin"]) {
      c.margin = Number(root["margin"], "", "margin", p);
      if (c.margin && !(*c.margin > 0)) p.Add(root["margin"], "", "margin", "must be positive");
    }
    if (const YAML::Node b = root["baseline"]) {
      if (!b.IsMap()) {
        p.Add(b, "", "baseline", "expects {sweep: NAME, where: {AXIS: VALUE}}");
      } else {
        CheckKeys(b, kBaselineKeys, "", "baseline.", p);
        BaselineCriteria base;
        if (!b["sweep"]) {
          p.Add(b, "", "baseline.sweep", "missing");
        } else {
          base.sweep = Text(b["sweep"], "", "baseline.sweep", p).value_or("");
        }
        if (b["where"]) base.where = Values(b["where"], "", "baseline.where", p);
        c.baseline = base;
      }
    }
    if (root["paper_baseline"]) {
      c.paper_baseline = Number(root["paper_baseline"], "", "paper_baseline", p);
      if (c.paper_baseline && !(*c.paper_baseline > 0)) {
        p.Add(root["paper_baseline"], "", "paper_baseline", "must be positive");
      }
    }
    if (root["baseline"].IsDefined() != root["paper_baseline"].IsDefined()) {
      p.Add(root, "", root["baseline"] ? "paper_baseline" : "baseline",
            "missing: effects scale by baseline / paper_baseline, which needs both");
    }
    if (const YAML::Node effects = root["effects"]) {
      if (!effects.IsSequence()) {
        p.Add(effects, "", "effects", "expects a list of effects");
      } else {
        std::set<std::string> ids;
        for (size_t i = 0; i < effects.size(); ++i) {
          EffectCriteria e = ReadEffect(effects[i], i, c, p);
          if (!e.id.empty() && !ids.insert(e.id).second) {
            p.Add(effects[i]["id"], fmt::format("effect '{}'", e.id), "id",
                  "duplicate (ids are unique)");
          }
          c.effects.push_back(std::move(e));
        }
      }
    }
    p.Throw(source);
    return c;
  });
}

Criteria LoadCriteria(const std::string& path) {
  MAVG_CHECK(PathExists(path), "{}: no such criteria file", path);
  return ParseCriteria(ReadFile(path), path);
}

}  // namespace mavg
