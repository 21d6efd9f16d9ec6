#include "engine/data/data_identity.h"

#include <filesystem>
#include <set>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/data/kaldi_io.h"

namespace mavg {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kFullHashLimit = int64_t{256} << 20;
constexpr int64_t kEnd = int64_t{16} << 20;     // hashed at each end of a large file
constexpr int64_t kBlock = int64_t{256} << 10;  // and this much at each of kBlocks places
constexpr int kBlocks = 256;                    // evenly spaced in between (64 MiB in all)

// Contents only: a copy (new modification time, new place) keeps its fingerprint.
std::string FileFingerprint(const std::string& path) {
  std::error_code ec;
  const auto size = static_cast<int64_t>(fs::file_size(path, ec));
  MAVG_CHECK(!ec, "{}: cannot read its size: {}", path, ec.message());
  std::string s = fmt::format("{} {} ", fs::path(path).filename().string(), size);
  if (size <= kFullHashLimit) return s + Sha256FileHex(path);
  s += Sha256FileHex(path, 0, kEnd) + " " + Sha256FileHex(path, size - kEnd, kEnd);
  const int64_t span = size - 2 * kEnd - kBlock;  // > 0: size > 256 MiB
  for (int i = 0; i < kBlocks; ++i) {
    s += " " + Sha256FileHex(path, kEnd + span * i / (kBlocks - 1), kBlock).substr(0, 16);
  }
  return s;
}

}  // namespace

std::string DataDirFingerprint(const std::string& dir) {
  const std::string scp = dir + "/feats.scp";
  const std::string ark = dir + "/feats.ark";
  std::string text;
  if (PathExists(scp)) {
    text = "feats.scp " + Sha256FileHex(scp) + "\n";
    std::set<std::string> archives;  // sorted: the fingerprint does not depend on scp order
    for (const auto& [key, rxspec] : kaldi::ReadScp(scp)) {
      // As the data loader: relative to the working directory, else to the data dir.
      archives.insert(kaldi::ResolveTablePath(kaldi::ParseRxspec(rxspec).path, dir));
    }
    for (const std::string& path : archives) text += FileFingerprint(path) + "\n";
  } else {
    MAVG_CHECK(PathExists(ark), "{}: no feats.scp or feats.ark", dir);
    text = FileFingerprint(ark) + "\n";
  }
  // Utterances without an alignment are left out of training: the alignments decide which
  // frames (and so which CMVN statistics) a run sees.
  const std::string ali = dir + "/ali.ark";
  if (PathExists(ali)) text += FileFingerprint(ali) + "\n";
  return Sha256Hex(text);
}

std::string SpeakerCmvnFingerprint(const std::string& dir) {
  const std::string scp = dir + "/cmvn.scp";
  MAVG_CHECK(PathExists(scp), "{}: not found (data.cmvn speaker)", scp);
  std::string text = "cmvn.scp " + Sha256FileHex(scp) + "\n";
  std::set<std::string> archives;
  for (const auto& [speaker, rxspec] : kaldi::ReadScp(scp)) {
    archives.insert(kaldi::ResolveTablePath(kaldi::ParseRxspec(rxspec).path, dir));
  }
  for (const std::string& path : archives) text += FileFingerprint(path) + "\n";
  const std::string utt2spk = dir + "/utt2spk";
  if (PathExists(utt2spk)) text += "utt2spk " + Sha256FileHex(utt2spk) + "\n";
  return Sha256Hex(text);
}

}  // namespace mavg
