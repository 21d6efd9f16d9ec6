// WER scoring: Levenshtein alignment corner cases with exact counts and alignment text, the
// tie-break rule, corpus totals and the Kaldi-style summary lines.
#include "engine/decode/score.h"

#include <gtest/gtest.h>

#include <cmath>

#include "engine/core/error.h"
#include "engine/core/rng.h"

namespace mavg {
namespace {

std::vector<std::string> W(const std::string& text) { return SplitWords(text); }

struct Counts {
  int64_t c, s, d, i;
};

void ExpectCounts(const WordAlignment& a, Counts e) {
  EXPECT_EQ(a.correct, e.c);
  EXPECT_EQ(a.sub, e.s);
  EXPECT_EQ(a.del, e.d);
  EXPECT_EQ(a.ins, e.i);
}

TEST(Score, SplitWords) {
  EXPECT_EQ(W("  one\ttwo  three \n"), (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_TRUE(W("").empty());
  EXPECT_TRUE(W(" \t ").empty());
}

TEST(Score, IdenticalSequences) {
  const WordAlignment a = AlignWords(W("one two three"), W("one two three"));
  ExpectCounts(a, {3, 0, 0, 0});
  EXPECT_EQ(FormatAlignment("u1", a),
            "id: (u1)\n"
            "Scores: (#C #S #D #I) 3 0 0 0\n"
            "REF:  one two three\n"
            "HYP:  one two three\n"
            "Eval:\n");
}

TEST(Score, EmptyReferenceAndHypothesis) {
  const WordAlignment a = AlignWords({}, {});
  ExpectCounts(a, {0, 0, 0, 0});
  EXPECT_TRUE(a.words.empty());
  EXPECT_EQ(FormatAlignment("e", a), "id: (e)\nScores: (#C #S #D #I) 0 0 0 0\nREF:\nHYP:\nEval:\n");
  WerStats stats;
  stats.Add(a);
  EXPECT_EQ(stats.ref_words, 0);
  EXPECT_EQ(stats.sentence_errors, 0);
  EXPECT_EQ(stats.Wer(), 0.0);
  EXPECT_EQ(stats.Ser(), 0.0);
}

TEST(Score, EmptyReferenceAllInsertions) {
  const WordAlignment a = AlignWords({}, W("one seven"));
  ExpectCounts(a, {0, 0, 0, 2});
  EXPECT_EQ(FormatAlignment("i", a),
            "id: (i)\n"
            "Scores: (#C #S #D #I) 0 0 0 2\n"
            "REF:  *** ***\n"
            "HYP:  ONE SEVEN\n"
            "Eval: I   I\n");
  WerStats stats;
  stats.Add(a);
  // No reference words: WER = 100 x errors / max(1, 0) = 200%, finite.
  EXPECT_EQ(stats.ref_words, 0);
  EXPECT_DOUBLE_EQ(stats.Wer(), 200.0);
  EXPECT_DOUBLE_EQ(stats.Ser(), 100.0);
  EXPECT_EQ(FormatWer(stats), "%WER 200.00 [ 2 / 0, 2 ins, 0 del, 0 sub ]");
}

TEST(Score, EmptyHypothesisAllDeletions) {
  const WordAlignment a = AlignWords(W("one two"), {});
  ExpectCounts(a, {0, 0, 2, 0});
  EXPECT_EQ(FormatAlignment("d", a),
            "id: (d)\n"
            "Scores: (#C #S #D #I) 0 0 2 0\n"
            "REF:  ONE TWO\n"
            "HYP:  *** ***\n"
            "Eval: D   D\n");
  WerStats stats;
  stats.Add(a);
  EXPECT_DOUBLE_EQ(stats.Wer(), 100.0);
}

TEST(Score, MixedErrorsLayout) {
  const WordAlignment a = AlignWords(W("one two four"), W("one too six four"));
  ExpectCounts(a, {2, 1, 0, 1});
  ASSERT_EQ(a.words.size(), 4u);
  EXPECT_EQ(a.words[1].op, EditOp::kSubstitution);
  EXPECT_EQ(a.words[2].op, EditOp::kInsertion);
  EXPECT_EQ(a.words[2].ref, "");
  EXPECT_EQ(a.words[2].hyp, "six");
  EXPECT_EQ(FormatAlignment("utt1", a),
            "id: (utt1)\n"
            "Scores: (#C #S #D #I) 2 1 0 1\n"
            "REF:  one TWO *** four\n"
            "HYP:  one TOO SIX four\n"
            "Eval:     S   I\n");
  // Columns as wide as the widest entry.
  EXPECT_EQ(FormatAlignment("x", AlignWords(W("seven oh"), W("six oh"))),
            "id: (x)\n"
            "Scores: (#C #S #D #I) 1 1 0 0\n"
            "REF:  SEVEN oh\n"
            "HYP:  SIX   oh\n"
            "Eval: S\n");
  // A gap is `***` even under a shorter word; the column widens to fit it.
  EXPECT_EQ(FormatAlignment("y", AlignWords(W("oh oh"), W("oh"))),
            "id: (y)\n"
            "Scores: (#C #S #D #I) 1 0 1 0\n"
            "REF:  oh OH\n"
            "HYP:  oh ***\n"
            "Eval:    D\n");
}

TEST(Score, TieBreakPrefersDiagonalLeftToRight) {
  // a->C + b deleted, or a deleted + b->C: both cost 2; the diagonal comes first.
  WordAlignment a = AlignWords(W("a b"), W("c"));
  ExpectCounts(a, {0, 1, 1, 0});
  EXPECT_EQ(a.words[0].op, EditOp::kSubstitution);
  EXPECT_EQ(a.words[1].op, EditOp::kDeletion);
  // Two substitutions, or delete a, match b, insert c: both cost 2; substitutions win.
  a = AlignWords(W("a b"), W("b c"));
  ExpectCounts(a, {0, 2, 0, 0});
  // Insertion before a match when only that is minimal.
  a = AlignWords(W("a"), W("b a"));
  ExpectCounts(a, {1, 0, 0, 1});
  EXPECT_EQ(a.words[0].op, EditOp::kInsertion);
  EXPECT_EQ(a.words[1].op, EditOp::kCorrect);
  // a b -> b a: two substitutions (cost 2) rather than a deletion and an insertion (also 2).
  a = AlignWords(W("a b"), W("b a"));
  ExpectCounts(a, {0, 2, 0, 0});
  a = AlignWords(W("a b b"), W("b b a"));
  ExpectCounts(a, {1, 2, 0, 0});
  // Without a minimal diagonal, a deletion comes before an insertion.
  a = AlignWords(W("a b c"), W("b c d"));
  ExpectCounts(a, {2, 0, 1, 1});
  EXPECT_EQ(a.words[0].op, EditOp::kDeletion);
  EXPECT_EQ(a.words.back().op, EditOp::kInsertion);
}

// Edit distance by the textbook prefix recursion, for the invariant below.
int64_t Distance(const std::vector<std::string>& r, const std::vector<std::string>& h) {
  std::vector<std::vector<int64_t>> d(r.size() + 1, std::vector<int64_t>(h.size() + 1));
  for (size_t i = 0; i <= r.size(); ++i) d[i][0] = static_cast<int64_t>(i);
  for (size_t j = 0; j <= h.size(); ++j) d[0][j] = static_cast<int64_t>(j);
  for (size_t i = 1; i <= r.size(); ++i) {
    for (size_t j = 1; j <= h.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j - 1] + (r[i - 1] == h[j - 1] ? 0 : 1), d[i - 1][j] + 1, d[i][j - 1] + 1});
    }
  }
  return d[r.size()][h.size()];
}

TEST(Score, RandomSequencesAreMinimalAndConsistent) {
  Rng rng(11);
  const std::vector<std::string> vocab = {"a", "b", "c", "d"};
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::string> r, h;
    for (uint64_t i = 0, n = rng.Below(7); i < n; ++i) r.push_back(vocab[rng.Below(4)]);
    for (uint64_t i = 0, n = rng.Below(7); i < n; ++i) h.push_back(vocab[rng.Below(4)]);
    const WordAlignment a = AlignWords(r, h);
    EXPECT_EQ(a.Errors(), Distance(r, h));
    EXPECT_EQ(a.correct + a.sub + a.del, static_cast<int64_t>(r.size()));
    EXPECT_EQ(a.correct + a.sub + a.ins, static_cast<int64_t>(h.size()));
    std::vector<std::string> r_back, h_back;
    for (const AlignedWord& w : a.words) {
      if (w.op != EditOp::kInsertion) r_back.push_back(w.ref);
      if (w.op != EditOp::kDeletion) h_back.push_back(w.hyp);
      EXPECT_EQ(w.op == EditOp::kCorrect, w.ref == w.hyp);
    }
    EXPECT_EQ(r_back, r);
    EXPECT_EQ(h_back, h);
  }
}

TEST(Score, CorpusTotals) {
  WerStats stats;
  stats.Add(AlignWords(W("one two three"), W("one two three")));
  stats.Add(AlignWords(W("four five"), W("four nine five six")));
  stats.Add(AlignWords(W("seven eight nine oh"), W("seven nine oh")));
  stats.Add(AlignWords(W("zero"), W("two")));
  EXPECT_EQ(stats.ref_words, 10);
  EXPECT_EQ(stats.correct, 8);
  EXPECT_EQ(stats.sub, 1);
  EXPECT_EQ(stats.del, 1);
  EXPECT_EQ(stats.ins, 2);
  EXPECT_EQ(stats.sentences, 4);
  EXPECT_EQ(stats.sentence_errors, 3);
  EXPECT_DOUBLE_EQ(stats.Wer(), 40.0);
  EXPECT_DOUBLE_EQ(stats.Ser(), 75.0);
  EXPECT_EQ(FormatWer(stats), "%WER 40.00 [ 4 / 10, 2 ins, 1 del, 1 sub ]");
  EXPECT_EQ(FormatSer(stats), "%SER 75.00 [ 3 / 4 ]");
  EXPECT_EQ(FormatWer(WerStats{}), "%WER 0.00 [ 0 / 0, 0 ins, 0 del, 0 sub ]");
}

// decode_test.txt read back: the counts FormatAlignment wrote, blank lines between blocks (as
// `mavg decode --out` writes them) and an empty utterance included.
TEST(Score, ParseAlignmentsReadsFormatAlignmentBack) {
  const WordAlignment a = AlignWords(W("one two three four"), W("one too six four"));
  const WordAlignment b = AlignWords(W("five"), W("five six seven"));
  const WordAlignment empty = AlignWords(W(""), W(""));
  const std::string text = FormatAlignment("spk1-utt1", a) + FormatAlignment("u2", b) + "\n" +
                           FormatAlignment("u3", empty) + "\n\n";
  const std::vector<UtteranceScore> u = ParseAlignments(text, "decode_test.txt");
  ASSERT_EQ(u.size(), 3u);
  EXPECT_EQ(u[0].id, "spk1-utt1");
  EXPECT_EQ(u[0].correct, a.correct);
  EXPECT_EQ(u[0].sub, a.sub);
  EXPECT_EQ(u[0].del, a.del);
  EXPECT_EQ(u[0].ins, a.ins);
  EXPECT_EQ(u[0].RefWords(), 4);
  EXPECT_EQ(u[0].Errors(), a.Errors());
  EXPECT_EQ(u[1].Errors(), 2);  // two insertions
  EXPECT_EQ(u[1].RefWords(), 1);
  EXPECT_EQ(u[2].RefWords(), 0);
  EXPECT_TRUE(ParseAlignments("", "f").empty());
}

TEST(Score, ParseAlignmentsNamesFileAndLine) {
  const std::string good = FormatAlignment("u1", AlignWords(W("a b"), W("a c")));
  auto error = [](const std::string& text) {
    try {
      ParseAlignments(text, "run/decode_test.txt");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("hello\n"),
            "run/decode_test.txt:1: expected an utterance's 'id: (ID)' line, not 'hello'");
  EXPECT_EQ(error("id: ()\n"),
            "run/decode_test.txt:1: expected an utterance's 'id: (ID)' line, not 'id: ()'");
  EXPECT_EQ(error(good + good), "run/decode_test.txt:6: utterance 'u1' appears twice");
  EXPECT_EQ(error("id: (u1)\nREF:  a\n"),
            "run/decode_test.txt:2: expected the 'Scores: (#C #S #D #I)' line of utterance 'u1', "
            "not 'REF:  a'");
  EXPECT_EQ(error("id: (u1)\nScores: (#C #S #D #I) 1 2 x 0\n"),
            "run/decode_test.txt:2: expected four counts after 'Scores: (#C #S #D #I)', not "
            "'Scores: (#C #S #D #I) 1 2 x 0'");
  EXPECT_NE(error("id: (u1)\nScores: (#C #S #D #I) 1 2 3\n").find(":2: expected four counts"),
            std::string::npos);
  EXPECT_NE(error("id: (u1)\nScores: (#C #S #D #I) 1 2 3 4 5\n").find(":2: expected four"),
            std::string::npos);
  EXPECT_NE(error("id: (u1)\nScores: (#C #S #D #I) 1 -2 3 4\n").find(":2: expected four"),
            std::string::npos);
  // Cut short: a block without its last line.
  EXPECT_EQ(error(good.substr(0, good.rfind("Eval:"))),
            "run/decode_test.txt:4: the block of utterance 'u1' ends before its 'Eval:' line");
  // A blank line inside a block is not a block boundary.
  EXPECT_NE(error("id: (u1)\n\nScores: (#C #S #D #I) 1 0 0 0\n").find(":2: expected the"),
            std::string::npos);
}

}  // namespace
}  // namespace mavg
