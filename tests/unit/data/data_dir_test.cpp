// LoadDataDir on data dirs built with the Kaldi writers, and its error cases.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "engine/data/dataset.h"
#include "engine/data/kaldi_io.h"
#include "tests/unit/data/data_test_util.h"

namespace mavg {
namespace {

namespace fs = std::filesystem;
using kaldi::HostMatrix;
using testing_data::ExpectErrorContaining;
using testing_data::Fixture;

struct Utt {
  std::string key;
  HostMatrix feats;
  std::vector<int32_t> ali;  // written when `aligned`
  bool aligned = true;
};

HostMatrix Frames(int64_t rows, int64_t cols, float base) {
  HostMatrix m{rows, cols, {}};
  for (int64_t i = 0; i < rows * cols; ++i) m.data.push_back(base + 0.25f * static_cast<float>(i));
  return m;
}

std::vector<int32_t> Labels(int64_t n, int32_t first) {
  std::vector<int32_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(first + static_cast<int32_t>(i % 3));
  return v;
}

class DataDirTest : public testing_data::TempDirTest {
 protected:
  std::vector<Utt> GoodUtts() const {
    return {{"utt_a", Frames(3, 4, 0.0f), Labels(3, 0)},
            {"utt_b", Frames(5, 4, 10.0f), Labels(5, 4)},
            {"utt_c", Frames(2, 4, -7.0f), Labels(2, 1)}};
  }
  // Writes feats.ark (+ feats.scp when `scp`) and ali.ark (when `ali`) into dir/name.
  std::string MakeDir(const std::string& name, const std::vector<Utt>& utts, bool scp = true,
                      bool ali = true) {
    const std::string dir = Path(name);
    fs::create_directories(dir);
    kaldi::MatrixArchiveWriter feats(dir + "/feats.ark", scp ? dir + "/feats.scp" : "");
    for (const auto& u : utts) feats.Write(u.key, u.feats);
    feats.Close();
    if (ali) {
      kaldi::Int32VectorArchiveWriter writer(dir + "/ali.ark");
      for (const auto& u : utts) {
        if (u.aligned) writer.Write(u.key, u.ali);
      }
      writer.Close();
    }
    return dir;
  }
};

void ExpectMatches(const Dataset& ds, const std::vector<Utt>& utts) {
  ASSERT_EQ(ds.NumUtts(), static_cast<int>(utts.size()));
  ASSERT_EQ(ds.dim, utts[0].feats.cols);
  int64_t frames = 0;
  for (size_t u = 0; u < utts.size(); ++u) {
    EXPECT_EQ(ds.utt_ids[u], utts[u].key);
    EXPECT_EQ(ds.offsets[u], frames);
    ASSERT_EQ(ds.UttFrames(static_cast<int>(u)), utts[u].feats.rows);
    for (int64_t t = 0; t < utts[u].feats.rows; ++t) {
      for (int64_t d = 0; d < ds.dim; ++d) {
        EXPECT_EQ(ds.Frame(frames + t)[d], utts[u].feats.Row(t)[d]);
      }
      if (ds.HasLabels()) {
        EXPECT_EQ(ds.labels[frames + t], utts[u].ali[t]);
      }
    }
    frames += utts[u].feats.rows;
  }
  EXPECT_EQ(ds.NumFrames(), frames);
}

TEST_F(DataDirTest, LoadsScpAndArchive) {
  const auto utts = GoodUtts();
  Dataset from_scp = LoadDataDir(MakeDir("scp", utts));
  ExpectMatches(from_scp, utts);
  EXPECT_EQ(from_scp.labels.size(), 10u);
  EXPECT_EQ(from_scp.NumClasses(), 7);  // labels up to 4 + 2
  EXPECT_EQ(from_scp.source, Path("scp"));
  ExpectMatches(LoadDataDir(MakeDir("ark", utts, /*scp=*/false)), utts);
}

// An scp listing 2 utterances of a 60-utterance archive reserves for those 2 (from their
// headers), not for the whole archive (the old estimate: the archive's size).
TEST_F(DataDirTest, AnScpSubsetReservesForItsOwnUtterances) {
  std::vector<Utt> utts;
  for (int i = 0; i < 60; ++i) {
    utts.push_back(
        {fmt::format("utt{:02}", i), Frames(50, 8, static_cast<float>(i)), Labels(50, 0)});
  }
  const std::string dir = MakeDir("big", utts);
  const auto scp = kaldi::ReadScp(dir + "/feats.scp");
  testing_data::WriteBytes(dir + "/feats.scp", scp[7].first + " " + scp[7].second + "\n" +
                                                   scp[41].first + " " + scp[41].second + "\n");
  const Dataset ds = LoadDataDir(dir);
  ExpectMatches(ds, {utts[7], utts[41]});
  EXPECT_EQ(ds.feats.capacity(), 2u * 50 * 8);
  // Ranges count what they select (no alignments: they would cover all 50 frames).
  fs::remove(dir + "/ali.ark");
  testing_data::WriteBytes(dir + "/feats.scp", scp[3].first + " " + scp[3].second + "[0:9]\n");
  LoadOptions no_labels;
  no_labels.require_labels = false;
  EXPECT_EQ(LoadDataDir(dir, no_labels).feats.capacity(), 10u * 8);
}

TEST_F(DataDirTest, ScpOrderAndRelativePaths) {
  const auto utts = GoodUtts();
  const std::string dir = MakeDir("rel", utts);
  // Reorder the scp and make its paths relative to the data dir, as a hand-written scp might.
  auto scp = kaldi::ReadScp(dir + "/feats.scp");
  std::string text;
  for (int i : {2, 0, 1}) {
    text +=
        scp[i].first + " feats.ark:" + scp[i].second.substr(scp[i].second.rfind(':') + 1) + "\n";
  }
  testing_data::WriteBytes(dir + "/feats.scp", text);
  Dataset ds = LoadDataDir(dir);
  ExpectMatches(ds, {utts[2], utts[0], utts[1]});
}

TEST_F(DataDirTest, OptionsAndUnlabelled) {
  const auto utts = GoodUtts();
  LoadOptions options;
  options.max_utts = 2;
  ExpectMatches(LoadDataDir(MakeDir("max", utts), options), {utts[0], utts[1]});

  const std::string no_ali = MakeDir("no_ali", utts, true, /*ali=*/false);
  ExpectErrorContaining([&] { LoadDataDir(no_ali); }, {no_ali + "/ali.ark", "not found"});
  options = LoadOptions();
  options.require_labels = false;
  Dataset ds = LoadDataDir(no_ali, options);
  ExpectMatches(ds, utts);
  EXPECT_FALSE(ds.HasLabels());
  EXPECT_EQ(ds.NumClasses(), 0);
}

TEST_F(DataDirTest, SkipsUnalignedAndEmptyUtterances) {
  auto utts = GoodUtts();
  utts[1].aligned = false;
  utts.push_back({"utt_empty", HostMatrix{0, 4, {}}, {}});
  Dataset ds = LoadDataDir(MakeDir("skip", utts));
  ExpectMatches(ds, {utts[0], utts[2]});

  for (auto& u : utts) u.aligned = false;
  const std::string none = MakeDir("none", utts);
  ExpectErrorContaining([&] { LoadDataDir(none); },
                        {none, "no usable utterances", "3 without alignment", "1 empty"});
}

TEST_F(DataDirTest, CompressedFeatures) {
  const std::string dir = Path("cm");
  fs::create_directories(dir);
  fs::copy_file(Fixture("feats_compressed.ark"), dir + "/feats.ark");
  LoadOptions options;
  options.require_labels = false;
  Dataset ds = LoadDataDir(dir, options);
  EXPECT_EQ(ds.NumUtts(), 10);
  EXPECT_EQ(ds.NumFrames(), 2395);
  EXPECT_EQ(ds.dim, 13);
}

TEST_F(DataDirTest, Errors) {
  ExpectErrorContaining([&] { LoadDataDir(Path("missing")); }, {Path("missing"), "not found"});
  testing_data::WriteBytes(Path("file"), "x");
  ExpectErrorContaining([&] { LoadDataDir(Path("file")); }, {Path("file"), "not a directory"});
  fs::create_directories(Path("empty"));
  ExpectErrorContaining([&] { LoadDataDir(Path("empty")); },
                        {Path("empty"), "neither feats.scp nor feats.ark"});

  auto utts = GoodUtts();
  utts[1].ali.pop_back();
  std::string dir = MakeDir("mismatch", utts);
  ExpectErrorContaining([&] { LoadDataDir(dir); },
                        {dir + "/ali.ark", "'utt_b'", "4 frames", "have 5"});

  utts = GoodUtts();
  utts[2].feats.data[5] = std::numeric_limits<float>::quiet_NaN();
  dir = MakeDir("nan", utts);
  ExpectErrorContaining([&] { LoadDataDir(dir); },
                        {dir + "/feats.ark", "'utt_c'", "non-finite", "frame 1, dimension 1"});
  utts[2].feats.data[5] = -std::numeric_limits<float>::infinity();
  dir = MakeDir("inf", utts, /*scp=*/false);
  ExpectErrorContaining([&] { LoadDataDir(dir); }, {dir + "/feats.ark", "'utt_c'", "-inf"});

  utts = GoodUtts();
  utts[1].feats = Frames(5, 6, 0.0f);
  dir = MakeDir("dim", utts);
  ExpectErrorContaining([&] { LoadDataDir(dir); },
                        {dir + "/feats.ark", "'utt_b'", "dimension 6 differs from 4"});

  utts = GoodUtts();
  utts[0].ali[2] = -3;
  dir = MakeDir("negative", utts);
  ExpectErrorContaining([&] { LoadDataDir(dir); },
                        {dir + "/ali.ark", "'utt_a'", "negative label -3 at frame 2"});

  utts = GoodUtts();
  utts[2].key = "utt_a";
  utts[2].aligned = false;
  dir = MakeDir("duplicate", utts);
  ExpectErrorContaining([&] { LoadDataDir(dir); }, {dir + "/feats.scp", "'utt_a'", "twice"});

  dir = MakeDir("lost_ark", GoodUtts());
  fs::rename(dir + "/feats.ark", dir + "/moved.ark");
  ExpectErrorContaining([&] { LoadDataDir(dir); }, {dir + "/feats.scp", "'utt_a'", "not found"});

  dir = MakeDir("corrupt_ali", GoodUtts());
  testing_data::WriteBytes(dir + "/ali.ark", "utt_a 1 2 three\n");
  ExpectErrorContaining([&] { LoadDataDir(dir); }, {dir + "/ali.ark", "'utt_a'", "three"});
}

TEST(DatasetTest, AppendChecksLabelConsistency) {
  Dataset ds;
  ds.source = "test";
  ds.dim = 2;
  const float frames[4] = {1, 2, 3, 4};
  const int32_t labels[2] = {5, 1};
  ds.Append("a", frames, 2, labels);
  EXPECT_EQ(ds.NumClasses(), 6);
  EXPECT_THROW(ds.Append("b", frames, 1, nullptr), Error);
  Dataset unlabelled;
  unlabelled.dim = 2;
  unlabelled.Append("a", frames, 2, nullptr);
  EXPECT_THROW(unlabelled.Append("b", frames, 1, labels), Error);
  EXPECT_EQ(unlabelled.NumFrames(), 2);
}

}  // namespace
}  // namespace mavg
