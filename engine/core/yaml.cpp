#include "engine/core/yaml.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "engine/core/error.h"

namespace mavg {
namespace {

std::string Place(const YAML::Mark& m) { return fmt::format("{}:{}", m.line + 1, m.column + 1); }

std::string KeyText(const YAML::Node& key) {
  return key.IsScalar() ? key.Scalar() : YAML::Dump(key);
}

// Every mapping below `node`; `path` names it in messages ("optimizer.ngsgd").
void CheckDuplicateKeys(const YAML::Node& node, const std::string& path,
                        const std::string& source) {
  if (node.IsMap()) {
    std::map<std::string, YAML::Mark> seen;
    for (const auto& item : node) {
      const std::string key = KeyText(item.first);
      const std::string full = path.empty() ? key : path + "." + key;
      const auto [it, fresh] = seen.emplace(key, item.first.Mark());
      if (!fresh) {
        throw Error(fmt::format("{}:{}: duplicate key '{}' (first at line {})", source,
                                Place(item.first.Mark()), full, Place(it->second)));
      }
      CheckDuplicateKeys(item.second, full, source);
    }
  } else if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) {
      CheckDuplicateKeys(node[i], fmt::format("{}[{}]", path, i), source);
    }
  }
}

}  // namespace

void ThrowYamlError(const std::string& source, const YAML::Exception& e) {
  if (e.mark.is_null()) throw Error(fmt::format("{}: {}", source, e.msg));
  throw Error(fmt::format("{}:{}:{}: {}", source, e.mark.line + 1, e.mark.column + 1, e.msg));
}

YAML::Node LoadYamlStrict(const std::string& text, const std::string& source) {
  // YAML is Unicode, and what is read here ends up in JSON run files and the database.
  if (const size_t at = InvalidUtf8At(text); at != std::string::npos) {
    const size_t newline = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
    const size_t line = 1 + std::count(text.begin(), text.begin() + at, '\n');
    const size_t column = newline == std::string::npos ? at + 1 : at - newline;
    throw Error(fmt::format("{}:{}:{}: not valid UTF-8 (byte 0x{:02X})", source, line, column,
                            static_cast<unsigned char>(text[at])));
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw Error(fmt::format("{}:{}:{}: invalid YAML: {}", source, e.mark.line + 1,
                            e.mark.column + 1, e.msg));
  }
  CheckDuplicateKeys(root, "", source);
  return root;
}

nlohmann::json ScalarJson(const YAML::Node& n) {
  if (n.IsNull()) return nullptr;
  const std::string& s = n.Scalar();
  if (n.Tag() != "!") {
    if (s == "true" || s == "false") return s == "true";
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(v)) {
      if (v == std::floor(v) && std::fabs(v) < 1e15 && s.find_first_of(".eE") == std::string::npos)
        return static_cast<int64_t>(v);
      return v;
    }
  }
  return s;
}

double RequireNumber(const YAML::Node& n, const std::string& what) {
  const nlohmann::json j = n.IsScalar() ? ScalarJson(n) : nlohmann::json();
  MAVG_CHECK(j.is_number(), "{}: expects a number, not '{}'", what,
             n.IsScalar() ? n.Scalar() : std::string("a list or mapping"));
  return j.get<double>();
}

}  // namespace mavg
