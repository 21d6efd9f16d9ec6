#include "engine/cli/wspecifier.h"

#include "engine/core/error.h"
#include "engine/core/files.h"

namespace mavg::cli {

Wspecifier ParseWspecifier(const std::string& w, const std::string& option) {
  Wspecifier out;
  const size_t colon = w.find(':');
  if (colon == std::string::npos) {
    out.ark = w;
  } else {
    const std::string kind = w.substr(0, colon), rest = w.substr(colon + 1);
    if (kind == "ark" || kind == "ark,b") {
      out.ark = rest;
    } else if (kind == "ark,t") {
      out.ark = rest, out.text = true;
    } else if (kind == "ark,scp" || kind == "ark,scp,b") {
      const size_t comma = rest.find(',');
      MAVG_CHECK(comma != std::string::npos, "{} {}: ark,scp: needs ARK,SCP", option, w);
      out.ark = rest.substr(0, comma), out.scp = rest.substr(comma + 1);
    } else {
      MAVG_FAIL(
          "{} {}: not a wspecifier mavg writes (PATH, ark:PATH, ark,t:PATH, "
          "ark,scp:ARK,SCP)",
          option, w);
    }
  }
  MAVG_CHECK(!out.ark.empty() && out.ark != "-",
             "{} {}: give a file (writing to a pipe is not supported)", option, w);
  if (!out.scp.empty()) {
    MAVG_CHECK(out.scp != "-", "{} {}: give a file for the scp too", option, w);
    CheckDistinctOutputs({{option + " " + w + ": the archive", out.ark}, {"the scp", out.scp}});
  }
  return out;
}

void WriteMatrices(const Wspecifier& w, const std::vector<std::string>& keys,
                   const std::vector<kaldi::HostMatrix>& matrices) {
  MAVG_CHECK(keys.size() == matrices.size(), "{}: {} keys for {} matrices", w.ark, keys.size(),
             matrices.size());
  if (w.text) {
    kaldi::TextMatrixArchiveWriter writer(w.ark);
    for (size_t i = 0; i < keys.size(); ++i) writer.Write(keys[i], matrices[i]);
    writer.Close();
  } else {
    kaldi::MatrixArchiveWriter writer(w.ark, w.scp);
    for (size_t i = 0; i < keys.size(); ++i) writer.Write(keys[i], matrices[i]);
    writer.Close();
  }
}

}  // namespace mavg::cli
