// The data paths a run config reads, and why one cannot be read: what `mavg train` checks before
// it makes a run directory, and `sweep plan` / `sweep run` before any run starts.
#include "engine/config/data_paths.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/core/error.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

namespace fs = std::filesystem;

std::string Problem(const std::string& key, const std::string& path) {
  return DataPathProblem(DataPath{key, path});
}

TEST(DataPaths, TheKeysAConfigReadsEmptyOnesAndNonFilesLeftOut) {
  RunConfig c;
  c.data.train = "d/train";
  c.data.dev = "d/dev";
  EXPECT_EQ(DataPathsOf(c).size(), 2u);
  c.data.test = "d/test";
  c.data.lang = "d/lang";
  c.data.ali = "ark,s,cs:exp/pdf.ark";
  c.data.dev_ali = "scp:exp/dev.scp";
  const std::vector<DataPath> all = DataPathsOf(c);
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all[0].key, "data.train");
  EXPECT_EQ(all[3].key, "data.lang");
  EXPECT_EQ(all[4].key, "data.ali");
  EXPECT_EQ(all[4].path, "exp/pdf.ark");  // the file of the rspecifier
  EXPECT_EQ(all[5].path, "exp/dev.scp");
  // A glob, a pipe or several files are checked when they are read.
  for (const char* spec :
       {"exp/ali.*.gz", "ark:ali-to-pdf m 'ark:gunzip -c a.gz|' ark:- |", "a.ark b.ark"}) {
    c.data.ali = spec;
    c.data.dev_ali = "";
    EXPECT_EQ(DataPathsOf(c).size(), 4u) << spec;
  }
}

TEST(DataPaths, WhyAPathCannotBeRead) {
  testing::TempDir tmp;
  const std::string dir = tmp.File("train"), empty = tmp.File("empty"), file = tmp.File("f");
  fs::create_directories(dir);
  fs::create_directories(empty);
  std::ofstream(dir + "/feats.ark") << "x";
  std::ofstream(file) << "x";
  EXPECT_EQ(Problem("data.train", dir), "");
  EXPECT_EQ(Problem("data.dev", tmp.File("nowhere")), "not found");
  EXPECT_EQ(Problem("data.test", file), "not a directory");
  EXPECT_EQ(Problem("data.train", empty), "not a data dir (no feats.scp or feats.ark)");
  fs::remove(dir + "/feats.ark");
  std::ofstream(dir + "/feats.scp") << "u x.ark:5\n";
  EXPECT_EQ(Problem("data.train", dir), "");
  EXPECT_EQ(Problem("data.lang", empty), "");  // a lang dir holds no features
  EXPECT_EQ(Problem("data.lang", file), "not a directory");
  EXPECT_EQ(Problem("data.ali", file), "");
  EXPECT_EQ(Problem("data.ali", tmp.File("none.ark")), "not found");
  EXPECT_EQ(Problem("data.dev_ali", empty), "a directory, not an alignments file");
}

TEST(DataPaths, CheckNamesEveryBadPathOnOneLine) {
  testing::TempDir tmp;
  fs::create_directories(tmp.File("train"));
  std::ofstream(tmp.File("train/feats.ark")) << "x";
  RunConfig c;
  c.data.train = tmp.File("train");
  c.data.dev = tmp.File("train");
  EXPECT_NO_THROW(CheckDataPaths(c));
  c.data.train = "nowhere/train";
  try {
    CheckDataPaths(c);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "data.train: nowhere/train: not found");
  }
  c.data.test = "nowhere/test";
  try {
    CheckDataPaths(c);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "2 data paths cannot be read: data.train: nowhere/train: not found; data.test: "
                 "nowhere/test: not found");
  }
}

}  // namespace
}  // namespace mavg
