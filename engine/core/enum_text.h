#pragma once
// An enum's text, stated once: one table of {value, text} rows in enum order, declared with
// MAVG_ENUM_TEXTS beside the enum. From the table come ToString, parsing (exact, case-sensitive),
// the list of valid texts for help and errors, and fmt formatting (MAVG_ENUM_FORMATTER).
// The static_asserts in MAVG_ENUM_TEXTS keep every table complete, in enum order and free of
// duplicates: a table of N rows must give values 0 .. N-1 in order, and the enum must have no
// named value beyond them (counted at compile time from the compiler's spelling of each value,
// below), so an enum value without a text does not compile (tests/unit/core/enum_text_test.cpp
// and the compile test enum_text.incomplete_table). The texts are contracts (config files, run
// files and the database hold them): never change one; a new value is a new row.

#include <fmt/format.h>

#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/error.h"

namespace mavg {

template <class E>
struct EnumText {
  E value;
  std::string_view text;
};

namespace enum_text_detail {
template <class E, size_t N>
constexpr bool WellFormed(const EnumText<E> (&table)[N]) {
  for (size_t i = 0; i < N; ++i) {
    if (static_cast<size_t>(table[i].value) != i || table[i].text.empty()) return false;
    for (size_t j = 0; j < i; ++j) {
      if (table[j].text == table[i].text) return false;
    }
  }
  return true;
}

// Whether V is one of its enum's named values. GCC and Clang spell a template argument that
// names an enumerator by its name in __PRETTY_FUNCTION__ ("... [with auto V = mavg::Foo::kBar]",
// "[V = mavg::Foo::kBar]") and any other value as a cast ("(mavg::Foo)3").
template <auto V>
constexpr bool IsNamedValue() {
  const std::string_view f = __PRETTY_FUNCTION__;
  const size_t eq = f.rfind("= ");
  return eq != std::string_view::npos && eq + 2 < f.size() && f[eq + 2] != '(';
}

// Values 0 .. kScanned - 1 are looked at: no table here comes near.
inline constexpr size_t kScanned = 128;

template <class E, size_t... I>
constexpr size_t NamedValues(std::index_sequence<I...>) {
  return (size_t{IsNamedValue<static_cast<E>(I)>()} + ...);
}

// Whether the enum's named values in [0, kScanned) are exactly the table's N rows.
template <class E, size_t N>
constexpr bool CoversEveryValue(const EnumText<E> (&)[N]) {
#if defined(__CUDACC__)
  return true;  // nvcc's front end spells values its own way; every .cpp checks the table
#else
  static_assert(N < kScanned, "a text table longer than the values enum_text.h scans");
  return NamedValues<E>(std::make_index_sequence<kScanned>{}) == N;
#endif
}
}  // namespace enum_text_detail

// An enum whose text table was declared with MAVG_ENUM_TEXTS (found by argument-dependent
// lookup of TextsOf in the enum's namespace).
template <class E>
concept HasTexts = requires(E e) {
  { TextsOf(e) } -> std::same_as<std::span<const EnumText<E>>>;
};

template <HasTexts E>
constexpr std::string_view ToString(E value) {
  return TextsOf(value)[static_cast<size_t>(value)].text;
}

// The value with this text; nullopt for any other text.
template <HasTexts E>
constexpr std::optional<E> ParseEnum(std::string_view text) {
  for (const EnumText<E>& row : TextsOf(E{})) {
    if (row.text == text) return row.value;
  }
  return std::nullopt;
}

// "a, b, c": every text in enum order.
template <HasTexts E>
std::string EnumNames(std::string_view separator = ", ") {
  std::string out;
  for (const EnumText<E>& row : TextsOf(E{})) {
    if (!out.empty()) out += separator;
    out += row.text;
  }
  return out;
}

// The value of `allowed` whose text is `text`; else throws mavg::Error "<what> must be a, b or c,
// not '<text>'" (a command-line option that takes some of an enum's values).
template <HasTexts E>
E ParseOneOf(std::string_view text, std::span<const E> allowed, std::string_view what) {
  std::string list;
  for (size_t i = 0; i < allowed.size(); ++i) {
    if (ToString(allowed[i]) == text) return allowed[i];
    list += i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ";
    list += ToString(allowed[i]);
  }
  throw Error(fmt::format("{} must be {}, not '{}'", what, list, text));
}
template <HasTexts E>
E ParseOneOf(std::string_view text, std::initializer_list<E> allowed, std::string_view what) {
  return ParseOneOf(text, std::span<const E>(allowed.begin(), allowed.size()), what);
}

// The same over every value of E.
template <HasTexts E>
E ParseAnyOf(std::string_view text, std::string_view what) {
  std::vector<E> all;
  for (const EnumText<E>& row : TextsOf(E{})) all.push_back(row.value);
  return ParseOneOf(text, std::span<const E>(all), what);
}

// Streams the text (test failure messages print the choice, not its number).
template <HasTexts E>
std::ostream& operator<<(std::ostream& out, E value) {
  return out << ToString(value);
}

}  // namespace mavg

// Declares the text table of enum E (in E's namespace, after E): MAVG_ENUM_TEXTS(E, kTable).
#define MAVG_ENUM_TEXTS(E, table)                                                       \
  static_assert(::mavg::enum_text_detail::WellFormed(table),                            \
                #table ": one unique text per " #E " value, in enum order");            \
  static_assert(::mavg::enum_text_detail::CoversEveryValue(table),                      \
                #table ": every " #E " value needs a text (the table has fewer rows)"); \
  constexpr std::span<const ::mavg::EnumText<E>> TextsOf(E) { return std::span(table); }

// fmt::format("{}", value) writes its text; at global scope, with the enum's full name.
#define MAVG_ENUM_FORMATTER(E)                                                       \
  template <>                                                                        \
  struct fmt::formatter<E> : fmt::formatter<std::string_view> {                      \
    auto format(E value, fmt::format_context& ctx) const {                           \
      return fmt::formatter<std::string_view>::format(::mavg::ToString(value), ctx); \
    }                                                                                \
  }
