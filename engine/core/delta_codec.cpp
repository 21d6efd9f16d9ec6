#include "engine/core/delta_codec.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "engine/core/error.h"

namespace mavg {
namespace {

constexpr float kE4m3Max = 448.0f;
constexpr float kInt4Max = 7.0f;

// Round to nearest, ties to even, of a value whose integer part fits an int (the default
// floating-point environment's rounding, which the program never changes).
float RoundEven(float x) { return std::nearbyint(x); }

}  // namespace

int FormatBits(DeltaFormat format) {
  switch (format) {
    case DeltaFormat::kFp32:
      return 32;
    case DeltaFormat::kFp16:
    case DeltaFormat::kBf16:
      return 16;
    case DeltaFormat::kFp8:
      return 8;
    case DeltaFormat::kInt4:
      return 4;
  }
  return 32;
}

bool FormatScaled(DeltaFormat format) {
  return format == DeltaFormat::kFp8 || format == DeltaFormat::kInt4;
}

uint16_t EncodeFp16(float x) {
  const uint32_t f = std::bit_cast<uint32_t>(x);
  const auto sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  const uint32_t a = f & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return sign | 0x7E00u;  // NaN (quiet)
  const float mag = std::bit_cast<float>(a);
  if (mag < 0x1p-14f) {  // subnormal (or zero): units of 2^-24, exact scaling
    return sign | static_cast<uint16_t>(RoundEven(mag * 0x1p24f));  // 1024 is 2^-14, normal
  }
  const int e = static_cast<int>(a >> 23) - 127;
  if (e > 15) return sign | 0x7C00u;  // inf
  const uint32_t m = a & 0x7FFFFFu;
  uint32_t h = (static_cast<uint32_t>(e + 15) << 10) | (m >> 13);
  const uint32_t rest = m & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry moves the exponent
  if (h >= 0x7C00u) h = 0x7C00u;                             // rounded past 65504: inf
  return sign | static_cast<uint16_t>(h);
}

float DecodeFp16(uint16_t h) {
  const float sign = (h & 0x8000u) ? -1.0f : 1.0f;
  const int e = (h >> 10) & 0x1F;
  const int m = h & 0x3FF;
  if (e == 0) return sign * std::ldexp(static_cast<float>(m), -24);
  if (e == 31) return m ? std::numeric_limits<float>::quiet_NaN() : sign * INFINITY;
  return sign * std::ldexp(static_cast<float>(1024 + m), e - 25);
}

uint16_t EncodeBf16(float x) {
  const uint32_t f = std::bit_cast<uint32_t>(x);
  if ((f & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((f >> 16) | 0x0040u);
  return static_cast<uint16_t>((f + 0x7FFFu + ((f >> 16) & 1u)) >> 16);
}

float DecodeBf16(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

uint8_t EncodeE4m3(float x) {
  if (std::isnan(x)) return 0x7F;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const float a = std::fabs(x);
  if (a >= kE4m3Max) return sign | 0x7E;
  if (a < 0x1p-6f) {  // subnormal: units of 2^-9; 8 is 2^-6, the first normal code
    return sign | static_cast<uint8_t>(RoundEven(a * 0x1p9f));
  }
  int k = 0;
  std::frexp(a, &k);  // a = f 2^k, f in [0.5, 1): a in [2^e, 2^(e+1)) with e = k - 1
  const int e = k - 1;
  const int n = static_cast<int>(RoundEven(std::ldexp(a, 3 - e)));  // 8 .. 16 eighths
  return sign | static_cast<uint8_t>(((e + 7) << 3) + n - 8);       // 16 is the next binade
}

float DecodeE4m3(uint8_t c) {
  const float sign = (c & 0x80) ? -1.0f : 1.0f;
  if ((c & 0x7F) == 0x7F) return std::numeric_limits<float>::quiet_NaN();
  const int e = (c >> 3) & 0xF;
  const int m = c & 7;
  if (e == 0) return sign * std::ldexp(static_cast<float>(m), -9);
  return sign * std::ldexp(static_cast<float>(8 + m), e - 10);
}

uint8_t EncodeInt4(float x) {
  if (std::isnan(x)) return 8;  // the group's scale is NaN already (Encode)
  const float q = RoundEven(std::fmin(std::fmax(x, -kInt4Max), kInt4Max));
  return static_cast<uint8_t>(static_cast<int>(q) + 8);
}

float DecodeInt4(uint8_t nibble) { return static_cast<float>(static_cast<int>(nibble & 0xF) - 8); }

DeltaCodec::DeltaCodec(DeltaFormat format, int64_t block, std::vector<int64_t> tensor_sizes)
    : format_(format) {
  MAVG_CHECK(block >= 0, "compression block of {} values", block);
  for (int64_t t : tensor_sizes) {
    MAVG_CHECK(t >= 0, "a tensor of {} values", t);
    if (FormatScaled(format)) {
      const int64_t step = block > 0 ? block : std::max<int64_t>(t, 1);
      for (int64_t b = 0; b < t; b += step) {
        groups_.push_back({values_ + b, values_ + std::min(t, b + step)});
      }
    }
    values_ += t;
  }
  scale_bytes_ = FormatScaled(format) ? Groups() * static_cast<int64_t>(sizeof(float)) : 0;
  const int64_t code_bytes =
      format == DeltaFormat::kInt4 ? (values_ + 1) / 2 : values_ * (FormatBits(format) / 8);
  packed_bytes_ = scale_bytes_ + code_bytes;
}

float DeltaCodec::ScaleOf(std::span<const std::byte> in, int64_t g) const {
  float s = 0.0f;
  std::memcpy(&s, in.data() + g * static_cast<int64_t>(sizeof(float)), sizeof(float));
  return s;
}

void DeltaCodec::Encode(std::span<const float> x, std::span<std::byte> out) const {
  MAVG_CHECK(static_cast<int64_t>(x.size()) == values_ &&
                 static_cast<int64_t>(out.size()) == packed_bytes_,
             "encode: {} values into {} bytes; the codec takes {} into {}", x.size(), out.size(),
             values_, packed_bytes_);
  std::byte* codes = out.data() + scale_bytes_;
  switch (format_) {
    case DeltaFormat::kFp32:
      std::memcpy(codes, x.data(), x.size() * sizeof(float));
      return;
    case DeltaFormat::kFp16:
    case DeltaFormat::kBf16:
      for (int64_t i = 0; i < values_; ++i) {
        const uint16_t h = format_ == DeltaFormat::kFp16 ? EncodeFp16(x[i]) : EncodeBf16(x[i]);
        std::memcpy(codes + 2 * i, &h, 2);  // host byte order: every rank runs one build
      }
      return;
    case DeltaFormat::kFp8:
    case DeltaFormat::kInt4:
      break;
  }
  const bool fp8 = format_ == DeltaFormat::kFp8;
  if (!fp8) std::memset(codes, 0, static_cast<size_t>((values_ + 1) / 2));
  for (int64_t g = 0; g < Groups(); ++g) {
    const Group& grp = groups_[g];
    float amax = 0.0f;
    bool finite = true;
    for (int64_t i = grp.begin; i < grp.end; ++i) {
      finite = finite && std::isfinite(x[i]);
      amax = std::fmax(amax, std::fabs(x[i]));
    }
    // A non-finite value makes the whole group NaN (a diverged worker stays visible).
    const float scale =
        finite ? amax / (fp8 ? kE4m3Max : kInt4Max) : std::numeric_limits<float>::quiet_NaN();
    std::memcpy(out.data() + g * static_cast<int64_t>(sizeof(float)), &scale, sizeof(float));
    for (int64_t i = grp.begin; i < grp.end; ++i) {
      // Zero scale: every value of the group is 0 (or below the scale's float range).
      const float v = scale > 0.0f ? x[i] / scale : (scale == 0.0f ? 0.0f : x[i]);
      if (fp8) {
        codes[i] = static_cast<std::byte>(EncodeE4m3(v));
      } else {
        const uint8_t q = EncodeInt4(v);
        codes[i / 2] |= static_cast<std::byte>(i % 2 == 0 ? q : q << 4);
      }
    }
  }
}

template <typename Sink>
void DeltaCodec::ForEachDecoded(std::span<const std::byte> in, const Sink& sink) const {
  MAVG_CHECK(static_cast<int64_t>(in.size()) == packed_bytes_,
             "decode: {} bytes; the codec packs {} values into {}", in.size(), values_,
             packed_bytes_);
  const std::byte* codes = in.data() + scale_bytes_;
  switch (format_) {
    case DeltaFormat::kFp32:
      for (int64_t i = 0; i < values_; ++i) {
        float v = 0.0f;
        std::memcpy(&v, codes + 4 * i, 4);
        sink(i, v);
      }
      return;
    case DeltaFormat::kFp16:
    case DeltaFormat::kBf16:
      for (int64_t i = 0; i < values_; ++i) {
        uint16_t h = 0;
        std::memcpy(&h, codes + 2 * i, 2);
        sink(i, format_ == DeltaFormat::kFp16 ? DecodeFp16(h) : DecodeBf16(h));
      }
      return;
    case DeltaFormat::kFp8:
    case DeltaFormat::kInt4:
      break;
  }
  const bool fp8 = format_ == DeltaFormat::kFp8;
  for (int64_t g = 0; g < Groups(); ++g) {
    const float scale = ScaleOf(in, g);
    for (int64_t i = groups_[g].begin; i < groups_[g].end; ++i) {
      const auto c = static_cast<uint8_t>(codes[fp8 ? i : i / 2]);
      const float q = fp8 ? DecodeE4m3(c) : DecodeInt4(i % 2 == 0 ? c : c >> 4);
      sink(i, q * scale);
    }
  }
}

void DeltaCodec::Decode(std::span<const std::byte> in, std::span<float> out) const {
  MAVG_CHECK(static_cast<int64_t>(out.size()) == values_, "decode into {} values, not {}",
             out.size(), values_);
  ForEachDecoded(in, [&](int64_t i, float v) { out[i] = v; });
}

void DeltaCodec::DecodeAdd(std::span<const std::byte> in, std::span<float> acc) const {
  MAVG_CHECK(static_cast<int64_t>(acc.size()) == values_, "decode into {} values, not {}",
             acc.size(), values_);
  ForEachDecoded(in, [&](int64_t i, float v) { acc[i] += v; });
}

}  // namespace mavg
