#pragma once
// Small filesystem helpers. Every file another process may read while we write it goes through
// WriteFileAtomic: write `path.tmp.<pid>`, fsync, rename over `path`, fsync the directory.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mavg {

void WriteFileAtomic(const std::string& path, const std::string& content);
// Appends one line (a '\n' is added) and fsyncs; for JSON-lines logs. Like every append-mode
// writer and lock file of mavg, refuses to write through a symbolic link (a link planted in a
// run or results directory must not make mavg write into the file it points to).
void AppendLine(const std::string& path, const std::string& line);
// open(2) of `path` for appending (created 0644 if absent) or, with `lock`, for a lock file
// (read-write, not truncated), never through a symbolic link: throws naming the path. The
// descriptor is close-on-exec.
int OpenNoFollow(const std::string& path, bool lock = false);
// Whole file as a string; throws naming the path when it cannot be read.
std::string ReadFile(const std::string& path);
bool PathExists(const std::string& path);
// A JSON file's value; throws naming the path when it cannot be read or is not JSON.
nlohmann::json ReadJsonFile(const std::string& path);
// The lines of a JSON-lines file (none if absent), numbered from 1; empty lines are skipped, and
// lines that are not JSON are listed by number, except a torn last line (no newline: a writer
// killed mid-line), which is dropped silently.
struct JsonLine {
  int number = 0;
  nlohmann::json value;
};
struct JsonLines {
  std::vector<JsonLine> lines;
  std::vector<int> not_json;
};
JsonLines ReadNumberedJsonLines(const std::string& path);
// The values of ReadNumberedJsonLines, lines that are not JSON skipped.
std::vector<nlohmann::json> ReadJsonLines(const std::string& path);
bool IsDirectory(const std::string& path);
// The owner of `path` when it is a symbolic link another user made (not this process's
// effective user, and not followed): a link of one's own (a folder moved to a scratch disk) is
// one's choice, someone else's is planted. nullopt otherwise.
std::optional<unsigned> ForeignSymlinkOwner(const std::string& path);
// The outputs of one command, (what, path) each: throws "<what> and <what> are the same file
// (<path>)" when two resolve to one file (through '.', '..' and links), before anything is
// written.
void CheckDistinctOutputs(const std::vector<std::pair<std::string, std::string>>& outputs);
void MakeDirs(const std::string& path);

}  // namespace mavg
