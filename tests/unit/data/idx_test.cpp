#include "engine/data/idx.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include "tests/unit/data/data_test_util.h"

namespace mavg {
namespace {

using testing_data::ExpectErrorContaining;
using testing_data::WriteBytes;

std::string IdxBytes(uint8_t type, const std::vector<uint32_t>& dims, const std::string& data) {
  std::string s = {'\0', '\0', static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) s.push_back(static_cast<char>(d >> shift));
  }
  return s + data;
}

void WriteGz(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

std::string Sequence(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 7 + 3);
  return s;
}

class IdxTest : public testing_data::TempDirTest {};

TEST_F(IdxTest, ReadsPlainAndGzip) {
  const std::string images = IdxBytes(0x08, {3, 4, 5}, Sequence(60));
  WriteBytes(Path("images.idx"), images);
  WriteGz(Path("images.idx.gz"), images);
  for (const char* name : {"images.idx", "images.idx.gz"}) {
    IdxArray a = ReadIdx(Path(name));
    EXPECT_EQ(a.dims, (std::vector<int>{3, 4, 5})) << name;
    EXPECT_EQ(a.NumElements(), 60);
    ASSERT_EQ(a.data.size(), 60u);
    for (size_t i = 0; i < 60; ++i) EXPECT_EQ(a.data[i], static_cast<uint8_t>(i * 7 + 3));
  }
  WriteGz(Path("labels.gz"), IdxBytes(0x08, {4}, std::string("\x01\x09\x00\x05", 4)));
  IdxArray labels = ReadIdx(Path("labels.gz"));
  EXPECT_EQ(labels.dims, std::vector<int>{4});
  EXPECT_EQ(labels.data, (std::vector<uint8_t>{1, 9, 0, 5}));
}

TEST_F(IdxTest, Malformed) {
  auto expect_error = [&](const std::string& bytes, const std::string& part, bool gz) {
    const std::string path = Path(gz ? "bad.gz" : "bad.idx");
    if (gz) {
      WriteGz(path, bytes);
    } else {
      WriteBytes(path, bytes);
    }
    ExpectErrorContaining([&] { ReadIdx(path); }, {path, part});
  };
  for (bool gz : {false, true}) {
    expect_error(std::string("\x12\x34\x08\x01") + std::string(8, '\0'), "bad magic", gz);
    expect_error(IdxBytes(0x0D, {2}, std::string(8, '\0')), "element type 0x0d", gz);
    expect_error(IdxBytes(0x08, {}, ""), "0 dimensions", gz);
    expect_error(IdxBytes(0x08, {10, 10}, Sequence(99)), "truncated", gz);
    expect_error(IdxBytes(0x08, {10}, Sequence(11)), "trailing bytes", gz);
    expect_error(std::string("\0\0", 2), "truncated IDX header", gz);
    expect_error(IdxBytes(0x08, {3, 4}, "").substr(0, 9), "truncated IDX header", gz);
    expect_error(IdxBytes(0x08, {0xffffffffu}, ""), "dimension 0", gz);
    expect_error(IdxBytes(0x08, {0x7fffffffu, 0x7fffffffu, 0x7fffffffu}, ""), "absurd", gz);
    // A huge but allowed header on a tiny file fails at the end of the data, not in malloc.
    expect_error(IdxBytes(0x08, {1u << 30, 8}, Sequence(10)), "truncated", gz);
  }
  ExpectErrorContaining([&] { ReadIdx(Path("missing.gz")); }, {Path("missing.gz"), "cannot open"});
  // Valid gzip framing around corrupt deflate data.
  std::string gz_bytes = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03";
  gz_bytes += std::string(40, '\xff');
  WriteBytes(Path("corrupt.gz"), gz_bytes);
  ExpectErrorContaining([&] { ReadIdx(Path("corrupt.gz")); }, {Path("corrupt.gz")});
}

}  // namespace
}  // namespace mavg
