#pragma once
// How the workers' outer deltas travel at a combine, as the config says it
// (parallel.compress.*): the number format (engine/core/delta_codec.h), its scale groups, and
// error feedback; (compress_config.cpp) their keys and the checks across keys. The exchange
// itself is engine/train/delta_exchange.h.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/delta_codec.h"

namespace mavg {

struct RunConfig;
namespace schema_keys {
struct Binding;
}

struct CompressConfig {
  DeltaFormat format = DeltaFormat::kFp32;  // fp32: the workers' parameters are averaged as such
  int64_t block = 128;                      // fp8, int4: values per scale (0: one per tensor)
  bool error_feedback = false;  // the rounding error is carried into the next combine's delta
};

// The keys parallel.compress.*, in the order of the reference table.
std::vector<schema_keys::Binding> CompressKeys();
// Appends a line for every problem of parallel.compress.* in `config` and how it composes with
// the rest of parallel.*.
void CheckCompress(const RunConfig& config, std::vector<std::string>& problems);

}  // namespace mavg
