#include "engine/pretrain/stack_cache.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "engine/config/schema.h"
#include "engine/core/build_info.h"
#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/core/json.h"
#include "engine/core/sysinfo.h"
#include "engine/core/timer.h"
#include "engine/data/data_identity.h"
#include "engine/data/kaldi_table.h"

namespace mavg {
namespace {

// The key's own format; changes to the code that makes a stack are in the key through
// build_info::kPretrainCodeVersion.
constexpr int kStackKeyVersion = 1;

// An exclusive flock held for the lifetime of the object. While another process holds it,
// `while_waiting` is called about twice a second (a heartbeat; it may throw to give up).
class FileLock {
 public:
  FileLock(const std::string& path, const std::function<void()>& while_waiting) {
    fd_ = OpenNoFollow(path, /*lock=*/true);
    try {
      bool told = false;
      while (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        MAVG_CHECK(errno == EWOULDBLOCK || errno == EINTR, "{}: cannot lock: {}", path,
                   std::strerror(errno));
        if (!told) {
          spdlog::info("[pretrain] another run is pretraining this stack; waiting for it ({})",
                       path);
          told = true;
        }
        if (while_waiting) while_waiting();
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
    } catch (...) {
      close(fd_);
      throw;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) close(fd_);  // releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

StackKey RbmStackKey(const RunConfig& config) {
  MAVG_CHECK(IsDirectory(config.data.train), "data.train: {} is not a directory",
             config.data.train);
  return RbmStackKey(config, DataDirFingerprint(config.data.train));
}

StackKey RbmStackKey(const RunConfig& config, const std::string& train_fingerprint) {
  // Every pretrain.* setting, straight from the config schema (new settings join the key).
  RunConfig rbm_config = config;
  rbm_config.model.init = ModelInit::kRbm;
  const nlohmann::json rbm =
      nlohmann::json::parse(CanonicalJson(rbm_config)).value("pretrain", nlohmann::json::object());
  StackKey key;
  key.inputs = {{"version", kStackKeyVersion},
                {"code", build_info::kPretrainCodeVersion},
                {"train_features", train_fingerprint},
                {"context", config.data.context},
                {"cmvn", ToString(config.data.cmvn)},
                {"randomizer_size", config.data.randomizer_size},
                {"hidden_layers", config.model.hidden_layers},
                {"hidden_dim", config.model.hidden_dim},
                {"rbm", rbm}};
  // Inputs added later join the key only when set, so that existing stacks keep their keys.
  if (config.data.cmvn == Cmvn::kSpeaker) {
    key.inputs["speaker_cmvn"] = {{"stats", SpeakerCmvnFingerprint(config.data.train)},
                                  {"norm_vars", config.data.cmvn_norm_vars}};
  }
  if (config.data.deltas != 0) key.inputs["deltas"] = config.data.deltas;
  // The alignments decide which utterances (and so which frames) pretraining sees.
  if (!config.data.ali.empty()) {
    key.inputs["alignments"] = kaldi::TableFingerprint(config.data.ali, "data.ali");
  }
  key.key = Sha256Hex(DumpJson(key.inputs)).substr(0, 16);
  return key;
}

std::string StackDir(const std::string& cache_dir, const std::string& key) {
  return cache_dir + "/rbm-" + key;
}

bool StackCached(const std::string& cache_dir, const std::string& key) {
  return !cache_dir.empty() && PathExists(StackDir(cache_dir, key) + "/dbn.bin");
}

CachedStack ObtainStack(const std::string& cache_dir, const StackKey& key,
                        const PretrainFn& pretrain, const DbnEpochCallback& on_epoch,
                        const std::function<void()>& while_waiting) {
  Timer timer;
  CachedStack out;
  auto run_pretraining = [&] {
    out.hit = false;
    out.records.clear();
    out.dbn = pretrain([&](const nlohmann::json& r) {
      out.records.push_back(r);
      if (on_epoch) on_epoch(r);
    });
    out.seconds = timer.Seconds();
  };
  if (cache_dir.empty()) {
    run_pretraining();
    return out;
  }
  MakeDirs(cache_dir);
  const std::string dir = StackDir(cache_dir, key.key);
  FileLock lock(dir + ".lock", while_waiting);
  if (PathExists(dir + "/dbn.bin")) {
    try {
      out.dbn = LoadDbn(dir + "/dbn.bin");
      out.records = ReadJsonLines(dir + "/pretrain.jsonl");
      out.hit = true;
      out.seconds = timer.Seconds();
      spdlog::info("[pretrain] cache hit: stack {} from {} ({:.2f} s)", key.key, dir, out.seconds);
      return out;
    } catch (const Error& e) {  // damaged on disk: pretrain again and replace it
      spdlog::warn("[pretrain] unreadable cached stack, pretraining it again: {}", e.what());
    }
  }
  spdlog::info("[pretrain] cache miss: pretraining stack {} into {}", key.key, dir);
  run_pretraining();
  MakeDirs(dir);
  std::string lines;
  for (const auto& r : out.records) lines += DumpJson(r) + "\n";
  WriteFileAtomic(dir + "/pretrain.jsonl", lines);
  nlohmann::json info = {{"key", key.key},
                         {"inputs", key.inputs},
                         {"pretrain_s", out.seconds},
                         {"created", UtcNow()},
                         {"host", HostName()}};
  WriteFileAtomic(dir + "/key.json", DumpJson(info, 2) + "\n");
  SaveDbn(dir + "/dbn.bin", out.dbn);
  return out;
}

}  // namespace mavg
