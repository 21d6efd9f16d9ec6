#pragma once
// Checkpoints in <run>/checkpoint/, written at every epoch end and at a preemption point:
//   meta.json           the commit record (records/checkpoint_meta.h): generation G, completed
//                       epochs, progress inside the current epoch (if any), the schedule's and
//                       the averager's state, per-worker statistics
//   params.G.bin        the model (worker 0's parameters)
//   params-<worker>.G.bin  each worker's parameters where they differ at the checkpoint
//                       (between the global combines of two-level or overlapped averaging)
//   best.G.bin          the last accepted parameters, for schedules that can reject (newbob)
//   opt-<worker>.G.bin  each worker's optimizer state (its own unless optimizer_state average)
//   opt-accepted-<worker>.G.bin  that state after the last accepted epoch, for optimizers whose
//                       state outlives an epoch (a rejected epoch goes back to it)
//   bmuf.G.bin          BMUF: the global model W_g and the block momentum Δ (train/averager.h)
//   pending.G.bin, snapshot-<worker>.G.bin  overlapped averaging: the mean in flight and each
//                       worker's parameters when it was started
//   compress-anchor.G.bin, residual-<worker>.G.bin  compressed deltas: where the block
//                       started, each worker's rounding residual (train/delta_exchange.h)
// Tensor files are written first (atomically), then meta.json (atomically): a checkpoint exists
// exactly when meta.json names its generation; files of other generations are removed after.
// Tensor file: magic "MAVGTNSR", u64 count, count float32, u32 CRC-32.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/config/config.h"
#include "engine/records/checkpoint_meta.h"

namespace mavg {

class CheckpointDir {
 public:
  explicit CheckpointDir(std::string run_dir)
      : dir_(std::move(run_dir) + "/" + kCheckpointDirName), meta_(dir_ + "/meta.json") {}

  const std::string& Path() const { return dir_; }
  const std::string& MetaPath() const { return meta_; }  // CheckpointMetaPath(run_dir)
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

  // Makes generation meta.generation the checkpoint and removes older files.
  void Commit(const CheckpointMeta& meta) const;

 private:
  std::string dir_;
  std::string meta_;
};

// A checkpoint's meta.json read as its record and checked against the config it is resumed with
// (types, ranges, the world size); throws naming the file and the field.
CheckpointMeta ReadCheckpointMeta(const nlohmann::json& meta, const RunConfig& config,
                                  const std::string& path);
inline void ValidateCheckpointMeta(const nlohmann::json& meta, const RunConfig& config,
                                   const std::string& path) {
  ReadCheckpointMeta(meta, config, path);
}

}  // namespace mavg
