// LoadDataDir (declared in dataset.h): a Kaldi data dir into a Dataset.

#include <spdlog/spdlog.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "engine/core/error.h"
#include "engine/data/dataset.h"
#include "engine/data/kaldi_io.h"

namespace mavg {
namespace {

namespace fs = std::filesystem;
using kaldi::HostMatrix;

// The utterances of feats.scp (through their rxspecifiers) or of feats.ark, in file order.
class FeatureSource {
 public:
  FeatureSource(const std::string& dir, const std::string& scp, const std::string& ark)
      : dir_(dir) {
    if (!scp.empty()) {
      scp_ = kaldi::ReadScp(scp);
      scp_path_ = scp;
    } else {
      ark_ = std::make_unique<kaldi::MatrixArchiveReader>(ark);
      file_ = ark;
    }
  }

  bool Next() {
    if (ark_ != nullptr) {
      if (!ark_->Next()) return false;
      key_ = ark_->Key();
      value_ = std::move(ark_->MutableValue());
      return true;
    }
    if (next_ == scp_.size()) return false;
    const auto& [key, rxspec] = scp_[next_++];
    key_ = key;
    kaldi::Rxspec spec = kaldi::ParseRxspec(rxspec);
    spec.path = Resolve(spec.path, key);
    file_ = spec.path;
    value_ = reader_.Read(spec, key_);
    return true;
  }

  const std::string& Key() const { return key_; }
  const HostMatrix& Value() const { return value_; }
  // The file the current utterance came from (the archive an scp entry points into).
  const std::string& File() const { return file_; }

  // The floats to reserve before reading, so that the feature buffer is allocated once. An scp
  // counts only the matrices it lists, from their headers (a subset of a large archive reserves
  // for the subset); text matrices are not counted (the buffer grows for them). A whole archive
  // is bounded by its size (exact for FM).
  int64_t EstimateFloats() {
    if (ark_ != nullptr) {
      std::error_code ec;
      const auto size = fs::file_size(ark_->Path(), ec);
      return ec ? 0 : static_cast<int64_t>(size / 4);
    }
    // Every binary value takes at least one byte on disk, so no matrix holds more floats than its
    // archive has bytes, nor the whole subset more than all its archives (hostile headers and
    // repeated offsets cannot make this overflow).
    kaldi::MatrixShapeReader shapes;
    std::unordered_map<std::string, int64_t> archive_bytes;
    int64_t all_bytes = 0, floats = 0;
    for (const auto& [key, rxspec] : scp_) {
      kaldi::Rxspec spec = kaldi::ParseRxspec(rxspec);
      spec.path = Resolve(spec.path, key);
      auto [it, fresh] = archive_bytes.emplace(spec.path, 0);
      if (fresh) {
        std::error_code ec;
        const auto size = fs::file_size(spec.path, ec);
        it->second = ec ? 0 : static_cast<int64_t>(size);
        all_bytes += it->second;
      }
      const auto shape = shapes.Shape(spec);
      if (!shape || (shape->cols > 0 && shape->rows > it->second / shape->cols)) continue;
      floats += shape->rows * shape->cols;
      if (floats >= all_bytes) return all_bytes;
    }
    return floats;
  }

 private:
  // Kaldi reads relative scp paths from the working directory; an scp written by hand next to
  // its archive ("feats.ark:123") also works, relative to the data dir.
  const std::string& Resolve(const std::string& path, const std::string& key) {
    auto it = resolved_.find(path);
    if (it != resolved_.end()) return it->second;
    std::string resolved = path;
    std::error_code ec;
    if (fs::path(path).is_relative() && !fs::exists(path, ec) &&
        fs::exists(fs::path(dir_) / path, ec)) {
      resolved = (fs::path(dir_) / path).string();
    }
    MAVG_CHECK(fs::exists(resolved, ec), "{}: utterance '{}': archive '{}' not found", scp_path_,
               key, path);
    return resolved_.emplace(path, std::move(resolved)).first->second;
  }

  std::string dir_;
  std::string scp_path_;
  std::vector<std::pair<std::string, std::string>> scp_;  // empty when reading an archive
  size_t next_ = 0;
  std::unique_ptr<kaldi::MatrixArchiveReader> ark_;  // null when reading an scp
  kaldi::RxMatrixReader reader_;
  std::unordered_map<std::string, std::string> resolved_;  // scp path -> path to open
  std::string key_;
  HostMatrix value_;
  std::string file_;
};

std::unordered_map<std::string, std::vector<int32_t>> ReadAlignments(const std::string& path) {
  std::unordered_map<std::string, std::vector<int32_t>> alignments;
  kaldi::Int32VectorArchiveReader reader(path);
  while (reader.Next()) {
    bool inserted = alignments.try_emplace(reader.Key(), std::move(reader.MutableValue())).second;
    MAVG_CHECK(inserted, "{}: utterance '{}' at byte {}: appears twice", path, reader.Key(),
               reader.Offset());
  }
  return alignments;
}

void CheckFinite(const HostMatrix& m, const std::string& file, const std::string& key) {
  for (size_t i = 0; i < m.data.size(); ++i) {
    if (!std::isfinite(m.data[i])) {
      MAVG_FAIL("{}: utterance '{}': non-finite feature value {} at frame {}, dimension {}", file,
                key, m.data[i], static_cast<int64_t>(i) / m.cols, static_cast<int64_t>(i) % m.cols);
    }
  }
}

}  // namespace

Dataset LoadDataDir(const std::string& dir, const LoadOptions& options) {
  std::error_code ec;
  MAVG_CHECK(fs::exists(dir, ec), "{}: data directory not found", dir);
  MAVG_CHECK(fs::is_directory(dir, ec), "{}: not a directory (expected a Kaldi data dir)", dir);
  const std::string scp = (fs::path(dir) / "feats.scp").string();
  const std::string ark = (fs::path(dir) / "feats.ark").string();
  const std::string ali = (fs::path(dir) / "ali.ark").string();
  const bool has_scp = fs::exists(scp, ec);
  MAVG_CHECK(has_scp || fs::exists(ark, ec), "{}: no features (neither feats.scp nor feats.ark)",
             dir);
  const bool has_ali = !options.ignore_labels && fs::exists(ali, ec);
  MAVG_CHECK(has_ali || !options.require_labels,
             "{}: not found (labels are required; the data dir has no alignments)", ali);

  std::unordered_map<std::string, std::vector<int32_t>> alignments;
  if (has_ali) alignments = ReadAlignments(ali);

  FeatureSource source(dir, has_scp ? scp : std::string(), has_scp ? std::string() : ark);
  Dataset ds;
  ds.source = dir;
  if (options.max_utts <= 0) ds.feats.reserve(static_cast<size_t>(source.EstimateFloats()));
  std::unordered_set<std::string> seen;
  int64_t unaligned = 0, empty = 0;
  while (source.Next()) {
    const std::string& key = source.Key();
    const HostMatrix& m = source.Value();
    MAVG_CHECK(seen.insert(key).second, "{}: utterance '{}' appears twice", has_scp ? scp : ark,
               key);
    if (m.rows == 0) {
      ++empty;
      continue;
    }
    const std::vector<int32_t>* labels = nullptr;
    if (has_ali) {
      auto it = alignments.find(key);
      if (it == alignments.end()) {
        ++unaligned;
        continue;
      }
      labels = &it->second;
    }
    MAVG_CHECK(m.cols > 0, "{}: utterance '{}': features have {} frames of dimension 0",
               source.File(), key, m.rows);
    if (ds.dim == 0) ds.dim = static_cast<int>(m.cols);
    MAVG_CHECK(m.cols == ds.dim,
               "{}: utterance '{}': feature dimension {} differs from {} of the utterances before",
               source.File(), key, m.cols, ds.dim);
    CheckFinite(m, source.File(), key);
    if (labels != nullptr) {
      MAVG_CHECK(static_cast<int64_t>(labels->size()) == m.rows,
                 "{}: utterance '{}': alignment has {} frames but the features ({}) have {}", ali,
                 key, labels->size(), source.File(), m.rows);
      for (size_t t = 0; t < labels->size(); ++t) {
        MAVG_CHECK((*labels)[t] >= 0, "{}: utterance '{}': negative label {} at frame {}", ali, key,
                   (*labels)[t], t);
      }
    }
    ds.Append(key, m.data.data(), m.rows, labels != nullptr ? labels->data() : nullptr);
    if (options.max_utts > 0 && ds.NumUtts() >= options.max_utts) break;
  }
  if (unaligned > 0) {
    spdlog::warn("[data] {}: {} utterances without alignment skipped", dir, unaligned);
  }
  if (empty > 0) spdlog::warn("[data] {}: {} empty utterances (0 frames) skipped", dir, empty);
  MAVG_CHECK(ds.NumUtts() > 0, "{}: no usable utterances ({} without alignment, {} empty)", dir,
             unaligned, empty);
  if (ds.feats.capacity() > ds.feats.size() + ds.feats.size() / 4) ds.feats.shrink_to_fit();
  spdlog::debug("[data] {}: {} utterances, {} frames of dimension {}", dir, ds.NumUtts(),
                ds.NumFrames(), ds.dim);
  return ds;
}

}  // namespace mavg
