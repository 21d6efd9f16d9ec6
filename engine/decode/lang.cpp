#include "engine/decode/lang.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <utility>

#include "engine/core/error.h"
#include "engine/core/files.h"

namespace mavg {
namespace {

constexpr double kMinSelfLoop = 0.05;
constexpr double kMaxSelfLoop = 0.95;

struct Line {
  int number = 0;                   // 1-based
  std::vector<std::string> tokens;  // at least one
};

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// The non-empty lines of a text file, comments ('#' to the end of the line) removed.
std::vector<Line> ReadLines(const std::string& path) {
  MAVG_CHECK(PathExists(path), "{}: no such file", path);
  const std::string text = ReadFile(path);
  std::vector<Line> lines;
  std::string_view rest = text;
  int number = 0;
  while (!rest.empty()) {
    const size_t newline = rest.find('\n');
    std::string_view line = rest.substr(0, newline);
    rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
    ++number;
    line = line.substr(0, line.find('#'));
    Line parsed{number, {}};
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && IsBlank(line[i])) ++i;
      size_t end = i;
      while (end < line.size() && !IsBlank(line[end])) ++end;
      if (end > i) parsed.tokens.emplace_back(line.substr(i, end - i));
      i = end;
    }
    if (!parsed.tokens.empty()) lines.push_back(std::move(parsed));
  }
  return lines;
}

bool ParseInt(const std::string& token, int* value) {
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), *value);
  return ec == std::errc() && end == token.data() + token.size();
}

bool ParseDouble(const std::string& token, double* value) {
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), *value);
  return ec == std::errc() && end == token.data() + token.size();
}

std::vector<std::string> ReadPhones(const std::string& path) {
  std::map<int, std::pair<std::string, int>> by_id;  // id -> (phone, line)
  std::map<std::string, int> line_of;                // phone -> line
  for (const Line& line : ReadLines(path)) {
    const std::string where = fmt::format("{}:{}", path, line.number);
    MAVG_CHECK(line.tokens.size() == 2, "{}: expected `<phone> <id>`, found {} fields", where,
               line.tokens.size());
    const std::string& phone = line.tokens[0];
    int id = 0;
    MAVG_CHECK(ParseInt(line.tokens[1], &id) && id >= 0,
               "{}: phone id '{}' is not a non-negative integer", where, line.tokens[1]);
    auto [it, fresh] = line_of.emplace(phone, line.number);
    MAVG_CHECK(fresh, "{}: duplicate phone '{}' (first on line {})", where, phone, it->second);
    auto [id_it, id_fresh] = by_id.emplace(id, std::make_pair(phone, line.number));
    MAVG_CHECK(id_fresh, "{}: duplicate phone id {} (phone '{}' on line {})", where, id,
               id_it->second.first, id_it->second.second);
  }
  MAVG_CHECK(!by_id.empty(), "{}: no phones", path);
  std::vector<std::string> phones;
  for (const auto& [id, entry] : by_id) {
    MAVG_CHECK(id == static_cast<int>(phones.size()),
               "{}: phone ids must be dense from 0, but id {} is missing", path, phones.size());
    phones.push_back(entry.first);
  }
  MAVG_CHECK(phones[0] == kSilencePhone, "{}: phone id 0 must be '{}', found '{}'", path,
             kSilencePhone, phones[0]);
  return phones;
}

void ReadLexicon(const std::string& path, Lang& lang) {
  std::map<std::pair<int, std::vector<int>>, int> seen;  // (word, phones) -> line
  for (const Line& line : ReadLines(path)) {
    const std::string where = fmt::format("{}:{}", path, line.number);
    const std::string& word = line.tokens[0];
    MAVG_CHECK(line.tokens.size() >= 2, "{}: word '{}' has no phones", where, word);
    Pronunciation pron;
    pron.word = lang.WordId(word);
    if (pron.word < 0) {
      pron.word = lang.NumWords();
      lang.words.push_back(word);
    }
    for (size_t i = 1; i < line.tokens.size(); ++i) {
      const int phone = lang.PhoneId(line.tokens[i]);
      MAVG_CHECK(phone >= 0, "{}: unknown phone '{}' in the pronunciation of '{}'", where,
                 line.tokens[i], word);
      MAVG_CHECK(phone != 0, "{}: '{}' is the silence phone; it may not be part of a word ('{}')",
                 where, line.tokens[i], word);
      pron.phones.push_back(phone);
    }
    auto [it, fresh] = seen.emplace(std::make_pair(pron.word, pron.phones), line.number);
    MAVG_CHECK(fresh, "{}: duplicate pronunciation of '{}' (first on line {})", where, word,
               it->second);
    lang.prons.push_back(std::move(pron));
  }
  MAVG_CHECK(!lang.prons.empty(), "{}: no words", path);
}

void ReadPdfs(const std::string& path, Lang& lang) {
  std::vector<std::array<int, kStatesPerPhone>> line_of(lang.NumPhones());  // 0: not given
  for (auto& a : line_of) a.fill(0);
  lang.pdfs.assign(lang.NumPhones(), {-1, -1, -1});
  std::map<int, std::pair<int, int>> owner;  // pdf -> (phone, state)
  std::map<int, int> owner_line;             // pdf -> line
  for (const Line& line : ReadLines(path)) {
    const std::string where = fmt::format("{}:{}", path, line.number);
    MAVG_CHECK(line.tokens.size() == 3, "{}: expected `<phone> <state> <pdf-id>`, found {} fields",
               where, line.tokens.size());
    const int phone = lang.PhoneId(line.tokens[0]);
    MAVG_CHECK(phone >= 0, "{}: unknown phone '{}'", where, line.tokens[0]);
    int state = 0, pdf = 0;
    MAVG_CHECK(ParseInt(line.tokens[1], &state) && state >= 0 && state < kStatesPerPhone,
               "{}: state '{}' of phone '{}' is not 0, 1 or 2", where, line.tokens[1],
               line.tokens[0]);
    MAVG_CHECK(ParseInt(line.tokens[2], &pdf) && pdf >= 0,
               "{}: pdf id '{}' is not a non-negative integer", where, line.tokens[2]);
    MAVG_CHECK(line_of[phone][state] == 0, "{}: duplicate entry for phone '{}' state {} (line {})",
               where, line.tokens[0], state, line_of[phone][state]);
    auto [it, fresh] = owner.emplace(pdf, std::make_pair(phone, state));
    MAVG_CHECK(fresh, "{}: duplicate pdf id {} (phone '{}' state {} on line {})", where, pdf,
               lang.phones[it->second.first], it->second.second, owner_line[pdf]);
    owner_line[pdf] = line.number;
    line_of[phone][state] = line.number;
    lang.pdfs[phone][state] = pdf;
  }
  for (int p = 0; p < lang.NumPhones(); ++p) {
    for (int s = 0; s < kStatesPerPhone; ++s) {
      MAVG_CHECK(lang.pdfs[p][s] >= 0, "{}: no pdf for phone '{}' state {}", path, lang.phones[p],
                 s);
    }
  }
  // Every phone state has its own pdf, so ids are dense iff the largest is num_states - 1.
  const int num_pdfs = lang.NumPhones() * kStatesPerPhone;
  const int largest = owner.rbegin()->first;
  MAVG_CHECK(largest == num_pdfs - 1,
             "{}:{}: pdf ids must be dense from 0 ({} phone states: 0..{}), found id {}", path,
             owner_line[largest], num_pdfs, num_pdfs - 1, largest);
}

void ReadTransitions(const std::string& path, Lang& lang) {
  const int num_pdfs = lang.NumPhones() * kStatesPerPhone;
  std::vector<int> line_of(num_pdfs, 0);
  lang.self_loop.assign(num_pdfs, 0.0);
  for (const Line& line : ReadLines(path)) {
    const std::string where = fmt::format("{}:{}", path, line.number);
    MAVG_CHECK(line.tokens.size() == 2,
               "{}: expected `<pdf-id> <self-loop-probability>`, found {} fields", where,
               line.tokens.size());
    int pdf = 0;
    MAVG_CHECK(ParseInt(line.tokens[0], &pdf) && pdf >= 0 && pdf < num_pdfs,
               "{}: pdf id '{}' is not in [0, {}) (pdfs.txt)", where, line.tokens[0], num_pdfs);
    MAVG_CHECK(line_of[pdf] == 0, "{}: duplicate pdf id {} (first on line {})", where, pdf,
               line_of[pdf]);
    double p = 0.0;
    MAVG_CHECK(ParseDouble(line.tokens[1], &p), "{}: bad probability '{}'", where, line.tokens[1]);
    MAVG_CHECK(p > 0.0 && p < 1.0,
               "{}: self-loop probability {} of pdf {} is outside (0, 1) (exclusive)", where,
               line.tokens[1], pdf);
    line_of[pdf] = line.number;
    lang.self_loop[pdf] = p;
  }
  for (int pdf = 0; pdf < num_pdfs; ++pdf) {
    MAVG_CHECK(line_of[pdf] != 0, "{}: no self-loop probability for pdf {}", path, pdf);
  }
}

}  // namespace

int Lang::WordId(std::string_view word) const {
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i] == word) return static_cast<int>(i);
  }
  return -1;
}

int Lang::PhoneId(std::string_view phone) const {
  for (size_t i = 0; i < phones.size(); ++i) {
    if (phones[i] == phone) return static_cast<int>(i);
  }
  return -1;
}

Lang LoadLang(const std::string& dir) {
  MAVG_CHECK(IsDirectory(dir), "{}: lang directory not found", dir);
  Lang lang;
  lang.phones = ReadPhones(dir + "/phones.txt");
  ReadLexicon(dir + "/lexicon.txt", lang);
  ReadPdfs(dir + "/pdfs.txt", lang);
  ReadTransitions(dir + "/transitions.txt", lang);
  ValidateLang(lang, dir);
  return lang;
}

void ValidateLang(const Lang& lang, const std::string& where) {
  MAVG_CHECK(!lang.phones.empty() && lang.phones[0] == kSilencePhone, "{}: phone 0 must be '{}'",
             where, kSilencePhone);
  std::set<std::string> names;
  for (const std::string& phone : lang.phones) {
    MAVG_CHECK(!phone.empty() && phone.find_first_of(" \t\r\n#") == std::string::npos,
               "{}: bad phone name '{}'", where, phone);
    MAVG_CHECK(names.insert(phone).second, "{}: duplicate phone '{}'", where, phone);
  }
  names.clear();
  for (const std::string& word : lang.words) {
    MAVG_CHECK(!word.empty() && word.find_first_of(" \t\r\n#") == std::string::npos,
               "{}: bad word '{}'", where, word);
    MAVG_CHECK(names.insert(word).second, "{}: duplicate word '{}'", where, word);
  }
  MAVG_CHECK(!lang.prons.empty(), "{}: no pronunciations", where);
  std::vector<bool> has_pron(lang.words.size(), false);
  for (const Pronunciation& pron : lang.prons) {
    MAVG_CHECK(pron.word >= 0 && pron.word < lang.NumWords(), "{}: pronunciation of word id {}",
               where, pron.word);
    MAVG_CHECK(!pron.phones.empty(), "{}: empty pronunciation of '{}'", where,
               lang.words[pron.word]);
    for (int p : pron.phones) {
      MAVG_CHECK(p > 0 && p < lang.NumPhones(), "{}: pronunciation of '{}' has phone id {}", where,
                 lang.words[pron.word], p);
    }
    has_pron[pron.word] = true;
  }
  for (size_t w = 0; w < has_pron.size(); ++w) {
    MAVG_CHECK(has_pron[w], "{}: word '{}' has no pronunciation", where, lang.words[w]);
  }
  const int num_pdfs = lang.NumPhones() * kStatesPerPhone;
  MAVG_CHECK(static_cast<int>(lang.pdfs.size()) == lang.NumPhones(),
             "{}: pdfs for {} phones, but there are {} phones", where, lang.pdfs.size(),
             lang.NumPhones());
  MAVG_CHECK(lang.NumPdfs() == num_pdfs, "{}: {} self-loop probabilities for {} pdfs", where,
             lang.NumPdfs(), num_pdfs);
  std::vector<bool> used(num_pdfs, false);
  for (int p = 0; p < lang.NumPhones(); ++p) {
    for (int s = 0; s < kStatesPerPhone; ++s) {
      const int pdf = lang.pdfs[p][s];
      MAVG_CHECK(pdf >= 0 && pdf < num_pdfs && !used[pdf],
                 "{}: pdf {} of phone '{}' state {} is out of range or used twice", where, pdf,
                 lang.phones[p], s);
      used[pdf] = true;
    }
  }
  for (int pdf = 0; pdf < num_pdfs; ++pdf) {
    const double p = lang.self_loop[pdf];
    MAVG_CHECK(p > 0.0 && p < 1.0, "{}: self-loop probability {} of pdf {} is outside (0, 1)",
               where, p, pdf);
  }
}

void WriteLang(const std::string& dir, const Lang& lang) {
  ValidateLang(lang, dir);
  MakeDirs(dir);
  std::string phones = "# <phone> <id>; id 0 is silence\n";
  for (int p = 0; p < lang.NumPhones(); ++p) phones += fmt::format("{} {}\n", lang.phones[p], p);
  std::string lexicon = "# <word> <phone> <phone> ...; one line per pronunciation\n";
  for (const Pronunciation& pron : lang.prons) {
    lexicon += lang.words[pron.word];
    for (int p : pron.phones) lexicon += " " + lang.phones[p];
    lexicon += "\n";
  }
  std::string pdfs = "# <phone> <state> <pdf-id>; 3-state left-to-right HMMs\n";
  for (int p = 0; p < lang.NumPhones(); ++p) {
    for (int s = 0; s < kStatesPerPhone; ++s) {
      pdfs += fmt::format("{} {} {}\n", lang.phones[p], s, lang.pdfs[p][s]);
    }
  }
  std::string transitions = "# <pdf-id> <self-loop-probability>; forward = 1 - self-loop\n";
  for (int pdf = 0; pdf < lang.NumPdfs(); ++pdf) {
    transitions += fmt::format("{} {}\n", pdf, lang.self_loop[pdf]);
  }
  WriteFileAtomic(dir + "/phones.txt", phones);
  WriteFileAtomic(dir + "/lexicon.txt", lexicon);
  WriteFileAtomic(dir + "/pdfs.txt", pdfs);
  WriteFileAtomic(dir + "/transitions.txt", transitions);
}

std::vector<double> EstimateSelfLoops(const std::vector<std::vector<int32_t>>& alignments,
                                      int num_pdfs) {
  MAVG_CHECK(num_pdfs > 0, "EstimateSelfLoops: {} pdfs", num_pdfs);
  std::vector<int64_t> frames(num_pdfs, 0), visits(num_pdfs, 0);
  for (size_t u = 0; u < alignments.size(); ++u) {
    const std::vector<int32_t>& ali = alignments[u];
    for (size_t t = 0; t < ali.size(); ++t) {
      const int32_t pdf = ali[t];
      MAVG_CHECK(pdf >= 0 && pdf < num_pdfs,
                 "alignment of utterance {} (0-based), frame {}: pdf {} is outside [0, {})", u, t,
                 pdf, num_pdfs);
      ++frames[pdf];
      if (t == 0 || ali[t - 1] != pdf) ++visits[pdf];
    }
  }
  std::vector<double> self_loop(num_pdfs, 0.5);
  for (int pdf = 0; pdf < num_pdfs; ++pdf) {
    if (frames[pdf] == 0) continue;
    const double p = 1.0 - static_cast<double>(visits[pdf]) / static_cast<double>(frames[pdf]);
    self_loop[pdf] = std::clamp(p, kMinSelfLoop, kMaxSelfLoop);
  }
  return self_loop;
}

Lang BuildLang(const std::vector<std::string>& phones, const LexiconEntries& lexicon,
               const std::vector<std::vector<int32_t>>& alignments) {
  Lang lang;
  lang.phones = phones;
  for (const auto& [word, pron_phones] : lexicon) {
    Pronunciation pron;
    pron.word = lang.WordId(word);
    if (pron.word < 0) {
      pron.word = lang.NumWords();
      lang.words.push_back(word);
    }
    for (const std::string& phone : pron_phones) {
      const int id = lang.PhoneId(phone);
      MAVG_CHECK(id >= 0, "lexicon: unknown phone '{}' in the pronunciation of '{}'", phone, word);
      pron.phones.push_back(id);
    }
    lang.prons.push_back(std::move(pron));
  }
  for (int p = 0; p < lang.NumPhones(); ++p) {
    lang.pdfs.push_back({kStatesPerPhone * p, kStatesPerPhone * p + 1, kStatesPerPhone * p + 2});
  }
  lang.self_loop = EstimateSelfLoops(alignments, kStatesPerPhone * lang.NumPhones());
  ValidateLang(lang, "lang");
  return lang;
}

}  // namespace mavg
