#pragma once
// A checksummed binary container for arrays of floats with a JSON header (little-endian):
//   8 bytes  magic
//   u32      format version
//   u64      header length H, then H bytes of JSON
//   u64      number of floats P, then P float32
//   u32      CRC-32 (zlib) of the P floats
//   u32      CRC-32 of everything before P (magic, version, header length, header): a flipped
//            digit in the header (a feature transform, a prior) is caught too. Files written
//            before this field end after the first checksum and are read without it.
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
