// DataDirIndex and LoadDataDir (declared in dataset.h): a Kaldi data dir into a Dataset, in two
// steps -- the usable utterances and their sizes, then the features of the ones asked for.

#include <spdlog/spdlog.h>

#include <cmath>
#include <filesystem>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "engine/core/error.h"
#include "engine/data/dataset.h"
#include "engine/data/feature_pipeline.h"
#include "engine/data/kaldi_io.h"
#include "engine/data/kaldi_table.h"

namespace mavg {

namespace fs = std::filesystem;
using kaldi::HostMatrix;

namespace {

// Pdf ids a network may have (Kaldi systems have thousands); a larger label is an error
// wherever it is found, before any per-label array is sized by it.
constexpr int64_t kMaxLabels = int64_t{1} << 24;

void CheckFinite(const HostMatrix& m, const std::string& file, const std::string& key) {
  for (size_t i = 0; i < m.data.size(); ++i) {
    if (!std::isfinite(m.data[i])) {
      MAVG_FAIL("{}: utterance '{}': non-finite feature value {} at frame {}, dimension {}", file,
                key, m.data[i], static_cast<int64_t>(i) / m.cols, static_cast<int64_t>(i) % m.cols);
    }
  }
}

}  // namespace

struct DataDirIndex::Sources {
  std::string feats_file;                         // feats.scp or feats.ark, for messages
  std::vector<std::string> keys;                  // [entries] every feature entry, in file order
  std::vector<kaldi::Rxspec> where;               // [entries] where its matrix is
  std::vector<std::string> file;                  // [entries] the archive, for messages
  std::shared_ptr<const kaldi::TableSource> ali;  // the alignments; null without labels
  std::string ali_name;                           // the alignments, for messages
};

DataDirIndex::~DataDirIndex() = default;
DataDirIndex::DataDirIndex(DataDirIndex&&) noexcept = default;
DataDirIndex& DataDirIndex::operator=(DataDirIndex&&) noexcept = default;

int64_t DataDirIndex::NumFrames() const {
  return std::accumulate(frames_.begin(), frames_.end(), int64_t{0});
}

DataDirIndex::DataDirIndex(const std::string& dir, const LoadOptions& options)
    : dir_(dir), options_(options), sources_(std::make_unique<Sources>()) {
  std::error_code ec;
  MAVG_CHECK(fs::exists(dir, ec), "{}: data directory not found", dir);
  MAVG_CHECK(fs::is_directory(dir, ec), "{}: not a directory (expected a Kaldi data dir)", dir);
  const std::string scp = (fs::path(dir) / "feats.scp").string();
  const std::string ark = (fs::path(dir) / "feats.ark").string();
  const bool has_scp = fs::exists(scp, ec);
  MAVG_CHECK(has_scp || fs::exists(ark, ec), "{}: no features (neither feats.scp nor feats.ark)",
             dir);
  Sources& src = *sources_;
  src.feats_file = has_scp ? scp : ark;

  // The alignments: the setting's rspecifier, else the dir's ali.ark.
  if (!options.ignore_labels) {
    const std::string ali_ark = (fs::path(dir) / "ali.ark").string();
    if (options.alignment_table != nullptr) {
      src.ali = options.alignment_table;
      src.ali_name = options.alignments_setting;
    } else if (!options.alignments.empty()) {
      src.ali =
          std::make_shared<kaldi::TableSource>(options.alignments, options.alignments_setting);
      src.ali_name = options.alignments_setting;
    } else if (fs::exists(ali_ark, ec)) {
      src.ali = kaldi::TableSource::ArchiveFile(ali_ark);
      src.ali_name = ali_ark;
    } else {
      MAVG_CHECK(!options.require_labels,
                 "{}: not found (labels are required; the data dir has no alignments)", ali_ark);
    }
  }
  labelled_ = src.ali != nullptr;

  // 1. Every feature entry and its size, from the headers (a text matrix is parsed).
  std::unordered_map<std::string, int> entry_of;
  std::vector<kaldi::MatrixShape> shapes;
  auto add_entry = [&](const std::string& key, kaldi::Rxspec where, kaldi::MatrixShape shape) {
    MAVG_CHECK(entry_of.emplace(key, static_cast<int>(src.keys.size())).second,
               "{}: utterance '{}' appears twice", src.feats_file, key);
    src.keys.push_back(key);
    src.file.push_back(where.path);
    src.where.push_back(std::move(where));
    shapes.push_back(shape);
  };
  if (has_scp) {
    kaldi::MatrixShapeReader shape_reader;
    kaldi::RxMatrixReader text_reader;
    for (const auto& [key, rxspec] : kaldi::ReadScp(scp)) {
      kaldi::Rxspec spec = kaldi::ParseRxspec(rxspec);
      const std::string given = spec.path;
      spec.path = kaldi::ResolveTablePath(spec.path, dir);
      MAVG_CHECK(fs::exists(spec.path, ec), "{}: utterance '{}': archive '{}' not found", scp, key,
                 given);
      std::optional<kaldi::MatrixShape> shape = shape_reader.Shape(spec);
      if (!shape) {  // text, or unreadable: a full read sizes it or says what is wrong
        const HostMatrix m = text_reader.Read(spec, key);
        shape = kaldi::MatrixShape{m.rows, m.cols};
      }
      add_entry(key, std::move(spec), *shape);
    }
  } else {
    kaldi::MatrixArchiveReader reader(ark, 4096);
    kaldi::MatrixShape shape;
    while (reader.NextShape(&shape)) {
      kaldi::Rxspec spec;
      spec.path = ark;
      spec.offset = reader.Offset();
      spec.has_offset = true;
      add_entry(reader.Key(), std::move(spec), shape);
    }
  }

  // 2. The alignments' lengths (and their labels checked), for utterances with features.
  std::vector<int64_t> ali_len(src.keys.size(), -1);
  std::unordered_set<std::string> aligned;
  if (labelled_) {
    kaldi::ForEachInt32Vector(
        *src.ali, [&](const std::string& key, std::vector<int32_t>& v, const std::string& where) {
          MAVG_CHECK(aligned.insert(key).second, "{}: appears twice", where);
          for (size_t t = 0; t < v.size(); ++t) {
            MAVG_CHECK(v[t] >= 0, "{}: negative label {} at frame {}", where, v[t], t);
            MAVG_CHECK(v[t] < kMaxLabels,
                       "{}: label {} at frame {} is not a pdf id (at most 2^24 outputs are "
                       "supported)",
                       where, v[t], t);
          }
          auto it = entry_of.find(key);
          if (it != entry_of.end()) ali_len[it->second] = static_cast<int64_t>(v.size());
        });
  }

  // 3. The usable utterances, in file order.
  DirPipeline pipeline(dir, options.pipeline);
  int64_t unaligned = 0, empty = 0, no_stats = 0;
  std::unordered_set<int> usable;
  for (size_t e = 0; e < src.keys.size(); ++e) {
    const std::string& key = src.keys[e];
    const kaldi::MatrixShape& shape = shapes[e];
    if (shape.rows == 0) {
      ++empty;
      continue;
    }
    if (labelled_ && ali_len[e] < 0) {
      ++unaligned;
      continue;
    }
    if (!pipeline.Covers(key)) {
      ++no_stats;
      continue;
    }
    MAVG_CHECK(shape.cols > 0, "{}: utterance '{}': features have {} frames of dimension 0",
               src.file[e], key, shape.rows);
    if (feat_dim_ == 0) feat_dim_ = static_cast<int>(shape.cols);
    MAVG_CHECK(shape.cols == feat_dim_,
               "{}: utterance '{}': feature dimension {} differs from {} of the utterances before",
               src.file[e], key, shape.cols, feat_dim_);
    MAVG_CHECK(!labelled_ || ali_len[e] == shape.rows,
               "{}: utterance '{}': alignment has {} frames but the features ({}) have {}",
               src.ali_name, key, ali_len[e], src.file[e], shape.rows);
    utt_ids_.push_back(key);
    frames_.push_back(shape.rows);
    entry_.push_back(static_cast<int>(e));
    usable.insert(static_cast<int>(e));
    if (options.max_utts > 0 && NumUtts() >= options.max_utts) break;
  }
  if (unaligned > 0) {
    spdlog::warn("[data] {}: {} utterances without alignment skipped", dir, unaligned);
  }
  if (empty > 0) spdlog::warn("[data] {}: {} empty utterances (0 frames) skipped", dir, empty);
  if (no_stats > 0) {
    spdlog::warn(
        "[data] {}: {} utterances without speaker CMVN statistics skipped (as Kaldi's "
        "apply-cmvn does)",
        dir, no_stats);
  }
  MAVG_CHECK(NumUtts() > 0, "{}: no usable utterances ({} without alignment, {} empty{})", dir,
             unaligned, empty,
             no_stats > 0 ? fmt::format(", {} without speaker CMVN statistics", no_stats) : "");

  // 4. Frames per label over the usable utterances.
  if (labelled_) {
    int32_t largest = -1;
    kaldi::ForEachInt32Vector(
        *src.ali, [&](const std::string& key, std::vector<int32_t>& v, const std::string& where) {
          auto it = entry_of.find(key);
          if (it == entry_of.end() || !usable.count(it->second)) return;
          for (size_t t = 0; t < v.size(); ++t) {
            if (v[t] > largest) {
              largest = v[t];
              largest_where_ = fmt::format("{} frame {}", where, t);
            }
            if (static_cast<size_t>(v[t]) >= label_counts_.size()) label_counts_.resize(v[t] + 1);
            label_counts_[v[t]] += 1.0;
          }
        });
  }
}

Dataset DataDirIndex::Load(const std::vector<int>& which) const {
  const Sources& src = *sources_;
  std::unordered_map<std::string, std::vector<int32_t>> labels;
  if (labelled_) {
    std::unordered_set<std::string> wanted;
    for (int i : which) {
      MAVG_CHECK(i >= 0 && i < NumUtts(), "{}: utterance {} of {} asked for", dir_, i, NumUtts());
      wanted.insert(utt_ids_[i]);
    }
    kaldi::ForEachInt32Vector(
        *src.ali, [&](const std::string& key, std::vector<int32_t>& v, const std::string&) {
          if (wanted.count(key)) labels.emplace(key, std::move(v));
        });
  }
  Dataset ds;
  ds.source = dir_;
  ds.dim = Dim();
  int64_t frames = 0;
  for (int i : which) {
    MAVG_CHECK(i >= 0 && i < NumUtts(), "{}: utterance {} of {} asked for", dir_, i, NumUtts());
    frames += frames_[i];
  }
  ds.feats.reserve(static_cast<size_t>(frames * ds.dim));
  if (labelled_) ds.labels.reserve(static_cast<size_t>(frames));
  ds.utt_ids.reserve(which.size());
  ds.offsets.reserve(which.size() + 1);
  DirPipeline pipeline(dir_, options_.pipeline);
  kaldi::RxMatrixReader reader;
  int previous = -1;
  for (int i : which) {
    MAVG_CHECK(i > previous, "{}: utterances must be asked for in ascending order", dir_);
    previous = i;
    const int e = entry_[i];
    const std::string& key = utt_ids_[i];
    HostMatrix m = reader.Read(src.where[e], key);
    MAVG_CHECK(m.rows == frames_[i] && m.cols == feat_dim_,
               "{}: utterance '{}': {} x {} features, {} x {} when the data dir was indexed (did "
               "it change?)",
               src.file[e], key, m.rows, m.cols, frames_[i], feat_dim_);
    CheckFinite(m, src.file[e], key);
    if (!options_.pipeline.IsIdentity()) {
      MAVG_CHECK(pipeline.Apply(key, m), "{}: utterance '{}': speaker CMVN statistics vanished",
                 dir_, key);
      CheckFinite(m, src.file[e] + " (after speaker CMVN and deltas)", key);
    }
    const int32_t* l = nullptr;
    if (labelled_) {
      auto it = labels.find(key);
      MAVG_CHECK(it != labels.end() && static_cast<int64_t>(it->second.size()) == m.rows,
                 "{}: utterance '{}': the alignment changed since the data dir was indexed",
                 src.ali_name, key);
      l = it->second.data();
    }
    ds.Append(key, m.data.data(), m.rows, l);
  }
  return ds;
}

Dataset DataDirIndex::LoadAll() const {
  std::vector<int> all(NumUtts());
  std::iota(all.begin(), all.end(), 0);
  Dataset ds = Load(all);
  spdlog::debug("[data] {}: {} utterances, {} frames of dimension {}", dir_, ds.NumUtts(),
                ds.NumFrames(), ds.dim);
  return ds;
}

Dataset LoadDataDir(const std::string& dir, const LoadOptions& options) {
  return DataDirIndex(dir, options).LoadAll();
}

}  // namespace mavg
