#include "engine/train/decode_eval.h"

#include <filesystem>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/logging.h"
#include "engine/core/timer.h"
#include "engine/decode/decode_dir.h"

namespace mavg {
namespace {

const double kScales[] = {0.04, 0.06, 0.08, 0.1, 0.13, 0.17, 0.22, 0.3, 0.4, 0.55, 0.75};
const double kPenalties[] = {-4.0, -2.0, -1.0, 0.0, 1.0, 2.0, 4.0};

}  // namespace

std::string ResolveLangDir(const RunConfig& config) {
  if (!config.data.lang.empty()) {
    MAVG_CHECK(IsDirectory(config.data.lang), "data.lang: {} is not a directory", config.data.lang);
    return config.data.lang;
  }
  const std::string guess =
      (std::filesystem::path(config.data.train).parent_path() / "lang").string();
  return IsDirectory(guess) && PathExists(guess + "/lexicon.txt") ? guess : "";
}

std::optional<DecodeReport> DecodeTestSet(Network& net, const RunData& data,
                                          const RunConfig& config, int threads) {
  const std::string lang_dir = ResolveLangDir(config);
  if (lang_dir.empty() || data.test.NumUtts() == 0) return std::nullopt;
  const Lang lang = LoadLang(lang_dir);
  MAVG_CHECK(lang.NumPdfs() == net.Spec().output_dim,
             "{}: the lang has {} pdfs but the network {} outputs", lang_dir, lang.NumPdfs(),
             net.Spec().output_dim);
  const Decoder decoder(lang);
  const int context = data.transform.context;
  DecodeSetOptions opts;
  opts.threads = std::max(1, threads);
  opts.decode.beam = config.decode.beam;
  opts.decode.sil_prob = config.decode.sil_prob;
  opts.decode.acoustic_scale = config.decode.acoustic_scale;
  opts.decode.word_penalty = config.decode.word_penalty;
  opts.decode.allow_partial = config.decode.allow_partial;

  RunResult r;
  Timer tune_timer;
  if (config.decode.tune) {
    const auto dev = NetworkLogLikelihoods(net, data.dev, context, data.label_counts);
    double best = 1e300;
    for (double scale : kScales) {
      for (double penalty : kPenalties) {
        DecodeSetOptions o = opts;
        o.decode.acoustic_scale = scale;
        o.decode.word_penalty = penalty;
        const DecodeSetResult d = DecodeDataDir(decoder, config.data.dev, data.dev.utt_ids, dev, o);
        if (d.stats.Wer() < best) {  // ties keep the earlier (smaller) scale and penalty
          best = d.stats.Wer();
          opts.decode.acoustic_scale = scale;
          opts.decode.word_penalty = penalty;
        }
      }
    }
    r.wer_dev = best;
    spdlog::info(
        "[decode] dev: best WER {:.2f}% at acoustic scale {} and word penalty {} "
        "({} settings, {:.1f} s)",
        best, opts.decode.acoustic_scale, opts.decode.word_penalty,
        std::size(kScales) * std::size(kPenalties), tune_timer.Seconds());
  }
  Timer test_timer;
  const auto test = NetworkLogLikelihoods(net, data.test, context, data.label_counts);
  const DecodeSetResult d = DecodeDataDir(decoder, config.data.test, data.test.utt_ids, test, opts);
  const WerStats& s = d.stats;
  r.wer = s.Wer();
  r.ser = s.Ser();
  r.wer_sub = s.sub;
  r.wer_del = s.del;
  r.wer_ins = s.ins;
  r.wer_ref_words = s.ref_words;
  r.decode_acoustic_scale = opts.decode.acoustic_scale;
  r.decode_word_penalty = opts.decode.word_penalty;
  r.decode_no_path = d.no_path;
  r.decode_partial = d.partial;
  if (d.partial > 0) {
    spdlog::info(
        "[decode] test: {} of {} utterances reached no final state; each is scored by its best "
        "partial path, as Kaldi's --allow-partial=true (decode_partial in result.json)",
        d.partial, data.test.NumUtts());
  }
  if (d.no_path > 0) {
    spdlog::warn(
        "[decode] test: {} of {} utterances had no {}path; each is scored as the deletion of all "
        "its words (decode_no_path in result.json; {})",
        d.no_path, data.test.NumUtts(), opts.decode.allow_partial ? "surviving " : "complete ",
        opts.decode.allow_partial ? "a larger decode.beam keeps more paths"
                                  : "decode.allow_partial: true scores their best partial path");
  }
  // Real-time factor of the search alone, per core: decoding CPU time / audio time.
  r.decode_rtf = d.audio_seconds > 0 ? d.decode_cpu_seconds / d.audio_seconds : 0.0;
  spdlog::info(
      "[decode] test: {}, {} (scale {}, penalty {}; search RTF {:.5f} per core; "
      "{:.1f} s with the network)",
      FormatWer(s), FormatSer(s), opts.decode.acoustic_scale, opts.decode.word_penalty,
      *r.decode_rtf, test_timer.Seconds());
  DecodeReport report;
  report.result = std::move(r);
  for (const auto& a : d.alignments) report.alignments += a;
  return report;
}

}  // namespace mavg
