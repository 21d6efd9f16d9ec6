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

}  // namespace
}  // namespace mavg
