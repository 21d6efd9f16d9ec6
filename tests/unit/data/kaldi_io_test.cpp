// Kaldi archive reading against real Kaldi output (tests/fixtures/kaldi), hand-built binary
// objects from Kaldi's documented layout (DM, CM, CM2, CM3), and writer round trips.

#include "engine/data/kaldi_io.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "tests/unit/data/data_test_util.h"

namespace mavg::kaldi {
namespace {

using testing_data::BinaryEntry;
using testing_data::Fixture;
using testing_data::KaldiInt32;
using testing_data::Raw;
using testing_data::ReadBytes;
using testing_data::WriteBytes;

struct Entry {
  std::string key;
  HostMatrix value;
  int64_t offset = 0;
};

std::vector<Entry> ReadAllMatrices(const std::string& path) {
  std::vector<Entry> entries;
  MatrixArchiveReader reader(path);
  while (reader.Next()) entries.push_back({reader.Key(), reader.Value(), reader.Offset()});
  EXPECT_FALSE(reader.Next());  // stays at the end
  return entries;
}

std::vector<std::pair<std::string, std::vector<int32_t>>> ReadAllVectors(const std::string& path) {
  std::vector<std::pair<std::string, std::vector<int32_t>>> entries;
  Int32VectorArchiveReader reader(path);
  while (reader.Next()) entries.emplace_back(reader.Key(), reader.Value());
  return entries;
}

HostMatrix MakeMatrix(int64_t rows, int64_t cols, float scale) {
  HostMatrix m;
  m.rows = rows;
  m.cols = cols;
  for (int64_t i = 0; i < rows * cols; ++i) {
    m.data.push_back(scale * static_cast<float>(i) - 3.25f + 1.0f / static_cast<float>(i + 3));
  }
  return m;
}

void ExpectSameMatrix(const HostMatrix& a, const HostMatrix& b) {
  ASSERT_EQ(a.rows, b.rows);
  ASSERT_EQ(a.cols, b.cols);
  ASSERT_EQ(a.data.size(), b.data.size());
  for (size_t i = 0; i < a.data.size(); ++i) ASSERT_EQ(a.data[i], b.data[i]) << "element " << i;
}

double MaxAbsDiff(const HostMatrix& a, const HostMatrix& b) {
  double diff = 0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(a.data[i]) - b.data[i]));
  }
  return diff;
}

// ---- Real Kaldi fixtures --------------------------------------------------------------------

TEST(KaldiFixtures, FloatArchive) {
  auto feats = ReadAllMatrices(Fixture("feats.ark"));
  ASSERT_EQ(feats.size(), 10u);
  int64_t frames = 0;
  for (const auto& e : feats) {
    EXPECT_EQ(e.value.cols, 13);
    frames += e.value.rows;
  }
  EXPECT_EQ(frames, 2395);
  EXPECT_EQ(feats[0].key, "AMI_ES2011a_H00_FEE041_0003427_0003714");
  EXPECT_EQ(feats[0].offset, static_cast<int64_t>(feats[0].key.size()) + 1);
  EXPECT_NEAR(feats[0].value.data[0], 42.32011, 1e-4);  // first value of feats_ascii.ark
}

TEST(KaldiFixtures, CompressedMatchesFloat) {
  auto feats = ReadAllMatrices(Fixture("feats.ark"));
  auto compressed = ReadAllMatrices(Fixture("feats_compressed.ark"));
  ASSERT_EQ(compressed.size(), feats.size());
  double max_diff = 0;
  for (size_t i = 0; i < feats.size(); ++i) {
    EXPECT_EQ(compressed[i].key, feats[i].key);
    ASSERT_EQ(compressed[i].value.rows, feats[i].value.rows);
    ASSERT_EQ(compressed[i].value.cols, feats[i].value.cols);
    max_diff = std::max(max_diff, MaxAbsDiff(compressed[i].value, feats[i].value));
  }
  EXPECT_LE(max_diff, 1e-4);
  RecordProperty("max_abs_diff", fmt::format("{:g}", max_diff));
}

TEST(KaldiFixtures, TextMatchesFirstTwoUtterances) {
  auto feats = ReadAllMatrices(Fixture("feats.ark"));
  auto text = ReadAllMatrices(Fixture("feats_ascii.ark"));
  ASSERT_EQ(text.size(), 2u);
  for (size_t i = 0; i < text.size(); ++i) {
    EXPECT_EQ(text[i].key, feats[i].key);
    ASSERT_EQ(text[i].value.rows, feats[i].value.rows);
    ASSERT_EQ(text[i].value.cols, feats[i].value.cols);
    EXPECT_LE(MaxAbsDiff(text[i].value, feats[i].value), 1e-5);
  }
}

TEST(KaldiFixtures, BinaryAlignmentsEqualText) {
  auto binary = ReadAllVectors(Fixture("ali.ark"));
  auto text = ReadAllVectors(Fixture("ali_ascii.ark"));
  ASSERT_EQ(binary.size(), 10u);
  EXPECT_EQ(binary, text);
  EXPECT_EQ(binary[0].first, "adg04_sr009_trn");
  EXPECT_EQ(binary[0].second.size(), 449u);
  EXPECT_EQ(binary[0].second[0], 2);
}

TEST(KaldiFixtures, RandomAccessByOffset) {
  for (const char* name : {"feats.ark", "feats_compressed.ark", "feats_ascii.ark"}) {
    auto entries = ReadAllMatrices(Fixture(name));
    RxMatrixReader reader;
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {  // backwards: real seeks
      ExpectSameMatrix(reader.Read(Fixture(name) + ":" + std::to_string(it->offset), it->key),
                       it->value);
    }
    ExpectSameMatrix(ReadMatrix(Fixture(name) + ":" + std::to_string(entries[1].offset)),
                     entries[1].value);
  }
}

// Shapes from the headers alone equal the shapes of the full reads: real FM and CM (Kaldi's
// compressed format) entries, with ranges; text matrices and garbage have none.
TEST(KaldiFixtures, ShapesFromHeadersMatchTheReads) {
  for (const char* name : {"feats.ark", "feats_compressed.ark"}) {
    MatrixShapeReader shapes;
    for (const auto& e : ReadAllMatrices(Fixture(name))) {
      for (const char* range : {"", "[0:9]", "[:,2:4]", "[3:7,0:0]", "[5:100000]"}) {
        const std::string rx = Fixture(name) + ":" + std::to_string(e.offset) + range;
        const auto shape = shapes.Shape(ParseRxspec(rx));
        ASSERT_TRUE(shape.has_value()) << rx;
        if (std::string(range) == "[5:100000]") {          // past the end: the read refuses, the
          EXPECT_EQ(shape->rows, e.value.rows - 5) << rx;  // estimate clamps
          continue;
        }
        const HostMatrix m = ReadMatrix(rx);
        EXPECT_EQ(shape->rows, m.rows) << rx;
        EXPECT_EQ(shape->cols, m.cols) << rx;
      }
    }
  }
  MatrixShapeReader shapes;
  const auto text = ReadAllMatrices(Fixture("feats_ascii.ark"));
  EXPECT_FALSE(
      shapes.Shape(ParseRxspec(Fixture("feats_ascii.ark") + ":" + std::to_string(text[1].offset))));
  EXPECT_FALSE(shapes.Shape(ParseRxspec(Fixture("feats.ark") + ":3")));  // inside a key
  EXPECT_FALSE(shapes.Shape(ParseRxspec(Fixture("no-such-file.ark") + ":0")));
}

// ---- Hand-built binary objects ----------------------------------------------------------------

class KaldiIoTest : public testing_data::TempDirTest {};

TEST_F(KaldiIoTest, DoubleMatrix) {
  const double values[6] = {1.5, -2.25, 1e-3, 3.0e10, -0.0, 7.0 / 3.0};
  std::string bytes = BinaryEntry("dbl", "DM") + KaldiInt32(2) + KaldiInt32(3);
  for (double v : values) bytes += Raw(v);
  bytes += BinaryEntry("flt", "FM") + KaldiInt32(1) + KaldiInt32(1) + Raw(0.5f);
  WriteBytes(Path("d.ark"), bytes);
  auto entries = ReadAllMatrices(Path("d.ark"));
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].key, "dbl");
  ASSERT_EQ(entries[0].value.rows, 2);
  ASSERT_EQ(entries[0].value.cols, 3);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(entries[0].value.data[i], static_cast<float>(values[i]));
  EXPECT_EQ(entries[1].value.data, std::vector<float>{0.5f});
}

// CM: global header, per-column percentile headers, then uint8 codes column-major.
TEST_F(KaldiIoTest, CompressedWithColumnHeaders) {
  const float min_value = -10.0f, range = 20.0f;
  const uint16_t p[2][4] = {{0, 16384, 49151, 65535}, {1000, 2000, 3000, 60000}};
  const uint8_t codes[2][5] = {{0, 64, 128, 192, 255}, {32, 100, 200, 250, 7}};
  std::string bytes =
      BinaryEntry("cm", "CM") + Raw(min_value) + Raw(range) + Raw(int32_t{5}) + Raw(int32_t{2});
  for (auto& col : p) {
    for (uint16_t v : col) bytes += Raw(v);
  }
  for (auto& col : codes) {
    for (uint8_t c : col) bytes += Raw(c);
  }
  WriteBytes(Path("cm.ark"), bytes);
  auto entries = ReadAllMatrices(Path("cm.ark"));
  ASSERT_EQ(entries.size(), 1u);
  const HostMatrix& m = entries[0].value;
  ASSERT_EQ(m.rows, 5);
  ASSERT_EQ(m.cols, 2);
  auto u16 = [&](uint16_t v) { return min_value + range * v / 65535.0; };
  for (int c = 0; c < 2; ++c) {
    const double p0 = u16(p[c][0]), p25 = u16(p[c][1]), p75 = u16(p[c][2]), p100 = u16(p[c][3]);
    for (int r = 0; r < 5; ++r) {
      const int code = codes[c][r];
      double expected = code <= 64    ? p0 + (p25 - p0) * code / 64.0
                        : code <= 192 ? p25 + (p75 - p25) * (code - 64) / 128.0
                                      : p75 + (p100 - p75) * (code - 192) / 63.0;
      EXPECT_NEAR(m.data[r * 2 + c], expected, 1e-4) << "row " << r << " col " << c;
    }
  }
  EXPECT_NEAR(m.data[0], -10.0, 1e-5);  // code 0 = p0 = min_value
  EXPECT_NEAR(m.data[8], 10.0, 1e-4);   // code 255 = p100 = min_value + range
}

// CM2: uint16 codes row-major, min + code * range / 65535.
TEST_F(KaldiIoTest, CompressedTwoByte) {
  const uint16_t codes[6] = {0, 65535, 32768, 1, 16384, 49151};
  std::string bytes =
      BinaryEntry("cm2", "CM2") + Raw(-1.0f) + Raw(2.0f) + Raw(int32_t{2}) + Raw(int32_t{3});
  for (uint16_t c : codes) bytes += Raw(c);
  WriteBytes(Path("cm2.ark"), bytes);
  HostMatrix m = ReadMatrix(Path("cm2.ark") + ":" + std::to_string(std::string("cm2 ").size()));
  ASSERT_EQ(m.rows, 2);
  ASSERT_EQ(m.cols, 3);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(m.data[i], -1.0 + 2.0 * codes[i] / 65535.0, 1e-6);
  EXPECT_FLOAT_EQ(m.data[0], -1.0f);
  EXPECT_NEAR(m.data[1], 1.0f, 1e-6);
}

// CM3: uint8 codes row-major, min + code * range / 255 (e.g. Kaldi's integer compression).
TEST_F(KaldiIoTest, CompressedOneByte) {
  const uint8_t codes[4] = {0, 255, 17, 200};
  std::string bytes =
      BinaryEntry("cm3", "CM3") + Raw(0.0f) + Raw(255.0f) + Raw(int32_t{2}) + Raw(int32_t{2});
  for (uint8_t c : codes) bytes += Raw(c);
  WriteBytes(Path("cm3.ark"), bytes);
  auto entries = ReadAllMatrices(Path("cm3.ark"));
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].value.rows, 2);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(entries[0].value.data[i], codes[i], 1e-4);
}

TEST_F(KaldiIoTest, EmptyCompressedAndFloatMatrices) {
  std::string bytes = BinaryEntry("e1", "CM") + std::string(16, '\0') + BinaryEntry("e2", "FM") +
                      KaldiInt32(0) + KaldiInt32(0) + "e3  [ ]\n";
  WriteBytes(Path("e.ark"), bytes);
  auto entries = ReadAllMatrices(Path("e.ark"));
  ASSERT_EQ(entries.size(), 3u);
  for (const auto& e : entries) {
    EXPECT_EQ(e.value.rows, 0) << e.key;
    EXPECT_TRUE(e.value.data.empty()) << e.key;
  }
}

// Binary and text entries can alternate within one archive.
TEST_F(KaldiIoTest, MixedBinaryAndTextEntries) {
  std::string bytes = "t1 [ 1 2\n 3 4 ]\n" + BinaryEntry("b1", "FM") + KaldiInt32(1) +
                      KaldiInt32(2) + Raw(5.0f) + Raw(6.0f) + "\nt2\t[\n  7 8e0 \n  +9 -1e1 ]";
  WriteBytes(Path("mixed.ark"), bytes);
  auto entries = ReadAllMatrices(Path("mixed.ark"));
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].key, "t1");
  EXPECT_EQ(entries[0].value.data, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(entries[0].value.rows, 2);
  EXPECT_EQ(entries[1].key, "b1");
  EXPECT_EQ(entries[1].value.data, (std::vector<float>{5, 6}));
  EXPECT_EQ(entries[2].key, "t2");
  EXPECT_EQ(entries[2].value.rows, 2);
  EXPECT_EQ(entries[2].value.data, (std::vector<float>{7, 8, 9, -10}));
}

// ---- Writers -------------------------------------------------------------------------------

TEST_F(KaldiIoTest, BinaryRoundTripWithScp) {
  const std::vector<std::pair<std::string, HostMatrix>> written = {
      {"utt1", MakeMatrix(7, 13, 0.5f)},
      {"utt2", MakeMatrix(1, 784, -0.01f)},
      {"utt3", MakeMatrix(0, 0, 1.0f)},
      {"utt4", MakeMatrix(300, 40, 1e-3f)}};
  {
    MatrixArchiveWriter writer(Path("feats.ark"), Path("feats.scp"));
    for (const auto& [key, m] : written) writer.Write(key, m);
    EXPECT_FALSE(std::filesystem::exists(Path("feats.ark")));  // only feats.ark.tmp so far
    writer.Close();
  }
  EXPECT_FALSE(std::filesystem::exists(Path("feats.ark.tmp")));
  EXPECT_FALSE(std::filesystem::exists(Path("feats.scp.tmp")));

  auto scp = ReadScp(Path("feats.scp"));
  ASSERT_EQ(scp.size(), written.size());
  auto entries = ReadAllMatrices(Path("feats.ark"));
  ASSERT_EQ(entries.size(), written.size());
  RxMatrixReader reader;
  for (size_t i = 0; i < written.size(); ++i) {
    EXPECT_EQ(scp[i].first, written[i].first);
    EXPECT_EQ(scp[i].second, Path("feats.ark") + ":" + std::to_string(entries[i].offset));
    EXPECT_EQ(entries[i].key, written[i].first);
    ExpectSameMatrix(entries[i].value, written[i].second);
    ExpectSameMatrix(reader.Read(scp[i].second, scp[i].first), written[i].second);
  }
  // Kaldi's exact bytes for the first entry: "utt1 \0BFM \4<rows>\4<cols>" + floats.
  const std::string bytes = ReadBytes(Path("feats.ark"));
  const std::string header = BinaryEntry("utt1", "FM") + KaldiInt32(7) + KaldiInt32(13);
  EXPECT_EQ(bytes.substr(0, header.size()), header);
}

TEST_F(KaldiIoTest, ScpArchiveNameOverride) {
  MatrixArchiveWriter writer(Path("a.ark"), Path("a.scp"), "/final/place/a.ark");
  writer.Write("k", MakeMatrix(2, 2, 1.0f));
  writer.Close();
  auto scp = ReadScp(Path("a.scp"));
  ASSERT_EQ(scp.size(), 1u);
  EXPECT_EQ(scp[0].second, "/final/place/a.ark:2");
}

TEST_F(KaldiIoTest, AbandonedWriterLeavesNothing) {
  {
    MatrixArchiveWriter writer(Path("x.ark"), Path("x.scp"));
    writer.Write("k", MakeMatrix(2, 2, 1.0f));
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
}

TEST_F(KaldiIoTest, TextRoundTrip) {
  HostMatrix special;
  special.rows = 2;
  special.cols = 4;
  special.data = {
      0.1f,  -1e-30f,      3.4e38f, 1.0f / 3.0f, std::numeric_limits<float>::denorm_min(),
      -0.0f, 123456789.0f, -2.5f};
  const std::vector<std::pair<std::string, HostMatrix>> written = {
      {"a", special}, {"b", MakeMatrix(5, 3, 0.7f)}, {"c", HostMatrix{}}};
  TextMatrixArchiveWriter writer(Path("t.ark"));
  for (const auto& [key, m] : written) writer.Write(key, m);
  writer.Close();
  auto entries = ReadAllMatrices(Path("t.ark"));
  ASSERT_EQ(entries.size(), written.size());
  for (size_t i = 0; i < written.size(); ++i) {
    EXPECT_EQ(entries[i].key, written[i].first);
    ExpectSameMatrix(entries[i].value, written[i].second);
  }
  EXPECT_EQ(ReadBytes(Path("t.ark")).substr(0, 5), "a  [\n");  // Kaldi's layout
}

TEST_F(KaldiIoTest, Int32VectorRoundTrip) {
  const std::vector<std::pair<std::string, std::vector<int32_t>>> written = {
      {"u1", {1, 2, 3}},
      {"u2", {}},
      {"u3", {std::numeric_limits<int32_t>::min(), -1, 0, std::numeric_limits<int32_t>::max()}},
      {"u4", std::vector<int32_t>(100000, 42)}};
  for (bool binary : {true, false}) {
    const std::string path = Path(binary ? "b.ark" : "t.ark");
    Int32VectorArchiveWriter writer(path, binary);
    for (const auto& [key, v] : written) writer.Write(key, v);
    writer.Close();
    EXPECT_EQ(ReadAllVectors(path), written) << path;
  }
  // Kaldi's binary layout: count and every element as size byte 4 + int32.
  const std::string expected =
      BinaryEntry("u1", "") + KaldiInt32(3) + KaldiInt32(1) + KaldiInt32(2) + KaldiInt32(3);
  EXPECT_EQ(ReadBytes(Path("b.ark")).substr(0, expected.size()), expected);
  EXPECT_EQ(ReadBytes(Path("t.ark")).substr(0, 10), "u1 1 2 3 \n");
}

// ---- Rxspecifiers and text tables ------------------------------------------------------------

TEST(Rxspec, Parse) {
  Rxspec a = ParseRxspec("data/feats.ark:1234");
  EXPECT_EQ(a.path, "data/feats.ark");
  EXPECT_TRUE(a.has_offset);
  EXPECT_EQ(a.offset, 1234);
  Rxspec b = ParseRxspec("/abs/x.mat");
  EXPECT_EQ(b.path, "/abs/x.mat");
  EXPECT_FALSE(b.has_offset);
  Rxspec c = ParseRxspec("f.ark:7[2:5,0:12]");
  EXPECT_EQ(c.path, "f.ark");
  EXPECT_EQ(c.offset, 7);
  EXPECT_EQ(c.row_begin, 2);
  EXPECT_EQ(c.row_end, 5);
  EXPECT_EQ(c.col_begin, 0);
  EXPECT_EQ(c.col_end, 12);
  Rxspec d = ParseRxspec("f.ark:7[:,3:4]");
  EXPECT_EQ(d.row_end, -1);
  EXPECT_EQ(d.col_begin, 3);
  Rxspec e = ParseRxspec("dir:with:colons/f.ark:9");
  EXPECT_EQ(e.path, "dir:with:colons/f.ark");
  EXPECT_EQ(e.offset, 9);
}

TEST_F(KaldiIoTest, RangeRead) {
  MatrixArchiveWriter writer(Path("r.ark"), Path("r.scp"));
  writer.Write("m", MakeMatrix(4, 3, 1.0f));
  writer.Close();
  const std::string rx = ReadScp(Path("r.scp"))[0].second;
  HostMatrix full = ReadMatrix(rx);
  HostMatrix sub = ReadMatrix(rx + "[1:2,1:2]");
  ASSERT_EQ(sub.rows, 2);
  ASSERT_EQ(sub.cols, 2);
  EXPECT_EQ(sub.data, (std::vector<float>{full.data[4], full.data[5], full.data[7], full.data[8]}));
  HostMatrix rows = ReadMatrix(rx + "[3:3]");
  EXPECT_EQ(rows.rows, 1);
  EXPECT_EQ(rows.cols, 3);
}

TEST_F(KaldiIoTest, PlainPathHoldsOneObject) {
  WriteBytes(Path("one.mat"),
             std::string("\0BFM ", 5) + KaldiInt32(1) + KaldiInt32(2) + Raw(1.0f) + Raw(2.0f));
  WriteBytes(Path("one.txt"), " [ 3 4 ]\n");
  EXPECT_EQ(ReadMatrix(Path("one.mat")).data, (std::vector<float>{1, 2}));
  EXPECT_EQ(ReadMatrix(Path("one.txt")).data, (std::vector<float>{3, 4}));
}

TEST_F(KaldiIoTest, KeyValueFiles) {
  WriteBytes(Path("text"), "utt1 hello world \r\n\n  utt2   one\nutt3\nutt4 x\ty\n");
  auto rows = ReadKeyValueFile(Path("text"));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], (std::pair<std::string, std::string>{"utt1", "hello world"}));
  EXPECT_EQ(rows[1], (std::pair<std::string, std::string>{"utt2", "one"}));
  EXPECT_EQ(rows[2], (std::pair<std::string, std::string>{"utt3", ""}));
  EXPECT_EQ(rows[3], (std::pair<std::string, std::string>{"utt4", "x\ty"}));
  WriteBytes(Path("feats.scp"), "a /x/y.ark:12\nb  /x/y.ark:99  \n");
  auto scp = ReadScp(Path("feats.scp"));
  ASSERT_EQ(scp.size(), 2u);
  EXPECT_EQ(scp[1], (std::pair<std::string, std::string>{"b", "/x/y.ark:99"}));
}

}  // namespace
}  // namespace mavg::kaldi
