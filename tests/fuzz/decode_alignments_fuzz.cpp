// A run's decode_test.txt (the sclite-style blocks of FormatAlignment), read back by
// `mavg report bootstrap`.
#include "engine/decode/score.h"
#include "tests/fuzz/fuzz_target.h"

MAVG_FUZZ_TARGET(decode_alignments) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  mavg::fuzz::ExpectCleanFailure([&] { (void)mavg::ParseAlignments(text, "decode_test.txt"); });
}
