// Speaker CMVN and deltas (feature_pipeline.h) against closed forms; DataDirIndex: sizes from
// headers, shard-only loads equal to slices of the whole, alignments through data.ali.
#include "engine/data/feature_pipeline.h"

#include <cmath>
#include <numeric>

#include "engine/data/cmvn.h"
#include "engine/data/dataset.h"
#include "engine/data/kaldi_io.h"
#include "engine/data/minibatch.h"
#include "tests/unit/data/data_test_util.h"

namespace mavg {
namespace {

using kaldi::HostMatrix;
using testing_data::BinaryEntry;
using testing_data::ExpectErrorContaining;
using testing_data::KaldiInt32;
using testing_data::Raw;
using testing_data::WriteBytes;

HostMatrix Make(int64_t rows, int64_t cols, const std::function<float(int64_t, int64_t)>& f) {
  HostMatrix m;
  m.rows = rows, m.cols = cols;
  m.data.resize(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) m.data[r * cols + c] = f(r, c);
  }
  return m;
}

TEST(AddDeltas, RampsAndParabolasHaveTheirDerivatives) {
  // x_t = 3t + 1 (column 0) and t^2 (column 1): the regression window's first derivative of a
  // ramp is its slope, of t^2 it is 2t; the second of t^2 is 2 -- away from the edges, where
  // frames are repeated.
  const int64_t T = 30;
  const HostMatrix x =
      Make(T, 2, [](int64_t t, int64_t c) { return c == 0 ? 3.0f * t + 1 : float(t * t); });
  const HostMatrix d = AddDeltas(x, 2);
  ASSERT_EQ(d.rows, T);
  ASSERT_EQ(d.cols, 6);
  for (int64_t t = 0; t < T; ++t) {
    EXPECT_EQ(d.Row(t)[0], x.Row(t)[0]);  // the features themselves come first
    EXPECT_EQ(d.Row(t)[1], x.Row(t)[1]);
    if (t >= 2 && t < T - 2) {
      EXPECT_NEAR(d.Row(t)[2], 3.0, 1e-5) << t;
      EXPECT_NEAR(d.Row(t)[3], 2.0 * t, 1e-4) << t;
    }
    // The second-order filter reaches 4 frames out.
    if (t >= 4 && t < T - 4) {
      EXPECT_NEAR(d.Row(t)[4], 0.0, 1e-5) << t;
      EXPECT_NEAR(d.Row(t)[5], 2.0, 1e-4) << t;
    }
  }
  // At the first frame the window sees frame 0 three times: (-2 x0 - x0 + 0 + x1 + 2 x2) / 10.
  EXPECT_NEAR(d.Row(0)[2], (-3 * 1.0 + 4.0 + 2 * 7.0) / 10, 1e-6);
}

TEST(AddDeltas, ImpulseGivesTheDeltaDeltaFilter) {
  // The order-2 filter is the order-1 window [-2 -1 0 1 2] / 10 convolved with itself.
  const double expected[9] = {4, 4, 1, -4, -10, -4, 1, 4, 4};
  const HostMatrix x = Make(21, 1, [](int64_t t, int64_t) { return t == 10 ? 1.0f : 0.0f; });
  const HostMatrix d = AddDeltas(x, 2);
  for (int j = -4; j <= 4; ++j) EXPECT_NEAR(d.Row(10 - j)[2], expected[j + 4] / 100, 1e-7) << j;
  EXPECT_EQ(d.Row(3)[2], 0.0f);
  EXPECT_EQ(AddDeltas(x, 0).data, x.data);
}

// A Kaldi double matrix object "DM" (as compute-cmvn-stats writes), byte by byte.
std::string DoubleMatrix(const std::string& key, const std::vector<std::vector<double>>& rows) {
  std::string s = BinaryEntry(key, "DM") + KaldiInt32(static_cast<int32_t>(rows.size())) +
                  KaldiInt32(static_cast<int32_t>(rows[0].size()));
  for (const auto& r : rows) {
    for (double v : r) s += Raw(v);
  }
  return s;
}

class PipelineDirTest : public testing_data::TempDirTest {
 protected:
  // A data dir of 4 utterances of 2 speakers (u1, u2: spk_a; u3: spk_b; u4: spk_c without
  // statistics), 2-dim features, alignments, utt2spk and cmvn.scp of spk_a and spk_b.
  std::string MakeDir(const std::string& name, double count_b = 4) {
    const std::string dir = Path(name);
    std::filesystem::create_directories(dir);
    kaldi::MatrixArchiveWriter feats(dir + "/feats.ark", dir + "/feats.scp");
    kaldi::Int32VectorArchiveWriter ali(dir + "/ali.ark");
    const int64_t lengths[4] = {5, 3, 4, 2};
    for (int u = 0; u < 4; ++u) {
      const HostMatrix m = Make(lengths[u], 2, [u](int64_t t, int64_t c) {
        return static_cast<float>(10 * u + t * (c + 1) + 0.25 * c);
      });
      feats.Write("u" + std::to_string(u + 1), m);
      ali.Write("u" + std::to_string(u + 1), std::vector<int32_t>(lengths[u], u));
    }
    feats.Close();
    ali.Close();
    WriteBytes(dir + "/utt2spk", "u1 spk_a\nu2 spk_a\nu3 spk_b\nu4 spk_c\n");
    // spk_a: sums (20, 40), count 8, squares (100, 500); spk_b: means (1, -2), var (4, 1).
    std::string stats = DoubleMatrix("spk_a", {{20, 40, 8}, {100, 500, 0}});
    const size_t b_offset = stats.size() + 6;  // after "spk_b "
    stats += DoubleMatrix(
        "spk_b", {{1 * count_b, -2 * count_b, count_b}, {(4 + 1) * count_b, (1 + 4) * count_b, 0}});
    WriteBytes(dir + "/cmvn.ark", stats);
    WriteBytes(dir + "/cmvn.scp",
               "spk_a cmvn.ark:6\nspk_b cmvn.ark:" + std::to_string(b_offset) + "\n");
    return dir;
  }
};

TEST_F(PipelineDirTest, SpeakerCmvnAsKaldiApplyCmvn) {
  const std::string dir = MakeDir("d");
  const Dataset raw = LoadDataDir(dir);
  LoadOptions o;
  o.pipeline.speaker_cmvn = true;
  const Dataset means = LoadDataDir(dir, o);
  // u4's speaker has no statistics: skipped, as apply-cmvn skips it.
  ASSERT_EQ(means.NumUtts(), 3);
  const double mean[2][2] = {{2.5, 5.0}, {1.0, -2.0}};  // spk_a, spk_b
  const double stddev[2][2] = {{std::sqrt(100.0 / 8 - 6.25), std::sqrt(500.0 / 8 - 25)}, {2, 1}};
  o.pipeline.norm_vars = true;
  const Dataset both = LoadDataDir(dir, o);
  for (int u = 0; u < 3; ++u) {
    const int s = u < 2 ? 0 : 1;
    for (int64_t f = raw.offsets[u]; f < raw.offsets[u + 1]; ++f) {
      for (int d = 0; d < 2; ++d) {
        const double x = raw.Frame(f)[d];
        EXPECT_NEAR(means.Frame(f)[d], x - mean[s][d], 1e-5);
        EXPECT_NEAR(both.Frame(f)[d], (x - mean[s][d]) / stddev[s][d], 1e-5);
      }
    }
  }
  // Deltas after CMVN: 2 x 3 dims.
  o.pipeline.delta_order = 2;
  EXPECT_EQ(LoadDataDir(dir, o).dim, 6);
}

TEST_F(PipelineDirTest, BadStatisticsAreNamed) {
  const std::string dir = MakeDir("low", 0.5);
  LoadOptions o;
  o.pipeline.speaker_cmvn = true;
  ExpectErrorContaining([&] { LoadDataDir(dir, o); },
                        {dir + "/cmvn.scp", "spk_b", "insufficient", "0.5"});
  std::filesystem::remove(dir + "/cmvn.scp");
  ExpectErrorContaining([&] { LoadDataDir(dir, o); }, {dir + "/cmvn.scp", "not found"});
}

TEST_F(PipelineDirTest, IndexSizesAndShardLoads) {
  const std::string dir = MakeDir("i");
  const DataDirIndex index(dir);
  ASSERT_EQ(index.NumUtts(), 4);
  EXPECT_EQ(index.Frames(), (std::vector<int64_t>{5, 3, 4, 2}));
  EXPECT_EQ(index.FeatDim(), 2);
  EXPECT_EQ(index.LabelCounts(), (std::vector<double>{5, 3, 4, 2}));
  EXPECT_NE(index.LargestLabelWhere().find("'u4' frame 0"), std::string::npos)
      << index.LargestLabelWhere();
  const Dataset all = index.LoadAll();
  EXPECT_EQ(all.feats.capacity(), all.feats.size());  // sized once, from the index
  // Each shard's load is exactly its slice of the whole, and the shards cover it once.
  const auto shards = ShardByFrames(index.Frames(), 2);
  int64_t covered = 0;
  for (const auto& shard : shards) {
    std::vector<int> which = shard;
    std::sort(which.begin(), which.end());
    const Dataset part = index.Load(which);
    ASSERT_EQ(part.NumUtts(), static_cast<int>(which.size()));
    for (size_t i = 0; i < which.size(); ++i) {
      const int u = which[i];
      EXPECT_EQ(part.utt_ids[i], all.utt_ids[u]);
      ASSERT_EQ(part.UttFrames(static_cast<int>(i)), all.UttFrames(u));
      for (int64_t t = 0; t < all.UttFrames(u); ++t) {
        EXPECT_EQ(part.labels[part.offsets[i] + t], all.labels[all.offsets[u] + t]);
        for (int d = 0; d < 2; ++d) {
          EXPECT_EQ(part.Frame(part.offsets[i] + t)[d], all.Frame(all.offsets[u] + t)[d]);
        }
      }
      covered += all.UttFrames(u);
    }
  }
  EXPECT_EQ(covered, all.NumFrames());
  ExpectErrorContaining([&] { index.Load({2, 1}); }, {"ascending"});
}

TEST_F(PipelineDirTest, HeadersOnlyIndexOfAnArchive) {
  // feats.ark without feats.scp: the index reads headers and seeks past the values; loading a
  // subset by the offsets it found gives the same matrices.
  const std::string dir = MakeDir("ark");
  std::filesystem::remove(dir + "/feats.scp");
  const DataDirIndex index(dir);
  EXPECT_EQ(index.Frames(), (std::vector<int64_t>{5, 3, 4, 2}));
  const Dataset sub = index.Load({1, 3});
  const Dataset all = index.LoadAll();
  ASSERT_EQ(sub.utt_ids, (std::vector<std::string>{"u2", "u4"}));
  for (int64_t t = 0; t < 2; ++t) EXPECT_EQ(sub.Frame(3 + t)[1], all.Frame(12 + t)[1]);
}

TEST_F(PipelineDirTest, AlignmentsFromAnRspecifier) {
  const std::string dir = MakeDir("ali");
  // Alignments elsewhere, for u2 and u3 only: u1 and u4 are left out as unaligned.
  {
    kaldi::Int32VectorArchiveWriter w(Path("other.ark"));
    w.Write("u3", std::vector<int32_t>(4, 7));
    w.Write("u2", std::vector<int32_t>(3, 9));
    w.Write("not_in_dir", std::vector<int32_t>(1, 100));
    w.Close();
  }
  LoadOptions o;
  o.alignments = "ark:" + Path("other.ark");
  const DataDirIndex index(dir, o);
  EXPECT_EQ(index.UttIds(), (std::vector<std::string>{"u2", "u3"}));
  // Label counts are over the usable utterances only (not_in_dir's label 100 is not counted).
  EXPECT_EQ(index.LabelCounts().size(), 10u);
  EXPECT_EQ(index.LabelCounts()[9], 3);
  EXPECT_EQ(index.LoadAll().labels, (std::vector<int32_t>{9, 9, 9, 7, 7, 7, 7}));
  // A length mismatch names the setting and the utterance.
  {
    kaldi::Int32VectorArchiveWriter w(Path("short.ark"));
    w.Write("u1", std::vector<int32_t>(2, 1));
    w.Close();
  }
  o.alignments = Path("short.ark");
  o.alignments_setting = "data.ali";
  ExpectErrorContaining([&] { DataDirIndex(dir, o); }, {"data.ali", "'u1'", "2 frames"});
}

TEST(CmvnSums, ShardSumsAddUpToTheWhole) {
  Dataset d;
  d.source = "t";
  d.dim = 2;
  for (int u = 0; u < 5; ++u) {
    const HostMatrix m = Make(3 + u, 2, [u](int64_t t, int64_t c) { return float(u - t + c); });
    d.Append("u" + std::to_string(u), m.data.data(), m.rows, nullptr);
  }
  const CmvnStats whole = ComputeGlobalCmvn(d);
  CmvnSums sums(2);
  for (const auto& shard : ShardByFrames(d, 3)) {
    CmvnSums s(2);
    s.Add(d, shard);
    const std::vector<double> packed = s.Packed();
    sums.Add(CmvnSums::Unpacked(packed));
  }
  const CmvnStats parts = sums.Stats("t");
  for (int k = 0; k < 2; ++k) {
    EXPECT_FLOAT_EQ(parts.shift[k], whole.shift[k]);
    EXPECT_FLOAT_EQ(parts.scale[k], whole.scale[k]);
  }
  EXPECT_EQ(sums.frames, static_cast<double>(d.NumFrames()));
}

}  // namespace
}  // namespace mavg
