#include "engine/data/kaldi_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "engine/core/error.h"

namespace mavg::kaldi {
namespace {

constexpr size_t kBufferSize = size_t{1} << 20;

std::string ErrnoText() { return std::strerror(errno); }

}  // namespace

InputFile::InputFile(std::string path, size_t buffer_bytes) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "rb");
  MAVG_CHECK(file_ != nullptr, "{}: cannot open ({})", path_, ErrnoText());
  // Our own buffer serves Peek/Get; large reads go straight from the file to the caller.
  std::setvbuf(file_, nullptr, _IONBF, 0);
  struct stat info;
  if (fstat(fileno(file_), &info) != 0 || !S_ISREG(info.st_mode)) {
    std::fclose(file_);
    file_ = nullptr;
    MAVG_FAIL("{}: not a regular file", path_);
  }
  if (fseeko(file_, 0, SEEK_END) != 0 || (size_ = ftello(file_)) < 0 ||
      fseeko(file_, 0, SEEK_SET) != 0) {
    std::fclose(file_);
    file_ = nullptr;
    MAVG_FAIL("{}: cannot determine the file size (not a regular file?)", path_);
  }
  buffer_.resize(std::max<size_t>(buffer_bytes, 1));
}

InputFile::~InputFile() {
  if (file_ != nullptr) std::fclose(file_);
}

void InputFile::Seek(int64_t offset) {
  MAVG_CHECK(offset >= 0 && offset <= size_, "{}: offset {} is outside the file ({} bytes)", path_,
             offset, size_);
  if (offset >= buffer_start_ && offset <= buffer_start_ + static_cast<int64_t>(end_)) {
    pos_ = static_cast<size_t>(offset - buffer_start_);
    return;
  }
  MAVG_CHECK(fseeko(file_, offset, SEEK_SET) == 0, "{}: cannot seek to byte {} ({})", path_, offset,
             ErrnoText());
  buffer_start_ = offset;
  pos_ = end_ = 0;
}

bool InputFile::Fill() {
  buffer_start_ += static_cast<int64_t>(end_);
  pos_ = end_ = 0;
  end_ = std::fread(buffer_.data(), 1, buffer_.size(), file_);
  MAVG_CHECK(!std::ferror(file_), "{}: read error at byte {} ({})", path_, buffer_start_,
             ErrnoText());
  return end_ > 0;
}

size_t InputFile::Read(void* dst, size_t n) {
  if (n == 0) return 0;  // dst may be null (an empty vector's data())
  char* out = static_cast<char*>(dst);
  size_t done = std::min(n, end_ - pos_);
  std::memcpy(out, buffer_.data() + pos_, done);
  pos_ += done;
  if (done == n) return n;
  // The buffer is drained and the file position is at its end: read the rest directly when
  // it is large, through the buffer when small.
  if (n - done >= buffer_.size()) {
    buffer_start_ += static_cast<int64_t>(end_);
    pos_ = end_ = 0;
    size_t got = std::fread(out + done, 1, n - done, file_);
    MAVG_CHECK(!std::ferror(file_), "{}: read error at byte {} ({})", path_, buffer_start_,
               ErrnoText());
    buffer_start_ += static_cast<int64_t>(got);
    return done + got;
  }
  while (done < n && Fill()) {
    size_t take = std::min(n - done, end_);
    std::memcpy(out + done, buffer_.data(), take);
    pos_ = take;
    done += take;
  }
  return done;
}

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  // A temporary of its own (pid and a counter: two outputs of one process, or two processes,
  // never share one), created new, never through a link.
  static std::atomic<int> counter{0};
  tmp_path_ = fmt::format("{}.tmp.{}.{}", path_, ::getpid(), counter++);
  const int fd =
      ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  MAVG_CHECK(fd >= 0, "{}: cannot create ({})", tmp_path_, ErrnoText());
  file_ = ::fdopen(fd, "wb");
  if (file_ == nullptr) ::close(fd);
  MAVG_CHECK(file_ != nullptr, "{}: cannot create ({})", tmp_path_, ErrnoText());
  std::setvbuf(file_, nullptr, _IOFBF, kBufferSize);
}

OutputFile::~OutputFile() {
  if (file_ != nullptr) {
    std::fclose(file_);
    std::remove(tmp_path_.c_str());
  }
}

void OutputFile::Write(const void* data, size_t n) {
  MAVG_CHECK(file_ != nullptr, "{}: write after Close()", path_);
  if (n == 0) return;
  MAVG_CHECK(std::fwrite(data, 1, n, file_) == n, "{}: write error ({})", tmp_path_, ErrnoText());
  written_ += static_cast<int64_t>(n);
}

void OutputFile::Close() {
  MAVG_CHECK(file_ != nullptr, "{}: closed twice", path_);
  std::FILE* file = file_;
  file_ = nullptr;
  bool ok = std::fflush(file) == 0 && ::fsync(fileno(file)) == 0;
  std::string error = ok ? std::string() : ErrnoText();
  ok = (std::fclose(file) == 0) && ok;
  if (ok && std::rename(tmp_path_.c_str(), path_.c_str()) == 0) return;
  if (error.empty()) error = ErrnoText();
  std::remove(tmp_path_.c_str());
  MAVG_FAIL("{}: cannot write ({})", path_, error);
}

}  // namespace mavg::kaldi
