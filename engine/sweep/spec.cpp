#include "engine/sweep/spec.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>
#include <sstream>
#include <unordered_set>

#include "engine/config/schema.h"
#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/json.h"
#include "engine/core/logging.h"
#include "engine/core/nearest.h"
#include "engine/core/rng.h"
#include "engine/core/words.h"
#include "engine/core/yaml.h"

namespace mavg {
namespace {

const std::vector<std::string> kSpecKeys = {
    "name",    "description", "base",       "set",       "grid",     "zip",
    "exclude", "include",     "replicates", "resources", "max_runs", "replicate_pretraining",
    "compare", "stop_early"};

AxisValues ParseAxes(const YAML::Node& map, const std::string& what, const std::string& file) {
  MAVG_CHECK(map.IsMap(), "{}: line {}: '{}' must map axis keys to lists of values", file,
             map.Mark().line + 1, what);
  AxisValues out;
  for (const auto& item : map) {
    const std::string key = item.first.as<std::string>();
    const YAML::Node& list = item.second;
    const int line = list.Mark().line + 1;
    MAVG_CHECK(list.IsSequence(), "{}: line {}: {} axis '{}' needs a list of values", file, line,
               what, key);
    MAVG_CHECK(list.size() > 0, "{}: line {}: {} axis '{}' has an empty list of values", file, line,
               what, key);
    std::vector<std::string> values;
    for (const auto& v : list) {
      const std::string text = SpecScalarText(v, key, what + " value of '" + key + "'", file);
      CheckSpecValue(file, v.Mark().line + 1, key, text);
      values.push_back(text);
    }
    out.emplace_back(key, std::move(values));
  }
  return out;
}

Assignment ParseAssignment(const YAML::Node& map, const std::string& what,
                           const std::string& file) {
  MAVG_CHECK(map.IsMap(), "{}: line {}: each '{}' entry must map keys to single values", file,
             map.Mark().line + 1, what);
  Assignment out;
  for (const auto& item : map) {
    const std::string key = item.first.as<std::string>();
    const std::string value =
        SpecScalarText(item.second, key, what + " value of '" + key + "'", file);
    CheckSpecValue(file, item.second.Mark().line + 1, key, value);
    out.emplace_back(key, value);
  }
  return out;
}

std::string ResolveBase(const std::string& base, const std::string& dir) {
  namespace fs = std::filesystem;
  if (fs::path(base).is_absolute() || PathExists(base)) return base;
  const fs::path beside = fs::path(dir) / base;
  if (PathExists(beside.string())) return beside.string();
  return base;  // LoadConfigFile reports it as not found
}

std::string JsonPointerText(const nlohmann::json& config, const std::string& key) {
  std::string p = "/" + key;
  std::replace(p.begin(), p.end(), '.', '/');
  const nlohmann::json& v = config[nlohmann::json::json_pointer(p)];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());
  return DumpJson(v);
}

}  // namespace

// The text of an axis or assignment value of config key `key`; throws for a list, a map, or a
// quoted number or boolean.
std::string SpecScalarText(const YAML::Node& n, const std::string& key, const std::string& where,
                           const std::string& file) {
  MAVG_CHECK(n.IsScalar() || n.IsNull(), "{}: line {}: {} must be a single value", file,
             n.Mark().line + 1, where);
  const std::string quoted = QuotedValueProblem(key, n);
  MAVG_CHECK(quoted.empty(), "{}: line {}: {}", file, n.Mark().line + 1, quoted);
  return n.IsNull() ? "" : n.Scalar();
}

// Checks that `key` is a config key and `value` fits it (type); returns the value as the
// config would print it.
std::string CheckSpecValue(const std::string& file, int line, const std::string& key,
                           const std::string& value) {
  MAVG_CHECK(FindKey(key) != nullptr, "{}: line {}: unknown axis '{}' (did you mean '{}'?)", file,
             line, key, NearestKey(key));
  // One config for every check (a fresh one, and a whole config written out, per value made a
  // long axis cost seconds).
  thread_local RunConfig scratch;
  try {
    SetKey(scratch, key, value);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: line {}: {}", file, line, e.what()));
  }
  return DumpJson(KeyJson(scratch, key));
}

int64_t ReplicateSeed(int64_t base_seed, int replicate) {
  if (replicate == 0) return base_seed;
  return static_cast<int64_t>(
      DeriveSeed(static_cast<uint64_t>(base_seed), {0x5eed, static_cast<uint64_t>(replicate)}) %
      1000000007ULL);
}

namespace {
// The size of a spec read from yaml-cpp's parse events without building a node tree: a spec
// with an axis of a million values takes seconds and most of a gigabyte to load as nodes, and
// is refused from this pass alone.
class SizeScanner final : public YAML::EventHandler {
 public:
  SpecSize size;

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override { Node(); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { Node(); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string& value) override {
    Frame* parent = Parent();
    if (parent != nullptr && parent->map && parent->expect_key) {
      parent->key = value;
      parent->expect_key = false;
      return;
    }
    if (parent != nullptr && parent->role == Role::kRoot) {
      if (parent->key == "replicates") Number(value, &size.replicates);
      if (parent->key == "max_runs") Number(value, &size.max_runs);
    }
    if (parent != nullptr && parent->role == Role::kGrid) size.grid.emplace_back(parent->key, 1);
    Node();
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    const Role role = ChildRole();
    const std::string key = Parent() != nullptr ? Parent()->key : "";
    Node();
    stack_.push_back(Frame{false, false, key, 0, role});
  }
  void OnSequenceEnd() override {
    const Frame f = stack_.back();
    stack_.pop_back();
    if (f.role == Role::kGridAxis) size.grid.emplace_back(f.key, f.items);
    if (f.role == Role::kZipAxis) size.zips.push_back(f.items);
    if (f.role == Role::kInclude) size.includes = f.items;
  }
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    const Role role = stack_.empty() ? Role::kRoot : ChildRole();
    Node();
    stack_.push_back(Frame{true, true, "", 0, role});
  }
  void OnMapEnd() override { stack_.pop_back(); }

 private:
  enum class Role { kOther, kRoot, kGrid, kZip, kZipGroup, kGridAxis, kZipAxis, kInclude };
  struct Frame {
    bool map = false;
    bool expect_key = true;  // maps: the next node is a key
    std::string key;         // maps: the key of the value being read; sequences: their own
    size_t items = 0;        // sequences: nodes so far; maps: values so far
    Role role = Role::kOther;
  };
  Frame* Parent() { return stack_.empty() ? nullptr : &stack_.back(); }
  // The role of a container starting as the next node of its parent.
  Role ChildRole() {
    const Frame* p = Parent();
    if (p == nullptr) return Role::kOther;
    if (p->role == Role::kRoot && p->map && !p->expect_key) {
      if (p->key == "grid") return Role::kGrid;
      if (p->key == "zip") return Role::kZip;
      if (p->key == "include") return Role::kInclude;
    }
    if (p->role == Role::kGrid && !p->expect_key) return Role::kGridAxis;
    if (p->role == Role::kZip) return Role::kZipGroup;
    // A zip group's lengths are equal (checked later): its first axis stands for it.
    if (p->role == Role::kZipGroup && !p->expect_key && p->items == 0) return Role::kZipAxis;
    return Role::kOther;
  }
  // A node (scalar, container, null, alias) read as the parent's next item or value.
  void Node() {
    Frame* p = Parent();
    if (p == nullptr) return;
    if (p->map) {
      if (p->expect_key) {  // a non-scalar key: not a spec this pass can size
        p->expect_key = false;
        size.known = false;
        return;
      }
      p->expect_key = true;
      ++p->items;
    } else {
      ++p->items;
    }
  }
  // A count in plain decimal, as the full load reads it; anything else (+20, 0x14, 2e3, a
  // word) leaves the size unknown, for the full load to read or refuse.
  template <typename T>
  void Number(const std::string& text, T* out) {
    T v{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc() && end == text.data() + text.size() && v >= 1) {
      *out = v;
    } else {
      size.known = false;
    }
  }

  std::vector<Frame> stack_;
};

}  // namespace

std::vector<size_t> SpecSize::Dims() const {
  std::vector<size_t> dims;
  for (const auto& axis : grid) dims.push_back(axis.second);
  dims.insert(dims.end(), zips.begin(), zips.end());
  return dims;
}

SpecSize ScanSpecSize(const std::string& text) {
  SizeScanner scanner;
  scanner.size.known = true;
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    if (!parser.HandleNextDocument(scanner)) scanner.size.known = false;
  } catch (const YAML::Exception&) {
    scanner.size.known = false;
  }
  if (!scanner.size.known) return SpecSize{};
  return scanner.size;
}

namespace {

SweepSpec ReadSweepSpec(const std::string& text, const std::string& path, const std::string& dir,
                        SizeCheck check) {
  if (check == SizeCheck::kSpec) {
    // Refuse an oversized sweep before the spec becomes a tree (a spec this pass cannot size is
    // left to the full parse below, which names its line).
    if (const SpecSize size = ScanSpecSize(text); size.known) {
      CheckRunCount(path, size.Dims(), size.replicates, size.includes, size.max_runs);
    }
  }
  const YAML::Node root = LoadYamlStrict(text, path);
  MAVG_CHECK(root.IsMap(), "{}: a sweep spec is a mapping (name, base, grid, ...)", path);
  SweepSpec spec;
  spec.path = path;
  spec.yaml = text;
  for (const auto& item : root) {
    const std::string key = item.first.as<std::string>();
    MAVG_CHECK(std::find(kSpecKeys.begin(), kSpecKeys.end(), key) != kSpecKeys.end(),
               "{}: line {}: unknown sweep key '{}' (did you mean '{}'?)", path,
               item.first.Mark().line + 1, key, Nearest(key, kSpecKeys));
  }
  // The name becomes a directory (results/runs/<name>/): the one name rule (core/words.h).
  if (root["name"]) {
    MAVG_CHECK(root["name"].IsScalar(), "{}: line {}: 'name' must be a single value", path,
               root["name"].Mark().line + 1);
    spec.name = root["name"].Scalar();
    CheckName(fmt::format("{}: line {}: sweep name", path, root["name"].Mark().line + 1),
              spec.name);
  } else {
    spec.name = std::filesystem::path(path).stem().string();
    CheckName(fmt::format("{}: the sweep name (the file's name, as the spec has no 'name')", path),
              spec.name);
  }
  MAVG_CHECK(root["base"], "{}: 'base' (the run config the sweep varies) is required", path);
  spec.base_path = ResolveBase(root["base"].as<std::string>(), dir);
  spec.base = LoadConfigFile(spec.base_path);
  if (const YAML::Node set = root["set"]) {
    for (const auto& [key, value] : ParseAssignment(set, "set", path))
      SetKey(spec.base, key, value);
  }
  if (const YAML::Node r = root["replicates"]) {
    try {
      spec.replicates = r.as<int>();
    } catch (const YAML::Exception&) {
      MAVG_FAIL("{}: line {}: replicates must be an integer", path, r.Mark().line + 1);
    }
    MAVG_CHECK(spec.replicates >= 1 && spec.replicates <= 1000,
               "{}: replicates must be between 1 and 1000, got {}", path, spec.replicates);
  }
  if (const YAML::Node m = root["max_runs"]) {
    try {
      spec.max_runs = m.as<int64_t>();
    } catch (const YAML::Exception&) {
      MAVG_FAIL("{}: line {}: max_runs must be an integer", path, m.Mark().line + 1);
    }
    MAVG_CHECK(spec.max_runs >= 1, "{}: max_runs must be positive, got {}", path, spec.max_runs);
  }
  // The number of runs from the lists' lengths alone, before any value is checked: an axis of a
  // million values is refused at once, not after a million checks.
  if (check == SizeCheck::kSpec) {
    std::vector<size_t> dims;
    if (const YAML::Node grid = root["grid"]; grid && grid.IsMap()) {
      for (const auto& item : grid)
        dims.push_back(item.second.IsSequence() ? item.second.size() : 1);
    }
    if (const YAML::Node zip = root["zip"]; zip && zip.IsSequence()) {
      for (const auto& group : zip) {
        if (group.IsMap() && group.size() > 0 && group.begin()->second.IsSequence()) {
          dims.push_back(group.begin()->second.size());
        }
      }
    }
    const YAML::Node include = root["include"];
    CheckRunCount(path, dims, spec.replicates, include && include.IsSequence() ? include.size() : 0,
                  spec.max_runs);
  }
  if (const YAML::Node grid = root["grid"]) spec.grid = ParseAxes(grid, "grid", path);
  if (const YAML::Node zip = root["zip"]) {
    MAVG_CHECK(zip.IsSequence(), "{}: line {}: 'zip' is a list of groups of paired axes", path,
               zip.Mark().line + 1);
    for (const auto& group : zip) {
      AxisValues g = ParseAxes(group, "zip", path);
      for (const auto& [key, values] : g) {
        MAVG_CHECK(
            values.size() == g[0].second.size(),
            "{}: line {}: zip lists must have equal lengths: '{}' has {} values, '{}' has {}", path,
            group.Mark().line + 1, g[0].first, g[0].second.size(), key, values.size());
      }
      spec.zips.push_back(std::move(g));
    }
  }
  for (const char* what : {"exclude", "include"}) {
    if (const YAML::Node list = root[what]) {
      MAVG_CHECK(list.IsSequence(), "{}: line {}: '{}' is a list of assignments", path,
                 list.Mark().line + 1, what);
      for (const auto& entry : list) {
        (std::string(what) == "exclude" ? spec.excludes : spec.includes)
            .push_back(ParseAssignment(entry, what, path));
      }
    }
  }
  if (const YAML::Node p = root["replicate_pretraining"]) {
    const std::string v = p.IsScalar() ? p.Scalar() : "";
    MAVG_CHECK(v == "true" || v == "false",
               "{}: line {}: replicate_pretraining must be true or false, got '{}'", path,
               p.Mark().line + 1, v);
    spec.replicate_pretraining = v == "true";
  }
  if (const YAML::Node res = root["resources"]) spec.resources = ParseResources(res, path);
  if (const YAML::Node compare = root["compare"]) spec.contrasts = ParseContrasts(compare, path);
  if (const YAML::Node stop = root["stop_early"]) spec.stop_early = ParseStopEarly(stop, path);
  // The axes, in order; exclusions must name one of them.
  std::set<std::string> seen;
  auto add_axis = [&](const std::string& key) {
    if (seen.insert(key).second) spec.axes.push_back(key);
  };
  for (const auto& [key, values] : spec.grid) add_axis(key);
  for (const auto& g : spec.zips) {
    for (const auto& axis : g) {
      const std::string& key = axis.first;
      MAVG_CHECK(std::none_of(spec.grid.begin(), spec.grid.end(),
                              [&](const auto& a) { return a.first == key; }),
                 "{}: axis '{}' is both in grid and in zip", path, key);
      add_axis(key);
    }
  }
  for (const auto& inc : spec.includes) {
    for (const auto& [key, value] : inc) add_axis(key);
  }
  for (auto& ex : spec.excludes) {
    for (auto& [key, value] : ex) {
      MAVG_CHECK(seen.count(key) > 0, "{}: exclude names '{}', which is not an axis of this sweep",
                 path, key);
      // Normalised as points print their axes ("1.0" and "1" are the same number).
      RunConfig scratch;
      SetKey(scratch, key, value);
      value = JsonPointerText(ToJson(scratch), key);
    }
  }
  return spec;
}
}  // namespace

SweepSpec LoadSweepSpec(const std::string& path, SizeCheck check) {
  MAVG_CHECK(PathExists(path), "{}: sweep spec not found", path);
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return ReadingYaml(path, [&] { return ReadSweepSpec(ReadFile(path), path, dir, check); });
}

SweepSpec ParseSweepSpec(const std::string& text, const std::string& source,
                         const std::string& dir) {
  return ReadingYaml(source, [&] { return ReadSweepSpec(text, source, dir, SizeCheck::kSpec); });
}

void CheckRunCount(const std::string& source, const std::vector<size_t>& dims, int replicates,
                   size_t includes, int64_t max_runs) {
  const auto limit = static_cast<uint64_t>(max_runs);
  uint64_t runs = static_cast<uint64_t>(replicates);
  std::string shape;
  for (const size_t d : dims) {
    runs = d > 0 && runs > UINT64_MAX / d ? UINT64_MAX : runs * d;
    shape += fmt::format("{}{}", shape.empty() ? "" : " x ", d);
  }
  runs = std::min<uint64_t>(UINT64_MAX - includes, runs) +
         includes * static_cast<uint64_t>(replicates);
  MAVG_CHECK(runs <= limit,
             "{}: the sweep has {} runs ({} x {} replicate(s){}), more than max_runs {}; raise "
             "max_runs in the spec if that is meant",
             source, runs == UINT64_MAX ? std::string("over 1.8e19") : std::to_string(runs),
             shape.empty() ? "1" : shape, replicates,
             includes == 0 ? "" : fmt::format(", + {} included", includes), max_runs);
}

std::vector<SweepPoint> ExpandSweep(const SweepSpec& spec) {
  // The varied dimensions: every grid axis alone, every zip group as one dimension.
  std::vector<std::vector<Assignment>> dims;
  for (const auto& [key, values] : spec.grid) {
    std::vector<Assignment> d;
    for (const std::string& v : values) d.push_back({{key, v}});
    dims.push_back(std::move(d));
  }
  for (const auto& g : spec.zips) {
    std::vector<Assignment> d(g[0].second.size());
    for (const auto& [key, values] : g) {
      for (size_t i = 0; i < values.size(); ++i) d[i].emplace_back(key, values[i]);
    }
    dims.push_back(std::move(d));
  }
  // The size first, without overflow, before anything is allocated for the points.
  std::vector<size_t> sizes;
  for (const auto& d : dims) sizes.push_back(d.size());
  CheckRunCount(spec.path, sizes, spec.replicates, spec.includes.size(), spec.max_runs);
  std::vector<Assignment> assignments;
  size_t total = 1;
  for (const auto& d : dims) total *= d.size();
  std::vector<size_t> idx(dims.size(), 0);
  for (size_t n = 0; n < total; ++n) {
    Assignment a;
    for (size_t k = 0; k < dims.size(); ++k) {
      for (const auto& kv : dims[k][idx[k]]) a.push_back(kv);
    }
    assignments.push_back(std::move(a));
    for (size_t k = dims.size(); k-- > 0;) {  // last axis fastest
      if (++idx[k] < dims[k].size()) break;
      idx[k] = 0;
    }
  }
  for (const Assignment& inc : spec.includes) assignments.push_back(inc);

  std::vector<SweepPoint> points;
  std::unordered_set<std::string> ids;
  std::vector<bool> exclude_used(spec.excludes.size(), false);
  for (const Assignment& a : assignments) {
    RunConfig config = spec.base;
    for (const auto& [key, value] : a) SetKey(config, key, value);
    const nlohmann::json json = ToJson(config);
    Assignment axes;
    for (const std::string& key : spec.axes) axes.emplace_back(key, JsonPointerText(json, key));
    auto axis_value = [&](const std::string& key) -> const std::string& {
      return std::find_if(axes.begin(), axes.end(), [&](const auto& kv) { return kv.first == key; })
          ->second;
    };
    bool excluded = false;
    for (size_t e = 0; e < spec.excludes.size(); ++e) {
      const Assignment& ex = spec.excludes[e];
      if (std::all_of(ex.begin(), ex.end(),
                      [&](const auto& kv) { return axis_value(kv.first) == kv.second; })) {
        exclude_used[e] = true;
        excluded = true;
      }
    }
    if (excluded) continue;
    std::string where;
    for (const auto& [key, value] : axes)
      where += fmt::format("{}{}={}", where.empty() ? "" : " ", key, value);
    for (int r = 0; r < spec.replicates; ++r) {
      SweepPoint p;
      p.config = config;
      p.config.seed = ReplicateSeed(config.seed, r);
      // Each replicate its own pretrained stack, so its spread includes pretraining's.
      if (spec.replicate_pretraining) {
        p.config.pretrain.rbm.seed = ReplicateSeed(config.pretrain.rbm.seed, r);
      }
      p.axes = axes;
      p.replicate = r;
      const std::string point = fmt::format("{} point [{}]", spec.path, where);
      Validate(p.config, point);
      CheckResourcesFit(spec.resources, p.config, point);
      p.run_id = RunId(p.config);
      if (ids.insert(p.run_id).second) points.push_back(std::move(p));
    }
  }
  for (size_t e = 0; e < spec.excludes.size(); ++e) {
    if (exclude_used[e]) continue;
    std::string what;
    for (const auto& [key, value] : spec.excludes[e]) {
      what += fmt::format("{}{}: {}", what.empty() ? "" : ", ", key, value);
    }
    spdlog::warn("[sweep] {}: exclude entry {} ({}) matches no point of the grid (a typo?)",
                 spec.path, e + 1, what);
  }
  MAVG_CHECK(!points.empty(), "{}: the sweep has no points (everything excluded?)", spec.path);
  CheckContrasts(spec.contrasts, points, spec.replicates, spec.path);
  if (spec.stop_early) {
    CheckStopEarly(*spec.stop_early, spec.axes, spec.replicates, points, spec.path);
  }
  return points;
}

}  // namespace mavg
