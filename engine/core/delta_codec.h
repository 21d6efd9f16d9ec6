#pragma once
// Lossy number formats for what workers exchange at a combine (their outer deltas: where each
// worker's block ended minus where it started), packed into bytes that travel as they are: over
// MPI the packed buffer is what is sent, and simulated workers encode and decode the same
// bytes, so both modes give the same model bit for bit (train/delta_exchange.h).
//   fp32  4 bytes per value, exact (the parameters' own format)
//   fp16  IEEE binary16, round to nearest even; no scale (range 6e-8 .. 65504, overflow: inf)
//   bf16  the upper half of a float32, round to nearest even; no scale
//   fp8   E4M3 (OCP 8-bit floats, "FN": no infinities, max 448) of x / s, saturating,
//         round to nearest even, s = the group's max |x| / 448
//   int4  signed 4-bit integers -7 .. 7 of x / s, round to nearest even, s = max |x| / 7
// The scaled formats take one float32 scale per group: the values of each tensor (the model's
// weight matrices and bias vectors, in order) in blocks of `block` values (a block never spans
// two tensors), or one group per tensor with block 0. Packed layout: the scales (float32, group
// order), then the codes in value order (int4: two per byte, the even value in the low nibble;
// an odd count pads the last byte's high nibble with 0).
// Encoding is a function of the values and the thread's floating-point mode: the default rounding,
// and the CPU backend's flush-to-zero of subnormals, which every process and mode of a run sets
// alike (so simulated workers and MPI ranks still encode the same bytes).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/core/enum_text.h"

namespace mavg {

// parallel.compress.format
enum class DeltaFormat { kFp32, kFp16, kBf16, kFp8, kInt4 };
inline constexpr EnumText<DeltaFormat> kDeltaFormatTexts[] = {{DeltaFormat::kFp32, "fp32"},
                                                              {DeltaFormat::kFp16, "fp16"},
                                                              {DeltaFormat::kBf16, "bf16"},
                                                              {DeltaFormat::kFp8, "fp8"},
                                                              {DeltaFormat::kInt4, "int4"}};
MAVG_ENUM_TEXTS(DeltaFormat, kDeltaFormatTexts)

// Bits per value of a format (without its scales).
int FormatBits(DeltaFormat format);
// Whether a format carries per-group scales.
bool FormatScaled(DeltaFormat format);

// One value's code and back (the formats' definitions above; fp8 and int4 without the scale:
// the value already divided by it).
uint16_t EncodeFp16(float x);
float DecodeFp16(uint16_t h);
uint16_t EncodeBf16(float x);
float DecodeBf16(uint16_t b);
uint8_t EncodeE4m3(float x);  // saturates to +-448; NaN gives the NaN code 0x7F
float DecodeE4m3(uint8_t c);
uint8_t EncodeInt4(float x);  // the nibble q + 8 of q = clamp(round(x), -7, 7)
float DecodeInt4(uint8_t nibble);

class DeltaCodec {
 public:
  // `tensor_sizes`: the values of each tensor, in order (their sum is the vector's length).
  // `block`: values per scale group inside a tensor (0: one per tensor); ignored unscaled.
  DeltaCodec(DeltaFormat format, int64_t block, std::vector<int64_t> tensor_sizes);

  DeltaFormat Format() const { return format_; }
  int64_t Values() const { return values_; }
  int64_t Groups() const { return static_cast<int64_t>(groups_.size()); }
  // Bytes of one packed vector: the scales and the codes.
  int64_t PackedBytes() const { return packed_bytes_; }

  // `x` ([Values()]) into `out` ([PackedBytes()]).
  void Encode(std::span<const float> x, std::span<std::byte> out) const;
  // `in` ([PackedBytes()]) into `out` ([Values()]): the values the codes stand for.
  void Decode(std::span<const std::byte> in, std::span<float> out) const;
  // `acc` += the values `in` stands for, element by element (one rounding per add).
  void DecodeAdd(std::span<const std::byte> in, std::span<float> acc) const;

 private:
  struct Group {
    int64_t begin, end;  // values [begin, end)
  };
  // The scale of group g packed in `in`.
  float ScaleOf(std::span<const std::byte> in, int64_t g) const;
  template <typename Sink>
  void ForEachDecoded(std::span<const std::byte> in, const Sink& sink) const;

  DeltaFormat format_;
  int64_t values_ = 0;
  std::vector<Group> groups_;  // scaled formats: the scale groups; else one group of all
  int64_t scale_bytes_ = 0;
  int64_t packed_bytes_ = 0;
};

}  // namespace mavg

MAVG_ENUM_FORMATTER(mavg::DeltaFormat);
