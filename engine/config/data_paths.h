#pragma once
// The data a run config reads, as paths, checked before anything is made for a run (`mavg
// train` before its run directory, `sweep plan` and `sweep run` before any run starts):
//   data.train, data.dev, data.test   data dirs: the directory holds feats.scp or feats.ark
//   data.lang                         a directory
//   data.ali, data.dev_ali            the file, where the rspecifier is one plain file (PATH,
//                                     ark:PATH or scp:PATH); a glob, a pipe or a list is
//                                     checked when it is read
// Empty keys (data.test, data.lang, ...: not used) are left out. The rest of a data dir
// (ali.ark, cmvn.scp, the archives feats.scp names) is checked when it is read, with the
// utterance at fault.

#include <string>
#include <vector>

#include "engine/config/config.h"

namespace mavg {

struct DataPath {
  std::string key;   // the config key, e.g. "data.train"
  std::string path;  // the file or directory to look at (an rspecifier's file)
};

// The data paths `config` reads, in the order above.
std::vector<DataPath> DataPathsOf(const RunConfig& config);

// Why `path` cannot serve as `key`'s data ("not found", "not a directory", "not a data dir (no
// feats.scp or feats.ark)", ...), or "" when it can.
std::string DataPathProblem(const DataPath& path);

// Throws one line naming every data path of `config` that cannot be read, and why.
void CheckDataPaths(const RunConfig& config);

}  // namespace mavg
