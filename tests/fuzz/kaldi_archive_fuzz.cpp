// Kaldi archives as mavg reads them: matrices (binary FM/DM, compressed CM/CM2/CM3, text) and
// int32 vectors (binary, text), entry by entry to the end. The first byte chooses the reader.
#include "engine/data/kaldi_io.h"
#include "tests/fuzz/fuzz_target.h"

MAVG_FUZZ_TARGET(kaldi_archive) {
  if (size == 0) return;
  const bool vectors = data[0] & 1;
  const std::string path =
      mavg::fuzz::WriteWorkFile("in.ark", {reinterpret_cast<const char*>(data) + 1, size - 1});
  mavg::fuzz::ExpectCleanFailure([&] {
    if (vectors) {
      mavg::kaldi::Int32VectorArchiveReader reader(path);
      while (reader.Next()) {
      }
    } else {
      mavg::kaldi::MatrixArchiveReader reader(path);
      while (reader.Next()) {
      }
    }
  });
}
