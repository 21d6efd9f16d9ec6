#pragma once
// Typed records of a run's files, each defined by one table of fields (epoch_row.h,
// run_state_file.h). From a record's table come its JSON writing and reading, the reading's
// validation, its SQL columns and the values an insert binds: a field is added in one place, and
// no other code spells a field name of a run file.
//
// A field is a name, a member of the record, the type of its own column in the record's SQL
// table (if it has one) and the name under which reports show its mean per run (if they do).
// A plain member (int64_t, std::string) is required: a reader refuses a record without it. Every
// field a reader may not find (files written by earlier builds, rows that do not apply) is a
// std::optional member: absent reads as nullopt and nullopt is not written. Doubles that are not
// finite are written as JSON null (JSON has no NaN) and read back as NaN; their SQL value is NULL.
//
// records/ sits above core/ only: the trainer writes records, the store, the sweep controller and
// the reports read them, and none of those include another's code for it.

#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/run_state.h"

namespace mavg::records {

// A column value: NULL, integer, real or text (the same type as sql::Value).
using Cell = std::variant<std::monostate, int64_t, double, std::string>;

// The SQL type of a field's own column; kNone: the field lives only in the row's JSON column.
enum class Column { kNone, kInteger, kReal, kText };

template <class R>
using Member = std::variant<int64_t R::*, std::string R::*, std::optional<int64_t> R::*,
                            std::optional<double> R::*, std::optional<bool> R::*,
                            std::optional<std::string> R::*, std::optional<RunState> R::*>;

template <class R>
struct Field {
  std::string_view name;
  Member<R> member;
  Column column = Column::kNone;
  std::string_view report_mean = {};  // empty: reports do not average it
};

// Names unique and not empty: checked at compile time for every table (static_assert beside it).
template <class R, size_t N>
constexpr bool UniqueNames(const Field<R> (&table)[N]) {
  for (size_t i = 0; i < N; ++i) {
    if (table[i].name.empty()) return false;
    for (size_t j = 0; j < i; ++j) {
      if (table[j].name == table[i].name) return false;
    }
  }
  return true;
}

namespace detail {

inline nlohmann::json Number(double x) {
  return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json();
}

inline const char* TypeName(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

[[noreturn]] inline void WrongType(std::string_view where, std::string_view name,
                                   const nlohmann::json& v, std::string_view expected) {
  MAVG_FAIL("{}: '{}' is {}, expected {}", where, name, TypeName(v), expected);
}

// An integer, or a number with an integral value (3.0: files written by other tools).
inline int64_t ReadInteger(const nlohmann::json& v, std::string_view where, std::string_view name) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      MAVG_FAIL("{}: '{}' is {}, out of range", where, name, v.get<uint64_t>());
    }
    return static_cast<int64_t>(v.get<uint64_t>());
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    const double x = v.get<double>();
    if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 9.0e15) {
      return static_cast<int64_t>(x);
    }
    MAVG_FAIL("{}: '{}' is {}, expected an integer", where, name, x);
  }
  WrongType(where, name, v, "an integer");
}

inline double ReadDouble(const nlohmann::json& v, std::string_view where, std::string_view name) {
  if (v.is_null()) return std::nan("");  // a non-finite value, written as null
  if (!v.is_number()) WrongType(where, name, v, "a number");
  return v.get<double>();
}

inline std::string ReadText(const nlohmann::json& v, std::string_view where,
                            std::string_view name) {
  if (!v.is_string()) WrongType(where, name, v, "a string");
  return v.get<std::string>();
}

}  // namespace detail

// The record as a JSON object: every field that is set.
template <class R, size_t N>
nlohmann::json ToJson(const R& record, const Field<R> (&table)[N]) {
  nlohmann::json out = nlohmann::json::object();
  for (const Field<R>& f : table) {
    const std::string name(f.name);
    std::visit(
        [&](auto member) {
          using T = std::remove_cvref_t<decltype(record.*member)>;
          const T& value = record.*member;
          if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, std::string>) {
            out[name] = value;
          } else if constexpr (std::is_same_v<T, std::optional<double>>) {
            if (value) out[name] = detail::Number(*value);
          } else if constexpr (std::is_same_v<T, std::optional<RunState>>) {
            if (value) out[name] = std::string(ToString(*value));
          } else {
            if (value) out[name] = *value;
          }
        },
        f.member);
  }
  return out;
}

// Reads a record from a JSON object; `where` (a file, or file:line) starts every error. A field
// of the wrong type, a required field absent or a status that is not a RunState throws naming
// it; keys outside the table are ignored (the caller keeps the whole object where
// they matter).
template <class R, size_t N>
R FromJson(const nlohmann::json& object, const Field<R> (&table)[N], std::string_view where) {
  if (!object.is_object())
    MAVG_FAIL("{}: {}, expected a JSON object", where, detail::TypeName(object));
  R record{};
  for (const Field<R>& f : table) {
    const auto it = object.find(std::string(f.name));
    std::visit(
        [&](auto member) {
          using T = std::remove_cvref_t<decltype(record.*member)>;
          T& out = record.*member;
          if (it == object.end()) {
            if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, std::string>) {
              MAVG_FAIL("{}: no '{}'", where, f.name);
            }
            return;
          }
          const nlohmann::json& v = *it;
          if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, std::optional<int64_t>>) {
            out = detail::ReadInteger(v, where, f.name);
          } else if constexpr (std::is_same_v<T, std::optional<double>>) {
            out = detail::ReadDouble(v, where, f.name);
          } else if constexpr (std::is_same_v<T, std::optional<bool>>) {
            if (!v.is_boolean()) detail::WrongType(where, f.name, v, "a boolean");
            out = v.get<bool>();
          } else if constexpr (std::is_same_v<T, std::optional<RunState>>) {
            out = ParseRunStateOrThrow(detail::ReadText(v, where, f.name),
                                       fmt::format("{}: '{}'", where, f.name));
          } else {
            out = detail::ReadText(v, where, f.name);
          }
        },
        f.member);
  }
  return record;
}

// The names of the fields with a column, in table order: "a, b, c".
template <class R, size_t N>
std::string ColumnList(const Field<R> (&table)[N]) {
  std::string out;
  for (const Field<R>& f : table) {
    if (f.column == Column::kNone) continue;
    if (!out.empty()) out += ", ";
    out += f.name;
  }
  return out;
}

// The number of fields with a column.
template <class R, size_t N>
int ColumnCount(const Field<R> (&table)[N]) {
  int n = 0;
  for (const Field<R>& f : table) n += f.column != Column::kNone;
  return n;
}

// The values of the fields with a column, in ColumnList's order, as an insert binds them:
// absent and non-finite values are NULL, booleans 0/1.
template <class R, size_t N>
std::vector<Cell> Cells(const R& record, const Field<R> (&table)[N]) {
  std::vector<Cell> out;
  for (const Field<R>& f : table) {
    if (f.column == Column::kNone) continue;
    std::visit(
        [&](auto member) {
          using T = std::remove_cvref_t<decltype(record.*member)>;
          const T& value = record.*member;
          if constexpr (std::is_same_v<T, int64_t>) {
            out.emplace_back(value);
          } else if constexpr (std::is_same_v<T, std::string>) {
            out.emplace_back(value);
          } else if constexpr (std::is_same_v<T, std::optional<double>>) {
            out.push_back(value && std::isfinite(*value) ? Cell(*value) : Cell());
          } else if constexpr (std::is_same_v<T, std::optional<bool>>) {
            out.push_back(value ? Cell(static_cast<int64_t>(*value)) : Cell());
          } else if constexpr (std::is_same_v<T, std::optional<RunState>>) {
            out.push_back(value ? Cell(std::string(ToString(*value))) : Cell());
          } else {
            out.push_back(value ? Cell(*value) : Cell());
          }
        },
        f.member);
  }
  return out;
}

}  // namespace mavg::records
