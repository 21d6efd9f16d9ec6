// Malformed Kaldi input: every case throws mavg::Error with one line naming the file (and the
// key / byte offset where there is one); nothing crashes, hangs or allocates absurd sizes.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>

#include "engine/data/kaldi_io.h"
#include "tests/unit/data/data_test_util.h"

namespace mavg::kaldi {
namespace {

using testing_data::BinaryEntry;
using testing_data::ExpectErrorContaining;
using testing_data::Fixture;
using testing_data::KaldiInt32;
using testing_data::Raw;
using testing_data::ReadBytes;
using testing_data::WriteBytes;

class KaldiMalformedTest : public testing_data::TempDirTest {
 protected:
  // Writes `bytes` as an archive and expects reading all of it to throw mavg::Error whose one
  // line names the file and contains every one of `parts`.
  template <typename Reader>
  void ExpectReadError(const std::string& name, const std::string& bytes,
                       std::initializer_list<std::string> parts) {
    const std::string path = Path(name);
    WriteBytes(path, bytes);
    std::vector<std::string> all(parts);
    all.push_back(path);
    try {
      Reader reader(path);
      while (reader.Next()) {
      }
      ADD_FAILURE() << "no error reading " << testing::PrintToString(bytes);
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      for (const auto& part : all) {
        EXPECT_NE(message.find(part), std::string::npos)
            << "'" << message << "' lacks '" << part << "'";
      }
    }
  }
  void ExpectMatrixError(const std::string& bytes, std::initializer_list<std::string> parts) {
    ExpectReadError<MatrixArchiveReader>("bad.ark", bytes, parts);
  }
  void ExpectVectorError(const std::string& bytes, std::initializer_list<std::string> parts) {
    ExpectReadError<Int32VectorArchiveReader>("bad_ali.ark", bytes, parts);
  }
};

std::string Floats(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += Raw(static_cast<float>(i));
  return s;
}

TEST_F(KaldiMalformedTest, TruncatedFloatMatrix) {
  const std::string good = BinaryEntry("utt1", "FM") + KaldiInt32(2) + KaldiInt32(2) + Floats(4);
  ExpectMatrixError(good + BinaryEntry("utt3", "FM") + KaldiInt32(40) + KaldiInt32(13) + Floats(17),
                    {"utterance 'utt3' at byte " + std::to_string(good.size() + 5),
                     "truncated matrix", "520 floats, got 17"});
}

TEST_F(KaldiMalformedTest, TruncatedHeaders) {
  ExpectMatrixError(BinaryEntry("u", "FM") + "\4", {"'u'", "truncated"});
  ExpectMatrixError(BinaryEntry("u", "FM") + KaldiInt32(3), {"'u'", "number of columns"});
  ExpectMatrixError(std::string("u \0BF", 5), {"'u'", "truncated object header"});
  ExpectMatrixError("u", {"'u'", "truncated archive"});
  ExpectMatrixError(BinaryEntry("u", "CM") + Raw(0.0f) + Raw(1.0f), {"'u'", "truncated"});
  ExpectMatrixError(BinaryEntry("u", "DM") + KaldiInt32(2) + KaldiInt32(2) + Floats(5),
                    {"'u'", "truncated matrix", "4 doubles"});
}

TEST_F(KaldiMalformedTest, BadHeaders) {
  ExpectMatrixError(BinaryEntry("u", "XM") + KaldiInt32(1) + KaldiInt32(1) + Floats(1),
                    {"'u'", "unknown object type 'XM'"});
  ExpectMatrixError(BinaryEntry("u", "FV") + KaldiInt32(1) + Floats(1),
                    {"'u'", "unknown object type 'FV'"});
  ExpectMatrixError(std::string("u \0CFM ", 7), {"'u'", "bad binary marker"});
  ExpectMatrixError(BinaryEntry("u", "") + std::string(8, '\x01'), {"'u'", "bad object header"});
  ExpectMatrixError(BinaryEntry("u", "FM") + "\x08" + Raw(int64_t{3}) + KaldiInt32(1),
                    {"'u'", "size byte 4"});
  ExpectMatrixError(BinaryEntry("u", "FM") + "\xfc" + Raw(int32_t{3}) + KaldiInt32(1),
                    {"'u'", "big-endian"});
  ExpectMatrixError(BinaryEntry("u", "FM") + KaldiInt32(-5) + KaldiInt32(3),
                    {"'u'", "negative size"});
}

TEST_F(KaldiMalformedTest, AbsurdSizesFailBeforeAllocating) {
  const int32_t big = std::numeric_limits<int32_t>::max();
  ExpectMatrixError(BinaryEntry("u", "FM") + KaldiInt32(big) + KaldiInt32(big) + Floats(3),
                    {"'u'", "truncated matrix"});
  ExpectMatrixError(
      BinaryEntry("u", "CM") + Raw(0.0f) + Raw(1.0f) + Raw(big) + Raw(big) + std::string(64, '\0'),
      {"'u'", "truncated compressed matrix"});
  ExpectVectorError(BinaryEntry("u", "") + KaldiInt32(big) + KaldiInt32(1),
                    {"'u'", "truncated int32 vector"});
}

TEST_F(KaldiMalformedTest, BadCompressedHeaders) {
  auto cm = [](const char* token, float min_value, float range, int32_t rows, int32_t cols) {
    return BinaryEntry("c", token) + Raw(min_value) + Raw(range) + Raw(rows) + Raw(cols) +
           std::string(256, '\0');
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  ExpectMatrixError(cm("CM", 0, 1, -3, 2),
                    {"'c'", "bad compressed-matrix header", "negative size"});
  ExpectMatrixError(cm("CM2", 0, 1, 2, -1), {"'c'", "negative size"});
  ExpectMatrixError(cm("CM", 0, nan, 2, 2), {"'c'", "range"});
  ExpectMatrixError(cm("CM3", inf, 1, 2, 2), {"'c'", "min_value"});
  ExpectMatrixError(cm("CM", 0, -1, 2, 2), {"'c'", "range"});
  ExpectMatrixError(cm("CM4", 0, 1, 2, 2), {"'c'", "unknown object type 'CM4'"});
  ExpectMatrixError(cm("CM2", 0, 1, 100, 100), {"'c'", "truncated compressed matrix"});
}

TEST_F(KaldiMalformedTest, BadTextMatrices) {
  ExpectMatrixError("u [ 1 2 x3 ]\n", {"'u'", "bad number 'x3'"});
  ExpectMatrixError("u [ 1 2\n 3 ]\n", {"'u'", "row 1 has 1 values", "have 2"});
  ExpectMatrixError("u [ 1 2\n 3 4\n", {"'u'", "truncated text matrix"});
  ExpectMatrixError("u hello\n", {"'u'", "expected '['"});
  ExpectMatrixError(
      "u [ 1e99999999999999999999999999999999999999999999999999999999999999999"
      "99999999999999999999999999999999999999999999999999999999999999999999 ]",
      {"'u'", "bad number"});
}

TEST_F(KaldiMalformedTest, MissingKey) {
  // An object where a key should be (e.g. the key was lost).
  ExpectMatrixError(std::string("\0BFM ", 5) + KaldiInt32(1) + KaldiInt32(1) + Floats(1),
                    {"at byte 0", "where a key was expected"});
  ExpectMatrixError(BinaryEntry("ok", "FM") + KaldiInt32(1) + KaldiInt32(1) + Floats(1) +
                        std::string("\0BFM ", 5),
                    {"where a key was expected"});
  ExpectMatrixError(std::string(5000, 'k') + " [ ]", {"key longer than"});
}

TEST_F(KaldiMalformedTest, BadInt32Vectors) {
  ExpectVectorError(BinaryEntry("a", "") + KaldiInt32(-2), {"'a'", "negative length"});
  ExpectVectorError(BinaryEntry("a", "") + KaldiInt32(3) + KaldiInt32(1) + KaldiInt32(2),
                    {"'a'", "truncated int32 vector", "expected 3 values, got 2"});
  ExpectVectorError(BinaryEntry("a", "") + KaldiInt32(2) + KaldiInt32(1) + "\x05" + Raw(int32_t{2}),
                    {"'a'", "value 1 has size byte 5"});
  ExpectVectorError(BinaryEntry("a", "FM") + KaldiInt32(2), {"'a'", "size byte 4"});
  ExpectVectorError("a 1 2 x\n", {"'a'", "bad int32 'x'"});
  ExpectVectorError("a 1 99999999999\n", {"'a'", "bad int32 '99999999999'"});
  ExpectVectorError("a 1 2\nb 1.5\n", {"'b'", "bad int32 '1.5'"});
}

TEST_F(KaldiMalformedTest, RandomAccessErrors) {
  const std::string ark = Path("m.ark");
  WriteBytes(ark, BinaryEntry("m", "FM") + KaldiInt32(1) + KaldiInt32(1) + Floats(1));
  ExpectErrorContaining([&] { ReadMatrix(Path("missing.ark") + ":2"); },
                        {Path("missing.ark"), "cannot open"});
  ExpectErrorContaining([&] { RxMatrixReader().Read(ark + ":9999", "utt9"); },
                        {ark, "utt9", "beyond the end"});
  ExpectErrorContaining([&] { ReadMatrix(ark + ":1"); }, {ark, "at byte 1"});
  ExpectErrorContaining([&] { ReadMatrix(ark + ":2[0:5]"); }, {ark, "outside the 1 x 1 matrix"});
  ExpectErrorContaining([&] { ReadMatrix(ark + ":2[5:1]"); }, {"bad range"});
  ExpectErrorContaining([&] { ReadMatrix("gunzip -c x.gz |"); }, {"pipes"});
  WriteBytes(Path("bad.scp"), "a x.ark:1\nb\n");
  ExpectErrorContaining([&] { ReadScp(Path("bad.scp")); },
                        {Path("bad.scp"), "line 2", "'b'", "no rxspecifier"});
  ExpectErrorContaining([&] { ReadKeyValueFile(Path("nothing")); }, {Path("nothing")});
  ExpectErrorContaining([&] { MatrixArchiveReader reader(dir_.string()); },
                        {dir_.string(), "not a regular file"});
}

TEST_F(KaldiMalformedTest, WriterErrors) {
  ExpectErrorContaining([&] { MatrixArchiveWriter(Path("no/such/dir/x.ark")); },
                        {"no/such/dir/x.ark", "cannot create"});
  MatrixArchiveWriter writer(Path("w.ark"));
  HostMatrix m{1, 1, {1.0f}};
  ExpectErrorContaining([&] { writer.Write("two words", m); }, {Path("w.ark"), "invalid key"});
  ExpectErrorContaining([&] { writer.Write("", m); }, {"invalid key"});
  HostMatrix inconsistent{2, 2, {1.0f}};
  ExpectErrorContaining([&] { writer.Write("k", inconsistent); }, {"has 1 values for 2 x 2"});
  writer.Write("k", m);
  writer.Close();
  ExpectErrorContaining([&] { writer.Write("k2", m); }, {Path("w.ark")});
}

// Truncating or corrupting real archives anywhere gives either data or mavg::Error, never a
// crash or another exception.
TEST_F(KaldiMalformedTest, CorruptedFixturesNeverCrash) {
  for (const char* name : {"feats.ark", "feats_compressed.ark", "feats_ascii.ark", "ali.ark"}) {
    const std::string original = ReadBytes(Fixture(name));
    const bool vectors = std::string(name) == "ali.ark";
    auto read_all = [&](const std::string& bytes) {
      WriteBytes(Path("c.ark"), bytes);
      try {
        if (vectors) {
          Int32VectorArchiveReader reader(Path("c.ark"));
          while (reader.Next()) {
          }
        } else {
          MatrixArchiveReader reader(Path("c.ark"));
          while (reader.Next()) {
          }
        }
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(Path("c.ark")), std::string::npos) << e.what();
      }
    };
    for (size_t cut = 1; cut < original.size(); cut += 1 + original.size() / 97) {
      read_all(original.substr(0, cut));
    }
    uint64_t state = 12345;
    for (int trial = 0; trial < 60; ++trial) {
      std::string bytes = original;
      for (int k = 0; k < 4; ++k) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        bytes[(state >> 33) % bytes.size()] = static_cast<char>(state >> 13);
      }
      read_all(bytes);
    }
  }
}

}  // namespace
}  // namespace mavg::kaldi
