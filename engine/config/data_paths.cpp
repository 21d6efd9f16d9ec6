#include "engine/config/data_paths.h"

#include <fmt/core.h>

#include <filesystem>
#include <system_error>

#include "engine/core/error.h"

namespace mavg {
namespace {

namespace fs = std::filesystem;

// The file of an rspecifier that names one plain file ("PATH", "ark:PATH", "ark,s,cs:PATH",
// "scp:PATH"), or "" for anything else (several, a glob, a pipe): those are checked when read.
std::string PlainFileOf(const std::string& rspecifier) {
  if (rspecifier.empty() || rspecifier.find_first_of(" \t\n|*?[") != std::string::npos) return "";
  const size_t colon = rspecifier.find(':');
  if (colon == std::string::npos) return rspecifier;
  const std::string heads = "," + rspecifier.substr(0, colon) + ",";
  const bool typed =
      heads.find(",ark,") != std::string::npos || heads.find(",scp,") != std::string::npos;
  return typed ? rspecifier.substr(colon + 1) : rspecifier;
}

bool IsDataDirKey(const std::string& key) {
  return key == "data.train" || key == "data.dev" || key == "data.test";
}

}  // namespace

std::vector<DataPath> DataPathsOf(const RunConfig& config) {
  std::vector<DataPath> out;
  const DataConfig& d = config.data;
  for (const auto& [key, path] : {std::pair<const char*, const std::string&>{"data.train", d.train},
                                  {"data.dev", d.dev},
                                  {"data.test", d.test},
                                  {"data.lang", d.lang}}) {
    if (!path.empty()) out.push_back({key, path});
  }
  for (const auto& [key, spec] : {std::pair<const char*, const std::string&>{"data.ali", d.ali},
                                  {"data.dev_ali", d.dev_ali}}) {
    const std::string file = PlainFileOf(spec);
    if (!file.empty()) out.push_back({key, file});
  }
  return out;
}

std::string DataPathProblem(const DataPath& p) {
  std::error_code ec;
  const fs::file_status st = fs::status(p.path, ec);
  if (!fs::exists(st)) return "not found";
  if (p.key == "data.ali" || p.key == "data.dev_ali") {
    return fs::is_directory(st) ? "a directory, not an alignments file" : "";
  }
  if (!fs::is_directory(st)) return "not a directory";
  if (IsDataDirKey(p.key) && !fs::exists(fs::path(p.path) / "feats.scp", ec) &&
      !fs::exists(fs::path(p.path) / "feats.ark", ec)) {
    return "not a data dir (no feats.scp or feats.ark)";
  }
  return "";
}

namespace {

// For a missing data dir of a built-in corpus (.../digits[-SIZE]/train, .../fmnist/test, as the
// configs and docs name them), the command that builds it; "" otherwise.
std::string BuildHint(const DataPath& p) {
  if (!IsDataDirKey(p.key)) return "";
  const fs::path dir = fs::path(p.path).lexically_normal();
  const std::string part = dir.filename().string();
  const fs::path corpus = dir.parent_path();
  const std::string name = corpus.filename().string();
  if (part != "train" && part != "dev" && part != "test" && part != "test_seen" && part != "lang") {
    return "";
  }
  if (name == "digits") return fmt::format("mavg data digits --out {}", corpus.string());
  for (const char* size : {"small", "x1", "x2", "x4", "x8"}) {
    if (name == std::string("digits-") + size) {
      return fmt::format("mavg data digits --size {} --out {}", size, corpus.string());
    }
  }
  if (name == "fmnist") return fmt::format("mavg data fmnist --out {}", corpus.string());
  return "";
}

}  // namespace

void CheckDataPaths(const RunConfig& config) {
  std::vector<std::string> problems;
  for (const DataPath& p : DataPathsOf(config)) {
    std::string why = DataPathProblem(p);
    if (why == "not found") {
      const std::string hint = BuildHint(p);
      if (!hint.empty()) why += fmt::format(" (build it: {})", hint);
    }
    if (!why.empty()) problems.push_back(fmt::format("{}: {}: {}", p.key, p.path, why));
  }
  if (problems.empty()) return;
  if (problems.size() == 1) throw Error(problems[0]);
  std::string joined;
  for (size_t i = 0; i < problems.size(); ++i) joined += (i ? "; " : "") + problems[i];
  throw Error(fmt::format("{} data paths cannot be read: {}", problems.size(), joined));
}

}  // namespace mavg
