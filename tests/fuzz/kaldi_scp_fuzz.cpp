// scp files and rxspecifiers (`key path:offset[r1:r2,c1:c2]`): the scp is parsed, and every
// entry is read through RxMatrixReader from the real Kaldi archives (feats.ark,
// feats_compressed.ark, feats_ascii.ark: any path names one of them by its file name), so
// offsets and ranges meet real data.
#include <filesystem>

#include "engine/data/kaldi_io.h"
#include "tests/fuzz/fuzz_target.h"

#ifndef MAVG_TEST_FIXTURES
#error "MAVG_TEST_FIXTURES (tests/fixtures) must be defined"
#endif

MAVG_FUZZ_TARGET(kaldi_scp) {
  const std::string scp =
      mavg::fuzz::WriteWorkFile("feats.scp", {reinterpret_cast<const char*>(data), size});
  mavg::fuzz::ExpectCleanFailure([&] {
    const auto entries = mavg::kaldi::ReadScp(scp);
    mavg::kaldi::RxMatrixReader reader;
    int read = 0;
    for (const auto& [key, rx] : entries) {
      mavg::fuzz::ExpectCleanFailure([&, &key = key, &rx = rx] {
        mavg::kaldi::Rxspec spec = mavg::kaldi::ParseRxspec(rx);
        const std::string name = std::filesystem::path(spec.path).filename().string();
        if (name != "feats.ark" && name != "feats_compressed.ark" && name != "feats_ascii.ark") {
          return;  // never a file outside the fixtures
        }
        if (++read > 16) return;
        spec.path = std::string(MAVG_TEST_FIXTURES) + "/kaldi/" + name;
        reader.Read(spec, key);
      });
    }
  });
}
