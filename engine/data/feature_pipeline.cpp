#include "engine/data/feature_pipeline.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/data/dataset.h"

namespace mavg {
namespace {

namespace fs = std::filesystem;

// Kaldi's floor on a speaker's variance before 1/sqrt (transform/cmvn.cc).
constexpr double kVarianceFloor = 1e-20;

}  // namespace

SpeakerCmvn::SpeakerCmvn(const std::string& dir, bool norm_vars)
    : scp_path_((fs::path(dir) / "cmvn.scp").string()),
      utt2spk_path_((fs::path(dir) / "utt2spk").string()),
      norm_vars_(norm_vars) {
  MAVG_CHECK(PathExists(scp_path_),
             "{}: not found (data.cmvn speaker needs the speakers' CMVN statistics: "
             "steps/compute_cmvn_stats.sh)",
             scp_path_);
  for (auto& [speaker, rx] : kaldi::ReadScp(scp_path_)) {
    kaldi::Rxspec spec = kaldi::ParseRxspec(rx);
    spec.path = kaldi::ResolveTablePath(spec.path, dir);
    MAVG_CHECK(scp_.emplace(speaker, std::move(spec)).second, "{}: speaker '{}' appears twice",
               scp_path_, speaker);
  }
  has_utt2spk_ = PathExists(utt2spk_path_);
  if (has_utt2spk_) {
    for (auto& [utt, speaker] : kaldi::ReadKeyValueFile(utt2spk_path_)) {
      MAVG_CHECK(!speaker.empty() && speaker.find_first_of(" \t") == std::string::npos,
                 "{}: utterance '{}': expected one speaker id, found '{}'", utt2spk_path_, utt,
                 speaker);
      MAVG_CHECK(utt2spk_.emplace(utt, speaker).second, "{}: utterance '{}' appears twice",
                 utt2spk_path_, utt);
    }
  }
}

std::string SpeakerCmvn::SpeakerOf(const std::string& utt) const {
  std::string speaker = utt;
  if (has_utt2spk_) {
    auto it = utt2spk_.find(utt);
    if (it == utt2spk_.end()) return "";
    speaker = it->second;
  }
  return scp_.count(speaker) ? speaker : "";
}

const SpeakerCmvn::Norm& SpeakerCmvn::NormOf(const std::string& speaker, const std::string& utt) {
  auto it = norms_.find(speaker);
  if (it != norms_.end()) return it->second;
  // The stats matrix (double, as Kaldi writes it), read once per speaker.
  const kaldi::Rxspec& spec = scp_.at(speaker);
  const std::string rx = spec.path + (spec.has_offset ? fmt::format(":{}", spec.offset) : "");
  int64_t rows = 0, cols = 0;
  const std::vector<double> stats = reader_.ReadDouble(spec, speaker, &rows, &cols);
  // Kaldi accepts means-only statistics (one row) when variances are not normalised.
  MAVG_CHECK((rows == 2 || (rows == 1 && !norm_vars_)) && cols >= 2,
             "{}: speaker '{}' ({}): CMVN statistics must be 2 x (dim + 1){}, found {} x {}",
             scp_path_, speaker, rx, norm_vars_ ? "" : " or 1 x (dim + 1)", rows, cols);
  const int64_t dim = cols - 1;
  for (double v : stats) {
    MAVG_CHECK(std::isfinite(v), "{}: speaker '{}' ({}): non-finite CMVN statistic {}", scp_path_,
               speaker, rx, v);
  }
  const double count = stats[dim];
  MAVG_CHECK(count >= 1.0,
             "{}: speaker '{}' (utterance '{}'): insufficient CMVN statistics (count {})",
             scp_path_, speaker, utt, count);
  Norm n;
  n.offset.resize(dim);
  n.scale.resize(dim);
  for (int64_t d = 0; d < dim; ++d) {
    const double mean = stats[d] / count;
    double scale = 1.0, offset = -mean;
    if (norm_vars_) {
      const double var = std::max(stats[dim + 1 + d] / count - mean * mean, kVarianceFloor);
      scale = 1.0 / std::sqrt(var);
      offset = -mean * scale;
    }
    MAVG_CHECK(std::fabs(offset) <= std::numeric_limits<float>::max() &&
                   std::fabs(scale) <= std::numeric_limits<float>::max(),
               "{}: speaker '{}' ({}): CMVN statistics give a normalisation outside float range "
               "in dimension {} (offset {}, scale {})",
               scp_path_, speaker, rx, d, offset, scale);
    n.offset[d] = static_cast<float>(offset);
    n.scale[d] = static_cast<float>(scale);
  }
  return norms_.emplace(speaker, std::move(n)).first->second;
}

bool SpeakerCmvn::Apply(const std::string& utt, kaldi::HostMatrix& feats) {
  const std::string speaker = SpeakerOf(utt);
  if (speaker.empty()) return false;
  const Norm& n = NormOf(speaker, utt);
  MAVG_CHECK(static_cast<int64_t>(n.offset.size()) == feats.cols,
             "{}: speaker '{}': CMVN statistics of dimension {} for utterance '{}' with "
             "{}-dimensional features",
             scp_path_, speaker, n.offset.size(), utt, feats.cols);
  for (int64_t r = 0; r < feats.rows; ++r) {
    float* x = feats.Row(r);
    for (int64_t d = 0; d < feats.cols; ++d) x[d] = n.offset[d] + x[d] * n.scale[d];
  }
  return true;
}

int WriteSpeakerCmvnStats(const std::string& dir, bool force) {
  const std::string scp = (fs::path(dir) / "cmvn.scp").string();
  MAVG_CHECK(force || !PathExists(scp),
             "{}: exists (Kaldi's statistics?); --force replaces it with mavg's", scp);
  LoadOptions o;
  o.require_labels = false;
  o.ignore_labels = true;
  const DataDirIndex index(dir, o);
  std::unordered_map<std::string, std::string> utt2spk;
  const std::string utt2spk_path = (fs::path(dir) / "utt2spk").string();
  if (PathExists(utt2spk_path)) {
    for (auto& [utt, speaker] : kaldi::ReadKeyValueFile(utt2spk_path)) utt2spk[utt] = speaker;
  }
  // Speakers in sorted order (spk2utt's); each accumulates in its utterances' file order. The
  // features are read a chunk of utterances at a time, never the whole dir at once.
  std::map<std::string, std::vector<double>> stats;
  const int dim = index.Dim();
  constexpr int kChunk = 256;
  for (int begin = 0; begin < index.NumUtts(); begin += kChunk) {
    std::vector<int> chunk;
    for (int u = begin; u < std::min(index.NumUtts(), begin + kChunk); ++u) chunk.push_back(u);
    const Dataset d = index.Load(chunk);
    for (int u = 0; u < d.NumUtts(); ++u) {
      std::string speaker = d.utt_ids[u];
      if (!utt2spk.empty()) {
        auto it = utt2spk.find(d.utt_ids[u]);
        MAVG_CHECK(it != utt2spk.end(), "{}: no speaker for utterance '{}'", utt2spk_path,
                   d.utt_ids[u]);
        speaker = it->second;
      }
      std::vector<double>& s = stats[speaker];
      if (s.empty()) s.assign(2 * (dim + 1), 0.0);
      for (int64_t f = d.offsets[u]; f < d.offsets[u + 1]; ++f) {
        const float* x = d.Frame(f);
        for (int k = 0; k < dim; ++k) {
          s[k] += x[k];
          s[dim + 1 + k] += x[k] * x[k];  // a float square, as Kaldi's AccCmvnStats forms it
        }
        s[dim] += 1.0;
      }
    }
  }
  const std::string ark = fs::absolute(fs::path(dir) / "cmvn.ark").lexically_normal().string();
  kaldi::MatrixArchiveWriter writer(ark, scp, ark);
  for (const auto& [speaker, s] : stats) writer.WriteDouble(speaker, s.data(), 2, dim + 1);
  writer.Close();
  return static_cast<int>(stats.size());
}

kaldi::HostMatrix AddDeltas(const kaldi::HostMatrix& in, int order) {
  MAVG_CHECK(order >= 0 && order <= 10, "delta order {} is outside [0, 10]", order);
  constexpr int kWindow = 2;
  // scales[i]: the filter of the order-i derivative, the order-(i-1) filter convolved with the
  // regression window j / sum(j^2), j = -2..2 (float, as Kaldi builds them).
  std::vector<std::vector<float>> scales(order + 1);
  scales[0] = {1.0f};
  for (int i = 1; i <= order; ++i) {
    const std::vector<float>& prev = scales[i - 1];
    const int prev_offset = static_cast<int>(prev.size() - 1) / 2;
    const int cur_offset = prev_offset + kWindow;
    std::vector<float>& cur = scales[i];
    cur.assign(prev.size() + 2 * kWindow, 0.0f);
    float normalizer = 0.0f;
    for (int j = -kWindow; j <= kWindow; ++j) {
      normalizer += static_cast<float>(j * j);
      for (int k = -prev_offset; k <= prev_offset; ++k) {
        cur[j + k + cur_offset] += static_cast<float>(j) * prev[k + prev_offset];
      }
    }
    for (float& s : cur) s *= 1.0f / normalizer;
  }
  kaldi::HostMatrix out;
  out.rows = in.rows;
  out.cols = in.cols * (order + 1);
  out.data.assign(static_cast<size_t>(out.rows * out.cols), 0.0f);
  for (int64_t t = 0; t < in.rows; ++t) {
    float* dst_row = out.Row(t);
    for (int i = 0; i <= order; ++i) {
      const std::vector<float>& s = scales[i];
      const int max_offset = static_cast<int>(s.size() - 1) / 2;
      float* dst = dst_row + i * in.cols;
      for (int j = -max_offset; j <= max_offset; ++j) {
        const float scale = s[j + max_offset];
        if (scale == 0.0f) continue;
        const int64_t src_t = std::clamp<int64_t>(t + j, 0, in.rows - 1);
        const float* src = in.Row(src_t);
        for (int64_t d = 0; d < in.cols; ++d) dst[d] += scale * src[d];
      }
    }
  }
  return out;
}

DirPipeline::DirPipeline(std::string dir, const FeaturePipeline& pipeline)
    : dir_(std::move(dir)), pipeline_(pipeline) {
  if (pipeline_.speaker_cmvn) cmvn_ = std::make_unique<SpeakerCmvn>(dir_, pipeline_.norm_vars);
}

DirPipeline::~DirPipeline() = default;

bool DirPipeline::Covers(const std::string& utt) {
  return cmvn_ == nullptr || !cmvn_->SpeakerOf(utt).empty();
}

bool DirPipeline::Apply(const std::string& utt, kaldi::HostMatrix& feats) {
  if (cmvn_ != nullptr && !cmvn_->Apply(utt, feats)) return false;
  if (pipeline_.delta_order > 0) feats = AddDeltas(feats, pipeline_.delta_order);
  return true;
}

}  // namespace mavg
