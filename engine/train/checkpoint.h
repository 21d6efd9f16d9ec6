#pragma once
// Checkpoints in <run>/checkpoint/, written at every epoch end and at a preemption point:
//   meta.json           the commit record: generation G, completed epochs, progress inside the
//                       current epoch (if any), schedule state, per-worker statistics
//   params.G.bin        the parameters (identical on all workers at a checkpoint)
//   best.G.bin          the last accepted parameters, for schedules that can reject (newbob)
//   opt-<worker>.G.bin  each worker's optimizer state (never averaged, so one file per worker)
//   opt-accepted-<worker>.G.bin  that state after the last accepted epoch, for optimizers whose
//                       state outlives an epoch (a rejected epoch goes back to it)
// Tensor files are written first (atomically), then meta.json (atomically): a checkpoint exists
// exactly when meta.json names its generation; files of other generations are removed after.
// Tensor file: magic "MAVGTNSR", u64 count, count float32, u32 CRC-32.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/config/config.h"

namespace mavg {

class CheckpointDir {
 public:
  explicit CheckpointDir(std::string run_dir) : dir_(std::move(run_dir) + "/checkpoint") {}

  const std::string& Path() const { return dir_; }
  // The committed meta.json, if any.
  std::optional<nlohmann::json> ReadMeta() const;

  // File name of a tensor set in generation `gen`, e.g. TensorPath(3, "params").
  std::string TensorPath(int64_t gen, const std::string& name) const;
  // Writes/reads the concatenation of `views` (device memory of `backend`).
  void WriteTensors(Backend& backend, int64_t gen, const std::string& name,
                    const std::vector<ConstMatrixView>& views) const;
  void ReadTensors(Backend& backend, int64_t gen, const std::string& name,
                   const std::vector<MatrixView>& views) const;
  // Whether generation `gen` has the tensor set `name` (sets added later may be missing).
  bool HasTensors(int64_t gen, const std::string& name) const;

  // Makes generation meta["generation"] the checkpoint and removes older files.
  void Commit(const nlohmann::json& meta) const;

 private:
  std::string dir_;
};

// Checks every field of a checkpoint's meta.json against the config it is resumed with (types,
// ranges, the run id, the world size); throws naming the file and the field.
void ValidateCheckpointMeta(const nlohmann::json& meta, const RunConfig& config,
                            const std::string& path);

}  // namespace mavg
