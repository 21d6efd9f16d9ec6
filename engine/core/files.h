#pragma once
// Small filesystem helpers. Every file another process may read while we write it goes through
// WriteFileAtomic: write `path.tmp.<pid>`, fsync, rename over `path`, fsync the directory.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mavg {

void WriteFileAtomic(const std::string& path, const std::string& content);
// Appends one line (a '\n' is added) and fsyncs; for JSON-lines logs.
void AppendLine(const std::string& path, const std::string& line);
// Whole file as a string; throws naming the path when it cannot be read.
std::string ReadFile(const std::string& path);
bool PathExists(const std::string& path);
// The records of a JSON-lines file (empty if absent); unparsable lines (the torn last line of a
// killed writer) are skipped.
std::vector<nlohmann::json> ReadJsonLines(const std::string& path);
bool IsDirectory(const std::string& path);
void MakeDirs(const std::string& path);

}  // namespace mavg
