// A data dir's speaker CMVN inputs, read as data.cmvn: speaker reads them: utt2spk, cmvn.scp
// and cmvn.ark (the stats, double matrices) in that order (fuzz_target.h: SplitFiles), beside
// Kaldi's own features (tests/fixtures/kaldi/feats.ark), loaded through the pipeline with and
// without variance normalisation and with deltas. Every path in the scp is replaced by the
// fuzzed cmvn.ark (only its offsets are fuzzed), so the target reads no other file.
#include <filesystem>
#include <sstream>

#include "engine/core/files.h"
#include "engine/data/dataset.h"
#include "tests/fuzz/fuzz_target.h"

#ifndef MAVG_TEST_FIXTURES
#error "MAVG_TEST_FIXTURES (tests/fixtures) must be defined"
#endif

MAVG_FUZZ_TARGET(speaker_cmvn) {
  const std::vector<std::string> files = mavg::fuzz::SplitFiles(data, size, 3);
  const std::string dir = mavg::fuzz::WorkDir() + "/cmvn-dir";
  static const bool copied = [&] {
    mavg::MakeDirs(dir);
    std::filesystem::copy_file(std::string(MAVG_TEST_FIXTURES) + "/kaldi/feats.ark",
                               dir + "/feats.ark",
                               std::filesystem::copy_options::overwrite_existing);
    return true;
  }();
  (void)copied;
  // cmvn.scp lines keep their key and offset; the file is always cmvn.ark.
  std::istringstream scp_in(files[1]);
  std::string scp, line;
  while (std::getline(scp_in, line)) {
    const size_t space = line.find(' ');
    const size_t colon = line.rfind(':');
    scp += line.substr(0, space == std::string::npos ? line.size() : space) + " cmvn.ark";
    if (colon != std::string::npos && space != std::string::npos && colon > space) {
      scp += line.substr(colon);
    }
    scp += "\n";
  }
  mavg::fuzz::WriteWorkFile("cmvn-dir/utt2spk", files[0]);
  mavg::fuzz::WriteWorkFile("cmvn-dir/cmvn.scp", scp);
  mavg::fuzz::WriteWorkFile("cmvn-dir/cmvn.ark", files[2]);
  for (int variant = 0; variant < 2; ++variant) {
    mavg::fuzz::ExpectCleanFailure([&] {
      mavg::LoadOptions o;
      o.require_labels = false;
      o.ignore_labels = true;
      o.pipeline.speaker_cmvn = true;
      o.pipeline.norm_vars = variant == 1;
      o.pipeline.delta_order = variant == 1 ? 2 : 0;
      (void)mavg::LoadDataDir(dir, o);
    });
  }
}
