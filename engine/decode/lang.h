#pragma once
// The language directory of a hybrid DNN-HMM recogniser: phones, pronunciation lexicon, the pdf
// (network output) of every HMM state, and the HMM transition probabilities. Every phone is a
// 3-state left-to-right HMM; state s of phone p emits with pdf pdfs[p][s], loops on itself with
// probability self_loop[pdf] and moves on with 1 - self_loop[pdf].
//
// On disk, a directory of four plain-text files. Tokens are separated by blanks; everything from
// '#' to the end of a line is a comment; blank lines are skipped.
//
//   phones.txt       `<phone> <id>`, ids dense from 0 (any line order); id 0 is `sil`.
//   lexicon.txt      `<word> <phone> <phone> ...`, at least one phone. A word may have several
//                    lines: alternative pronunciations, equally likely. Word ids follow the
//                    order in which words first appear. `sil` may not be used in a word.
//   pdfs.txt         `<phone> <state> <pdf-id>` for states 0, 1, 2 of every phone in phones.txt;
//                    each pdf belongs to exactly one phone state, ids dense from 0.
//   transitions.txt  `<pdf-id> <self-loop-probability>`, one line per pdf, probability in (0, 1)
//                    strictly (the forward probability is 1 - self-loop).
//
// LoadLang checks all of it (unknown phone, missing pdf of a phone state, duplicate names or
// ids, probability outside (0, 1), ...) and throws mavg::Error naming `file:line`.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mavg {

constexpr int kStatesPerPhone = 3;
constexpr std::string_view kSilencePhone = "sil";  // phone id 0

struct Pronunciation {
  int word = 0;             // index into Lang::words
  std::vector<int> phones;  // phone ids, at least one, never silence
};

struct Lang {
  std::vector<std::string> phones;                     // [num_phones] name by id; [0] is "sil"
  std::vector<std::string> words;                      // [num_words] by word id
  std::vector<Pronunciation> prons;                    // lexicon.txt lines, in file order
  std::vector<std::array<int, kStatesPerPhone>> pdfs;  // [num_phones] pdf id of each state
  std::vector<double> self_loop;                       // [num_pdfs] self-loop probability

  int NumPhones() const { return static_cast<int>(phones.size()); }
  int NumWords() const { return static_cast<int>(words.size()); }
  int NumPdfs() const { return static_cast<int>(self_loop.size()); }
  // Linear searches (the vocabularies here are small); -1 when absent.
  int WordId(std::string_view word) const;
  int PhoneId(std::string_view phone) const;
};

// Reads and validates dir/{phones,lexicon,pdfs,transitions}.txt.
Lang LoadLang(const std::string& dir);

// Checks the invariants LoadLang guarantees; `where` prefixes the message (e.g. the directory).
void ValidateLang(const Lang& lang, const std::string& where);

// Validates, then writes the four files (each atomically), creating `dir` if needed. Self-loop
// probabilities are written in shortest round-trip form, so LoadLang gives back the same Lang.
void WriteLang(const std::string& dir, const Lang& lang);

// Self-loop probabilities estimated from frame alignments (per-utterance pdf sequences): for
// each pdf, p_self = 1 - visits / frames, a visit being a maximal run of that pdf within one
// utterance, clamped to [0.05, 0.95]; pdfs never seen get 0.5. A pdf id outside
// [0, num_pdfs) throws, naming the utterance index.
std::vector<double> EstimateSelfLoops(const std::vector<std::vector<int32_t>>& alignments,
                                      int num_pdfs);

// A Lang with the conventional pdf numbering pdf = 3 * phone id + state, and self-loop
// probabilities estimated from `alignments` (per-utterance pdf sequences in that numbering).
// phones[0] must be "sil"; lexicon entries are (word, phones), one per pronunciation, in order.
using LexiconEntries = std::vector<std::pair<std::string, std::vector<std::string>>>;
Lang BuildLang(const std::vector<std::string>& phones, const LexiconEntries& lexicon,
               const std::vector<std::vector<int32_t>>& alignments);

}  // namespace mavg
