#include "engine/core/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/core/error.h"

namespace mavg {
namespace {

void WriteAll(int fd, const char* data, size_t size, const std::string& path) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    MAVG_CHECK(n > 0, "{}: write failed: {}", path, std::strerror(errno));
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void FsyncDirectoryOf(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

namespace {

// `path` exists and is not a regular file (a device such as /dev/null or /dev/full, a FIFO):
// it must be written in place, never replaced by a renamed temporary file. Through a symbolic
// link only where the path names /dev or /proc itself (/dev/stdout): a link planted elsewhere
// (a run directory's result.json -> a disk) is replaced by the rename, not written through.
bool IsSpecialFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return false;
  struct stat link {};
  const bool is_link = ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode);
  return !is_link || path.starts_with("/dev/") || path.starts_with("/proc/");
}

}  // namespace

void WriteFileAtomic(const std::string& path, const std::string& content) {
  if (IsSpecialFile(path)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    MAVG_CHECK(fd >= 0, "{}: cannot open for writing: {}", path, std::strerror(errno));
    try {
      WriteAll(fd, content.data(), content.size(), path);
    } catch (...) {
      ::close(fd);
      throw;
    }
    // A failed close (a full disk reported late, NFS) is a failed write.
    MAVG_CHECK(::close(fd) == 0, "{}: write failed: {}", path, std::strerror(errno));
    return;
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  MAVG_CHECK(fd >= 0, "{}: cannot create: {}", tmp, std::strerror(errno));
  try {
    WriteAll(fd, content.data(), content.size(), tmp);
    MAVG_CHECK(::fsync(fd) == 0, "{}: fsync failed: {}", tmp, std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    MAVG_FAIL("{}: write failed: {}", tmp, std::strerror(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    MAVG_FAIL("{}: cannot rename into place: {}", path, std::strerror(err));
  }
  FsyncDirectoryOf(path);
}

int OpenNoFollow(const std::string& path, bool lock) {
  const int flags = (lock ? O_RDWR : O_WRONLY | O_APPEND) | O_CREAT | O_NOFOLLOW | O_CLOEXEC;
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0 && errno == ELOOP) {
    MAVG_FAIL(
        "{}: is a symbolic link; mavg does not write through links in its directories "
        "(remove it)",
        path);
  }
  MAVG_CHECK(fd >= 0, "{}: cannot open for {}: {}", path, lock ? "locking" : "append",
             std::strerror(errno));
  return fd;
}

void AppendLine(const std::string& path, const std::string& line) {
  const int fd = OpenNoFollow(path);
  std::string data = line + "\n";
  try {
    WriteAll(fd, data.data(), data.size(), path);
    ::fsync(fd);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

std::optional<unsigned> ForeignSymlinkOwner(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode) || st.st_uid == ::geteuid()) {
    return std::nullopt;
  }
  return static_cast<unsigned>(st.st_uid);
}

void CheckDistinctOutputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::vector<std::string> resolved;
  for (const auto& [what, path] : outputs) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
    resolved.push_back(ec ? std::filesystem::absolute(path).lexically_normal().string()
                          : p.string());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      MAVG_CHECK(resolved[i] != resolved[j], "{} and {} are the same file ({}): give each its own",
                 outputs[j].first, outputs[i].first, resolved[i]);
    }
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  MAVG_CHECK(in.good(), "{}: cannot open: {}", path, std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  MAVG_CHECK(!in.bad(), "{}: read error", path);
  return ss.str();
}

bool PathExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

void MakeDirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  MAVG_CHECK(!ec, "{}: cannot create directory: {}", path, ec.message());
}

nlohmann::json ReadJsonFile(const std::string& path) {
  const std::string text = ReadFile(path);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    MAVG_FAIL("{}: corrupt JSON ({})", path, e.what());
  }
}

JsonLines ReadNumberedJsonLines(const std::string& path) {
  JsonLines out;
  if (!PathExists(path)) return out;
  const std::string text = ReadFile(path);
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    try {
      out.lines.push_back({number, nlohmann::json::parse(line)});
    } catch (const nlohmann::json::exception&) {
      if (in.eof() && !text.ends_with('\n')) break;  // torn last line
      out.not_json.push_back(number);
    }
  }
  return out;
}

std::vector<nlohmann::json> ReadJsonLines(const std::string& path) {
  std::vector<nlohmann::json> values;
  for (JsonLine& line : ReadNumberedJsonLines(path).lines) values.push_back(std::move(line.value));
  return values;
}

}  // namespace mavg
