#pragma once
// How schema.cpp's keys are declared, for the files that declare a section of them (a method's
// config beside its checks: combine_config.cpp): a key bound to its RunConfig field through a
// typed accessor (MAVG_FIELD), from which come its value type, its parsing and its JSON (as
// records/ binds its fields by member pointers); nothing is reached through void*.
//   KeyBuilder("parallel.combine.qsr_gamma", MAVG_FIELD(parallel.combine.qsr_gamma), "meaning")
//       .Min(0).UsedWhen(Qsr, "parallel.combine.policy is qsr").OneWorkerFree()

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "engine/config/config.h"
#include "engine/config/schema.h"
#include "engine/core/error.h"
#include "engine/core/json.h"

namespace mavg::schema_keys {

// "integer", "number", "string", "boolean".
const char* TypeName(ValueType t);
// `s` without leading and trailing white space.
std::string Trim(const std::string& s);

// A key of the schema bound to its field in RunConfig.
struct Binding {
  KeySpec spec;
  // Stores `raw` into the field, or returns why not ("" when stored).
  std::function<std::string(RunConfig&, const std::string& raw)> assign;
  std::function<nlohmann::json(const RunConfig&)> json;  // the field's value
  // Run identity (schema.h: KeySpec::identity): in it only where `used` says so (null: always),
  // and left out at `omitted_at` (a key added after runs were made without it: the value they
  // had). TrainingKey also leaves out `one_worker_free` keys when there is one worker.
  std::function<bool(const RunConfig&)> used;
  std::optional<nlohmann::json> omitted_at;
  bool one_worker_free = false;
};

template <class T>
constexpr ValueType TypeOf() {
  if constexpr (std::is_same_v<T, int64_t>) return ValueType::kInt;
  if constexpr (std::is_same_v<T, double>) return ValueType::kFloat;
  if constexpr (std::is_same_v<T, bool>) return ValueType::kBool;
  return ValueType::kString;  // std::string, or a choice (an enum with texts)
}

// Parses `raw` into a T; returns an error message or "".
template <class T>
std::string Parse(const KeySpec& spec, const std::string& raw, T& out) {
  const std::string value = spec.type == ValueType::kString ? raw : Trim(raw);
  auto bad = [&]() {
    return fmt::format("key '{}' expects {} {}, got '{}'", spec.path,
                       spec.type == ValueType::kInt ? "an" : "a", TypeName(spec.type), value);
  };
  if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>) {
    T v{};
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || ptr != value.data() + value.size() || value.empty()) return bad();
    if constexpr (std::is_same_v<T, double>) {
      if (!std::isfinite(v)) return bad();
    }
    out = v;
  } else if constexpr (std::is_same_v<T, bool>) {
    if (value == "true" || value == "yes" || value == "on") {
      out = true;
    } else if (value == "false" || value == "no" || value == "off") {
      out = false;
    } else {
      return bad();
    }
  } else if constexpr (std::is_same_v<T, std::string>) {
    // Run files, run ids and the database hold configs as JSON, which is UTF-8.
    if (const size_t at = InvalidUtf8At(value); at != std::string::npos) {
      return fmt::format("key '{}': the value is not valid UTF-8 (byte 0x{:02X} at offset {})",
                         spec.path, static_cast<unsigned char>(value[at]), at);
    }
    out = value;
  } else {
    static_assert(HasTexts<T>, "a config field is an integer, number, bool, string or choice");
    const std::optional<T> e = ParseEnum<T>(value);
    if (!e) {
      return fmt::format("{}: '{}' is not one of: {}", spec.path, value,
                         fmt::join(spec.choices, ", "));
    }
    out = *e;
  }
  return "";
}

template <class T>
nlohmann::json JsonOf(const T& v) {
  if constexpr (HasTexts<T>) {
    return std::string(ToString(v));
  } else {
    return v;
  }
}

struct KeyBuilder {
  Binding b;
  // `get` is a typed accessor: (const) RunConfig& -> (const) T& (MAVG_FIELD).
  template <class Get>
  KeyBuilder(std::string path, Get get, std::string doc) {
    using T = std::remove_cvref_t<decltype(get(std::declval<RunConfig&>()))>;
    b.spec.path = std::move(path);
    b.spec.type = TypeOf<T>();
    b.spec.doc = std::move(doc);
    if constexpr (HasTexts<T>) {
      for (const EnumText<T>& row : TextsOf(T{})) b.spec.choices.emplace_back(row.text);
    }
    b.assign = [get, spec = b.spec](RunConfig& c, const std::string& raw) {
      return Parse<T>(spec, raw, get(c));
    };
    b.json = [get](const RunConfig& c) { return JsonOf<T>(get(c)); };
  }
  KeyBuilder& Min(double v, bool exclusive = false) {
    b.spec.min = v, b.spec.has_min = true, b.spec.min_exclusive = exclusive;
    return *this;
  }
  KeyBuilder& Max(double v) {
    b.spec.max = v, b.spec.has_max = true;
    return *this;
  }
  // Execution only (threads, paths, a device ordinal): never part of the run identity.
  KeyBuilder& NotIdentity() {
    b.spec.identity = false;
    b.spec.identity_rule = "never";
    return *this;
  }
  // In the identity only where the config uses the key (an optimizer's or an algorithm's own
  // settings): `when` says in words where that is.
  KeyBuilder& UsedWhen(std::function<bool(const RunConfig&)> used, std::string when) {
    b.used = std::move(used);
    AddRule("when " + when);
    return *this;
  }
  // Added after runs were made without it, which had `value`: left out of the identity at that
  // value, so their ids stay (tests/unit/config/run_id_pins_test.cpp).
  KeyBuilder& OmittedAt(nlohmann::json value) {
    AddRule("unless " + (value.is_string() ? value.get<std::string>() : value.dump()));
    b.omitted_at = std::move(value);
    return *this;
  }
  // Changes nothing with one worker (an averaging setting): runs that differ only here train
  // the same model (TrainingKey; still different run ids).
  KeyBuilder& OneWorkerFree() {
    b.one_worker_free = true;
    return *this;
  }
  operator Binding() const { return b; }  // NOLINT(google-explicit-constructor)

 private:
  void AddRule(const std::string& rule) {
    b.spec.identity_rule =
        b.spec.identity_rule == "always" ? rule : b.spec.identity_rule + ", " + rule;
  }
};

}  // namespace mavg::schema_keys

#define MAVG_FIELD(member) \
  [](auto& c) -> auto& { return c.member; }
