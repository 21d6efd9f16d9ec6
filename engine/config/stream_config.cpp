#include "engine/config/stream_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "engine/config/config.h"
#include "engine/config/key_builder.h"
#include "engine/core/error.h"
#include "engine/core/words.h"

namespace mavg {
namespace {

using schema_keys::Binding;
using schema_keys::KeyBuilder;

// Where a key is used (KeyBuilder::UsedWhen).
bool Fragmented(const RunConfig& c) { return c.parallel.stream.fragments > 1; }
bool Listed(const RunConfig& c) {
  return Fragmented(c) && c.parallel.stream.pattern == FragmentPattern::kList;
}

// "0,2; 1-3" as layer groups; throws one line naming the key.
std::vector<std::vector<int>> ParseLayerGroups(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return Error(
        fmt::format("parallel.stream.layers: '{}' {} (write one group of layers per fragment, "
                    "separated by ';', each a list of layer numbers or ranges from 0 = the input "
                    "layer, e.g. '0,2; 1,3' or '0-1; 2-3')",
                    text, why));
  };
  std::vector<std::vector<int>> groups;
  if (text.find_first_not_of(" \t") == std::string::npos) throw bad("is empty");
  for (const std::string& group : SplitTrimmed(text, ';')) {
    if (group.empty()) throw bad("has an empty fragment");
    std::vector<int> layers;
    for (const std::string& item : SplitTrimmed(group, ',')) {
      if (item.empty()) throw bad(fmt::format("has an empty item in '{}'", group));
      const auto number = [&](const std::string& s) {
        size_t used = 0;
        long long v = -1;
        try {
          v = std::stoll(s, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != s.size() || v < 0 || v > 1000000) {
          throw bad(fmt::format("has '{}', not a layer number", item));
        }
        return static_cast<int>(v);
      };
      const size_t dash = item.find('-', 1);
      const int from = number(item.substr(0, dash));
      const int to = dash == std::string::npos ? from : number(item.substr(dash + 1));
      if (to < from) throw bad(fmt::format("has the range '{}', which runs backwards", item));
      for (int l = from; l <= to; ++l) layers.push_back(l);
    }
    if (layers.empty()) throw bad("has an empty fragment");
    groups.push_back(std::move(layers));
  }
  return groups;
}

}  // namespace

bool Streaming(const ParallelConfig& parallel) {
  const StreamConfig& s = parallel.stream;
  return s.fragments > 1 || s.overlap_steps > 0 || s.mix > 0.0;
}

std::vector<std::vector<int>> StreamFragments(const StreamConfig& stream, int layers) {
  const int f = static_cast<int>(stream.fragments);
  if (f > layers) {
    throw Error(fmt::format(
        "parallel.stream.fragments: {} fragments of a model with {} layers: a fragment is "
        "one layer or more (at most {})",
        f, layers, layers));
  }
  std::vector<std::vector<int>> groups;
  if (f <= 1) {
    groups.emplace_back();
    for (int l = 0; l < layers; ++l) groups.back().push_back(l);
    return groups;
  }
  switch (stream.pattern) {
    case FragmentPattern::kStrided:
      groups.resize(static_cast<size_t>(f));
      for (int l = 0; l < layers; ++l) groups[static_cast<size_t>(l % f)].push_back(l);
      return groups;
    case FragmentPattern::kContiguous:
      for (int p = 0; p < f; ++p) {
        groups.emplace_back();
        for (int l = p * layers / f; l < (p + 1) * layers / f; ++l) groups.back().push_back(l);
      }
      return groups;
    case FragmentPattern::kList:
      break;
  }
  groups = ParseLayerGroups(stream.layers);
  const auto bad = [&](const std::string& why) {
    return Error(fmt::format("parallel.stream.layers: '{}' {}", stream.layers, why));
  };
  if (static_cast<int>(groups.size()) != f) {
    throw bad(
        fmt::format("has {} fragments, but parallel.stream.fragments is {}", groups.size(), f));
  }
  std::vector<int> owner(static_cast<size_t>(layers), -1);
  for (int p = 0; p < f; ++p) {
    std::vector<int>& g = groups[static_cast<size_t>(p)];
    for (int l : g) {
      if (l >= layers) {
        throw bad(fmt::format("names layer {}, but the model has layers 0 to {}", l, layers - 1));
      }
      int& o = owner[static_cast<size_t>(l)];
      if (o >= 0) {
        throw bad(fmt::format("puts layer {} in fragments {} and {}: fragments may not overlap", l,
                              o, p));
      }
      o = p;
    }
    std::sort(g.begin(), g.end());
  }
  for (int l = 0; l < layers; ++l) {
    if (owner[static_cast<size_t>(l)] < 0) {
      throw bad(fmt::format("leaves layer {} out: the fragments must cover the model", l));
    }
  }
  return groups;
}

std::vector<Binding> StreamKeys() {
  return {KeyBuilder("parallel.stream.fragments", MAVG_FIELD(parallel.stream.fragments),
                     "streaming partial synchronisation (Streaming DiLoCo): the model's layers in "
                     "this many fragments, fragment p combined once per period of K minibatches, "
                     "at step (p + 1) K / F of it; every epoch ends with all combined; 1 = the "
                     "whole model at every combine point")
              .Min(1)
              .Max(4096)
              .OmittedAt(1)
              .OneWorkerFree(),
          KeyBuilder("parallel.stream.pattern", MAVG_FIELD(parallel.stream.pattern),
                     "which layers make fragment p of F (L layers, 0 = the input layer): strided = "
                     "p, p + F, p + 2F, ...; contiguous = [p L / F, (p + 1) L / F); list = "
                     "parallel.stream.layers")
              .OmittedAt("strided")
              .UsedWhen(Fragmented, "parallel.stream.fragments is above 1")
              .OneWorkerFree(),
          KeyBuilder("parallel.stream.layers", MAVG_FIELD(parallel.stream.layers),
                     "list: the layers of each fragment, in combine order, e.g. '0,2; 1,3' or "
                     "'0-1; 2-3'; together they cover every layer once")
              .UsedWhen(Listed, "parallel.stream.pattern is list")
              .OneWorkerFree(),
          KeyBuilder("parallel.stream.overlap_steps", MAVG_FIELD(parallel.stream.overlap_steps),
                     "tau: a fragment's exchange runs while the workers take this many more local "
                     "steps; then it is merged (parallel.stream.mix); at most K / F")
              .Min(0)
              .Max(1e9)
              .OmittedAt(0)
              .OneWorkerFree(),
          KeyBuilder("parallel.stream.mix", MAVG_FIELD(parallel.stream.mix),
                     "alpha: at a fragment's merge each worker keeps alpha of its own fragment and "
                     "takes 1 - alpha of the combined one (0: takes the combined fragment)")
              .Min(0)
              .Max(1)
              .OmittedAt(0.0)
              .OneWorkerFree()};
}

void CheckStream(const RunConfig& config, std::vector<std::string>& problems) {
  const ParallelConfig& par = config.parallel;
  const StreamConfig& s = par.stream;
  if (!Streaming(par) || par.workers <= 1) return;
  auto refuse = [&](const std::string& what, const std::string& why) {
    problems.push_back(fmt::format("parallel.stream: streaming with {}: {}", what, why));
  };
  if (s.mix >= 1.0 || static_cast<float>(s.mix) >= 1.0f) {  // as the schedule holds it
    problems.push_back(
        fmt::format("parallel.stream.mix: {} keeps all of each worker's fragment: the combined "
                    "one would never be taken (use a value below 1)",
                    s.mix));
  }
  if (par.combine.policy != CombinePolicyType::kConstant) {
    refuse(fmt::format("parallel.combine.policy {}", par.combine.policy),
           "fragments are placed in a constant period (policy constant)");
  }
  if (par.average_frames > 0) {
    refuse("parallel.average_frames", "fragments are placed by minibatches");
  }
  if (par.overlap) {
    refuse("parallel.overlap", "a fragment's overlap is parallel.stream.overlap_steps");
  }
  if ((par.group_size > 0 && par.group_size < par.workers) || par.average_every_global > 0) {
    refuse("two-level averaging (parallel.group_size)", "fragments combine all workers");
  }
  if (par.average_momentum || par.optimizer_state == OptimizerStatePolicy::kAverage) {
    refuse("parallel.optimizer_state average", "fragments carry parameters only");
  }
  if (par.optimizer_state == OptimizerStatePolicy::kReset) {
    refuse("parallel.optimizer_state reset",
           "a reset clears all of a worker's optimizer state, a fragment is part of the model");
  }
  if (par.comm == CommChoice::kNccl) refuse("parallel.comm nccl", "fragments travel over MPI");
  const int64_t k = par.average_every;
  if (par.average_frames <= 0 && s.fragments > k) {
    problems.push_back(
        fmt::format("parallel.stream.fragments: {} fragments in a period of {} minibatches "
                    "(parallel.average_every): each fragment needs a step of its own",
                    s.fragments, k));
  } else if (par.average_frames <= 0 && s.overlap_steps > k / s.fragments) {
    problems.push_back(fmt::format(
        "parallel.stream.overlap_steps: {} local steps is longer than the {} between fragment "
        "combines (parallel.average_every {} / {} fragments): an exchange must be merged "
        "before the next one starts",
        s.overlap_steps, k / s.fragments, k, s.fragments));
  }
  try {
    StreamFragments(s, static_cast<int>(config.model.hidden_layers + 1));
  } catch (const Error& e) {
    problems.push_back(e.what());
  }
}

}  // namespace mavg
