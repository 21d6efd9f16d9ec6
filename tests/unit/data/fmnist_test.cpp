// Fashion-MNIST import on a tiny synthetic IDX set (never the real /usr/share/datasets).

#include "engine/data/fmnist.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <set>

#include "engine/data/dataset.h"
#include "engine/data/kaldi_io.h"
#include "tests/unit/data/data_test_util.h"

namespace mavg {
namespace {

namespace fs = std::filesystem;
using testing_data::ExpectErrorContaining;
using testing_data::ReadBytes;

constexpr int kTrain = 40;
constexpr int kTest = 12;
constexpr int kPixels = 28 * 28;

uint8_t Pixel(int set, int image, int p) {
  return static_cast<uint8_t>(set * 101 + image * 31 + p * 7);
}
uint8_t Label(int set, int image) { return static_cast<uint8_t>((image * 3 + set) % 10); }

void WriteIdxGz(const std::string& path, const std::vector<uint32_t>& dims,
                const std::vector<uint8_t>& data) {
  std::string bytes = {'\0', '\0', '\x08', static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>(d >> shift));
  }
  bytes.append(data.begin(), data.end());
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

void WriteSet(const std::string& dir, const std::string& prefix, int set, int count,
              uint8_t bad_label = 0) {
  std::vector<uint8_t> images, labels;
  for (int i = 0; i < count; ++i) {
    for (int p = 0; p < kPixels; ++p) images.push_back(Pixel(set, i, p));
    labels.push_back(Label(set, i));
  }
  if (bad_label != 0) labels.back() = bad_label;
  WriteIdxGz(dir + "/" + prefix + "-images-idx3-ubyte.gz", {static_cast<uint32_t>(count), 28, 28},
             images);
  WriteIdxGz(dir + "/" + prefix + "-labels-idx1-ubyte.gz", {static_cast<uint32_t>(count)}, labels);
}

// Index of the image in its IDX file, from "fmnist-<set>-00042".
int ImageIndex(const std::string& utt) { return std::stoi(utt.substr(utt.rfind('-') + 1)); }

class FmnistTest : public testing_data::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    src_ = Path("src");
    fs::create_directories(src_);
    WriteSet(src_, "train", 0, kTrain);
    WriteSet(src_, "t10k", 1, kTest);
  }
  FmnistImportOptions Options() const {
    FmnistImportOptions options;
    options.dev_fraction = 0.25;
    return options;
  }
  std::vector<int> DevIndices(const std::string& out) {
    std::vector<int> indices;
    for (const auto& [utt, spk] : kaldi::ReadKeyValueFile(out + "/dev/utt2spk")) {
      indices.push_back(ImageIndex(utt));
    }
    return indices;
  }
  // Only `out` (and src) in the temp dir: no .tmp-<pid> or .old-<pid> left behind.
  void ExpectNoLeftovers() {
    for (const auto& entry : fs::directory_iterator(dir_)) {
      const std::string name = entry.path().filename().string();
      EXPECT_EQ(name.find(".tmp"), std::string::npos) << name;
      EXPECT_EQ(name.find(".old"), std::string::npos) << name;
    }
  }

  std::string src_;
};

TEST_F(FmnistTest, WritesThreeDataDirs) {
  const std::string out = Path("fmnist");
  ImportFashionMnist(src_, out, Options());
  ExpectNoLeftovers();
  for (const char* set : {"train", "dev", "test"}) {
    for (const char* file : {"feats.ark", "feats.scp", "ali.ark", "utt2spk", "spk2utt", "text"}) {
      EXPECT_TRUE(fs::exists(out + "/" + set + "/" + file)) << set << "/" << file;
    }
  }
  Dataset train = LoadDataDir(out + "/train");
  Dataset dev = LoadDataDir(out + "/dev");
  Dataset test = LoadDataDir(out + "/test");
  EXPECT_EQ(dev.NumUtts(), 10);  // 25% of 40
  EXPECT_EQ(train.NumUtts(), 30);
  EXPECT_EQ(test.NumUtts(), kTest);

  std::set<int> seen;
  const std::vector<std::pair<const Dataset*, int>> sets = {{&train, 0}, {&dev, 0}, {&test, 1}};
  for (const auto& [ds, set] : sets) {
    EXPECT_EQ(ds->dim, kPixels);
    EXPECT_EQ(ds->NumFrames(), ds->NumUtts());  // one frame per image
    for (int u = 0; u < ds->NumUtts(); ++u) {
      const std::string& utt = ds->utt_ids[u];
      const int index = ImageIndex(utt);
      if (set == 0) {
        EXPECT_TRUE(seen.insert(index).second) << "image in train and dev: " << utt;
      }
      EXPECT_EQ(ds->labels[u], Label(set, index)) << utt;
      const float* frame = ds->Frame(u);
      for (int p = 0; p < kPixels; ++p) {
        ASSERT_EQ(frame[p], static_cast<float>(Pixel(set, index, p)) / 255.0f) << utt;
      }
      if (u > 0) {
        EXPECT_LT(ds->utt_ids[u - 1], utt);  // sorted order = file order
      }
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kTrain));  // train + dev = all training images
  EXPECT_EQ(train.utt_ids[0].substr(0, 13), "fmnist-train-");
  EXPECT_EQ(train.utt_ids[0].size(), 18u);  // 5-digit index
  EXPECT_EQ(dev.utt_ids[0].substr(0, 11), "fmnist-dev-");

  auto text = kaldi::ReadKeyValueFile(out + "/test/text");
  ASSERT_EQ(text.size(), static_cast<size_t>(kTest));
  EXPECT_EQ(text[0].first, "fmnist-test-00000");
  EXPECT_EQ(text[0].second, FashionMnistClassName(Label(1, 0)));
  EXPECT_STREQ(FashionMnistClassName(9), "ankle_boot");
  auto utt2spk = kaldi::ReadKeyValueFile(out + "/test/utt2spk");
  EXPECT_EQ(utt2spk[3].first, utt2spk[3].second);
  // scp paths are absolute, pointing at the final (renamed) directory.
  auto scp = kaldi::ReadScp(out + "/train/feats.scp");
  EXPECT_EQ(scp[0].second.rfind(fs::absolute(out).string() + "/train/feats.ark:", 0), 0u)
      << scp[0].second;
}

TEST_F(FmnistTest, DeterministicSplit) {
  ImportFashionMnist(src_, Path("a"), Options());
  ImportFashionMnist(src_, Path("b"), Options());
  for (const char* file : {"train/feats.ark", "train/ali.ark", "dev/feats.ark", "dev/text",
                           "test/feats.ark", "test/ali.ark", "test/utt2spk"}) {
    EXPECT_EQ(ReadBytes(Path("a") + "/" + file), ReadBytes(Path("b") + "/" + file)) << file;
  }
  // The split is pinned: it must not change across platforms or standard libraries.
  EXPECT_EQ(DevIndices(Path("a")), (std::vector<int>{3, 4, 5, 9, 11, 16, 20, 22, 33, 35}));
  FmnistImportOptions other = Options();
  other.seed = 778;
  ImportFashionMnist(src_, Path("c"), other);
  EXPECT_NE(DevIndices(Path("a")), DevIndices(Path("c")));
}

TEST_F(FmnistTest, Limits) {
  FmnistImportOptions options = Options();
  options.train_limit = 5;
  options.dev_limit = 3;
  options.test_limit = 4;
  ImportFashionMnist(src_, Path("small"), options);
  EXPECT_EQ(LoadDataDir(Path("small/train")).NumUtts(), 5);
  EXPECT_EQ(LoadDataDir(Path("small/dev")).NumUtts(), 3);
  Dataset test = LoadDataDir(Path("small/test"));
  EXPECT_EQ(test.utt_ids, (std::vector<std::string>{"fmnist-test-00000", "fmnist-test-00001",
                                                    "fmnist-test-00002", "fmnist-test-00003"}));
  // The limited dev set is the first dev images of the full split.
  ImportFashionMnist(src_, Path("full"), Options());
  std::vector<int> full = DevIndices(Path("full"));
  EXPECT_EQ(DevIndices(Path("small")), std::vector<int>(full.begin(), full.begin() + 3));
}

TEST_F(FmnistTest, ExistingOutputNeedsForce) {
  const std::string out = Path("out");
  ImportFashionMnist(src_, out, Options());
  ExpectErrorContaining([&] { ImportFashionMnist(src_, out, Options()); }, {out, "already exists"});
  testing_data::WriteBytes(out + "/marker", "x");
  FmnistImportOptions force = Options();
  force.force = true;
  ImportFashionMnist(src_, out + "/", force);
  EXPECT_FALSE(fs::exists(out + "/marker"));  // replaced as a whole
  EXPECT_EQ(LoadDataDir(out + "/test").NumUtts(), kTest);
  ExpectNoLeftovers();
}

TEST_F(FmnistTest, FailuresLeaveNothing) {
  fs::remove(src_ + "/t10k-labels-idx1-ubyte.gz");
  ExpectErrorContaining([&] { ImportFashionMnist(src_, Path("out"), Options()); },
                        {"t10k-labels-idx1-ubyte.gz", "cannot open"});
  EXPECT_FALSE(fs::exists(Path("out")));
  ExpectNoLeftovers();

  WriteSet(src_, "t10k", 1, kTest, /*bad_label=*/12);
  ExpectErrorContaining([&] { ImportFashionMnist(src_, Path("out"), Options()); },
                        {"t10k-labels-idx1-ubyte.gz", "label 12 of image 11"});
  EXPECT_FALSE(fs::exists(Path("out")));

  WriteIdxGz(src_ + "/t10k-labels-idx1-ubyte.gz", {3}, {1, 2, 3});
  ExpectErrorContaining([&] { ImportFashionMnist(src_, Path("out"), Options()); },
                        {"3 labels for the 12 images"});
  FmnistImportOptions bad = Options();
  bad.dev_fraction = 0.001;
  WriteSet(src_, "t10k", 1, kTest);
  ExpectErrorContaining([&] { ImportFashionMnist(src_, Path("out"), bad); },
                        {"empty dev or train set"});
  ExpectNoLeftovers();
}

}  // namespace
}  // namespace mavg
