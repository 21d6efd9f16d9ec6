#pragma once
// Typed records of a run's files, each defined by one table of fields (epoch_row.h,
// run_state_file.h). From a record's table come its JSON writing and reading, the reading's
// validation, its SQL columns and the values an insert binds: a field is added in one place, and
// no other code spells a field name of a run file.
//
// A field is a name, a member of the record, the type of its own column in the record's SQL
// table (if it has one), the name under which reports show its mean per run (if they do) and,
// for a time or a throughput, whether it was measured or projected (Timing).
// A plain member (int64_t, std::string) is required: a reader refuses a record without it. Every
// field a reader may not find (files written by earlier builds, rows that do not apply) is a
// std::optional member: absent reads as nullopt and nullopt is not written. Doubles that are not
// finite are written as JSON null (JSON has no NaN) and read back as NaN; their SQL value is NULL.
//
// records/ sits above core/ only: the trainer writes records, the store, the sweep controller and
// the reports read them, and none of those include another's code for it.

#include <fmt/format.h>

#include <algorithm>
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

// A field's member, by its type:
//   int64_t, std::string, bool        required: a reader refuses a record without it
//   nlohmann::json                    required, a JSON object (the state of another part, whose
//                                     own record reads it)
//   std::vector<double>               required, an array of numbers
//   std::optional<...>                may be absent (and JSON null): nullopt, and not written;
//                                     optional<json> is an object, optional<vector<double>> an
//                                     array of numbers or nulls (read as NaN)
template <class R>
using Member =
    std::variant<int64_t R::*, std::string R::*, bool R::*, nlohmann::json R::*,
                 std::vector<double> R::*, std::optional<int64_t> R::*, std::optional<double> R::*,
                 std::optional<bool> R::*, std::optional<std::string> R::*,
                 std::optional<RunState> R::*, std::optional<nlohmann::json> R::*,
                 std::optional<std::vector<double>> R::*>;

// What a time or a throughput is. Measured: the wall clock of the process that ran the run (a
// worker's compute, an epoch, the whole run). Projected: a model of the run on N devices built
// from measured parts (simulated workers). A name says which: a projection's, and the name of
// its per-run mean, starts with kProjectedPrefix and no other does (NamesSayTiming, checked at
// compile time beside every table); kEarlierProjection is the one exception, a projection that
// earlier builds wrote under a name that does not say so, which reports show labelled
// (ShownName).
enum class Timing { kNone, kMeasured, kProjected, kEarlierProjection };
inline constexpr std::string_view kProjectedPrefix = "projected_";

template <class R>
struct Field {
  std::string_view name;
  Member<R> member;
  Column column = Column::kNone;
  std::string_view report_mean = {};  // empty: reports do not average it
  bool environment = false;       // where and how the run ran (the store's table env), not a result
  Timing timing = Timing::kNone;  // times and throughputs: measured or projected
};

// How a reader words a value it refuses. A file keeps the wording its earlier reader gave
// (scripts and tests match it): checkpoints say what the value was ("'x' is "3", expected an
// integer", "'y' is missing"); the other run files what type it was ("'x' is a string,
// expected an integer", "no 'y'").
enum class Wording { kRecord, kCheckpoint };

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

// A projection's name, and its mean's, start with kProjectedPrefix; no other's does.
template <class R, size_t N>
constexpr bool NamesSayTiming(const Field<R> (&table)[N]) {
  for (const Field<R>& f : table) {
    const bool projected = f.timing == Timing::kProjected;
    if (f.name.starts_with(kProjectedPrefix) != projected) return false;
    if (!f.report_mean.empty() && f.report_mean.starts_with(kProjectedPrefix) != projected) {
      return false;
    }
  }
  return true;
}

namespace detail {

template <class T>
inline constexpr bool kRequired =
    std::is_same_v<T, int64_t> || std::is_same_v<T, std::string> || std::is_same_v<T, bool> ||
    std::is_same_v<T, nlohmann::json> || std::is_same_v<T, std::vector<double>>;

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

// What a field holds, as messages name it.
enum class Expected { kInteger, kNumber, kBoolean, kString, kObject, kNumbers };

inline const char* ExpectedName(Expected e) {
  switch (e) {
    case Expected::kInteger:
      return "an integer";
    case Expected::kNumber:
      return "a number";
    case Expected::kBoolean:
      return "a boolean";
    case Expected::kString:
      return "a string";
    case Expected::kObject:
      return "an object";
    case Expected::kNumbers:
      return "an array of numbers";
  }
  return "?";
}

[[noreturn]] inline void WrongType(std::string_view where, std::string_view name,
                                   const nlohmann::json& v, Expected expected, Wording wording) {
  if (wording == Wording::kRecord) {
    MAVG_FAIL("{}: '{}' is {}, expected {}", where, name, TypeName(v), ExpectedName(expected));
  }
  switch (expected) {
    case Expected::kString:
    case Expected::kObject:
      MAVG_FAIL("{}: '{}' is not {}", where, name, ExpectedName(expected));
    case Expected::kBoolean:
      MAVG_FAIL("{}: '{}' is {}, expected true or false", where, name, v.dump().substr(0, 80));
    default:
      MAVG_FAIL("{}: '{}' is {}, expected {}", where, name, v.dump().substr(0, 80),
                ExpectedName(expected));
  }
}

// An integer, or a number with an integral value (3.0: files written by other tools).
inline int64_t ReadInteger(const nlohmann::json& v, std::string_view where, std::string_view name,
                           Wording wording) {
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
  WrongType(where, name, v, Expected::kInteger, wording);
}

inline double ReadDouble(const nlohmann::json& v, std::string_view where, std::string_view name,
                         Wording wording) {
  if (v.is_null()) return std::nan("");  // a non-finite value, written as null
  if (!v.is_number()) WrongType(where, name, v, Expected::kNumber, wording);
  return v.get<double>();
}

inline std::string ReadText(const nlohmann::json& v, std::string_view where, std::string_view name,
                            Wording wording) {
  if (!v.is_string()) WrongType(where, name, v, Expected::kString, wording);
  return v.get<std::string>();
}

inline bool ReadBool(const nlohmann::json& v, std::string_view where, std::string_view name,
                     Wording wording) {
  if (!v.is_boolean()) WrongType(where, name, v, Expected::kBoolean, wording);
  return v.get<bool>();
}

inline nlohmann::json ReadObject(const nlohmann::json& v, std::string_view where,
                                 std::string_view name, Wording wording) {
  if (!v.is_object()) WrongType(where, name, v, Expected::kObject, wording);
  return v;
}

// Numbers, and nulls (NaN) where `nulls`.
inline std::vector<double> ReadNumbers(const nlohmann::json& v, std::string_view where,
                                       std::string_view name, Wording wording, bool nulls) {
  const auto number = [&](const nlohmann::json& x) {
    return x.is_number() || (nulls && x.is_null());
  };
  if (!v.is_array() || !std::all_of(v.begin(), v.end(), number)) {
    WrongType(where, name, v, Expected::kNumbers, wording);
  }
  std::vector<double> out;
  out.reserve(v.size());
  for (const nlohmann::json& x : v) out.push_back(x.is_null() ? std::nan("") : x.get<double>());
  return out;
}

inline nlohmann::json Numbers(const std::vector<double>& xs) {
  nlohmann::json out = nlohmann::json::array();
  for (double x : xs) out.push_back(Number(x));
  return out;
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
          if constexpr (std::is_same_v<T, std::vector<double>>) {
            out[name] = detail::Numbers(value);
          } else if constexpr (detail::kRequired<T>) {
            out[name] = value;
          } else if constexpr (std::is_same_v<T, std::optional<double>>) {
            if (value) out[name] = detail::Number(*value);
          } else if constexpr (std::is_same_v<T, std::optional<std::vector<double>>>) {
            if (value) out[name] = detail::Numbers(*value);
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
// it, worded as `wording` says; keys outside the table are ignored (the caller keeps the whole
// object where they matter).
template <class R, size_t N>
R FromJson(const nlohmann::json& object, const Field<R> (&table)[N], std::string_view where,
           Wording wording = Wording::kRecord) {
  if (!object.is_object())
    MAVG_FAIL("{}: {}, expected a JSON object", where, detail::TypeName(object));
  R record{};
  for (const Field<R>& f : table) {
    const auto it = object.find(std::string(f.name));
    std::visit(
        [&](auto member) {
          using T = std::remove_cvref_t<decltype(record.*member)>;
          T& out = record.*member;
          // JSON null is an absent object ("progress": null); for a number it is NaN.
          if (it == object.end() ||
              (std::is_same_v<T, std::optional<nlohmann::json>> && it->is_null())) {
            if constexpr (detail::kRequired<T>) {
              if (wording == Wording::kCheckpoint) MAVG_FAIL("{}: '{}' is missing", where, f.name);
              MAVG_FAIL("{}: no '{}'", where, f.name);
            }
            return;  // absent (or null where null means absent)
          }
          const nlohmann::json& v = *it;
          if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, std::optional<int64_t>>) {
            out = detail::ReadInteger(v, where, f.name, wording);
          } else if constexpr (std::is_same_v<T, std::optional<double>>) {
            out = detail::ReadDouble(v, where, f.name, wording);
          } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::optional<bool>>) {
            out = detail::ReadBool(v, where, f.name, wording);
          } else if constexpr (std::is_same_v<T, std::optional<RunState>>) {
            out = ParseRunStateOrThrow(detail::ReadText(v, where, f.name, wording),
                                       fmt::format("{}: '{}'", where, f.name));
          } else if constexpr (std::is_same_v<T, nlohmann::json> ||
                               std::is_same_v<T, std::optional<nlohmann::json>>) {
            out = detail::ReadObject(v, where, f.name, wording);
          } else if constexpr (std::is_same_v<T, std::vector<double>>) {
            out = detail::ReadNumbers(v, where, f.name, wording, /*nulls=*/false);
          } else if constexpr (std::is_same_v<T, std::optional<std::vector<double>>>) {
            out = detail::ReadNumbers(v, where, f.name, wording, /*nulls=*/true);
          } else {
            out = detail::ReadText(v, where, f.name, wording);
          }
        },
        f.member);
  }
  return record;
}

// Every field that `from` has set (a required field always) replaces `into`'s.
template <class R, size_t N>
void Update(R& into, const R& from, const Field<R> (&table)[N]) {
  for (const Field<R>& f : table) {
    std::visit(
        [&](auto member) {
          using T = std::remove_cvref_t<decltype(from.*member)>;
          if constexpr (detail::kRequired<T>) {
            into.*member = from.*member;
          } else {
            if (from.*member) into.*member = from.*member;
          }
        },
        f.member);
  }
}

// The name of the field holding `member`; code that reads a record's values from elsewhere (the
// store's key-value tables) names them through this, never by spelling them. Empty for a member
// the table lacks (a record's tests check that every member it names is there).
template <class R, size_t N, class T>
constexpr const Field<R>* FieldOf(const Field<R> (&table)[N], T R::*member) {
  for (const Field<R>& f : table) {
    if (std::holds_alternative<T R::*>(f.member) && std::get<T R::*>(f.member) == member) {
      return &f;
    }
  }
  return nullptr;
}
template <class R, size_t N, class T>
constexpr std::string_view NameOf(const Field<R> (&table)[N], T R::*member) {
  const Field<R>* f = FieldOf(table, member);
  return f ? f->name : std::string_view();
}

// The names of the fields, in table order (what a store keeps or refuses as a record's own).
template <class R, size_t N>
std::vector<std::string_view> Names(const Field<R> (&table)[N]) {
  std::vector<std::string_view> out;
  for (const Field<R>& f : table) out.push_back(f.name);
  return out;
}

// The field named `name`, or nullptr.
template <class R, size_t N>
const Field<R>* FindField(const Field<R> (&table)[N], std::string_view name) {
  for (const Field<R>& f : table) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// The name under which reports show the field `name`: its own, labelled where it does not say
// what it is (Timing::kEarlierProjection: "frames_per_s (earlier build: projected)"). A name
// outside the table is shown as it is.
template <class R, size_t N>
std::string ShownName(const Field<R> (&table)[N], std::string_view name) {
  const Field<R>* f = FindField(table, name);
  if (f != nullptr && f->timing == Timing::kEarlierProjection) {
    return fmt::format("{} (earlier build: projected)", name);
  }
  return std::string(name);
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
          } else if constexpr (std::is_same_v<T, bool>) {
            out.emplace_back(static_cast<int64_t>(value));
          } else if constexpr (std::is_same_v<T, nlohmann::json> ||
                               std::is_same_v<T, std::vector<double>> ||
                               std::is_same_v<T, std::optional<nlohmann::json>> ||
                               std::is_same_v<T, std::optional<std::vector<double>>>) {
            MAVG_FAIL("field '{}': objects and arrays have no column of their own", f.name);
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
