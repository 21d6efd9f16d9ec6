#include "engine/decode/score.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <unordered_set>

#include "engine/core/error.h"
#include "engine/core/files.h"

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

constexpr std::string_view kIdPrefix = "id: (";
constexpr std::string_view kScoresPrefix = "Scores: (#C #S #D #I)";

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

std::vector<UtteranceScore> ParseAlignments(std::string_view text, const std::string& name) {
  // The line each block expects next, after its id line.
  constexpr std::string_view kAfterId[] = {kScoresPrefix, "REF:", "HYP:", "Eval:"};
  std::vector<UtteranceScore> out;
  std::unordered_set<std::string> seen;
  size_t expect = std::size(kAfterId);  // index into kAfterId; past the end: an id or a blank
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (expect == std::size(kAfterId)) {
      if (line.empty()) continue;
      MAVG_CHECK(
          line.starts_with(kIdPrefix) && line.size() > kIdPrefix.size() + 1 && line.back() == ')',
          "{}:{}: expected an utterance's 'id: (ID)' line, not '{}'", name, line_no, line);
      UtteranceScore u;
      u.id = std::string(line.substr(kIdPrefix.size(), line.size() - kIdPrefix.size() - 1));
      MAVG_CHECK(seen.insert(u.id).second, "{}:{}: utterance '{}' appears twice", name, line_no,
                 u.id);
      out.push_back(std::move(u));
      expect = 0;
      continue;
    }
    MAVG_CHECK(line.starts_with(kAfterId[expect]),
               "{}:{}: expected the '{}' line of utterance '{}', not '{}'", name, line_no,
               kAfterId[expect], out.back().id, line);
    if (expect == 0) {
      int64_t counts[4] = {};
      std::string_view rest = line.substr(kScoresPrefix.size());
      for (int64_t& c : counts) {
        while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
        const auto r = std::from_chars(rest.data(), rest.data() + rest.size(), c);
        MAVG_CHECK(
            r.ec == std::errc() && c >= 0 && (r.ptr == rest.data() + rest.size() || *r.ptr == ' '),
            "{}:{}: expected four counts after '{}', not '{}'", name, line_no, kScoresPrefix, line);
        rest.remove_prefix(static_cast<size_t>(r.ptr - rest.data()));
      }
      MAVG_CHECK(rest.find_first_not_of(' ') == std::string_view::npos,
                 "{}:{}: expected four counts after '{}', not '{}'", name, line_no, kScoresPrefix,
                 line);
      UtteranceScore& u = out.back();
      u.correct = counts[0];
      u.sub = counts[1];
      u.del = counts[2];
      u.ins = counts[3];
    }
    ++expect;
  }
  MAVG_CHECK(expect == std::size(kAfterId),
             "{}:{}: the block of utterance '{}' ends before its '{}' line", name, line_no,
             out.empty() ? "" : out.back().id, kAfterId[std::min(expect, std::size(kAfterId) - 1)]);
  return out;
}

std::vector<UtteranceScore> ReadAlignments(const std::string& path) {
  return ParseAlignments(ReadFile(path), path);
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
