#pragma once
// Word error rate scoring: Levenshtein alignment of a reference and a hypothesis word sequence
// with unit costs (substitution, deletion, insertion 1; a match 0), per-utterance alignment text
// in the style of sclite's `pralign` output, and corpus totals.
//
// Tie-break among minimal alignments (deterministic, left to right): walking from the start of
// both sequences, take the diagonal step (correct or substitution) whenever it lies on a
// minimal alignment, else a deletion, else an insertion. E.g. REF "a b" / HYP "c" aligns as
// a->C (S), b->*** (D) rather than a->*** (D), b->C (S).
//
// WER and SER are percentages: WER = 100 (S + D + I) / max(1, N), N the reference words, so an
// empty reference gives 0% without errors and 100% per inserted word, never NaN or infinity;
// SER = 100 (sentences with an error) / max(1, sentences).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mavg {

enum class EditOp { kCorrect, kSubstitution, kDeletion, kInsertion };

struct AlignedWord {
  EditOp op = EditOp::kCorrect;
  std::string ref;  // empty for an insertion
  std::string hyp;  // empty for a deletion
};

struct WordAlignment {
  std::vector<AlignedWord> words;  // in order
  int64_t correct = 0, sub = 0, del = 0, ins = 0;

  int64_t Errors() const { return sub + del + ins; }
};

WordAlignment AlignWords(const std::vector<std::string>& ref, const std::vector<std::string>& hyp);

// The sclite-style block for one utterance, every line ending in '\n', trailing blanks removed:
//   id: (utt1)
//   Scores: (#C #S #D #I) 2 1 0 1
//   REF:  one TWO *** four
//   HYP:  one TOO SIX four
//   Eval:     S   I
// Each column is as wide as its widest entry plus one blank: correct words as they are, errors
// in upper case (ASCII), `***` for the missing side; Eval puts S, D or I at the start of an
// error's column.
std::string FormatAlignment(const std::string& utt_id, const WordAlignment& alignment);

struct WerStats {
  int64_t ref_words = 0, correct = 0, sub = 0, del = 0, ins = 0;
  int64_t sentences = 0, sentence_errors = 0;

  // Adds one utterance.
  void Add(const WordAlignment& alignment);
  int64_t Errors() const { return sub + del + ins; }
  double Wer() const;  // percent
  double Ser() const;  // percent
};

// Kaldi's compute-wer lines: "%WER 4.17 [ 5 / 120, 1 ins, 2 del, 2 sub ]" and
// "%SER 10.00 [ 3 / 30 ]".
std::string FormatWer(const WerStats& stats);
std::string FormatSer(const WerStats& stats);

// One utterance's counts as a FormatAlignment block records them.
struct UtteranceScore {
  std::string id;
  int64_t correct = 0, sub = 0, del = 0, ins = 0;

  int64_t RefWords() const { return correct + sub + del; }
  int64_t Errors() const { return sub + del + ins; }
};

// FormatAlignment's blocks read back, in file order (a run's decode_test.txt, `mavg decode
// --out`'s file with a blank line after each block): each block is its id, Scores, REF, HYP and
// Eval lines in that order; blank lines may separate blocks. Anything else, a block cut short,
// or an id seen twice throws naming `name`:line.
std::vector<UtteranceScore> ParseAlignments(std::string_view text, const std::string& name);
// The same from a file (named in errors by its path).
std::vector<UtteranceScore> ReadAlignments(const std::string& path);

// Splits a transcript on blanks.
std::vector<std::string> SplitWords(const std::string& text);

}  // namespace mavg
