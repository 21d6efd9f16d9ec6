#include "engine/decode/decode_dir.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

#include "engine/backend/device_buffer.h"
#include "engine/core/error.h"
#include "engine/core/timer.h"
#include "engine/data/cmvn.h"
#include "engine/data/minibatch.h"

namespace mavg {
namespace {

constexpr double kFramesPerSecond = 100.0;

// The reference word sequences of `utt_ids`, from a Kaldi text file, checked against the lexicon.
std::vector<std::vector<std::string>> ReadReferences(const std::string& path, const Lang& lang,
                                                     const std::vector<std::string>& utt_ids) {
  std::unordered_map<std::string, std::string> text;
  for (auto& [key, value] : kaldi::ReadKeyValueFile(path)) {
    const std::string k = key;
    MAVG_CHECK(text.emplace(k, std::move(value)).second, "{}: duplicate utterance '{}'", path, k);
  }
  std::vector<std::vector<std::string>> refs;
  refs.reserve(utt_ids.size());
  for (const std::string& utt : utt_ids) {
    auto it = text.find(utt);
    MAVG_CHECK(it != text.end(), "{}: no transcript for utterance '{}'", path, utt);
    refs.push_back(SplitWords(it->second));
    for (const std::string& word : refs.back()) {
      MAVG_CHECK(lang.WordId(word) >= 0, "{}: utterance '{}': word '{}' is not in the lexicon",
                 path, utt, word);
    }
  }
  if (text.size() > utt_ids.size()) {
    spdlog::warn("[decode] {}: {} of its {} utterances are not decoded (no features)", path,
                 text.size() - utt_ids.size(), text.size());
  }
  return refs;
}

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

std::vector<kaldi::HostMatrix> ModelOutputs(Model& model, const Dataset& data, ForwardOutput kind,
                                            int64_t batch) {
  const FeatureTransform& tf = model.transform;
  Network& net = *model.network;
  const int num_pdfs = net.Spec().output_dim;
  MAVG_CHECK(batch > 0, "decode: batch {} must be > 0", batch);
  MAVG_CHECK(data.dim == tf.raw_dim, "{}: features have {} dimensions, the model expects {}",
             data.source, data.dim, tf.raw_dim);
  MAVG_CHECK(net.Spec().input_dim == tf.OutputDim(),
             "model: network input {} != feature transform output {}", net.Spec().input_dim,
             tf.OutputDim());
  MAVG_CHECK(kind != ForwardOutput::kLogLikelihoods ||
                 static_cast<int>(model.label_counts.size()) == num_pdfs,
             "model: {} label counts (priors) for {} outputs; a model without them cannot give "
             "log-likelihoods",
             model.label_counts.size(), num_pdfs);

  // The model's CMVN on a copy of the features, as ApplyCmvn does in training.
  Dataset normalised;
  const Dataset* feats = &data;
  if (tf.HasCmvn() || !tf.scale.empty()) {
    normalised = data;
    CmvnStats cmvn;
    cmvn.shift = tf.shift.empty() ? std::vector<float>(tf.raw_dim, 0.0f) : tf.shift;
    cmvn.scale = tf.scale.empty() ? std::vector<float>(tf.raw_dim, 1.0f) : tf.scale;
    ApplyCmvn(cmvn, normalised);
    feats = &normalised;
  }

  return NetworkOutputs(net, *feats, tf.context, kind, model.label_counts, batch);
}

std::vector<kaldi::HostMatrix> NetworkOutputs(Network& net, const Dataset& normalised, int context,
                                              ForwardOutput kind,
                                              const std::vector<double>& label_counts,
                                              int64_t batch) {
  const Dataset* feats = &normalised;
  const int num_pdfs = net.Spec().output_dim;
  MAVG_CHECK(batch > 0, "decode: batch {} must be > 0", batch);
  MAVG_CHECK(
      kind != ForwardOutput::kLogLikelihoods || static_cast<int>(label_counts.size()) == num_pdfs,
      "{} label counts (priors) for {} outputs", label_counts.size(), num_pdfs);
  Backend& backend = net.GetBackend();
  const int64_t total = feats->NumFrames();
  const int64_t dim = static_cast<int64_t>(feats->dim) * (2 * context + 1);
  batch = std::max<int64_t>(1, std::min(batch, total));
  Matrix x(backend, batch, dim);
  std::vector<float> host_x(static_cast<size_t>(batch * dim));
  std::vector<float> posteriors(static_cast<size_t>(total * num_pdfs));
  int utt = 0;
  int64_t t = 0;  // frame within utt
  for (int64_t begin = 0; begin < total; begin += batch) {
    const int64_t n = std::min(batch, total - begin);
    for (int64_t i = 0; i < n; ++i, ++t) {
      while (t >= feats->UttFrames(utt)) {
        ++utt;
        t = 0;
      }
      SpliceFrame(*feats, utt, t, context, host_x.data() + i * dim);
    }
    MatrixView xv = x.View().RowRange(0, n);
    backend.CopyFromHost(host_x.data(), xv);
    ConstMatrixView y =
        kind == ForwardOutput::kLogits ? net.ForwardLogits(xv) : net.ForwardPosteriors(xv);
    backend.CopyToHost(y, posteriors.data() + begin * num_pdfs);
  }

  std::vector<kaldi::HostMatrix> out(feats->NumUtts());
  for (int u = 0; u < feats->NumUtts(); ++u) {
    kaldi::HostMatrix& m = out[u];
    m.rows = feats->UttFrames(u);
    m.cols = num_pdfs;
    const float* first = posteriors.data() + feats->offsets[u] * num_pdfs;
    if (kind == ForwardOutput::kLogLikelihoods) {
      m.data = LogLikelihoods(first, static_cast<int>(m.rows), num_pdfs, label_counts);
      continue;
    }
    m.data.assign(first, first + m.rows * num_pdfs);
    if (kind == ForwardOutput::kLogPosteriors) {
      for (float& v : m.data)
        v = static_cast<float>(std::log(std::max(double{v}, kPosteriorFloor)));
    }
  }
  return out;
}

DecodeSetResult DecodeDataDir(const Decoder& decoder, const std::string& data_dir,
                              const std::vector<std::string>& utt_ids,
                              const std::vector<kaldi::HostMatrix>& loglikes,
                              const DecodeSetOptions& options) {
  MAVG_CHECK(utt_ids.size() == loglikes.size(), "decode: {} utterance ids but {} matrices",
             utt_ids.size(), loglikes.size());
  MAVG_CHECK(options.threads >= 1, "decode: threads {} must be >= 1", options.threads);
  const std::vector<std::vector<std::string>> refs =
      ReadReferences(data_dir + "/text", decoder.GetLang(), utt_ids);

  Timer wall;
  const int num_utts = static_cast<int>(utt_ids.size());
  std::vector<DecodeResult> results(num_utts);
  std::vector<double> seconds(num_utts, 0.0);
  // Utterances past the lowest failing one are skipped; those before it always run, so the
  // error reported does not depend on thread timing.
  std::atomic<int> next{0};
  std::atomic<int> first_error{num_utts};
  std::mutex error_mutex;
  std::exception_ptr error;
  auto fail = [&](int u, std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (u < first_error) {
      first_error = u;
      error = std::move(e);
    }
  };
  auto work = [&] {
    for (int u = next++; u < num_utts && u < first_error; u = next++) {
      try {
        const kaldi::HostMatrix& m = loglikes[u];
        MAVG_CHECK(m.cols == decoder.GetLang().NumPdfs(),
                   "{} log-likelihood columns, the lang has {} pdfs", m.cols,
                   decoder.GetLang().NumPdfs());
        MAVG_CHECK(static_cast<int64_t>(m.data.size()) == m.rows * m.cols,
                   "log-likelihood matrix {} x {} holds {} values", m.rows, m.cols, m.data.size());
        Timer timer;
        results[u] = decoder.Decode(m.data.data(), static_cast<int>(m.rows),
                                    static_cast<int>(m.cols), options.decode);
        seconds[u] = timer.Seconds();
      } catch (const Error& e) {
        fail(u, std::make_exception_ptr(
                    Error(fmt::format("utterance '{}': {}", utt_ids[u], e.what()), e.Location())));
      } catch (...) {
        fail(u, std::current_exception());
      }
    }
  };
  const int num_threads = std::max(1, std::min(options.threads, num_utts));
  if (num_threads == 1) {
    work();
  } else {
    std::vector<std::thread> threads;
    for (int i = 0; i < num_threads; ++i) threads.emplace_back(work);
    for (std::thread& thread : threads) thread.join();
  }
  if (error) std::rethrow_exception(error);

  DecodeSetResult out;
  out.utt_ids = utt_ids;
  for (int u = 0; u < num_utts; ++u) {
    const WordAlignment alignment = AlignWords(refs[u], results[u].words);
    out.stats.Add(alignment);
    out.hyps.push_back(Join(results[u].words));
    out.alignments.push_back(FormatAlignment(utt_ids[u], alignment));
    if (!results[u].found) ++out.no_path;
    if (results[u].partial) ++out.partial;
    out.frames += loglikes[u].rows;
    out.decode_cpu_seconds += seconds[u];
  }
  out.decode_seconds = wall.Seconds();
  out.audio_seconds = static_cast<double>(out.frames) / kFramesPerSecond;
  return out;
}

}  // namespace mavg
