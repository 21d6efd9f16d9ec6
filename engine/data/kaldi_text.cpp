#include "engine/data/kaldi_text.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <iterator>

#include "engine/core/error.h"
#include "engine/data/kaldi_file.h"

namespace mavg::kaldi {
namespace {

constexpr size_t kMaxNumberChars = 128;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsKaldiSpace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && IsKaldiSpace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits every non-blank line into (first token, trimmed rest). `lines` gets the 1-based
// line number of each pair.
std::vector<std::pair<std::string, std::string>> ReadTwoColumns(const std::string& path,
                                                                std::vector<int64_t>* lines) {
  InputFile in(path);
  std::string text(static_cast<size_t>(in.Size()), '\0');
  MAVG_CHECK(in.Read(text.data(), text.size()) == text.size(), "{}: short read", path);
  std::vector<std::pair<std::string, std::string>> rows;
  std::string_view rest = text;
  int64_t line_number = 0;
  while (!rest.empty()) {
    size_t newline = rest.find('\n');
    std::string_view line = Trim(rest.substr(0, newline));
    rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
    ++line_number;
    if (line.empty()) continue;
    size_t split = 0;
    while (split < line.size() && !IsKaldiSpace(static_cast<unsigned char>(line[split]))) ++split;
    rows.emplace_back(std::string(line.substr(0, split)), std::string(Trim(line.substr(split))));
    lines->push_back(line_number);
  }
  return rows;
}

}  // namespace

bool ParseFloat(std::string_view token, float* value) {
  // from_chars takes no '+'; a second sign ("++1", "+-1") still fails below.
  if (!token.empty() && token.front() == '+') token.remove_prefix(1);
  if (token.empty()) return false;
  float v = 0.0f;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (end != token.data() + token.size()) return false;
  if (ec == std::errc::result_out_of_range) {
    // Overflow or underflow: take what strtof makes of it (+-inf, 0 or a denormal).
    std::string copy(token);
    v = std::strtof(copy.c_str(), nullptr);
  } else if (ec != std::errc()) {
    return false;
  }
  *value = v;
  return true;
}

bool ParseInt32(std::string_view token, int32_t* value) {
  if (!token.empty() && token.front() == '+') token.remove_prefix(1);
  if (token.empty() || token.front() == '+') return false;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), *value);
  return ec == std::errc() && end == token.data() + token.size();
}

void ReadTextMatrix(InputFile& in, const std::string& where, HostMatrix* out) {
  out->rows = out->cols = 0;
  out->data.clear();
  int c = in.Get();
  while (IsKaldiSpace(c)) c = in.Get();
  MAVG_CHECK(c == '[', "{}: expected '[' to start a text matrix, found {}", where,
             c == InputFile::kEof ? std::string("end of file") : fmt::format("'{:c}'", c));
  int64_t row_length = 0;
  auto end_row = [&] {
    if (row_length == 0) return;
    if (out->rows == 0) {
      out->cols = row_length;
    } else {
      MAVG_CHECK(row_length == out->cols,
                 "{}: text matrix row {} has {} values, but the rows before have {}", where,
                 out->rows, row_length, out->cols);
    }
    ++out->rows;
    row_length = 0;
  };
  std::string token;
  while (true) {
    c = in.Peek();
    MAVG_CHECK(c != InputFile::kEof, "{}: truncated text matrix (end of file before ']')", where);
    if (c == '\n') {
      in.Get();
      end_row();
    } else if (IsKaldiSpace(c)) {
      in.Get();
    } else if (c == ']') {
      in.Get();
      end_row();
      break;
    } else {
      token.clear();
      while (c != InputFile::kEof && !IsKaldiSpace(c) && c != ']' && c != '[' &&
             token.size() <= kMaxNumberChars) {
        token.push_back(static_cast<char>(in.Get()));
        c = in.Peek();
      }
      MAVG_CHECK(token.size() <= kMaxNumberChars,
                 "{}: bad number '{}...' in text matrix row {} (longer than {} characters)", where,
                 token.substr(0, 32), out->rows, kMaxNumberChars);
      float v;
      MAVG_CHECK(ParseFloat(token, &v), "{}: bad number '{}' in text matrix row {}", where, token,
                 out->rows);
      out->data.push_back(v);
      ++row_length;
    }
  }
}

void ReadTextInt32Vector(InputFile& in, const std::string& where, std::vector<int32_t>* out) {
  out->clear();
  std::string token;
  int c = in.Get();
  while (true) {
    if (c == InputFile::kEof || c == '\n' || IsKaldiSpace(c)) {
      if (!token.empty()) {
        int32_t v;
        MAVG_CHECK(token.size() <= kMaxNumberChars && ParseInt32(token, &v),
                   "{}: bad int32 '{}' in text vector (element {})", where,
                   token.size() > kMaxNumberChars ? token.substr(0, 32) + "..." : token,
                   out->size());
        out->push_back(v);
        token.clear();
      }
      if (c == InputFile::kEof || c == '\n') return;
    } else if (token.size() <= kMaxNumberChars) {
      token.push_back(static_cast<char>(c));
    }
    c = in.Get();
  }
}

void AppendTextMatrix(const HostMatrix& matrix, std::string* out) {
  auto it = std::back_inserter(*out);
  if (matrix.rows == 0 || matrix.cols == 0) {
    out->append(" [ ]\n");
    return;
  }
  out->append(" [");
  for (int64_t r = 0; r < matrix.rows; ++r) {
    out->append("\n  ");
    const float* row = matrix.Row(r);
    for (int64_t c = 0; c < matrix.cols; ++c) fmt::format_to(it, "{} ", row[c]);
  }
  out->append("]\n");
}

std::vector<std::pair<std::string, std::string>> ReadScp(const std::string& path) {
  std::vector<int64_t> lines;
  auto rows = ReadTwoColumns(path, &lines);
  for (size_t i = 0; i < rows.size(); ++i) {
    MAVG_CHECK(!rows[i].second.empty(), "{}: line {}: key '{}' has no rxspecifier", path, lines[i],
               rows[i].first);
  }
  return rows;
}

std::vector<std::pair<std::string, std::string>> ReadKeyValueFile(const std::string& path) {
  std::vector<int64_t> lines;
  return ReadTwoColumns(path, &lines);
}

}  // namespace mavg::kaldi
