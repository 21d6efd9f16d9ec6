#include "engine/core/error.h"

#include <cstring>

namespace mavg {

namespace {

// The length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF), or 0 when the byte there starts none.
size_t SequenceLength(std::string_view text, size_t i) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  const unsigned char c = s[i];
  size_t len = 0;
  if (c < 0x80) {
    len = 1;
  } else if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
  }
  bool ok = len > 0 && i + len <= n;
  for (size_t k = 1; ok && k < len; ++k) ok = (s[i + k] & 0xC0) == 0x80;
  if (ok && len >= 3) {
    const unsigned char c1 = s[i + 1];
    if (c == 0xE0 && c1 < 0xA0) ok = false;  // overlong
    if (c == 0xED && c1 > 0x9F) ok = false;  // surrogate
    if (c == 0xF0 && c1 < 0x90) ok = false;  // overlong
    if (c == 0xF4 && c1 > 0x8F) ok = false;  // above U+10FFFF
  }
  return ok ? len : 0;
}

}  // namespace

size_t InvalidUtf8At(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t len = SequenceLength(text, i);
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;
}

std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t len = SequenceLength(text, i);
    if (len > 0) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      out += fmt::format("\\x{:02X}", static_cast<unsigned char>(text[i]));
      ++i;
    }
  }
  return out;
}

std::string ErrorText(std::string_view text) {
  const std::string valid = ValidUtf8(text);
  std::string out;
  out.reserve(valid.size());
  for (const char ch : valid) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if ((c < 0x20 && c != '\t') || c == 0x7F) {
      out += fmt::format("\\x{:02X}", c);
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace mavg

namespace mavg::detail {

void Throw(const char* file, int line, std::string message) {
  const char* base = std::strrchr(file, '/');
  throw Error(std::move(message), fmt::format("{}:{}", base ? base + 1 : file, line));
}

}  // namespace mavg::detail
