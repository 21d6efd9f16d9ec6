#pragma once
// Kaldi table I/O: archives ("ark" files: `key object key object ...`), scp files (`key
// rxspecifier` lines) and simple two-column text files (text, utt2spk).
//
// Reading handles what Kaldi writes, each entry binary or text independently:
//   binary ("key \0B" + object): float matrices "FM", double matrices "DM" (read as float),
//   compressed matrices "CM", "CM2", "CM3" (see kaldi_compressed.h), int32 vectors as Kaldi's
//   Int32VectorWriter writes them (int32 count, then every element, each int32 preceded by its
//   size byte 4);
//   text ("key " + object): matrices "[ row\n row ... ]", int32 vectors as the rest of the line.
// Every malformed input throws mavg::Error with one line naming the file, the key and the byte
// offset of the object; sizes in headers are checked against the file before any allocation.
//
// Writers produce binary float matrices ("FM") or text matrices, and binary or text int32
// vectors. They write `path.tmp` and rename it to `path` on Close(); a writer destroyed
// without Close() leaves nothing behind.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace mavg::kaldi {

struct HostMatrix {
  int64_t rows = 0, cols = 0;
  std::vector<float> data;  // [rows x cols], row-major

  const float* Row(int64_t r) const { return data.data() + r * cols; }
  float* Row(int64_t r) { return data.data() + r * cols; }
};

class InputFile;
class OutputFile;

struct MatrixShape {
  int64_t rows = 0, cols = 0;
};

// ---- Reading archives --------------------------------------------------------------------

// Reads a matrix archive in order:  while (reader.Next()) Use(reader.Key(), reader.Value());
class MatrixArchiveReader {
 public:
  // `buffer_bytes` > 0: what one refill reads (small when only NextShape is used, so that the
  // values skipped are not read after all).
  explicit MatrixArchiveReader(const std::string& path, size_t buffer_bytes = 0);
  ~MatrixArchiveReader();
  MatrixArchiveReader(MatrixArchiveReader&&) noexcept;
  MatrixArchiveReader& operator=(MatrixArchiveReader&&) noexcept;

  // Reads the next entry; false at the end of the archive.
  bool Next();
  // Reads the next entry's key and the size of its matrix, skipping the values where the format
  // allows (binary: the header, then a seek past the body; text is parsed); Value() is empty
  // after it. False at the end of the archive. For indexing an archive without holding it.
  bool NextShape(MatrixShape* shape);
  const std::string& Key() const { return key_; }
  const HostMatrix& Value() const { return value_; }
  HostMatrix& MutableValue() { return value_; }  // e.g. to move the data out
  int64_t Offset() const { return offset_; }     // byte offset of the object (after "key ")
  const std::string& Path() const;

 private:
  std::unique_ptr<InputFile> file_;
  std::string key_;
  HostMatrix value_;
  int64_t offset_ = 0;
};

class Int32VectorArchiveReader {
 public:
  explicit Int32VectorArchiveReader(const std::string& path);
  ~Int32VectorArchiveReader();
  Int32VectorArchiveReader(Int32VectorArchiveReader&&) noexcept;
  Int32VectorArchiveReader& operator=(Int32VectorArchiveReader&&) noexcept;

  bool Next();
  const std::string& Key() const { return key_; }
  const std::vector<int32_t>& Value() const { return value_; }
  std::vector<int32_t>& MutableValue() { return value_; }
  int64_t Offset() const { return offset_; }
  const std::string& Path() const;

 private:
  std::unique_ptr<InputFile> file_;
  std::string key_;
  std::vector<int32_t> value_;
  int64_t offset_ = 0;
};

// ---- Random access through rxspecifiers -----------------------------------------------------

// "path" (a file holding one object, no key), "path:offset" (the object at that byte offset,
// as in scp files), either optionally followed by Kaldi's inclusive range "[r1:r2]" or
// "[r1:r2,c1:c2]" (an empty side or ":" means all rows/columns).
struct Rxspec {
  std::string path;
  int64_t offset = 0;
  bool has_offset = false;
  int64_t row_begin = 0, row_end = -1;  // [row_begin, row_end] inclusive; -1: to the end
  int64_t col_begin = 0, col_end = -1;
};
Rxspec ParseRxspec(const std::string& rxspec);

// Reads matrices by rxspecifier, keeping the last file open: reading an scp in order costs
// one open per archive, not per entry.
class RxMatrixReader {
 public:
  RxMatrixReader();
  ~RxMatrixReader();
  // `key` only improves error messages.
  HostMatrix Read(const Rxspec& spec, const std::string& key = {});
  HostMatrix Read(const std::string& rxspec, const std::string& key = {});
  // The same matrix in double precision: a double matrix ("DM", as Kaldi's statistics are
  // written) keeps every digit; other formats are converted from float.
  std::vector<double> ReadDouble(const Rxspec& spec, const std::string& key, int64_t* rows,
                                 int64_t* cols);

 private:
  std::unique_ptr<InputFile> file_;  // last file read, or null
};

HostMatrix ReadMatrix(const std::string& rxspec);

// Int32 vectors by rxspecifier ("path:offset", as an scp of alignments holds them; ranges are
// for matrices only), keeping the last file open.
class RxInt32VectorReader {
 public:
  RxInt32VectorReader();
  ~RxInt32VectorReader();
  std::vector<int32_t> Read(const Rxspec& spec, const std::string& key = {});

 private:
  std::unique_ptr<InputFile> file_;  // last file read, or null
};

// The size of the matrix an rxspecifier names, after its range, from the object's header alone
// (binary FM, DM, CM, CM2, CM3: read by the same code as a full read, through a 64-byte buffer);
// nullopt for a text matrix, whose size is known only by reading it all, and for anything
// unreadable (the real read reports that). For sizing memory before reading a subset of a large
// archive.
class MatrixShapeReader {
 public:
  MatrixShapeReader();
  ~MatrixShapeReader();
  MatrixShapeReader(const MatrixShapeReader&) = delete;
  MatrixShapeReader& operator=(const MatrixShapeReader&) = delete;
  std::optional<MatrixShape> Shape(const Rxspec& spec);

 private:
  std::unique_ptr<InputFile> file_;  // last archive read, or null
};

// Where a path read from a table file (an scp's archive) lies: Kaldi reads relative paths from
// the working directory; a table written by hand next to its archives ("feats.ark:123") also
// works, relative to `dir`. The path as given when neither exists.
std::string ResolveTablePath(const std::string& path, const std::string& dir);

// ---- Text tables (kaldi_text.cpp) ---------------------------------------------------------

// An scp file: `key rxspecifier` per line, in file order. Blank lines are skipped; a line
// without an rxspecifier is an error naming the file and line.
std::vector<std::pair<std::string, std::string>> ReadScp(const std::string& path);
// A two-column text file (text, utt2spk, ...): key, then the rest of the line with surrounding
// whitespace removed (may be empty, e.g. an empty transcript).
std::vector<std::pair<std::string, std::string>> ReadKeyValueFile(const std::string& path);

// ---- Writing ------------------------------------------------------------------------------

// Binary float matrices ("FM"; "DM" with WriteDouble). With a non-empty scp_path, also writes
// `key ark:offset` lines,
// naming the archive `scp_ark_name` (default: ark_path) — give the final absolute path when
// the archive is written somewhere that will be renamed later.
class MatrixArchiveWriter {
 public:
  MatrixArchiveWriter(const std::string& ark_path, const std::string& scp_path = {},
                      const std::string& scp_ark_name = {});
  ~MatrixArchiveWriter();
  MatrixArchiveWriter(MatrixArchiveWriter&&) noexcept;
  MatrixArchiveWriter& operator=(MatrixArchiveWriter&&) noexcept;

  void Write(const std::string& key, const HostMatrix& matrix);
  void Write(const std::string& key, const float* data, int64_t rows, int64_t cols);
  // A double matrix ("DM"), as Kaldi writes statistics (cmvn.ark).
  void WriteDouble(const std::string& key, const double* data, int64_t rows, int64_t cols);
  // Renames the archive, then the scp, into place.
  void Close();

 private:
  void WriteObject(const std::string& key, const char* token, const void* data,
                   size_t element_bytes, int64_t rows, int64_t cols);
  std::unique_ptr<OutputFile> ark_;
  std::unique_ptr<OutputFile> scp_;  // null without an scp
  std::string scp_ark_name_;
};

// Text matrices, as Kaldi writes with ark,t: (floats in shortest round-trip form).
class TextMatrixArchiveWriter {
 public:
  explicit TextMatrixArchiveWriter(const std::string& path);
  ~TextMatrixArchiveWriter();
  TextMatrixArchiveWriter(TextMatrixArchiveWriter&&) noexcept;
  TextMatrixArchiveWriter& operator=(TextMatrixArchiveWriter&&) noexcept;

  void Write(const std::string& key, const HostMatrix& matrix);
  void Close();

 private:
  std::unique_ptr<OutputFile> file_;
};

class Int32VectorArchiveWriter {
 public:
  explicit Int32VectorArchiveWriter(const std::string& path, bool binary = true);
  ~Int32VectorArchiveWriter();
  Int32VectorArchiveWriter(Int32VectorArchiveWriter&&) noexcept;
  Int32VectorArchiveWriter& operator=(Int32VectorArchiveWriter&&) noexcept;

  void Write(const std::string& key, std::span<const int32_t> values);
  void Close();

 private:
  std::unique_ptr<OutputFile> file_;
  bool binary_ = true;
};

}  // namespace mavg::kaldi
