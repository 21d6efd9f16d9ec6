#include "engine/core/blob_file.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/json.h"

namespace mavg {
namespace {

constexpr size_t kMagicSize = 8;

template <typename T>
void Put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

class Cursor {
 public:
  Cursor(const std::string& data, const std::string& path, const char* what)
      : data_(data), path_(path), what_(what) {}
  template <typename T>
  T Get(const char* field) {
    T value;
    Need(sizeof(T), field);
    std::memcpy(&value, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }
  const char* Take(size_t n, const char* field) {
    Need(n, field);
    const char* p = data_.data() + pos_;
    pos_ += n;
    return p;
  }
  bool AtEnd() const { return pos_ == data_.size(); }

 private:
  void Need(size_t n, const char* field) {
    MAVG_CHECK(n <= data_.size() - pos_, "{}: truncated {} (reading {} at byte {})", path_, what_,
               field, pos_);
  }
  const std::string& data_;
  const std::string& path_;
  const char* what_;
  size_t pos_ = 0;
};

uint32_t CrcBytes(const void* data, size_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* bytes = reinterpret_cast<const Bytef*>(data);
  size_t left = size;
  while (left > 0) {
    const uInt chunk = static_cast<uInt>(std::min<size_t>(left, 1u << 30));
    crc = crc32(crc, bytes, chunk);
    bytes += chunk;
    left -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

uint32_t Crc(const float* data, size_t n) { return CrcBytes(data, n * sizeof(float)); }

// The header's own checksum: CRC-32 of its canonical text (sorted keys, shortest round-trip
// numbers) without the checksum key. Kept inside the JSON so that builds which predate it read
// the file unchanged (they ignore keys they do not use).
constexpr const char* kHeaderCrcKey = "header_crc";

uint32_t HeaderCrc(const nlohmann::json& header_without_crc) {
  const std::string text = DumpJson(header_without_crc);
  return CrcBytes(text.data(), text.size());
}

}  // namespace

void WriteBlobFile(const std::string& path, const char* magic, uint32_t version,
                   const nlohmann::json& header, const std::vector<float>& data) {
  nlohmann::json stamped = header;
  if (stamped.is_object()) {
    stamped.erase(kHeaderCrcKey);
    stamped[kHeaderCrcKey] = HeaderCrc(stamped);
  }
  const std::string header_text = DumpJson(stamped);
  std::string out;
  out.reserve(64 + header_text.size() + data.size() * sizeof(float));
  out.append(magic, kMagicSize);
  Put<uint32_t>(out, version);
  Put<uint64_t>(out, header_text.size());
  out += header_text;
  Put<uint64_t>(out, data.size());
  out.append(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(float));
  Put<uint32_t>(out, Crc(data.data(), data.size()));
  WriteFileAtomic(path, out);
}

BlobFile ReadBlobFile(const std::string& path, const char* magic, uint32_t version,
                      const char* what, uint32_t min_version) {
  if (min_version == 0) min_version = version;
  const std::string bytes = ReadFile(path);
  Cursor cur(bytes, path, what);
  const char* m = cur.Take(kMagicSize, "magic");
  MAVG_CHECK(std::memcmp(m, magic, kMagicSize) == 0, "{}: not a mavg {}", path, what);
  const auto v = cur.Get<uint32_t>("version");
  MAVG_CHECK(v >= min_version && v <= version,
             "{}: {} format version {} is not supported (this build reads {})", path, what, v,
             min_version == version ? fmt::format("{}", version)
                                    : fmt::format("{} to {}", min_version, version));
  const auto header_len = cur.Get<uint64_t>("header length");
  const char* header_text = cur.Take(header_len, "header");
  const size_t header_end = static_cast<size_t>(header_text + header_len - bytes.data());
  BlobFile blob;
  blob.version = v;
  try {
    blob.header = nlohmann::json::parse(header_text, header_text + header_len);
  } catch (const std::exception& e) {
    MAVG_FAIL("{}: corrupt {} header: {}", path, what, e.what());
  }
  const auto n = cur.Get<uint64_t>("parameter count");
  MAVG_CHECK(n <= bytes.size() / sizeof(float), "{}: truncated {} (reading parameters)", path,
             what);
  const char* raw = cur.Take(n * sizeof(float), "parameters");
  blob.data.resize(n);
  if (n > 0) std::memcpy(blob.data.data(), raw, n * sizeof(float));  // data() of none: null
  const auto crc = cur.Get<uint32_t>("checksum");
  MAVG_CHECK(crc == Crc(blob.data.data(), blob.data.size()), "{}: parameter checksum mismatch",
             path);
  const auto header_damaged = [&] {
    MAVG_FAIL("{}: header checksum mismatch (the {}'s header was changed or damaged)", path, what);
  };
  if (blob.header.is_object() && blob.header.contains(kHeaderCrcKey)) {
    const nlohmann::json& stored = blob.header[kHeaderCrcKey];
    if (!stored.is_number_unsigned()) header_damaged();
    const auto expected = stored.get<uint64_t>();
    blob.header.erase(kHeaderCrcKey);
    if (expected != HeaderCrc(blob.header)) header_damaged();
  } else if (!cur.AtEnd()) {
    // Some builds kept the header's checksum as a u32 after the parameters' (CRC-32 of the
    // bytes from the magic to the end of the header); their files are read and checked too.
    const auto header_crc = cur.Get<uint32_t>("header checksum");
    if (header_crc != CrcBytes(bytes.data(), header_end)) header_damaged();
  }
  MAVG_CHECK(cur.AtEnd(), "{}: trailing bytes after the {}", path, what);
  return blob;
}

}  // namespace mavg
