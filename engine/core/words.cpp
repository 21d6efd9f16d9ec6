#include "engine/core/words.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/core/error.h"

namespace mavg {
namespace {

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

std::string CharName(unsigned char c) {
  switch (c) {
    case '\n':
      return "a newline";
    case '\r':
      return "a carriage return";
    case '\t':
      return "a tab";
    case '\v':
      return "a vertical tab";
    case '\f':
      return "a form feed";
    case '\0':
      return "a NUL byte";
    default:
      return fmt::format("byte 0x{:02x}", c);
  }
}

bool NameChar(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-' || c == '+';
}

}  // namespace

std::string Printable(std::string_view s, size_t max) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (IsControl(c)) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

std::string NameProblem(std::string_view name) {
  if (name.empty()) return "it is empty";
  if (name.size() > kMaxNameLength) {
    return fmt::format("it has {} characters (at most {})", name.size(), kMaxNameLength);
  }
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (!NameChar(c)) {
      return IsControl(c) ? fmt::format("it holds {}", CharName(c))
                          : fmt::format("it holds '{}'", static_cast<char>(c));
    }
  }
  const auto first = static_cast<unsigned char>(name.front());
  if (first == '.' || first == '-' || first == '+') {
    return fmt::format("it starts with '{}'", static_cast<char>(first));
  }
  return "";
}

void CheckName(std::string_view what, std::string_view name) {
  const std::string why = NameProblem(name);
  MAVG_CHECK(why.empty(),
             "{} '{}' is not a valid name: {} (a name is 1 to {} letters, digits, '_', '.', '-' "
             "or '+', starting with a letter, a digit or '_')",
             what, Printable(name), why, kMaxNameLength);
}

void CheckExistingName(std::string_view what, std::string_view name) {
  std::string why;
  if (name.empty()) {
    why = "it is empty";
  } else if (name.size() > 255) {
    why = fmt::format("it has {} bytes (a path component has at most 255)", name.size());
  } else if (name == "." || name == "..") {
    why = fmt::format("'{}' is not a directory of its own", name);
  } else if (name.find('/') != std::string_view::npos) {
    why = "it holds '/'";
  } else {
    for (const char ch : name) {
      const auto c = static_cast<unsigned char>(ch);
      if (IsControl(c)) {
        why = fmt::format("it holds {}", CharName(c));
        break;
      }
    }
  }
  MAVG_CHECK(why.empty(), "{} '{}' cannot name a directory: {}", what, Printable(name), why);
}

bool HasControlCharacter(std::string_view s) {
  for (const char c : s) {
    if (IsControl(static_cast<unsigned char>(c))) return true;
  }
  return false;
}

void CheckNoControlCharacter(std::string_view what, std::string_view value) {
  for (const char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    MAVG_CHECK(!IsControl(c),
               "{} '{}' holds {}, which a generated script would read as a new line or a second "
               "word",
               what, Printable(value), CharName(c));
  }
}

std::string ShellWord(std::string_view s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string SbatchWord(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == ' ' || c == '\\' || c == '"' || c == '\'' || c == '#') out += '\\';
    out += c;
  }
  return out;
}

std::vector<std::string> SplitTrimmed(std::string_view list, char separator) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(separator, start), list.size());
    std::string_view item = list.substr(start, end - start);
    const size_t a = item.find_first_not_of(" \t");
    item = a == std::string_view::npos ? std::string_view() : item.substr(a);
    item = item.substr(0, item.find_last_not_of(" \t") + 1);
    out.emplace_back(item);
    start = end + 1;
  }
  return out;
}

}  // namespace mavg
