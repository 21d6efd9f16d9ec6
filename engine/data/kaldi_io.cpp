#include "engine/data/kaldi_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <limits>
#include <string_view>

#include "engine/core/error.h"
#include "engine/data/kaldi_compressed.h"
#include "engine/data/kaldi_file.h"
#include "engine/data/kaldi_text.h"

namespace mavg::kaldi {
namespace {

static_assert(std::endian::native == std::endian::little,
              "Kaldi binary files are little-endian; a big-endian host needs byte swapping");

constexpr size_t kMaxKeyBytes = 4096;
constexpr size_t kMaxTokenBytes = 16;
constexpr int64_t kChunkElements = int64_t{1} << 16;  // for converting reads (DM, int32 vectors)

// Where an object sits, for error messages: "file: utterance 'key' at byte N".
struct Context {
  const std::string& path;
  const std::string& key;
  int64_t offset;

  std::string Where() const {
    if (key.empty()) return fmt::format("{}: at byte {}", path, offset);
    return fmt::format("{}: utterance '{}' at byte {}", path, key, offset);
  }
};

std::string DescribeByte(int c) {
  if (c == InputFile::kEof) return "end of file";
  if (c > 0x20 && c < 0x7f) return fmt::format("'{:c}'", static_cast<char>(c));
  return fmt::format("byte 0x{:02x}", c);
}

// Reads the key of the next archive entry and the one separator after it; false at the end.
bool ReadKey(InputFile& in, std::string* key) {
  int c = in.Peek();
  while (IsKaldiSpace(c)) {
    in.Get();
    c = in.Peek();
  }
  if (c == InputFile::kEof) return false;
  const int64_t start = in.Tell();
  key->clear();
  while (c != InputFile::kEof && !IsKaldiSpace(c)) {
    MAVG_CHECK(c >= 0x20 && c != 0x7f,
               "{}: at byte {}: found {} where a key was expected (an entry without a key, or "
               "not a Kaldi archive)",
               in.Path(), in.Tell(), DescribeByte(c));
    MAVG_CHECK(key->size() < kMaxKeyBytes,
               "{}: at byte {}: key longer than {} bytes (not a Kaldi archive?)", in.Path(), start,
               kMaxKeyBytes);
    key->push_back(static_cast<char>(in.Get()));
    c = in.Peek();
  }
  MAVG_CHECK(c != InputFile::kEof,
             "{}: utterance '{}' at byte {}: truncated archive (end of file after the key)",
             in.Path(), *key, start);
  if (c != '\n') in.Get();  // the separator; a newline belongs to a text object
  return true;
}

// Consumes Kaldi's binary marker "\0B" if present.
bool ReadBinaryMarker(InputFile& in, const Context& ctx) {
  if (in.Peek() != '\0') return false;
  in.Get();
  int c = in.Get();
  MAVG_CHECK(c == 'B', "{}: bad binary marker (\\0 followed by {}, not 'B')", ctx.Where(),
             DescribeByte(c));
  return true;
}

// A binary token such as "FM": printable characters up to a space.
std::string ReadBinaryToken(InputFile& in, const Context& ctx) {
  std::string token;
  while (true) {
    int c = in.Get();
    if (c == ' ' && !token.empty()) return token;
    MAVG_CHECK(c != InputFile::kEof, "{}: truncated object header (end of file in '{}')",
               ctx.Where(), token);
    MAVG_CHECK(c > 0x20 && c < 0x7f && token.size() < kMaxTokenBytes,
               "{}: bad object header: expected a type token such as FM, found {} after '{}'",
               ctx.Where(), DescribeByte(c), token);
    token.push_back(static_cast<char>(c));
  }
}

// Kaldi's binary int32: the size byte 4, then 4 little-endian bytes.
int32_t ReadBinaryInt32(InputFile& in, const Context& ctx, const char* what) {
  int size = in.Get();
  MAVG_CHECK(size != InputFile::kEof, "{}: truncated object (end of file before the {})",
             ctx.Where(), what);
  MAVG_CHECK(size != 0xfc, "{}: the {} is big-endian (size byte -4); not supported", ctx.Where(),
             what);
  MAVG_CHECK(size == 4,
             "{}: bad object header: expected the {} as an int32 (size byte 4), found {}",
             ctx.Where(), what, DescribeByte(size));
  int32_t value;
  MAVG_CHECK(in.Read(&value, 4) == 4, "{}: truncated object (end of file in the {})", ctx.Where(),
             what);
  return value;
}

// A binary matrix's header, after the binary marker: its type token and size (for compressed
// matrices the whole global header), checked. What both a full read and a size-only read use.
struct BinaryMatrixHeader {
  bool is_double = false;
  bool compressed = false;
  CompressedHeader compressed_header;  // when compressed
  int64_t rows = 0, cols = 0;
};

BinaryMatrixHeader ReadBinaryMatrixHeader(InputFile& in, const Context& ctx) {
  const std::string token = ReadBinaryToken(in, ctx);
  BinaryMatrixHeader h;
  CompressedFormat format;
  if (token == "FM" || token == "DM") {
    h.is_double = token == "DM";
    h.rows = ReadBinaryInt32(in, ctx, "number of rows");
    h.cols = ReadBinaryInt32(in, ctx, "number of columns");
    MAVG_CHECK(h.rows >= 0 && h.cols >= 0, "{}: bad matrix header: negative size {} x {}",
               ctx.Where(), h.rows, h.cols);
  } else if (CompressedFormatFromToken(token, &format)) {
    unsigned char header_bytes[kCompressedHeaderBytes];
    MAVG_CHECK(in.Read(header_bytes, sizeof(header_bytes)) == sizeof(header_bytes),
               "{}: truncated compressed-matrix header", ctx.Where());
    h.compressed = true;
    h.compressed_header = ParseCompressedHeader(format, header_bytes);
    const std::string problem = CheckCompressedHeader(h.compressed_header);
    MAVG_CHECK(problem.empty(), "{}: {}", ctx.Where(), problem);
    h.rows = h.compressed_header.num_cols == 0 ? 0 : h.compressed_header.num_rows;
    h.cols = h.compressed_header.num_cols;
  } else {
    MAVG_FAIL("{}: unknown object type '{}' (expected a matrix: FM, DM, CM, CM2 or CM3)",
              ctx.Where(), token);
  }
  return h;
}

void ReadBinaryFloatMatrix(InputFile& in, const Context& ctx, const BinaryMatrixHeader& h,
                           HostMatrix* out) {
  const bool is_double = h.is_double;
  const int64_t rows = h.rows, cols = h.cols;
  const int64_t count = rows * cols;
  const int64_t elem_bytes = is_double ? 8 : 4;
  const char* elem_name = is_double ? "doubles" : "floats";
  MAVG_CHECK(count <= in.Remaining() / elem_bytes,
             "{}: truncated matrix (expected {} x {} = {} {}, got {})", ctx.Where(), rows, cols,
             count, elem_name, in.Remaining() / elem_bytes);
  out->rows = rows;
  out->cols = cols;
  out->data.resize(static_cast<size_t>(count));
  if (!is_double) {
    const size_t bytes = static_cast<size_t>(count) * 4;
    const size_t got = in.Read(out->data.data(), bytes);
    MAVG_CHECK(got == bytes, "{}: truncated matrix (expected {} floats, got {})", ctx.Where(),
               count, got / 4);
    return;
  }
  std::vector<double> chunk(static_cast<size_t>(std::min(count, kChunkElements)));
  for (int64_t done = 0; done < count;) {
    const int64_t n = std::min(count - done, kChunkElements);
    const size_t got = in.Read(chunk.data(), static_cast<size_t>(n) * 8);
    MAVG_CHECK(got == static_cast<size_t>(n) * 8,
               "{}: truncated matrix (expected {} doubles, got {})", ctx.Where(), count,
               done + static_cast<int64_t>(got / 8));
    std::copy(chunk.begin(), chunk.begin() + n, out->data.begin() + done);
    done += n;
  }
}

void ReadCompressedMatrix(InputFile& in, const Context& ctx, const BinaryMatrixHeader& h,
                          HostMatrix* out) {
  const CompressedHeader& header = h.compressed_header;
  const int64_t body_bytes = CompressedBodySize(header);
  MAVG_CHECK(body_bytes <= in.Remaining(),
             "{}: truncated compressed matrix ({} x {} needs {} bytes, got {})", ctx.Where(),
             header.num_rows, header.num_cols, body_bytes, in.Remaining());
  std::vector<unsigned char> body(static_cast<size_t>(body_bytes));
  MAVG_CHECK(in.Read(body.data(), body.size()) == body.size(), "{}: truncated compressed matrix",
             ctx.Where());
  if (header.num_cols == 0) {
    out->rows = out->cols = 0;
    out->data.clear();
    return;
  }
  out->rows = header.num_rows;
  out->cols = header.num_cols;
  out->data.resize(static_cast<size_t>(out->rows * out->cols));
  DecodeCompressedMatrix(header, body.data(), out->data.data());
}

// One matrix object (binary or text) at the current position.
void ReadMatrixObject(InputFile& in, const Context& ctx, HostMatrix* out) {
  if (!ReadBinaryMarker(in, ctx)) {
    ReadTextMatrix(in, ctx.Where(), out);
    return;
  }
  const BinaryMatrixHeader header = ReadBinaryMatrixHeader(in, ctx);
  if (header.compressed) {
    ReadCompressedMatrix(in, ctx, header, out);
  } else {
    ReadBinaryFloatMatrix(in, ctx, header, out);
  }
}

// One int32 vector object as Kaldi's Int32VectorWriter writes it.
void ReadInt32VectorObject(InputFile& in, const Context& ctx, std::vector<int32_t>* out) {
  if (!ReadBinaryMarker(in, ctx)) {
    ReadTextInt32Vector(in, ctx.Where(), out);
    return;
  }
  const int32_t count = ReadBinaryInt32(in, ctx, "int32 vector length");
  MAVG_CHECK(count >= 0, "{}: bad int32 vector: negative length {}", ctx.Where(), count);
  MAVG_CHECK(count <= in.Remaining() / 5, "{}: truncated int32 vector (expected {} values, got {})",
             ctx.Where(), count, in.Remaining() / 5);
  out->resize(static_cast<size_t>(count));
  std::vector<unsigned char> chunk(static_cast<size_t>(std::min<int64_t>(count, kChunkElements)) *
                                   5);
  for (int64_t done = 0; done < count;) {
    const int64_t n = std::min<int64_t>(count - done, kChunkElements);
    const size_t got = in.Read(chunk.data(), static_cast<size_t>(n) * 5);
    MAVG_CHECK(got == static_cast<size_t>(n) * 5,
               "{}: truncated int32 vector (expected {} values, got {})", ctx.Where(), count,
               done + static_cast<int64_t>(got / 5));
    for (int64_t i = 0; i < n; ++i) {
      const unsigned char* p = chunk.data() + 5 * i;
      MAVG_CHECK(p[0] == 4, "{}: bad int32 vector: value {} has size byte {} (expected 4)",
                 ctx.Where(), done + i, p[0]);
      std::memcpy(&(*out)[static_cast<size_t>(done + i)], p + 1, 4);
    }
    done += n;
  }
}

void CheckKey(const std::string& key, const std::string& path) {
  bool ok = !key.empty() && std::none_of(key.begin(), key.end(), [](char ch) {
    auto c = static_cast<unsigned char>(ch);
    return c <= 0x20 || c == 0x7f;
  });
  MAVG_CHECK(ok,
             "{}: invalid key '{}' (keys are non-empty, without whitespace or control "
             "characters)",
             path, key);
}

void AppendInt32(std::string* out, int64_t value) {
  const int32_t v = static_cast<int32_t>(value);
  out->push_back('\4');
  out->append(reinterpret_cast<const char*>(&v), 4);
}

// "a:b" / ":" / "" into an inclusive range; end -1 means "to the end".
bool ParseRange(std::string_view text, int64_t* begin, int64_t* end) {
  *begin = 0;
  *end = -1;
  if (text.empty() || text == ":") return true;
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return false;
  auto parse = [](std::string_view s, int64_t* v) {
    if (s.empty()) return false;
    int32_t x;
    if (!ParseInt32(s, &x) || x < 0) return false;
    *v = x;
    return true;
  };
  return parse(text.substr(0, colon), begin) && parse(text.substr(colon + 1), end) &&
         *begin <= *end;
}

void ApplyRange(const Rxspec& spec, const std::string& key, HostMatrix* m) {
  if (spec.row_begin == 0 && spec.row_end == -1 && spec.col_begin == 0 && spec.col_end == -1) {
    return;
  }
  const int64_t row_end = spec.row_end < 0 ? m->rows - 1 : spec.row_end;
  const int64_t col_end = spec.col_end < 0 ? m->cols - 1 : spec.col_end;
  MAVG_CHECK(row_end < m->rows && col_end < m->cols && spec.row_begin <= row_end &&
                 spec.col_begin <= col_end,
             "{}: utterance '{}': range [{}:{},{}:{}] is outside the {} x {} matrix", spec.path,
             key, spec.row_begin, row_end, spec.col_begin, col_end, m->rows, m->cols);
  HostMatrix sub;
  sub.rows = row_end - spec.row_begin + 1;
  sub.cols = col_end - spec.col_begin + 1;
  sub.data.resize(static_cast<size_t>(sub.rows * sub.cols));
  for (int64_t r = 0; r < sub.rows; ++r) {
    const float* src = m->Row(spec.row_begin + r) + spec.col_begin;
    std::copy(src, src + sub.cols, sub.Row(r));
  }
  *m = std::move(sub);
}

}  // namespace

// ---- Readers -------------------------------------------------------------------------------

MatrixArchiveReader::MatrixArchiveReader(const std::string& path, size_t buffer_bytes)
    : file_(std::make_unique<InputFile>(
          path, buffer_bytes > 0 ? buffer_bytes : InputFile::kDefaultBufferBytes)) {}
MatrixArchiveReader::~MatrixArchiveReader() = default;
MatrixArchiveReader::MatrixArchiveReader(MatrixArchiveReader&&) noexcept = default;
MatrixArchiveReader& MatrixArchiveReader::operator=(MatrixArchiveReader&&) noexcept = default;

const std::string& MatrixArchiveReader::Path() const { return file_->Path(); }

bool MatrixArchiveReader::Next() {
  if (!ReadKey(*file_, &key_)) return false;
  offset_ = file_->Tell();
  ReadMatrixObject(*file_, Context{file_->Path(), key_, offset_}, &value_);
  return true;
}

bool MatrixArchiveReader::NextShape(MatrixShape* shape) {
  if (!ReadKey(*file_, &key_)) return false;
  offset_ = file_->Tell();
  const Context ctx{file_->Path(), key_, offset_};
  value_ = HostMatrix{};
  if (!ReadBinaryMarker(*file_, ctx)) {
    ReadTextMatrix(*file_, ctx.Where(), &value_);
    *shape = MatrixShape{value_.rows, value_.cols};
    value_ = HostMatrix{};
    return true;
  }
  const BinaryMatrixHeader h = ReadBinaryMatrixHeader(*file_, ctx);
  // rows and cols are int32 values: the product fits in 64 bits.
  const int64_t bytes = h.compressed ? CompressedBodySize(h.compressed_header)
                                     : h.rows * h.cols * (h.is_double ? 8 : 4);
  MAVG_CHECK(bytes <= file_->Remaining(), "{}: truncated matrix ({} x {} needs {} bytes, got {})",
             ctx.Where(), h.rows, h.cols, bytes, file_->Remaining());
  file_->Seek(file_->Tell() + bytes);
  *shape = MatrixShape{h.rows, h.cols};
  return true;
}

Int32VectorArchiveReader::Int32VectorArchiveReader(const std::string& path)
    : file_(std::make_unique<InputFile>(path)) {}
Int32VectorArchiveReader::~Int32VectorArchiveReader() = default;
Int32VectorArchiveReader::Int32VectorArchiveReader(Int32VectorArchiveReader&&) noexcept = default;
Int32VectorArchiveReader& Int32VectorArchiveReader::operator=(Int32VectorArchiveReader&&) noexcept =
    default;

const std::string& Int32VectorArchiveReader::Path() const { return file_->Path(); }

bool Int32VectorArchiveReader::Next() {
  if (!ReadKey(*file_, &key_)) return false;
  offset_ = file_->Tell();
  ReadInt32VectorObject(*file_, Context{file_->Path(), key_, offset_}, &value_);
  return true;
}

// ---- Rxspecifiers --------------------------------------------------------------------------

Rxspec ParseRxspec(const std::string& rxspec) {
  std::string_view v = rxspec;
  while (!v.empty() && IsKaldiSpace(static_cast<unsigned char>(v.front()))) v.remove_prefix(1);
  while (!v.empty() && IsKaldiSpace(static_cast<unsigned char>(v.back()))) v.remove_suffix(1);
  MAVG_CHECK(!v.empty(), "empty rxspecifier");
  MAVG_CHECK(v.back() != '|' && v != "-",
             "rxspecifier '{}': pipes and standard input are not supported (write the matrices "
             "to an archive first)",
             rxspec);
  Rxspec spec;
  if (v.back() == ']') {
    const size_t open = v.rfind('[');
    MAVG_CHECK(open != std::string_view::npos, "rxspecifier '{}': ']' without '['", rxspec);
    std::string_view range = v.substr(open + 1, v.size() - open - 2);
    const size_t comma = range.find(',');
    const bool ok = ParseRange(range.substr(0, comma), &spec.row_begin, &spec.row_end) &&
                    (comma == std::string_view::npos ||
                     ParseRange(range.substr(comma + 1), &spec.col_begin, &spec.col_end));
    MAVG_CHECK(ok, "rxspecifier '{}': bad range '[{}]' (expected [r1:r2] or [r1:r2,c1:c2])", rxspec,
               range);
    v = v.substr(0, open);
  }
  const size_t colon = v.rfind(':');
  if (colon != std::string_view::npos && colon + 1 < v.size() &&
      std::all_of(v.begin() + colon + 1, v.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    std::string_view digits = v.substr(colon + 1);
    MAVG_CHECK(digits.size() <= 18, "rxspecifier '{}': offset too large", rxspec);
    spec.offset = 0;
    for (char c : digits) spec.offset = spec.offset * 10 + (c - '0');
    spec.has_offset = true;
    v = v.substr(0, colon);
  }
  MAVG_CHECK(!v.empty(), "rxspecifier '{}': no file name", rxspec);
  spec.path = std::string(v);
  return spec;
}

std::string ResolveTablePath(const std::string& path, const std::string& dir) {
  std::error_code ec;
  if (dir.empty() || !std::filesystem::path(path).is_relative() ||
      std::filesystem::exists(path, ec)) {
    return path;
  }
  const std::string beside = (std::filesystem::path(dir) / path).string();
  return std::filesystem::exists(beside, ec) ? beside : path;
}

RxMatrixReader::RxMatrixReader() = default;
RxMatrixReader::~RxMatrixReader() = default;

HostMatrix RxMatrixReader::Read(const Rxspec& spec, const std::string& key) {
  if (file_ == nullptr || file_->Path() != spec.path) {
    file_.reset();
    file_ = std::make_unique<InputFile>(spec.path);
  }
  const int64_t offset = spec.has_offset ? spec.offset : 0;
  MAVG_CHECK(spec.has_offset || file_->Size() > 0, "{}: empty file", spec.path);
  MAVG_CHECK(offset < file_->Size(),
             "{}: utterance '{}': offset {} is beyond the end of the file ({} bytes)", spec.path,
             key, offset, file_->Size());
  file_->Seek(offset);
  HostMatrix m;
  ReadMatrixObject(*file_, Context{file_->Path(), key, offset}, &m);
  ApplyRange(spec, key, &m);
  return m;
}

std::vector<double> RxMatrixReader::ReadDouble(const Rxspec& spec, const std::string& key,
                                               int64_t* rows, int64_t* cols) {
  const bool whole =
      spec.row_begin == 0 && spec.row_end == -1 && spec.col_begin == 0 && spec.col_end == -1;
  if (whole) {
    if (file_ == nullptr || file_->Path() != spec.path) {
      file_.reset();
      file_ = std::make_unique<InputFile>(spec.path);
    }
    const int64_t offset = spec.has_offset ? spec.offset : 0;
    MAVG_CHECK(offset < file_->Size(),
               "{}: utterance '{}': offset {} is beyond the end of the file ({} bytes)", spec.path,
               key, offset, file_->Size());
    file_->Seek(offset);
    const Context ctx{file_->Path(), key, offset};
    if (ReadBinaryMarker(*file_, ctx)) {
      const BinaryMatrixHeader h = ReadBinaryMatrixHeader(*file_, ctx);
      if (h.is_double && !h.compressed) {
        const int64_t count = h.rows * h.cols;
        MAVG_CHECK(count <= file_->Remaining() / 8,
                   "{}: truncated matrix (expected {} x {} doubles)", ctx.Where(), h.rows, h.cols);
        std::vector<double> out(static_cast<size_t>(count));
        MAVG_CHECK(file_->Read(out.data(), out.size() * 8) == out.size() * 8,
                   "{}: truncated matrix", ctx.Where());
        *rows = h.rows, *cols = h.cols;
        return out;
      }
    }
  }
  const HostMatrix m = Read(spec, key);
  *rows = m.rows, *cols = m.cols;
  return std::vector<double>(m.data.begin(), m.data.end());
}

HostMatrix RxMatrixReader::Read(const std::string& rxspec, const std::string& key) {
  return Read(ParseRxspec(rxspec), key);
}

HostMatrix ReadMatrix(const std::string& rxspec) { return RxMatrixReader().Read(rxspec); }

RxInt32VectorReader::RxInt32VectorReader() = default;
RxInt32VectorReader::~RxInt32VectorReader() = default;

std::vector<int32_t> RxInt32VectorReader::Read(const Rxspec& spec, const std::string& key) {
  MAVG_CHECK(spec.row_begin == 0 && spec.row_end == -1 && spec.col_begin == 0 && spec.col_end == -1,
             "{}: utterance '{}': a range applies to matrices, not to int32 vectors", spec.path,
             key);
  if (file_ == nullptr || file_->Path() != spec.path) {
    file_.reset();
    file_ = std::make_unique<InputFile>(spec.path);
  }
  const int64_t offset = spec.has_offset ? spec.offset : 0;
  MAVG_CHECK(offset < file_->Size(),
             "{}: utterance '{}': offset {} is beyond the end of the file ({} bytes)", spec.path,
             key, offset, file_->Size());
  file_->Seek(offset);
  std::vector<int32_t> v;
  ReadInt32VectorObject(*file_, Context{file_->Path(), key, offset}, &v);
  return v;
}

MatrixShapeReader::MatrixShapeReader() = default;
MatrixShapeReader::~MatrixShapeReader() = default;

std::optional<MatrixShape> MatrixShapeReader::Shape(const Rxspec& spec) {
  try {
    if (file_ == nullptr || file_->Path() != spec.path) {
      file_.reset();
      // A refill reads only about a header: the offsets are scattered over a large archive.
      file_ = std::make_unique<InputFile>(spec.path, 64);
    }
    const int64_t offset = spec.has_offset ? spec.offset : 0;
    file_->Seek(offset);
    if (!ReadBinaryMarker(*file_, Context{spec.path, {}, offset})) return std::nullopt;  // text
    const BinaryMatrixHeader m = ReadBinaryMatrixHeader(*file_, Context{spec.path, {}, offset});
    const int64_t row_end = spec.row_end < 0 ? m.rows - 1 : std::min(spec.row_end, m.rows - 1);
    const int64_t col_end = spec.col_end < 0 ? m.cols - 1 : std::min(spec.col_end, m.cols - 1);
    return MatrixShape{std::max<int64_t>(0, row_end - spec.row_begin + 1),
                       std::max<int64_t>(0, col_end - spec.col_begin + 1)};
  } catch (const Error&) {
    return std::nullopt;  // the real read reports what is wrong
  }
}

// ---- Writers -------------------------------------------------------------------------------

MatrixArchiveWriter::MatrixArchiveWriter(const std::string& ark_path, const std::string& scp_path,
                                         const std::string& scp_ark_name)
    : ark_(std::make_unique<OutputFile>(ark_path)),
      scp_ark_name_(scp_ark_name.empty() ? ark_path : scp_ark_name) {
  if (!scp_path.empty()) scp_ = std::make_unique<OutputFile>(scp_path);
}
MatrixArchiveWriter::~MatrixArchiveWriter() = default;
MatrixArchiveWriter::MatrixArchiveWriter(MatrixArchiveWriter&&) noexcept = default;
MatrixArchiveWriter& MatrixArchiveWriter::operator=(MatrixArchiveWriter&&) noexcept = default;

void MatrixArchiveWriter::Write(const std::string& key, const HostMatrix& matrix) {
  MAVG_CHECK(static_cast<int64_t>(matrix.data.size()) == matrix.rows * matrix.cols,
             "{}: matrix '{}' has {} values for {} x {}", ark_->Path(), key, matrix.data.size(),
             matrix.rows, matrix.cols);
  Write(key, matrix.data.data(), matrix.rows, matrix.cols);
}

void MatrixArchiveWriter::WriteObject(const std::string& key, const char* token, const void* data,
                                      size_t element_bytes, int64_t rows, int64_t cols) {
  CheckKey(key, ark_->Path());
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  MAVG_CHECK(rows >= 0 && cols >= 0 && rows <= kMax && cols <= kMax,
             "{}: matrix '{}' has an unsupported size {} x {}", ark_->Path(), key, rows, cols);
  std::string header = key;
  header.push_back(' ');
  const int64_t offset = ark_->Tell() + static_cast<int64_t>(header.size());
  header.append("\0B", 2);
  header += token;
  header.push_back(' ');
  AppendInt32(&header, rows);
  AppendInt32(&header, cols);
  ark_->Write(header);
  ark_->Write(data, static_cast<size_t>(rows * cols) * element_bytes);
  if (scp_ != nullptr) scp_->Write(fmt::format("{} {}:{}\n", key, scp_ark_name_, offset));
}

void MatrixArchiveWriter::Write(const std::string& key, const float* data, int64_t rows,
                                int64_t cols) {
  WriteObject(key, "FM", data, sizeof(float), rows, cols);
}

void MatrixArchiveWriter::WriteDouble(const std::string& key, const double* data, int64_t rows,
                                      int64_t cols) {
  WriteObject(key, "DM", data, sizeof(double), rows, cols);
}

void MatrixArchiveWriter::Close() {
  ark_->Close();
  if (scp_ != nullptr) scp_->Close();
}

TextMatrixArchiveWriter::TextMatrixArchiveWriter(const std::string& path)
    : file_(std::make_unique<OutputFile>(path)) {}
TextMatrixArchiveWriter::~TextMatrixArchiveWriter() = default;
TextMatrixArchiveWriter::TextMatrixArchiveWriter(TextMatrixArchiveWriter&&) noexcept = default;
TextMatrixArchiveWriter& TextMatrixArchiveWriter::operator=(TextMatrixArchiveWriter&&) noexcept =
    default;

void TextMatrixArchiveWriter::Write(const std::string& key, const HostMatrix& matrix) {
  CheckKey(key, file_->Path());
  MAVG_CHECK(static_cast<int64_t>(matrix.data.size()) == matrix.rows * matrix.cols,
             "{}: matrix '{}' has {} values for {} x {}", file_->Path(), key, matrix.data.size(),
             matrix.rows, matrix.cols);
  std::string text = key + " ";
  AppendTextMatrix(matrix, &text);
  file_->Write(text);
}

void TextMatrixArchiveWriter::Close() { file_->Close(); }

Int32VectorArchiveWriter::Int32VectorArchiveWriter(const std::string& path, bool binary)
    : file_(std::make_unique<OutputFile>(path)), binary_(binary) {}
Int32VectorArchiveWriter::~Int32VectorArchiveWriter() = default;
Int32VectorArchiveWriter::Int32VectorArchiveWriter(Int32VectorArchiveWriter&&) noexcept = default;
Int32VectorArchiveWriter& Int32VectorArchiveWriter::operator=(Int32VectorArchiveWriter&&) noexcept =
    default;

void Int32VectorArchiveWriter::Write(const std::string& key, std::span<const int32_t> values) {
  CheckKey(key, file_->Path());
  MAVG_CHECK(values.size() <= static_cast<size_t>(std::numeric_limits<int32_t>::max()),
             "{}: vector '{}' is too long", file_->Path(), key);
  std::string out = key;
  out.push_back(' ');
  if (binary_) {
    out.reserve(out.size() + 7 + 5 * values.size());
    out.append("\0B", 2);
    AppendInt32(&out, static_cast<int64_t>(values.size()));
    for (int32_t v : values) AppendInt32(&out, v);
  } else {
    for (int32_t v : values) fmt::format_to(std::back_inserter(out), "{} ", v);
    out.push_back('\n');
  }
  file_->Write(out);
}

void Int32VectorArchiveWriter::Close() { file_->Close(); }

}  // namespace mavg::kaldi
