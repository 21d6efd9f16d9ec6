#include "engine/data/kaldi_compressed.h"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>

namespace mavg::kaldi {
namespace {

static_assert(std::endian::native == std::endian::little,
              "Kaldi binary files are little-endian; a big-endian host needs byte swapping");

// Kaldi's Uint16ToFloat: float arithmetic with the single-precision constant 1/65535.
float Uint16ToFloat(const CompressedHeader& h, uint16_t code) {
  return h.min_value + h.range * 1.52590218966964e-05F * code;
}

// Kaldi's CharToFloat: the products by 1/64, 1/128, 1/63 are in double.
float CharToFloat(float p0, float p25, float p75, float p100, int code) {
  if (code <= 64) return static_cast<float>(p0 + (p25 - p0) * code * (1 / 64.0));
  if (code <= 192) return static_cast<float>(p25 + (p75 - p25) * (code - 64) * (1 / 128.0));
  return static_cast<float>(p75 + (p100 - p75) * (code - 192) * (1 / 63.0));
}

uint16_t LoadU16(const unsigned char* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

}  // namespace

bool CompressedFormatFromToken(std::string_view token, CompressedFormat* format) {
  if (token == "CM") {
    *format = CompressedFormat::kOneByteWithColHeaders;
  } else if (token == "CM2") {
    *format = CompressedFormat::kTwoByte;
  } else if (token == "CM3") {
    *format = CompressedFormat::kOneByte;
  } else {
    return false;
  }
  return true;
}

CompressedHeader ParseCompressedHeader(CompressedFormat format, const unsigned char* bytes) {
  CompressedHeader h;
  h.format = format;
  std::memcpy(&h.min_value, bytes, 4);
  std::memcpy(&h.range, bytes + 4, 4);
  std::memcpy(&h.num_rows, bytes + 8, 4);
  std::memcpy(&h.num_cols, bytes + 12, 4);
  return h;
}

std::string CheckCompressedHeader(const CompressedHeader& h) {
  if (h.num_rows < 0 || h.num_cols < 0) {
    return fmt::format("bad compressed-matrix header: negative size {} x {}", h.num_rows,
                       h.num_cols);
  }
  if (!std::isfinite(h.min_value) || !std::isfinite(h.range) || h.range < 0) {
    return fmt::format(
        "bad compressed-matrix header: min_value {} and range {} must be finite "
        "with range >= 0",
        h.min_value, h.range);
  }
  return {};
}

int64_t CompressedBodySize(const CompressedHeader& h) {
  if (h.num_cols == 0) return 0;  // Kaldi's empty matrix
  const int64_t rows = h.num_rows, cols = h.num_cols;
  switch (h.format) {
    case CompressedFormat::kOneByteWithColHeaders:
      return cols * (8 + rows);
    case CompressedFormat::kTwoByte:
      return 2 * rows * cols;
    case CompressedFormat::kOneByte:
      return rows * cols;
  }
  return 0;
}

void DecodeCompressedMatrix(const CompressedHeader& h, const unsigned char* body, float* out) {
  if (h.num_cols == 0) return;
  const int64_t rows = h.num_rows, cols = h.num_cols;
  switch (h.format) {
    case CompressedFormat::kOneByteWithColHeaders: {
      const unsigned char* codes = body + 8 * cols;
      std::array<float, 256> table;  // code -> value for one column
      for (int64_t c = 0; c < cols; ++c) {
        const unsigned char* col_header = body + 8 * c;
        float p0 = Uint16ToFloat(h, LoadU16(col_header));
        float p25 = Uint16ToFloat(h, LoadU16(col_header + 2));
        float p75 = Uint16ToFloat(h, LoadU16(col_header + 4));
        float p100 = Uint16ToFloat(h, LoadU16(col_header + 6));
        for (int code = 0; code < 256; ++code) table[code] = CharToFloat(p0, p25, p75, p100, code);
        const unsigned char* col_codes = codes + c * rows;
        for (int64_t r = 0; r < rows; ++r) out[r * cols + c] = table[col_codes[r]];
      }
      break;
    }
    case CompressedFormat::kTwoByte: {
      const float increment = static_cast<float>(h.range * (1.0 / 65535.0));
      for (int64_t i = 0; i < rows * cols; ++i) {
        out[i] = h.min_value + LoadU16(body + 2 * i) * increment;
      }
      break;
    }
    case CompressedFormat::kOneByte: {
      const float increment = static_cast<float>(h.range * (1.0 / 255.0));
      for (int64_t i = 0; i < rows * cols; ++i) out[i] = h.min_value + body[i] * increment;
      break;
    }
  }
}

}  // namespace mavg::kaldi
