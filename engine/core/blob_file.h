#pragma once
// A checksummed binary container for arrays of floats with a JSON header (little-endian):
//   8 bytes  magic
//   u32      format version
//   u64      header length H, then H bytes of JSON
//   u64      number of floats P, then P float32
//   u32      CRC-32 (zlib) of the P floats
// The header carries its own checksum as the key "header_crc": CRC-32 of the header's canonical
// JSON text without that key, so a flipped digit in the header (a feature transform, a prior)
// is caught too. The key is added on write and removed on read (callers never see it); files
// without it predate the field and are read unchecked, and builds that predate it ignore it.
// (A few builds wrote that checksum as a trailing u32 over the bytes up to the header's end;
// such files are read and checked as well.)
// Written atomically (tmp + fsync + rename). Used by model files and pretrained stacks.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mavg {

struct BlobFile {
  uint32_t version = 0;  // the file's format version
  nlohmann::json header;
  std::vector<float> data;
};

// `magic` has exactly 8 characters.
void WriteBlobFile(const std::string& path, const char* magic, uint32_t version,
                   const nlohmann::json& header, const std::vector<float>& data);
// Reads and checks the file; `what` names its kind in errors ("model file"). Throws naming the
// path on a bad magic, a version outside [min_version, version], truncation, corrupt header,
// checksum or trailing bytes.
BlobFile ReadBlobFile(const std::string& path, const char* magic, uint32_t version,
                      const char* what, uint32_t min_version = 0);

}  // namespace mavg
