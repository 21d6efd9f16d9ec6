#include "engine/decode/score.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace mavg {
namespace {

constexpr std::string_view kGap = "***";

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

void TrimRight(std::string& s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
}

double Percent(int64_t num, int64_t den) {
  return 100.0 * static_cast<double>(num) / static_cast<double>(std::max<int64_t>(1, den));
}

}  // namespace

WordAlignment AlignWords(const std::vector<std::string>& ref, const std::vector<std::string>& hyp) {
  const size_t n = ref.size(), m = hyp.size();
  // cost[i][j]: edit distance between the suffixes ref[i:] and hyp[j:]; [(n + 1) x (m + 1)].
  std::vector<int64_t> cost((n + 1) * (m + 1));
  auto at = [&](size_t i, size_t j) -> int64_t& { return cost[i * (m + 1) + j]; };
  for (size_t i = n + 1; i-- > 0;) {
    for (size_t j = m + 1; j-- > 0;) {
      if (i == n || j == m) {
        at(i, j) = static_cast<int64_t>((n - i) + (m - j));
        continue;
      }
      const int64_t diagonal = at(i + 1, j + 1) + (ref[i] == hyp[j] ? 0 : 1);
      at(i, j) = std::min({diagonal, at(i + 1, j) + 1, at(i, j + 1) + 1});
    }
  }
  WordAlignment a;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && at(i, j) == at(i + 1, j + 1) + (ref[i] == hyp[j] ? 0 : 1)) {
      const bool same = ref[i] == hyp[j];
      a.words.push_back({same ? EditOp::kCorrect : EditOp::kSubstitution, ref[i], hyp[j]});
      ++(same ? a.correct : a.sub);
      ++i;
      ++j;
    } else if (i < n && at(i, j) == at(i + 1, j) + 1) {
      a.words.push_back({EditOp::kDeletion, ref[i], {}});
      ++a.del;
      ++i;
    } else {
      a.words.push_back({EditOp::kInsertion, {}, hyp[j]});
      ++a.ins;
      ++j;
    }
  }
  return a;
}

std::string FormatAlignment(const std::string& utt_id, const WordAlignment& alignment) {
  std::string ref = "REF:  ", hyp = "HYP:  ", eval = "Eval: ";
  for (const AlignedWord& w : alignment.words) {
    const bool error = w.op != EditOp::kCorrect;
    const std::string r = w.op == EditOp::kInsertion ? std::string(kGap)
                          : error                    ? Upper(w.ref)
                                                     : w.ref;
    const std::string h = w.op == EditOp::kDeletion ? std::string(kGap)
                          : error                   ? Upper(w.hyp)
                                                    : w.hyp;
    const size_t width = std::max(r.size(), h.size());
    const char* mark = w.op == EditOp::kSubstitution ? "S"
                       : w.op == EditOp::kDeletion   ? "D"
                       : w.op == EditOp::kInsertion  ? "I"
                                                     : "";
    ref += fmt::format("{:<{}} ", r, width);
    hyp += fmt::format("{:<{}} ", h, width);
    eval += fmt::format("{:<{}} ", mark, width);
  }
  TrimRight(ref);
  TrimRight(hyp);
  TrimRight(eval);
  return fmt::format("id: ({})\nScores: (#C #S #D #I) {} {} {} {}\n{}\n{}\n{}\n", utt_id,
                     alignment.correct, alignment.sub, alignment.del, alignment.ins, ref, hyp,
                     eval);
}

void WerStats::Add(const WordAlignment& alignment) {
  ref_words += alignment.correct + alignment.sub + alignment.del;
  correct += alignment.correct;
  sub += alignment.sub;
  del += alignment.del;
  ins += alignment.ins;
  ++sentences;
  if (alignment.Errors() > 0) ++sentence_errors;
}

double WerStats::Wer() const { return Percent(Errors(), ref_words); }

double WerStats::Ser() const { return Percent(sentence_errors, sentences); }

std::string FormatWer(const WerStats& stats) {
  return fmt::format("%WER {:.2f} [ {} / {}, {} ins, {} del, {} sub ]", stats.Wer(), stats.Errors(),
                     stats.ref_words, stats.ins, stats.del, stats.sub);
}

std::string FormatSer(const WerStats& stats) {
  return fmt::format("%SER {:.2f} [ {} / {} ]", stats.Ser(), stats.sentence_errors,
                     stats.sentences);
}

std::vector<std::string> SplitWords(const std::string& text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t end = i;
    while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    if (end > i) words.push_back(text.substr(i, end - i));
    i = end;
  }
  return words;
}

}  // namespace mavg
