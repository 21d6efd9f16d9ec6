// Lang dirs: phones.txt, lexicon.txt, pdfs.txt and transitions.txt, read and validated together.
// The input is the four files in that order (fuzz_target.h: SplitFiles).
#include "engine/decode/lang.h"
#include "tests/fuzz/fuzz_target.h"

MAVG_FUZZ_TARGET(lang_dir) {
  const std::vector<std::string> files = mavg::fuzz::SplitFiles(data, size, 4);
  const char* names[] = {"phones.txt", "lexicon.txt", "pdfs.txt", "transitions.txt"};
  for (size_t i = 0; i < 4; ++i)
    mavg::fuzz::WriteWorkFile(std::string("lang/") + names[i], files[i]);
  mavg::fuzz::ExpectCleanFailure([&] { (void)mavg::LoadLang(mavg::fuzz::WorkDir() + "/lang"); });
}
