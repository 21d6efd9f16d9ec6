#include "engine/train/checkpoint.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/json.h"

namespace mavg {
namespace {

constexpr char kMagic[8] = {'M', 'A', 'V', 'G', 'T', 'N', 'S', 'R'};

uint32_t Crc(const char* data, size_t bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (bytes > 0) {
    const uInt chunk = static_cast<uInt>(std::min<size_t>(bytes, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data), chunk);
    data += chunk;
    bytes -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace

std::optional<nlohmann::json> CheckpointDir::ReadMeta() const {
  const std::string path = dir_ + "/meta.json";
  if (!PathExists(path)) return std::nullopt;
  try {
    return nlohmann::json::parse(ReadFile(path));
  } catch (const nlohmann::json::exception& e) {
    MAVG_FAIL("{}: corrupt checkpoint record: {}", path, e.what());
  }
}

std::string CheckpointDir::TensorPath(int64_t gen, const std::string& name) const {
  return fmt::format("{}/{}.{}.bin", dir_, name, gen);
}

void CheckpointDir::WriteTensors(Backend& backend, int64_t gen, const std::string& name,
                                 const std::vector<ConstMatrixView>& views) const {
  MakeDirs(dir_);
  uint64_t count = 0;
  for (const auto& v : views) count += static_cast<uint64_t>(v.Size());
  std::string out(sizeof(kMagic) + sizeof(uint64_t) + count * sizeof(float) + sizeof(uint32_t),
                  '\0');
  char* p = out.data();
  std::memcpy(p, kMagic, sizeof(kMagic));
  p += sizeof(kMagic);
  std::memcpy(p, &count, sizeof(count));
  p += sizeof(count);
  char* floats = p;
  for (const auto& v : views) {
    backend.CopyToHost(v, reinterpret_cast<float*>(p));
    p += v.Size() * sizeof(float);
  }
  const uint32_t crc = Crc(floats, count * sizeof(float));
  std::memcpy(p, &crc, sizeof(crc));
  WriteFileAtomic(TensorPath(gen, name), out);
}

void CheckpointDir::ReadTensors(Backend& backend, int64_t gen, const std::string& name,
                                const std::vector<MatrixView>& views) const {
  const std::string path = TensorPath(gen, name);
  const std::string data = ReadFile(path);
  uint64_t expected = 0;
  for (const auto& v : views) expected += static_cast<uint64_t>(v.Size());
  const size_t header = sizeof(kMagic) + sizeof(uint64_t);
  MAVG_CHECK(data.size() >= header && std::memcmp(data.data(), kMagic, sizeof(kMagic)) == 0,
             "{}: not a checkpoint tensor file", path);
  uint64_t count = 0;
  std::memcpy(&count, data.data() + sizeof(kMagic), sizeof(count));
  MAVG_CHECK(count == expected, "{}: holds {} values, expected {}", path, count, expected);
  MAVG_CHECK(data.size() == header + count * sizeof(float) + sizeof(uint32_t),
             "{}: truncated checkpoint file", path);
  const char* floats = data.data() + header;
  uint32_t crc = 0;
  std::memcpy(&crc, floats + count * sizeof(float), sizeof(crc));
  MAVG_CHECK(crc == Crc(floats, count * sizeof(float)), "{}: checksum mismatch", path);
  for (const auto& v : views) {
    backend.CopyFromHost(reinterpret_cast<const float*>(floats), v);
    floats += v.Size() * sizeof(float);
  }
}

bool CheckpointDir::HasTensors(int64_t gen, const std::string& name) const {
  std::error_code ec;
  return std::filesystem::exists(TensorPath(gen, name), ec);
}

void CheckpointDir::Commit(const nlohmann::json& meta) const {
  MakeDirs(dir_);
  WriteFileAtomic(dir_ + "/meta.json", DumpJson(meta, 2) + "\n");
  const std::string keep = fmt::format(".{}.bin", meta.at("generation").get<int64_t>());
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string file = entry.path().filename().string();
    if (file.ends_with(".bin") && !file.ends_with(keep)) {
      std::filesystem::remove(entry.path(), ec);
    }
  }
}

void ValidateCheckpointMeta(const nlohmann::json& meta, const RunConfig& config,
                            const std::string& path) {
  MAVG_CHECK(meta.is_object(), "{}: a checkpoint record is a JSON object", path);
  auto field = [&](const char* key) -> const nlohmann::json& {
    MAVG_CHECK(meta.contains(key), "{}: '{}' is missing", path, key);
    return meta.at(key);
  };
  auto integer = [&](const char* key, int64_t lo, int64_t hi, const char* range) {
    const nlohmann::json& v = field(key);
    MAVG_CHECK(v.is_number_integer(), "{}: '{}' is {}, expected an integer", path, key,
               DumpJson(v));
    const int64_t x = v.get<int64_t>();
    MAVG_CHECK(x >= lo && x <= hi, "{}: '{}' is {}, must be {}", path, key, x, range);
    return x;
  };
  auto boolean = [&](const char* key) {
    MAVG_CHECK(field(key).is_boolean(), "{}: '{}' is {}, expected true or false", path, key,
               DumpJson(field(key)));
  };
  auto number = [&](const char* key) {
    const nlohmann::json& v = field(key);
    MAVG_CHECK(v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0,
               "{}: '{}' "
               "is {}, expected a finite number >= 0",
               path, key, DumpJson(v));
  };
  integer("generation", 1, INT64_MAX, ">= 1");
  integer("epochs_done", 0, config.schedule.epochs,
          fmt::format("0..{} (the config's schedule.epochs)", config.schedule.epochs).c_str());
  integer("world_size", config.parallel.workers, config.parallel.workers,
          fmt::format("{} (the config's parallel.workers)", config.parallel.workers).c_str());
  MAVG_CHECK(field("run_id").is_string(), "{}: 'run_id' is not a string", path);
  boolean("stopped");
  boolean("has_best");
  MAVG_CHECK(field("schedule").is_object(), "{}: 'schedule' is not an object", path);
  if (meta.contains("averager")) {
    MAVG_CHECK(meta.at("averager").is_object(), "{}: 'averager' is not an object", path);
  }
  const nlohmann::json& cv = field("cv_best");
  MAVG_CHECK(cv.is_array() && cv.size() == 3 &&
                 std::all_of(cv.begin(), cv.end(),
                             [](const nlohmann::json& x) {
                               return x.is_number() && std::isfinite(x.get<double>()) &&
                                      x.get<double>() >= 0;
                             }),
             "{}: 'cv_best' is {}, expected 3 finite numbers >= 0", path, DumpJson(cv));
  if (meta.contains("cv_losses")) {  // absent in checkpoints of older versions
    const nlohmann::json& losses = meta.at("cv_losses");
    MAVG_CHECK(losses.is_array() &&
                   losses.size() == static_cast<size_t>(field("epochs_done").get<int64_t>()) &&
                   std::all_of(losses.begin(), losses.end(),
                               [](const nlohmann::json& x) {
                                 return x.is_null() ||
                                        (x.is_number() && std::isfinite(x.get<double>()) &&
                                         x.get<double>() >= 0);
                               }),
               "{}: 'cv_losses' is {}, expected one number >= 0 (or null) per epoch done", path,
               DumpJson(losses).substr(0, 80));
  }
  if (meta.contains("compute_total")) number("compute_total");
  if (meta.contains("frames_total")) integer("frames_total", 0, INT64_MAX, ">= 0");
  const nlohmann::json& progress = field("progress");
  if (!progress.is_null()) {
    MAVG_CHECK(progress.is_object() && progress.contains("minibatches") &&
                   progress.at("minibatches").is_number_integer() &&
                   progress.at("minibatches").get<int64_t>() >= 0,
               "{}: 'progress' is {}, expected null or an object with minibatches >= 0", path,
               DumpJson(progress).substr(0, 80));
    MAVG_CHECK(field("epochs_done").get<int64_t>() < config.schedule.epochs,
               "{}: 'progress' inside epoch {} after the last epoch ({})", path,
               field("epochs_done").get<int64_t>() + 1, config.schedule.epochs);
  }
}

}  // namespace mavg
