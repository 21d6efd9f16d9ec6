#pragma once
// The cache of pretrained RBM stacks, shared by the runs of a sweep (results/cache/):
//   rbm-<key>/key.json        what the key was computed from, when and how long pretraining took
//   rbm-<key>/pretrain.jsonl  the pretraining records (one per layer and epoch)
//   rbm-<key>/dbn.bin         the stack (written last, atomically: its presence means complete)
// The key is the SHA-256 (16 hex digits) of the training features' fingerprint, the input
// processing (context, CMVN), the hidden layer sizes and every pretrain.rbm setting: what
// determines the stack, and nothing else (not the workers, optimizer or schedule), so the runs
// of a sweep over those share one stack. A run that finds no stack takes an exclusive lock on
// rbm-<key>.lock, pretrains and stores; concurrent runs with the same key wait on the lock and
// then read the stored stack, so the stack is pretrained once and never half-written.

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/config/config.h"
#include "engine/pretrain/dbn.h"

namespace mavg {

struct StackKey {
  std::string key;        // 16 hex digits
  nlohmann::json inputs;  // what was hashed
};

// Reads the training data dir's features (for their fingerprint); throws naming it if absent.
StackKey RbmStackKey(const RunConfig& config);
// The same with the fingerprint of config.data.train already known (DataDirFingerprint).
StackKey RbmStackKey(const RunConfig& config, const std::string& train_fingerprint);
std::string StackDir(const std::string& cache_dir, const std::string& key);
bool StackCached(const std::string& cache_dir, const std::string& key);

struct CachedStack {
  Dbn dbn;
  bool hit = false;                     // read from the cache (no pretraining in this process)
  std::vector<nlohmann::json> records;  // the pretraining records (also on a hit)
  double seconds = 0.0;                 // this process's time to obtain the stack
};

using PretrainFn = std::function<Dbn(const DbnEpochCallback& on_epoch)>;

// The stack for `key` from `cache_dir` (empty: no cache), pretraining it with `pretrain` when
// it is not there. `on_epoch` sees every record as pretraining produces it (not on a hit).
// `while_waiting` is called about twice a second while another process pretrains the same
// stack (a heartbeat); an exception from it, or from `pretrain`, leaves the cache as it was.
CachedStack ObtainStack(const std::string& cache_dir, const StackKey& key,
                        const PretrainFn& pretrain, const DbnEpochCallback& on_epoch,
                        const std::function<void()>& while_waiting = nullptr);

}  // namespace mavg
