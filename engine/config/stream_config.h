#pragma once
// Streaming partial synchronisation, as the config says it (parallel.stream.*; Douillard et
// al. 2025, "Streaming DiLoCo"): the model's layers grouped into fragments, each combined once
// per period at its own offset, its exchange overlapped with tau local steps and mixed into the
// workers' models with alpha; (stream_config.cpp) their keys and the checks across keys. The
// schedule itself is engine/train/stream_schedule.h.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/enum_text.h"

namespace mavg {

struct RunConfig;
struct ParallelConfig;
namespace schema_keys {
struct Binding;
}

// parallel.stream.pattern: which layers make fragment p of F (L layers, 0 = the input layer).
enum class FragmentPattern { kStrided, kContiguous, kList };
inline constexpr EnumText<FragmentPattern> kFragmentPatternTexts[] = {
    {FragmentPattern::kStrided, "strided"},        // layers p, p + F, p + 2F, ...
    {FragmentPattern::kContiguous, "contiguous"},  // layers [p L / F, (p + 1) L / F)
    {FragmentPattern::kList, "list"}};             // parallel.stream.layers
MAVG_ENUM_TEXTS(FragmentPattern, kFragmentPatternTexts)

struct StreamConfig {
  int64_t fragments = 1;  // F; 1: the whole model at every combine point
  FragmentPattern pattern = FragmentPattern::kStrided;
  std::string layers;         // list: "0,2; 1,3" (ranges as 0-2), one group per fragment
  int64_t overlap_steps = 0;  // tau: local steps between a fragment's exchange and its merge
  double mix = 0.0;           // alpha: worker = alpha worker + (1 - alpha) combined fragment
};

// Whether parallel.stream.* asks for streaming (more than one fragment, an overlap or a mix).
bool Streaming(const ParallelConfig& parallel);

// The layers (0-based, increasing) of each fragment, in the fixed order the fragments combine,
// for a model of `layers` affine layers; throws one line naming the key when the fragments do
// not cover the model exactly once or a fragment is empty.
std::vector<std::vector<int>> StreamFragments(const StreamConfig& stream, int layers);

// The keys parallel.stream.*, in the order of the reference table.
std::vector<schema_keys::Binding> StreamKeys();
// Appends a line for every problem of parallel.stream.* in `config` and how it composes with
// the rest of parallel.*.
void CheckStream(const RunConfig& config, std::vector<std::string>& problems);

}  // namespace mavg

MAVG_ENUM_FORMATTER(mavg::FragmentPattern);
