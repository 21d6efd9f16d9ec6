// The lang directory: write/read round trip, what the reader accepts (comments, any line order),
// malformed files (each error names file:line), and self-loop estimation from alignments.
#include "engine/decode/lang.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "tests/testing/test_util.h"
#include "tests/unit/decode/decode_test_util.h"

namespace mavg {
namespace {

using testing_decode::Contains;
using testing_decode::DigitsLang;
using testing_decode::ErrorOf;

void ExpectSameLang(const Lang& a, const Lang& b) {
  EXPECT_EQ(a.phones, b.phones);
  EXPECT_EQ(a.words, b.words);
  ASSERT_EQ(a.prons.size(), b.prons.size());
  for (size_t i = 0; i < a.prons.size(); ++i) {
    EXPECT_EQ(a.prons[i].word, b.prons[i].word) << i;
    EXPECT_EQ(a.prons[i].phones, b.prons[i].phones) << i;
  }
  EXPECT_EQ(a.pdfs, b.pdfs);
  EXPECT_EQ(a.self_loop, b.self_loop);  // bit-identical: shortest round-trip text
}

TEST(Lang, RoundTrip) {
  testing::TempDir dir;
  Lang lang = DigitsLang();
  lang.self_loop[7] = 1.0 / 3.0;
  lang.self_loop[8] = 0.123456789012345;
  WriteLang(dir.Path() + "/lang", lang);
  const Lang back = LoadLang(dir.Path() + "/lang");
  ExpectSameLang(lang, back);
  EXPECT_EQ(back.NumPhones(), 20);
  EXPECT_EQ(back.NumPdfs(), 60);
  EXPECT_EQ(back.NumWords(), 11);
  EXPECT_EQ(back.WordId("zero"), 1);
  EXPECT_EQ(back.prons[2].word, 1);  // second pronunciation of "zero"
  EXPECT_EQ(back.WordId("ten"), -1);
  EXPECT_EQ(back.PhoneId("sil"), 0);
}

TEST(Lang, AcceptsCommentsBlankLinesAndAnyPhoneOrder) {
  testing::TempDir dir;
  WriteFileAtomic(dir.File("phones.txt"), "# phones\n\nb 2  # second\n\tsil 0\na 1\n");
  WriteFileAtomic(dir.File("lexicon.txt"), "x a b\n# comment only\ny b\ny a a\n");
  std::string pdfs, transitions;
  const char* phones[] = {"sil", "a", "b"};
  for (int p = 0; p < 3; ++p) {
    for (int s = 0; s < 3; ++s) {
      pdfs += fmt::format("{} {} {}\n", phones[p], s, 8 - (3 * p + s));  // ids in reverse
      transitions += fmt::format("{} 0.{}\n", 3 * p + s, 3 * p + s + 1);
    }
  }
  WriteFileAtomic(dir.File("pdfs.txt"), pdfs);
  WriteFileAtomic(dir.File("transitions.txt"), transitions);
  const Lang lang = LoadLang(dir.Path());
  EXPECT_EQ(lang.phones, (std::vector<std::string>{"sil", "a", "b"}));
  EXPECT_EQ(lang.words, (std::vector<std::string>{"x", "y"}));
  ASSERT_EQ(lang.prons.size(), 3u);
  EXPECT_EQ(lang.prons[2].word, 1);
  EXPECT_EQ(lang.prons[2].phones, (std::vector<int>{1, 1}));
  EXPECT_EQ(lang.pdfs[2][1], 1);
  EXPECT_DOUBLE_EQ(lang.self_loop[0], 0.1);
  EXPECT_DOUBLE_EQ(lang.self_loop[8], 0.9);
}

// Writes the digits lang, replaces `from` by `to` in one file and returns LoadLang's error.
std::string LoadEdited(const std::string& file, const std::string& from, const std::string& to) {
  testing::TempDir dir;
  WriteLang(dir.Path(), DigitsLang());
  const std::string path = dir.File(file);
  std::string text = ReadFile(path);
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at == std::string::npos) return "";
  text.replace(at, from.size(), to);
  WriteFileAtomic(path, text);
  return ErrorOf([&] { LoadLang(dir.Path()); });
}

TEST(Lang, MalformedFilesNameFileAndLine) {
  // phones.txt: a header comment, then "sil 0" on line 2, "ow 1" on line 3, ...
  EXPECT_TRUE(Contains(LoadEdited("phones.txt", "ow 1", "ow 0"),
                       "phones.txt:3: duplicate phone id 0 (phone 'sil' on line 2)"));
  EXPECT_TRUE(Contains(LoadEdited("phones.txt", "z 2", "ow 2"),
                       "phones.txt:4: duplicate phone 'ow' (first on line 3)"));
  EXPECT_TRUE(Contains(LoadEdited("phones.txt", "z 2", "z 20"),
                       "phones.txt: phone ids must be dense from 0, but id 2 is missing"));
  EXPECT_TRUE(Contains(LoadEdited("phones.txt", "sil 0", "silence 0"),
                       "phone id 0 must be 'sil', found 'silence'"));
  EXPECT_TRUE(Contains(LoadEdited("phones.txt", "z 2", "z two"),
                       "phones.txt:4: phone id 'two' is not a non-negative integer"));
  EXPECT_TRUE(Contains(LoadEdited("phones.txt", "z 2", "z 2 3"), "phones.txt:4: expected"));

  // lexicon.txt: line 2 "oh ow", line 3 "zero z ih r ow", ...
  EXPECT_TRUE(Contains(LoadEdited("lexicon.txt", "zero z ih r ow", "zero z ih xx ow"),
                       "lexicon.txt:3: unknown phone 'xx' in the pronunciation of 'zero'"));
  EXPECT_TRUE(
      Contains(LoadEdited("lexicon.txt", "oh ow", "oh"), "lexicon.txt:2: word 'oh' has no phones"));
  EXPECT_TRUE(Contains(LoadEdited("lexicon.txt", "oh ow", "oh sil ow"),
                       "lexicon.txt:2: 'sil' is the silence phone"));
  EXPECT_TRUE(Contains(LoadEdited("lexicon.txt", "zero z iy r ow", "zero z ih r ow"),
                       "lexicon.txt:4: duplicate pronunciation of 'zero' (first on line 3)"));

  // pdfs.txt: line 2 "sil 0 0", line 3 "sil 1 1", ..., "ow 2 5" on line 7.
  EXPECT_TRUE(
      Contains(LoadEdited("pdfs.txt", "ow 2 5\n", ""), "pdfs.txt: no pdf for phone 'ow' state 2"));
  EXPECT_TRUE(Contains(LoadEdited("pdfs.txt", "ow 2 5", "ow 1 5"),
                       "pdfs.txt:7: duplicate entry for phone 'ow' state 1 (line 6)"));
  EXPECT_TRUE(Contains(LoadEdited("pdfs.txt", "ow 2 5", "ow 2 4"),
                       "pdfs.txt:7: duplicate pdf id 4 (phone 'ow' state 1 on line 6)"));
  EXPECT_TRUE(Contains(LoadEdited("pdfs.txt", "ow 2 5", "ow 2 60"),
                       "pdfs.txt:7: pdf ids must be dense from 0"));
  EXPECT_TRUE(Contains(LoadEdited("pdfs.txt", "ow 2 5", "ow 3 5"),
                       "pdfs.txt:7: state '3' of phone 'ow' is not 0, 1 or 2"));
  EXPECT_TRUE(Contains(LoadEdited("pdfs.txt", "ow 2 5", "ox 2 5"), "pdfs.txt:7: unknown phone"));
  EXPECT_TRUE(Contains(LoadEdited("pdfs.txt", "ow 2 5", "ow 2 -5"),
                       "pdfs.txt:7: pdf id '-5' is not a non-negative integer"));

  // transitions.txt: line 2 "0 0.5", line 3 "1 0.6", ...
  for (const char* bad : {"1", "0", "-0.1", "1.5", "nan", "inf", "abc", "0.6x"}) {
    const std::string error =
        LoadEdited("transitions.txt", "\n1 0.6\n", fmt::format("\n1 {}\n", bad));
    EXPECT_TRUE(Contains(error, "transitions.txt:3: ")) << bad;
    EXPECT_TRUE(Contains(error, "outside (0, 1)") || Contains(error, "bad probability")) << bad;
  }
  EXPECT_TRUE(Contains(LoadEdited("transitions.txt", "\n1 0.6\n", "\n0 0.6\n"),
                       "transitions.txt:3: duplicate pdf id 0 (first on line 2)"));
  EXPECT_TRUE(Contains(LoadEdited("transitions.txt", "\n1 0.6\n", "\n"),
                       "transitions.txt: no self-loop probability for pdf 1"));
  EXPECT_TRUE(Contains(LoadEdited("transitions.txt", "\n1 0.6\n", "\n60 0.6\n"),
                       "transitions.txt:3: pdf id '60' is not in [0, 60)"));
}

TEST(Lang, MissingFilesAndDirectory) {
  testing::TempDir dir;
  EXPECT_TRUE(Contains(ErrorOf([&] { LoadLang(dir.File("nope")); }), "lang directory not found"));
  WriteLang(dir.Path(), DigitsLang());
  std::filesystem::remove(dir.File("pdfs.txt"));
  EXPECT_TRUE(Contains(ErrorOf([&] { LoadLang(dir.Path()); }), "pdfs.txt: no such file"));
}

TEST(Lang, WriteValidates) {
  testing::TempDir dir;
  Lang lang = DigitsLang();
  lang.self_loop[3] = 1.0;
  EXPECT_TRUE(Contains(ErrorOf([&] { WriteLang(dir.Path(), lang); }),
                       "self-loop probability 1 of pdf 3 is outside (0, 1)"));
  lang = DigitsLang();
  lang.pdfs[2][0] = lang.pdfs[1][0];
  EXPECT_TRUE(Contains(ErrorOf([&] { WriteLang(dir.Path(), lang); }), "used twice"));
  EXPECT_FALSE(PathExists(dir.File("phones.txt")));
}

TEST(Lang, EstimateSelfLoops) {
  // pdf 0: 4 frames in 2 visits -> 0.5; pdf 1: 6 frames in 2 visits -> 2/3; pdf 2: 1 frame in 1
  // visit -> 0, clamped to 0.05; pdf 3: 100 frames in 1 visit -> 0.99, clamped to 0.95;
  // pdf 4: never seen -> 0.5. Runs do not continue across utterances.
  std::vector<std::vector<int32_t>> ali = {{0, 0, 0, 1, 1, 0}, {1, 1, 1, 1, 2}, {}};
  ali.push_back(std::vector<int32_t>(100, 3));
  const std::vector<double> p = EstimateSelfLoops(ali, 5);
  ASSERT_EQ(p.size(), 5u);
  EXPECT_DOUBLE_EQ(p[0], 0.5);
  EXPECT_DOUBLE_EQ(p[1], 1.0 - 2.0 / 6.0);
  EXPECT_DOUBLE_EQ(p[2], 0.05);
  EXPECT_DOUBLE_EQ(p[3], 0.95);
  EXPECT_DOUBLE_EQ(p[4], 0.5);
  // The same pdf at the end of one utterance and the start of the next: two visits.
  const std::vector<double> q = EstimateSelfLoops({{0, 0}, {0, 0}}, 1);
  EXPECT_DOUBLE_EQ(q[0], 0.5);
  EXPECT_TRUE(Contains(ErrorOf([] {
                         EstimateSelfLoops({{0}, {0, 7}}, 5);
                       }),
                       "utterance 1 (0-based), frame 1: pdf 7 is outside [0, 5)"));
}

TEST(Lang, BuildLang) {
  // Phones sil, a, b: pdfs 0-8; the alignment visits pdf 3 (a, state 0) for 4 frames in 1 visit.
  const Lang lang = BuildLang({"sil", "a", "b"}, {{"x", {"a", "b"}}, {"y", {"b"}}, {"x", {"b"}}},
                              {{0, 1, 2, 3, 3, 3, 3, 4, 5}});
  EXPECT_EQ(lang.words, (std::vector<std::string>{"x", "y"}));
  ASSERT_EQ(lang.prons.size(), 3u);
  EXPECT_EQ(lang.prons[2].word, 0);
  EXPECT_EQ(lang.prons[0].phones, (std::vector<int>{1, 2}));
  EXPECT_EQ(lang.pdfs[2], (std::array<int, 3>{6, 7, 8}));
  EXPECT_DOUBLE_EQ(lang.self_loop[3], 0.75);
  EXPECT_DOUBLE_EQ(lang.self_loop[0], 0.05);
  EXPECT_DOUBLE_EQ(lang.self_loop[8], 0.5);
  testing::TempDir dir;
  WriteLang(dir.Path(), lang);
  ExpectSameLang(LoadLang(dir.Path()), lang);
  EXPECT_TRUE(Contains(ErrorOf([] {
                         BuildLang({"sil", "a"}, {{"x", {"q"}}}, {});
                       }),
                       "unknown phone 'q' in the pronunciation of 'x'"));
  EXPECT_TRUE(Contains(ErrorOf([] {
                         BuildLang({"a", "sil"}, {{"x", {"a"}}}, {});
                       }),
                       "phone 0 must be 'sil'"));
}

}  // namespace
}  // namespace mavg
