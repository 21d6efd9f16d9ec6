#include "engine/config/compress_config.h"

#include "engine/config/config.h"
#include "engine/config/key_builder.h"

namespace mavg {
namespace {

using schema_keys::Binding;
using schema_keys::KeyBuilder;

// Where a key is used (KeyBuilder::UsedWhen).
bool Compressed(const RunConfig& c) { return c.parallel.compress.format != DeltaFormat::kFp32; }
bool Scaled(const RunConfig& c) { return FormatScaled(c.parallel.compress.format); }

}  // namespace

std::vector<Binding> CompressKeys() {
  return {
      KeyBuilder("parallel.compress.format", MAVG_FIELD(parallel.compress.format),
                 "number format of what a worker sends at a global combine: fp32 = its "
                 "parameters, averaged as they are; fp16, bf16, fp8 (E4M3, scaled), int4 "
                 "(scaled) = its outer delta (where its block ended minus where it started), "
                 "packed and rounded to nearest even")
          .OmittedAt("fp32")
          .OneWorkerFree(),
      KeyBuilder("parallel.compress.block", MAVG_FIELD(parallel.compress.block),
                 "fp8, int4: values per scale (each block's largest magnitude maps to the format's "
                 "largest value; a block never spans two tensors); 0 = one scale per tensor")
          .Min(0)
          .Max(int64_t{1} << 30)
          .UsedWhen(Scaled, "parallel.compress.format is fp8 or int4")
          .OneWorkerFree(),
      KeyBuilder("parallel.compress.error_feedback", MAVG_FIELD(parallel.compress.error_feedback),
                 "each worker adds the rounding error of its last compressed delta to the "
                 "next (the residual is kept per worker and checkpointed)")
          .OmittedAt(false)
          .UsedWhen(Compressed, "parallel.compress.format is not fp32")
          .OneWorkerFree()};
}

void CheckCompress(const RunConfig& config, std::vector<std::string>& problems) {
  const ParallelConfig& par = config.parallel;
  const CompressConfig& c = par.compress;
  if (c.format == DeltaFormat::kFp32) {
    if (c.error_feedback) {
      problems.push_back(
          "parallel.compress.error_feedback: true with parallel.compress.format fp32: error "
          "feedback carries a compression's rounding error, and fp32 deltas have none");
    }
    return;
  }
  if (par.workers <= 1) return;
  auto refuse = [&](const std::string& what, const std::string& why) {
    problems.push_back(
        fmt::format("parallel.compress.format: {} with {}: {}", c.format, what, why));
  };
  if (par.overlap) {
    refuse("parallel.overlap", "compressed deltas are exchanged synchronously");
  }
  if ((par.group_size > 0 && par.group_size < par.workers) || par.average_every_global > 0) {
    refuse("two-level averaging (parallel.group_size)",
           "compressed deltas are exchanged among all workers at every combine");
  }
  if (par.average_momentum || par.optimizer_state == OptimizerStatePolicy::kAverage) {
    refuse("parallel.optimizer_state average",
           "only the parameters' deltas are compressed; keep or reset the optimizer state");
  }
  if (par.comm == CommChoice::kNccl) {
    refuse("parallel.comm nccl", "compressed deltas travel host-staged over MPI");
  }
}

}  // namespace mavg
