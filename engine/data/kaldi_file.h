#pragma once
// Byte-level files under the Kaldi readers and writers: a buffered, seekable input file that
// knows its size (so a corrupt header can be checked against the bytes that are really there
// before anything is allocated), and an output file that is written to `path.tmp` and renamed
// into place on Close(), so a reader never sees half an archive.

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace mavg::kaldi {

class InputFile {
 public:
  static constexpr int kEof = -1;

  static constexpr size_t kDefaultBufferBytes = size_t{1} << 20;

  // Opens a regular file; throws mavg::Error naming the file when it cannot. `buffer_bytes`:
  // what one refill reads (small for reading only headers at scattered offsets).
  explicit InputFile(std::string path, size_t buffer_bytes = kDefaultBufferBytes);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& Path() const { return path_; }
  int64_t Size() const { return size_; }
  int64_t Tell() const { return buffer_start_ + static_cast<int64_t>(pos_); }
  int64_t Remaining() const { return size_ - Tell(); }
  void Seek(int64_t offset);

  // The next byte (0..255) or kEof.
  int Peek() {
    if (pos_ == end_ && !Fill()) return kEof;
    return static_cast<unsigned char>(buffer_[pos_]);
  }
  int Get() {
    if (pos_ == end_ && !Fill()) return kEof;
    return static_cast<unsigned char>(buffer_[pos_++]);
  }
  // Reads up to n bytes; returns how many were read (fewer only at the end of the file).
  size_t Read(void* dst, size_t n);

 private:
  bool Fill();

  std::string path_;
  std::FILE* file_ = nullptr;  // owned
  int64_t size_ = 0;
  std::vector<char> buffer_;  // [buffer_bytes]
  size_t pos_ = 0;            // next byte of buffer_ to hand out
  size_t end_ = 0;            // valid bytes in buffer_
  int64_t buffer_start_ = 0;  // file offset of buffer_[0]
};

class OutputFile {
 public:
  // Creates `path.tmp`; the data appear under `path` only when Close() succeeds.
  explicit OutputFile(std::string path);
  // Without Close() (e.g. during an exception) the temporary file is removed.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  const std::string& Path() const { return path_; }
  int64_t Tell() const { return written_; }
  void Write(const void* data, size_t n);
  void Write(std::string_view s) { Write(s.data(), s.size()); }
  // Flushes, fsyncs and renames `path.tmp` to `path`. Throws on any I/O error.
  void Close();
  bool IsOpen() const { return file_ != nullptr; }

 private:
  std::string path_;
  std::string tmp_path_;
  std::FILE* file_ = nullptr;  // owned; null once closed
  int64_t written_ = 0;
};

}  // namespace mavg::kaldi
