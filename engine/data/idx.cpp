#include "engine/data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "engine/core/error.h"

namespace mavg {
namespace {

constexpr int kMaxDims = 8;
// Far above any real data set; the data are read in chunks, so a lying header on a small file
// fails at the end of the file instead of allocating this much.
constexpr int64_t kMaxElements = int64_t{1} << 34;
constexpr int64_t kChunkBytes = int64_t{1} << 24;

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

// Reads up to n bytes; throws on a decompression error.
int64_t ReadSome(gzFile file, const std::string& path, void* dst, int64_t n) {
  int64_t done = 0;
  while (done < n) {
    const unsigned chunk = static_cast<unsigned>(std::min<int64_t>(n - done, 1 << 30));
    const int got = gzread(file, static_cast<char*>(dst) + done, chunk);
    if (got < 0) {
      int code = 0;
      const char* message = gzerror(file, &code);
      MAVG_FAIL("{}: corrupt file ({})", path, code == Z_ERRNO ? std::strerror(errno) : message);
    }
    if (got == 0) break;
    done += got;
  }
  return done;
}

}  // namespace

int64_t IdxArray::NumElements() const {
  int64_t n = 1;
  for (int d : dims) n *= d;
  return n;
}

IdxArray ReadIdx(const std::string& path) {
  errno = 0;
  GzFile file(gzopen(path.c_str(), "rb"));
  MAVG_CHECK(file != nullptr, "{}: cannot open ({})", path,
             errno != 0 ? std::strerror(errno) : "out of memory");
  gzbuffer(file.get(), 1 << 18);

  unsigned char magic[4];
  MAVG_CHECK(ReadSome(file.get(), path, magic, 4) == 4, "{}: truncated IDX header", path);
  MAVG_CHECK(magic[0] == 0 && magic[1] == 0,
             "{}: bad magic 0x{:02x}{:02x}{:02x}{:02x} (not an IDX file)", path, magic[0], magic[1],
             magic[2], magic[3]);
  MAVG_CHECK(magic[2] == 0x08,
             "{}: unsupported IDX element type 0x{:02x} (only unsigned bytes, 0x08, are supported)",
             path, magic[2]);
  const int ndims = magic[3];
  MAVG_CHECK(ndims >= 1 && ndims <= kMaxDims, "{}: bad IDX header: {} dimensions (1 to {})", path,
             ndims, kMaxDims);

  IdxArray array;
  int64_t count = 1;
  for (int i = 0; i < ndims; ++i) {
    unsigned char b[4];
    MAVG_CHECK(ReadSome(file.get(), path, b, 4) == 4, "{}: truncated IDX header", path);
    const uint32_t dim =
        (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
    MAVG_CHECK(dim <= 0x7fffffffu, "{}: bad IDX header: dimension {} is {}", path, i, dim);
    array.dims.push_back(static_cast<int>(dim));
    count = dim == 0 ? 0 : count * dim;
    MAVG_CHECK(count <= kMaxElements, "{}: bad IDX header: {} elements is absurd", path,
               fmt::join(array.dims, " x "));
  }

  array.data.reserve(static_cast<size_t>(std::min(count, kChunkBytes)));
  int64_t done = 0;
  while (done < count) {
    const int64_t n = std::min(count - done, kChunkBytes);
    array.data.resize(static_cast<size_t>(done + n));
    const int64_t got = ReadSome(file.get(), path, array.data.data() + done, n);
    done += got;
    MAVG_CHECK(got == n, "{}: truncated (dims {} need {} bytes of data, got {})", path,
               fmt::join(array.dims, " x "), count, done);
  }
  unsigned char extra;
  MAVG_CHECK(ReadSome(file.get(), path, &extra, 1) == 0,
             "{}: trailing bytes after the {} elements of a {} array", path, count,
             fmt::join(array.dims, " x "));
  return array;
}

}  // namespace mavg
