// The compressed formats against a reference quantiser written here from the formats'
// definitions: every representable value of a format in a sorted table, a value's code the
// nearest entry (ties to the even code). Round-trip error bounds, packing on odd sizes, scale
// groups per block and per tensor, non-finite values, and error feedback's residual invariant.
#include "engine/core/delta_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "engine/core/rng.h"

namespace mavg {
namespace {

// A format's non-negative representable values, ascending, each with its code.
struct Entry {
  double value;
  uint32_t code;
};

// The nearest entry to |x| (ties: the even code), by a scan: no rounding arithmetic shared
// with the codec.
uint32_t Nearest(const std::vector<Entry>& table, double a) {
  size_t best = 0;
  for (size_t i = 1; i < table.size(); ++i) {
    const double d = std::fabs(table[i].value - a), bd = std::fabs(table[best].value - a);
    if (d < bd || (d == bd && table[i].code % 2 == 0)) best = i;
  }
  return table[best].code;
}

// Binary16 values from the definition: (-1)^s 2^(e-15) (1 + m/1024), subnormals 2^-14 m/1024.
std::vector<Entry> Fp16Table() {
  std::vector<Entry> t;
  for (uint32_t e = 0; e < 31; ++e) {
    for (uint32_t m = 0; m < 1024; ++m) {
      const double v = e == 0 ? std::ldexp(m / 1024.0, -14) : std::ldexp(1 + m / 1024.0, e - 15);
      t.push_back({v, (e << 10) | m});
    }
  }
  return t;
}

// E4M3 (OCP FN): 2^(e-7) (1 + m/8), subnormals 2^-6 m/8; code 0x7F is NaN, 0x7E = 448 the max.
std::vector<Entry> E4m3Table() {
  std::vector<Entry> t;
  for (uint32_t c = 0; c < 0x7F; ++c) {
    const uint32_t e = c >> 3, m = c & 7;
    t.push_back({e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1 + m / 8.0, e - 7), c});
  }
  return t;
}

TEST(DeltaFormats, DecodedValuesFollowTheDefinitions) {
  EXPECT_EQ(DecodeFp16(0x3C00), 1.0f);
  EXPECT_EQ(DecodeFp16(0x7BFF), 65504.0f);
  EXPECT_EQ(DecodeFp16(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(DecodeFp16(0xC000), -2.0f);
  EXPECT_TRUE(std::isinf(DecodeFp16(0x7C00)));
  EXPECT_EQ(DecodeBf16(0x3F80), 1.0f);
  EXPECT_EQ(DecodeBf16(0xC040), -3.0f);
  EXPECT_EQ(DecodeE4m3(0x7E), 448.0f);
  EXPECT_EQ(DecodeE4m3(0x38), 1.0f);
  EXPECT_EQ(DecodeE4m3(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(DecodeE4m3(0x08), std::ldexp(1.0f, -6));
  EXPECT_EQ(DecodeE4m3(0xB8), -1.0f);
  EXPECT_TRUE(std::isnan(DecodeE4m3(0x7F)));
  for (int q = -7; q <= 7; ++q) EXPECT_EQ(DecodeInt4(static_cast<uint8_t>(q + 8)), q);
  const std::vector<Entry> fp16 = Fp16Table(), e4m3 = E4m3Table();
  for (const Entry& e : fp16) ASSERT_EQ(DecodeFp16(static_cast<uint16_t>(e.code)), e.value);
  for (const Entry& e : e4m3) ASSERT_EQ(DecodeE4m3(static_cast<uint8_t>(e.code)), e.value);
}

// Random values across each format's range, and every midpoint between neighbours (the ties).
TEST(DeltaFormats, EncodingIsTheNearestValueTiesToEven) {
  const std::vector<Entry> fp16 = Fp16Table(), e4m3 = E4m3Table();
  Rng rng(3);
  std::vector<float> xs;
  for (int i = 0; i < 3000; ++i) {
    xs.push_back(
        static_cast<float>(std::ldexp(rng.Uniform(), static_cast<int>(rng.Uniform() * 40) - 26)));
  }
  for (size_t i = 0; i + 1 < e4m3.size(); ++i) {
    xs.push_back(static_cast<float>((e4m3[i].value + e4m3[i + 1].value) / 2));
  }
  for (size_t i = 0; i + 1 < fp16.size(); i += 37) {
    xs.push_back(static_cast<float>((fp16[i].value + fp16[i + 1].value) / 2));
  }
  for (const float x : xs) {
    for (const float s : {x, -x}) {
      const uint32_t sign16 = std::signbit(s) ? 0x8000 : 0, sign8 = std::signbit(s) ? 0x80 : 0;
      if (x < 65504.0f) {
        ASSERT_EQ(EncodeFp16(s), sign16 | Nearest(fp16, x)) << s;
      }
      ASSERT_EQ(EncodeE4m3(s), sign8 | (x >= 448.0f ? 0x7Eu : Nearest(e4m3, x))) << s;
    }
  }
  // bf16: the nearest of the two bfloat16 neighbours in magnitude (the float's upper half and
  // the next), ties to even; the sign bit kept.
  for (const float x : xs) {
    for (const float s : {x, -x}) {
      uint32_t bits = 0;
      std::memcpy(&bits, &s, 4);
      const uint32_t lo = bits >> 16;  // sign included: lo + 1 is one step further from 0
      const double dlo = std::fabs(double{s} - DecodeBf16(static_cast<uint16_t>(lo)));
      const double dhi = std::fabs(double{DecodeBf16(static_cast<uint16_t>(lo + 1))} - s);
      const uint32_t want = dlo < dhi || (dlo == dhi && lo % 2 == 0) ? lo : lo + 1;
      ASSERT_EQ(EncodeBf16(s), want) << s;
    }
  }
  // int4: q = round half to even of x, clamped to -7 .. 7.
  EXPECT_EQ(DecodeInt4(EncodeInt4(2.5f)), 2.0f);
  EXPECT_EQ(DecodeInt4(EncodeInt4(3.5f)), 4.0f);
  EXPECT_EQ(DecodeInt4(EncodeInt4(-0.5f)), 0.0f);
  EXPECT_EQ(DecodeInt4(EncodeInt4(-9.0f)), -7.0f);
  EXPECT_EQ(DecodeInt4(EncodeInt4(6.51f)), 7.0f);
  // Past the range: fp16 overflows to inf (65520 is the midpoint to the next binade), E4M3
  // saturates at 448.
  EXPECT_EQ(EncodeFp16(65519.0f), 0x7BFF);
  EXPECT_EQ(EncodeFp16(65520.0f), 0x7C00);
  EXPECT_EQ(EncodeE4m3(1e9f), 0x7E);
  EXPECT_EQ(EncodeE4m3(-1e9f), 0xFE);
}

std::vector<float> RandomVector(int64_t n, uint64_t seed, double spread) {
  Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>((rng.Uniform() - 0.5) * spread);
  return v;
}

std::vector<float> RoundTrip(const DeltaCodec& c, const std::vector<float>& x) {
  std::vector<std::byte> packed(static_cast<size_t>(c.PackedBytes()));
  c.Encode(x, packed);
  std::vector<float> y(x.size());
  c.Decode(packed, y);
  return y;
}

TEST(DeltaCodec, PackedSizes) {
  EXPECT_EQ(DeltaCodec(DeltaFormat::kFp32, 0, {10}).PackedBytes(), 40);
  EXPECT_EQ(DeltaCodec(DeltaFormat::kFp16, 4, {10}).PackedBytes(), 20);
  EXPECT_EQ(DeltaCodec(DeltaFormat::kBf16, 4, {10}).PackedBytes(), 20);
  // fp8: blocks of 4 inside tensors of 10 and 3: groups 4+4+2 and 3: 4 scales.
  DeltaCodec fp8(DeltaFormat::kFp8, 4, {10, 3});
  EXPECT_EQ(fp8.Groups(), 4);
  EXPECT_EQ(fp8.PackedBytes(), 4 * 4 + 13);
  // int4, odd count: 13 codes in 7 bytes; one scale per tensor with block 0.
  DeltaCodec int4(DeltaFormat::kInt4, 0, {10, 3});
  EXPECT_EQ(int4.Groups(), 2);
  EXPECT_EQ(int4.PackedBytes(), 2 * 4 + 7);
}

// |x - D(Q(x))|: fp16 and bf16 half an ulp of x (relative 2^-11, 2^-8) in the normal range;
// fp8 half an ulp of x / s (relative 2^-4, absolute 2^-10 s among the subnormals); int4 s / 2.
TEST(DeltaCodec, RoundTripErrorBounds) {
  const std::vector<int64_t> sizes = {61, 7, 130, 1};
  int64_t n = 0;
  for (int64_t s : sizes) n += s;
  const std::vector<float> x = RandomVector(n, 9, 0.02);
  const double slack = 1 + 1e-5;
  {
    const std::vector<float> y = RoundTrip(DeltaCodec(DeltaFormat::kFp32, 0, sizes), x);
    EXPECT_EQ(y, x);
  }
  for (const auto [format, rel] :
       {std::pair{DeltaFormat::kFp16, 0x1p-11}, std::pair{DeltaFormat::kBf16, 0x1p-8}}) {
    const std::vector<float> y = RoundTrip(DeltaCodec(format, 0, sizes), x);
    for (int64_t i = 0; i < n; ++i) {
      const double bound = std::max(std::fabs(x[i]) * rel, 0x1p-25);  // fp16 subnormals
      ASSERT_LE(std::fabs(x[i] - y[i]), bound * slack) << format << " " << i;
    }
  }
  for (const int64_t block : {int64_t{0}, int64_t{16}}) {
    for (const DeltaFormat format : {DeltaFormat::kFp8, DeltaFormat::kInt4}) {
      const std::vector<float> y = RoundTrip(DeltaCodec(format, block, sizes), x);
      // The groups as the codec's definition makes them: each tensor in blocks.
      int64_t begin = 0;
      for (int64_t t : sizes) {
        const int64_t step = block > 0 ? block : t;
        for (int64_t b = begin; b < begin + t; b += step) {
          const int64_t e = std::min(begin + t, b + step);
          double amax = 0;
          for (int64_t i = b; i < e; ++i) amax = std::max(amax, std::fabs(double{x[i]}));
          for (int64_t i = b; i < e; ++i) {
            const double err = std::fabs(x[i] - y[i]);
            if (format == DeltaFormat::kFp8) {
              const double s = amax / 448;
              ASSERT_LE(err, std::max(std::fabs(x[i]) * 0x1p-4, s * 0x1p-10) * slack) << i;
            } else {
              ASSERT_LE(err, amax / 7 / 2 * slack) << i;
            }
          }
          // The group's largest value comes back at the format's max (exact up to rounding).
          for (int64_t i = b; i < e; ++i) {
            if (std::fabs(x[i]) == amax && amax > 0) {
              ASSERT_NEAR(std::fabs(y[i]), amax, amax * 1e-6) << format << " " << i;
            }
          }
        }
        begin += t;
      }
    }
  }
}

TEST(DeltaCodec, Int4PacksTwoPerByteLowNibbleFirst) {
  DeltaCodec c(DeltaFormat::kInt4, 0, {5});
  const std::vector<float> x = {7, -7, 1, 0, -3};  // scale 1: codes 15, 1, 9, 8, 5
  std::vector<std::byte> packed(static_cast<size_t>(c.PackedBytes()));
  c.Encode(x, packed);
  float scale = 0;
  std::memcpy(&scale, packed.data(), 4);
  EXPECT_EQ(scale, 1.0f);
  EXPECT_EQ(static_cast<int>(packed[4]), 0x1F);
  EXPECT_EQ(static_cast<int>(packed[5]), 0x89);
  EXPECT_EQ(static_cast<int>(packed[6]), 0x05);  // the pad nibble is 0
  EXPECT_EQ(RoundTrip(c, x), x);
}

TEST(DeltaCodec, ZeroAndNonFiniteGroups) {
  for (const DeltaFormat f : {DeltaFormat::kFp8, DeltaFormat::kInt4}) {
    DeltaCodec c(f, 3, {6});
    const std::vector<float> zeros(6, 0.0f);
    EXPECT_EQ(RoundTrip(c, zeros), zeros);
    // A NaN or inf makes its own group NaN (the divergence stays visible), not the other.
    std::vector<float> x = {1, std::numeric_limits<float>::quiet_NaN(), 2, 1, 2, 3};
    std::vector<float> y = RoundTrip(c, x);
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(y[i])) << f << i;
    for (int i = 3; i < 6; ++i) EXPECT_TRUE(std::isfinite(y[i])) << f << i;
    x[1] = INFINITY;
    y = RoundTrip(c, x);
    EXPECT_TRUE(std::isnan(y[0]));
  }
}

TEST(DeltaCodec, DecodeAddAccumulatesInOrder) {
  DeltaCodec c(DeltaFormat::kInt4, 4, {9});
  const std::vector<float> a = RandomVector(9, 1, 1.0), b = RandomVector(9, 2, 1.0);
  std::vector<std::byte> pa(static_cast<size_t>(c.PackedBytes())), pb(pa.size());
  c.Encode(a, pa);
  c.Encode(b, pb);
  std::vector<float> acc(9, 0.0f), da(9), db(9);
  c.DecodeAdd(pa, acc);
  c.DecodeAdd(pb, acc);
  c.Decode(pa, da);
  c.Decode(pb, db);
  for (int i = 0; i < 9; ++i) EXPECT_EQ(acc[i], (0.0f + da[i]) + db[i]);
}

// Error feedback: with e' = (x + e) - D(Q(x + e)), what was sent plus the residual is what was
// meant: sum_t D(q_t) + e_T = sum_t x_t (up to float rounding), where without the residual the
// rounding errors add up.
TEST(DeltaCodec, ErrorFeedbackResidualTelescopes) {
  DeltaCodec c(DeltaFormat::kInt4, 8, {40});
  std::vector<float> e(40, 0.0f), sent(40, 0.0f), meant(40, 0.0f), plain(40, 0.0f);
  for (uint64_t t = 0; t < 200; ++t) {
    const std::vector<float> x = RandomVector(40, 100 + t, 0.01);
    std::vector<float> u(40);
    for (int i = 0; i < 40; ++i) u[i] = x[i] + e[i];
    const std::vector<float> d = RoundTrip(c, u);
    const std::vector<float> dx = RoundTrip(c, x);
    for (int i = 0; i < 40; ++i) {
      e[i] = u[i] - d[i];
      ASSERT_NEAR(d[i] + e[i], u[i], 1e-7 * std::fabs(u[i]) + 1e-12);
      sent[i] += d[i];
      meant[i] += x[i];
      plain[i] += dx[i];
    }
  }
  double with = 0, without = 0;
  for (int i = 0; i < 40; ++i) {
    EXPECT_NEAR(sent[i] + e[i], meant[i], 1e-6) << i;
    with = std::max(with, std::fabs(double{sent[i]} - meant[i]));
    without = std::max(without, std::fabs(double{plain[i]} - meant[i]));
  }
  EXPECT_LT(with, without / 2);  // the residual is bounded; the plain error drifts
}

}  // namespace
}  // namespace mavg
