// Atomic writes: a regular file is replaced whole; a device or other special file is written
// in place (never replaced by a renamed temporary), and every write error is reported.
#include "engine/core/files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "engine/core/error.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

bool IsCharDevice(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

TEST(Files, WriteFileAtomicReplacesARegularFileWhole) {
  testing::TempDir dir;
  const std::string p = dir.File("a.txt");
  WriteFileAtomic(p, "first");
  WriteFileAtomic(p, "second");
  EXPECT_EQ(ReadFile(p), "second");
}

TEST(Files, SpecialFilesAreWrittenInPlaceAndErrorsReported) {
  ASSERT_TRUE(IsCharDevice("/dev/null"));
  WriteFileAtomic("/dev/null", "discarded");
  EXPECT_TRUE(IsCharDevice("/dev/null")) << "/dev/null was replaced";
  if (!IsCharDevice("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  try {
    WriteFileAtomic("/dev/full", "does not fit");
    FAIL() << "a write to /dev/full succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/full: write failed: No space left on device"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(IsCharDevice("/dev/full")) << "/dev/full was replaced";
}

TEST(Files, AMissingDirectoryNamesThePath) {
  try {
    WriteFileAtomic("/nonexistent-mavg-dir/x.txt", "x");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-mavg-dir/x.txt"), std::string::npos);
  }
}

// JSON lines numbered from 1; a bad line in the middle is named, a torn last line is not.
TEST(Files, NumberedJsonLines) {
  testing::TempDir dir;
  const std::string path = dir.File("x.jsonl");
  WriteFileAtomic(path, "{\"a\": 1}\n\nnot json\n[2]\n{\"torn");
  const JsonLines read = ReadNumberedJsonLines(path);
  ASSERT_EQ(read.lines.size(), 2u);
  EXPECT_EQ(read.lines[0].number, 1);
  EXPECT_EQ(read.lines[0].value["a"], 1);
  EXPECT_EQ(read.lines[1].number, 4);
  EXPECT_EQ(read.not_json, std::vector<int>{3});
  EXPECT_EQ(ReadJsonLines(path).size(), 2u);
  WriteFileAtomic(path, "{\"a\": 1}\n{\"b\n");  // complete lines: a bad last one is named
  EXPECT_EQ(ReadNumberedJsonLines(path).not_json, std::vector<int>{2});
  EXPECT_TRUE(ReadNumberedJsonLines(dir.File("none")).lines.empty());
}

TEST(Files, ReadJsonFileNamesTheFile) {
  testing::TempDir dir;
  const std::string path = dir.File("x.json");
  WriteFileAtomic(path, "{\"a\": [1, 2]}");
  EXPECT_EQ(ReadJsonFile(path)["a"][1], 2);
  WriteFileAtomic(path, "{\"a\": ");
  try {
    ReadJsonFile(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ": corrupt JSON (", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace mavg
