// Kaldi rspecifiers for whole tables (kaldi_table.h): archives, gzip, globs, scp, pipes, and
// their errors; alignments read through them as data.ali does.
#include "engine/data/kaldi_table.h"

#include <zlib.h>

#include <cstdlib>
#include <map>

#include "engine/data/dataset.h"
#include "engine/data/kaldi_io.h"
#include "tests/unit/data/data_test_util.h"

namespace mavg {
namespace {

using testing_data::ExpectErrorContaining;
using testing_data::Fixture;
using testing_data::ReadBytes;
using testing_data::WriteBytes;

using Table = std::map<std::string, std::vector<int32_t>>;

Table ReadAll(const kaldi::TableSource& source) {
  Table t;
  kaldi::ForEachInt32Vector(source, [&](const std::string& key, std::vector<int32_t>& v,
                                        const std::string&) { t[key] = v; });
  return t;
}

// Kaldi's own alignments (tests/fixtures/kaldi/ali.ark, written by Kaldi).
Table FixtureAlignments() {
  Table t;
  kaldi::Int32VectorArchiveReader r(Fixture("ali.ark"));
  while (r.Next()) t[r.Key()] = r.Value();
  return t;
}

void Gzip(const std::string& bytes, const std::string& path) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

// The fixture's entries split into two archives (first half, second half) under `dir`.
std::vector<std::string> SplitFixture(const std::string& dir, const std::string& stem) {
  const Table all = FixtureAlignments();
  std::vector<std::string> paths = {dir + "/" + stem + ".1", dir + "/" + stem + ".2"};
  kaldi::Int32VectorArchiveWriter a(paths[0]), b(paths[1]);
  size_t i = 0;
  for (const auto& [key, v] : all) (i++ < all.size() / 2 ? a : b).Write(key, v);
  a.Close();
  b.Close();
  return paths;
}

class KaldiTableTest : public testing_data::TempDirTest {};

TEST_F(KaldiTableTest, ArchiveWithAndWithoutPrefix) {
  const Table expected = FixtureAlignments();
  ASSERT_EQ(expected.size(), 10u);
  EXPECT_EQ(ReadAll(kaldi::TableSource(Fixture("ali.ark"), "t")), expected);
  EXPECT_EQ(ReadAll(kaldi::TableSource("ark:" + Fixture("ali.ark"), "t")), expected);
  EXPECT_EQ(ReadAll(kaldi::TableSource("ark,s,cs:" + Fixture("ali.ark"), "t")), expected);
  EXPECT_EQ(ReadAll(kaldi::TableSource("ark:" + Fixture("ali_ascii.ark"), "t")), expected);
}

TEST_F(KaldiTableTest, GzipGlobAndSeveral) {
  const auto parts = SplitFixture(dir_.string(), "ali");
  for (size_t i = 0; i < parts.size(); ++i) {
    Gzip(ReadBytes(parts[i]), Path("ali." + std::to_string(i + 1) + ".gz"));
  }
  const Table expected = FixtureAlignments();
  EXPECT_EQ(ReadAll(kaldi::TableSource(Path("ali.*.gz"), "t")), expected);
  EXPECT_EQ(ReadAll(kaldi::TableSource("ark:" + Path("ali.*.gz"), "t")), expected);
  EXPECT_EQ(ReadAll(kaldi::TableSource(Path("ali.1.gz") + "  ark:" + Path("ali.2"), "t")),
            expected);
  // A gzip'd archive is decompressed once, into a temporary file that is unlinked at once and
  // read through its descriptor: nothing is left in $TMPDIR, however the process ends.
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir != nullptr ? old_tmpdir : "";
  setenv("TMPDIR", Path("tmp").c_str(), 1);
  std::filesystem::create_directories(Path("tmp"));
  {
    kaldi::TableSource s(Path("ali.1.gz"), "t");
    ASSERT_EQ(s.Parts().size(), 1u);
    EXPECT_EQ(s.Parts()[0].path.rfind("/proc/self/fd/", 0), 0u) << s.Parts()[0].path;
    EXPECT_EQ(ReadBytes(s.Parts()[0].path), ReadBytes(parts[0]));
    EXPECT_TRUE(std::filesystem::is_empty(Path("tmp")));
    kaldi::TableSource pipe("ark:cat " + parts[1] + " |", "t");
    EXPECT_TRUE(std::filesystem::is_empty(Path("tmp")));
  }
  if (old_tmpdir != nullptr) {
    setenv("TMPDIR", saved.c_str(), 1);
  } else {
    unsetenv("TMPDIR");
  }
}

TEST_F(KaldiTableTest, ScpByOffsets) {
  // An scp written from the archive's offsets, as copy-int-vector ark,scp: would.
  std::string scp;
  kaldi::Int32VectorArchiveReader r(Fixture("ali.ark"));
  while (r.Next())
    scp += r.Key() + " " + Fixture("ali.ark") + ":" + std::to_string(r.Offset()) + "\n";
  WriteBytes(Path("ali.scp"), scp);
  EXPECT_EQ(ReadAll(kaldi::TableSource("scp:" + Path("ali.scp"), "t")), FixtureAlignments());
}

TEST_F(KaldiTableTest, PipesRunUnderTheShell) {
  const auto parts = SplitFixture(dir_.string(), "ali");
  Gzip(ReadBytes(parts[0]) + ReadBytes(parts[1]), Path("all.gz"));
  EXPECT_EQ(ReadAll(kaldi::TableSource("ark:gunzip -c " + Path("all.gz") + " |", "t")),
            FixtureAlignments());
  EXPECT_EQ(ReadAll(kaldi::TableSource("ark:cat '" + parts[0] + "' '" + parts[1] + "'|", "t")),
            FixtureAlignments());
}

TEST_F(KaldiTableTest, ErrorsNameTheSettingFileOrCommand) {
  ExpectErrorContaining([&] { kaldi::TableSource("ark:" + Path("none.ark"), "data.ali"); },
                        {"data.ali", Path("none.ark"), "not found"});
  ExpectErrorContaining([&] { kaldi::TableSource(Path("ali.*.gz"), "data.ali"); },
                        {"data.ali", "matches no file"});
  ExpectErrorContaining([&] { kaldi::TableSource("ark:echo oops >&2; exit 3 |", "data.ali"); },
                        {"data.ali", "command 'echo oops >&2; exit 3'", "status 3", "oops"});
  ExpectErrorContaining([&] { kaldi::TableSource("ark:true |", "data.ali"); },
                        {"data.ali", "command 'true'", "wrote nothing"});
  ExpectErrorContaining([&] { kaldi::TableSource("ark,q:" + Fixture("ali.ark"), "data.ali"); },
                        {"unknown option 'q'"});
  // A truncated gzip file and a corrupt archive from a pipe: the file or the command is named,
  // not the temporary file that held it.
  const std::string bytes = ReadBytes(Fixture("ali.ark"));
  Gzip(bytes, Path("whole.gz"));
  const std::string gz = ReadBytes(Path("whole.gz"));
  WriteBytes(Path("cut.gz"), gz.substr(0, gz.size() / 2));
  ExpectErrorContaining([&] { kaldi::TableSource(Path("cut.gz"), "data.ali"); },
                        {"data.ali", Path("cut.gz"), "gzip"});
  WriteBytes(Path("cut.ark"), bytes.substr(0, bytes.size() - 7));
  ExpectErrorContaining(
      [&] { ReadAll(kaldi::TableSource("ark:cat " + Path("cut.ark") + " |", "data.ali")); },
      {"command 'cat " + Path("cut.ark") + "'", "truncated"});
}

TEST_F(KaldiTableTest, FingerprintFollowsContentNotPlace) {
  const auto parts = SplitFixture(dir_.string(), "ali");
  std::filesystem::create_directories(Path("copy"));
  std::filesystem::copy_file(parts[0], Path("copy/elsewhere.ark"));
  // The same bytes elsewhere under another name: one fingerprint; other alignments: another.
  EXPECT_EQ(kaldi::TableFingerprint(Path("copy/elsewhere.ark"), "t"),
            kaldi::TableFingerprint(parts[0], "t"));
  EXPECT_NE(kaldi::TableFingerprint(parts[1], "t"), kaldi::TableFingerprint(parts[0], "t"));
  // A pipe is not run for its key (this one would fail), but the files it names are read: new
  // alignments under the same command give a new key.
  const std::string pipe = "ark:gunzip -c '" + Path("copy/*.gz") + "' | false |";
  Gzip(ReadBytes(parts[0]), Path("copy/ali.1.gz"));
  const std::string before = kaldi::TableFingerprint(pipe, "t");
  EXPECT_EQ(kaldi::TableFingerprint(pipe, "t"), before);
  Gzip(ReadBytes(parts[1]), Path("copy/ali.1.gz"));
  EXPECT_NE(kaldi::TableFingerprint(pipe, "t"), before);
  EXPECT_NE(kaldi::TableFingerprint("ark:exit 1 |", "t"),
            kaldi::TableFingerprint("ark:exit 2 |", "t"));
}

TEST_F(KaldiTableTest, KaldiReadOptionsInEitherOrder) {
  const Table expected = FixtureAlignments();
  EXPECT_EQ(ReadAll(kaldi::TableSource("s,cs,ark:" + Fixture("ali.ark"), "t")), expected);
  EXPECT_EQ(ReadAll(kaldi::TableSource("ark,bg,ncs:" + Fixture("ali.ark"), "t")), expected);
  ExpectErrorContaining([&] { kaldi::TableSource("ark,nc:" + Fixture("ali.ark"), "t"); },
                        {"unknown option 'nc'"});
  ExpectErrorContaining([&] { kaldi::TableSource("ark,scp:" + Fixture("ali.ark"), "t"); },
                        {"more than one type"});
  ExpectErrorContaining(
      [&] { kaldi::TableSource("ark:gunzip -c a.gz | ark:" + Fixture("ali.ark"), "data.ali"); },
      {"data.ali", "a pipe stands alone"});
}

}  // namespace
}  // namespace mavg
