#pragma once
// IDX files (the MNIST / Fashion-MNIST format), gzip-compressed or plain. Layout: the magic
// 0x00 0x00 <type> <ndims>, then ndims big-endian uint32 sizes, then the elements row-major.
// Only unsigned bytes (type 0x08) are supported: 0x00000801 label vectors, 0x00000803 images.

#include <cstdint>
#include <string>
#include <vector>

namespace mavg {

struct IdxArray {
  std::vector<int> dims;      // e.g. {60000, 28, 28}
  std::vector<uint8_t> data;  // [product of dims], row-major

  int64_t NumElements() const;
};

// Reads and validates an unsigned-byte IDX file (magic, dims, exact length, no trailing bytes).
// Throws mavg::Error naming the file.
IdxArray ReadIdx(const std::string& path);

}  // namespace mavg
