#pragma once
// Decoder for Kaldi's CompressedMatrix (kaldi matrix/compressed-matrix.{h,cc}); we only read it.
// On disk, a binary object "CM ", "CM2 " or "CM3 " (the token names the format) is followed by
//   float min_value, float range, int32 num_rows, int32 num_cols     (16 bytes, little-endian)
// and then the body:
//   CM  (format 1, speech features): num_cols per-column headers {uint16 p0, p25, p75, p100}
//       (quantiles as 16-bit codes of [min_value, min_value + range]), then num_rows uint8 codes
//       per column, column-major. Codes 0..64 interpolate p0..p25, 64..192 p25..p75 and
//       192..255 p75..p100.
//   CM2 (format 2): num_rows x num_cols uint16 codes, row-major: min_value + code * range/65535.
//   CM3 (format 3): num_rows x num_cols uint8 codes, row-major:  min_value + code * range/255.
// An empty matrix is written as "CM " with an all-zero header and no body (Kaldi treats any
// header with num_cols == 0 as empty).

#include <cstdint>
#include <string>
#include <string_view>

namespace mavg::kaldi {

enum class CompressedFormat : int { kOneByteWithColHeaders = 1, kTwoByte = 2, kOneByte = 3 };

struct CompressedHeader {
  CompressedFormat format = CompressedFormat::kOneByteWithColHeaders;
  float min_value = 0.0f;
  float range = 0.0f;
  int32_t num_rows = 0;
  int32_t num_cols = 0;
};

inline constexpr int64_t kCompressedHeaderBytes = 16;  // on disk, without the format

// "CM" / "CM2" / "CM3" to the format; false for any other token.
bool CompressedFormatFromToken(std::string_view token, CompressedFormat* format);

// Parses the 16 header bytes that follow the token.
CompressedHeader ParseCompressedHeader(CompressedFormat format, const unsigned char* bytes);

// Empty when the header can be decoded; otherwise why not (negative sizes, NaN/Inf/negative
// range, ...). The caller still checks the body size against the bytes available.
std::string CheckCompressedHeader(const CompressedHeader& header);

// Bytes of the body after the header (0 for an empty matrix). Requires a checked header.
int64_t CompressedBodySize(const CompressedHeader& header);

// Decodes `body` (CompressedBodySize bytes) into `out`, num_rows x num_cols floats row-major,
// with Kaldi's own float arithmetic so the values match Kaldi's to the last bit.
void DecodeCompressedMatrix(const CompressedHeader& header, const unsigned char* body, float* out);

}  // namespace mavg::kaldi
