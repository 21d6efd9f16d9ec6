#pragma once
// The Kaldi wspecifiers the CLI writes matrix archives to: PATH, ark:PATH, ark,t:PATH,
// ark,scp:ARK,SCP. Writes are atomic (a failure leaves no partial archive).

#include <string>
#include <vector>

#include "engine/data/kaldi_io.h"

namespace mavg::cli {

struct Wspecifier {
  std::string ark, scp;
  bool text = false;
};

// Throws naming `option` (e.g. "--out") on anything else, a pipe or standard output.
Wspecifier ParseWspecifier(const std::string& w, const std::string& option = "--out");

// Writes matrix i under keys[i].
void WriteMatrices(const Wspecifier& w, const std::vector<std::string>& keys,
                   const std::vector<kaldi::HostMatrix>& matrices);

}  // namespace mavg::cli
