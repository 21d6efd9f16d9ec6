#pragma once
// Sweep specs (YAML): a base run config, fixed overrides, and axes to vary.
//   name: table3
//   base: configs/fmnist.yaml                 # relative to the working directory (or this file)
//   set:  {optimizer.momentum: 0.9}           # fixed overrides
//   grid: {parallel.workers: [1, 16], parallel.average_every: [10, 20]}   # cartesian product
//   zip:  [{optimizer.minibatch: [256, 1024], schedule.lr: [0.08, 0.32]}] # paired axes
//   exclude: [{parallel.workers: 1, parallel.average_every: 20}]
//   include: [{parallel.workers: 32, parallel.average_every: 10}]         # extra points
//   replicates: 3                             # seeds per point, derived deterministically
//   replicate_pretraining: true               # replicates also vary pretrain.rbm.seed
//   resources: {time: "02:00:00", threads: 1, mem: 8G}   # see resources.h
//   compare: {bmuf_vs_average: {a: {...}, b: {...}, claim: beats}}   # see contrasts.h
//   stop_early: {rule: paired, rungs: [1, 2]}                        # see stop_early.h
// Every key and value is checked against the config schema when the spec is loaded, and every
// point is validated as a run config, so a typo fails before anything runs.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/config/config.h"
#include "engine/sweep/contrasts.h"
#include "engine/sweep/resources.h"
#include "engine/sweep/stop_early.h"

namespace mavg {

using AxisValues = std::vector<std::pair<std::string, std::vector<std::string>>>;
using Assignment = std::vector<std::pair<std::string, std::string>>;

// A spec without max_runs refuses sweeps of more runs than this.
inline constexpr int64_t kDefaultMaxRuns = 10000;

struct SweepSpec {
  std::string path;        // the spec file, or what the spec came from ("command line", ...)
  std::string yaml;        // the spec's text, as the store keeps it (spec_yaml)
  bool generated = false;  // made or changed by command-line options (cli_spec.h)
  std::string name;
  std::string base_path;  // the base run config file as resolved
  RunConfig base;         // base config with `set` applied
  AxisValues grid;
  std::vector<AxisValues> zips;
  std::vector<Assignment> excludes, includes;
  int replicates = 1;
  // Replicate r > 0 also derives pretrain.rbm.seed from the base one (as the run seed), so each
  // replicate pretrains its own stack; false: the replicates share one stack.
  bool replicate_pretraining = false;
  // Refuse larger sweeps (points x replicates) before expanding them.
  int64_t max_runs = kDefaultMaxRuns;
  SweepResources resources;
  std::vector<std::string> axes;    // every varied key, in spec order (grid, zip, include)
  std::vector<Contrast> contrasts;  // `compare:`, in the spec's order
  std::optional<StopEarly> stop_early;
};

struct SweepPoint {
  RunConfig config;
  Assignment axes;  // value of every sweep axis for this point (as the config prints it)
  int replicate = 0;
  std::string run_id;
};

// A spec's size as its text gives it, read from the YAML parser's events without building the
// spec (an axis of a million values is sized in time linear in the text). `known` is false
// where this pass cannot size the text (not YAML, a count not in plain decimal, a non-scalar
// key): the full load then reads or refuses it.
struct SpecSize {
  bool known = false;
  std::vector<std::pair<std::string, size_t>> grid;  // each grid axis: its key, its length
  std::vector<size_t> zips;                          // each zip group's length
  size_t includes = 0;
  int replicates = 1;
  int64_t max_runs = kDefaultMaxRuns;
  std::vector<size_t> Dims() const;  // grid axes, then zip groups
};
SpecSize ScanSpecSize(const std::string& text);

// Who refuses a sweep of more than max_runs runs while its spec loads: the spec (kSpec, the
// default, before any value is read), or the caller, which changes the size (the command
// line's --grid and --replicates) and checks the size it makes (ExpandSweep checks again).
enum class SizeCheck { kSpec, kCaller };

// Loads and checks a spec; throws one line naming the file and the problem.
SweepSpec LoadSweepSpec(const std::string& path, SizeCheck check = SizeCheck::kSpec);
// The same from the spec's text: `source` names it in messages and `dir` is where a relative
// `base` is looked for when it is not found from the working directory.
SweepSpec ParseSweepSpec(const std::string& text, const std::string& source,
                         const std::string& dir);
// All points, in order: grid (first axis slowest) x zip groups, exclusions removed, inclusions
// appended, each with `replicates` seeds; points with equal run ids are kept once.
std::vector<SweepPoint> ExpandSweep(const SweepSpec& spec);
// Refuses a sweep of more than `max_runs` runs: the product of the varied dimensions' sizes
// (each grid axis, each zip group) times the replicates, plus the included points' replicates.
// Called as soon as the sizes are known, before any value is looked at, so that an enormous
// axis is refused in time linear in nothing but its length.
void CheckRunCount(const std::string& source, const std::vector<size_t>& dims, int replicates,
                   size_t includes, int64_t max_runs);

// A value of config key `key` in a spec (an axis, a `set`, an arm of a contrast): its text,
// refused in one line naming `file` and the line for a list, a map, or a quoted number or
// boolean (`where` says which value).
std::string SpecScalarText(const YAML::Node& n, const std::string& key, const std::string& where,
                           const std::string& file);
// Checks that `key` is a config key and `value` fits it; returns the value as the config would
// print it (JSON: 16 and 16.0 of a float key alike).
std::string CheckSpecValue(const std::string& file, int line, const std::string& key,
                           const std::string& value);

// Seed of replicate r: replicate 0 keeps the base seed (so a sweep point is the same run as the
// plain config), others get a seed derived from (base seed, r).
int64_t ReplicateSeed(int64_t base_seed, int replicate);

}  // namespace mavg
