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
  const std::string& path = meta_;
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

void CheckpointDir::Commit(const CheckpointMeta& meta) const {
  MakeDirs(dir_);
  WriteFileAtomic(meta_, DumpJson(ToJson(meta), 2) + "\n");
  const std::string keep = fmt::format(".{}.bin", meta.generation);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string file = entry.path().filename().string();
    if (file.ends_with(".bin") && !file.ends_with(keep)) {
      std::filesystem::remove(entry.path(), ec);
    }
  }
}

CheckpointMeta ReadCheckpointMeta(const nlohmann::json& meta, const RunConfig& config,
                                  const std::string& path) {
  CheckpointMeta m = CheckpointMetaFromJson(meta, path);
  m.Validate({config.schedule.epochs, config.parallel.workers}, path);
  return m;
}

}  // namespace mavg
