// mavg decode --model MODEL --data DIR [--lang DIR] [--acoustic-scale 0.1] [--word-penalty 0]
//             [--beam 13] [--sil-prob 0.5] [--allow-partial true] [--threads N] [--out FILE]
#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <iostream>
#include <thread>

#include "engine/backend/backend.h"
#include "engine/cli/commands.h"
#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/timer.h"
#include "engine/data/dataset.h"
#include "engine/decode/decode_dir.h"
#include "engine/decode/lang.h"
#include "engine/nn/model.h"

namespace mavg::cli {

namespace {

std::string RealTimeLine(const char* what, double seconds, double audio_seconds, int threads) {
  const double rtf = audio_seconds > 0.0 ? seconds / audio_seconds : 0.0;
  return fmt::format("RTF {} {:.5f} ({:.0f}x real time; {:.3f}s for {:.1f}s of audio, {} thread{})",
                     what, rtf, rtf > 0.0 ? 1.0 / rtf : 0.0, seconds, audio_seconds, threads,
                     threads == 1 ? "" : "s");
}

}  // namespace

void AddDecodeCommand(CLI::App& app) {
  struct Args {
    std::string model, data, lang, out;
    DecodeOptions decode;
    int threads = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "decode", "Decode a data dir with a hybrid DNN-HMM (word loop) and score it (WER)");
  cmd->add_option("--model", args->model, "Model file (model.bin)")->required();
  cmd->add_option("--data", args->data, "Data dir: feats.scp or feats.ark, and text")->required();
  cmd->add_option("--lang", args->lang, "Lang dir (default: DATA/../lang)");
  cmd->add_option("--acoustic-scale", args->decode.acoustic_scale, "Scale of the log-likelihoods")
      ->capture_default_str();
  cmd->add_option("--word-penalty", args->decode.word_penalty,
                  "Subtracted from the log score at every word")
      ->capture_default_str();
  cmd->add_option("--beam", args->decode.beam, "Pruning beam (log units, as Kaldi's --beam)")
      ->capture_default_str();
  cmd->add_option("--sil-prob", args->decode.sil_prob,
                  "Probability of a silence at each word boundary")
      ->capture_default_str();
  cmd->add_option("--allow-partial", args->decode.allow_partial,
                  "An utterance with no path to a final state: its best partial path (as Kaldi's "
                  "recipes); false: no words")
      ->capture_default_str();
  cmd->add_option("--threads", args->threads,
                  "Threads for the network and the decoding (0: all cores)")
      ->capture_default_str();
  cmd->add_option("--out", args->out, "Write per-utterance alignments (sclite style) here");
  cmd->callback([args] {
    Timer total;
    const int threads = args->threads > 0
                            ? args->threads
                            : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    const std::string lang_dir =
        args->lang.empty()
            ? (std::filesystem::path(args->data) / ".." / "lang").lexically_normal().string()
            : args->lang;
    BackendOptions backend_options;
    backend_options.threads = threads;
    auto backend = CreateBackend(backend_options);
    Model model = LoadModel(args->model, *backend);
    const Lang lang = LoadLang(lang_dir);
    MAVG_CHECK(model.network->Spec().output_dim == lang.NumPdfs(),
               "{} has {} outputs, but {} has {} pdfs", args->model,
               model.network->Spec().output_dim, lang_dir, lang.NumPdfs());
    LoadOptions load;
    load.require_labels = false;
    load.pipeline = model.transform.pipeline;  // speaker CMVN and deltas as in training
    Dataset data = LoadDataDir(args->data, load);
    MAVG_CHECK(data.NumUtts() > 0, "{}: no utterances", args->data);

    Timer nnet_timer;
    const std::vector<kaldi::HostMatrix> loglikes = ModelLogLikelihoods(model, data);
    const double nnet_seconds = nnet_timer.Seconds();

    const Decoder decoder(lang);
    DecodeSetOptions options;
    options.decode = args->decode;
    options.threads = threads;
    const DecodeSetResult r = DecodeDataDir(decoder, args->data, data.utt_ids, loglikes, options);
    if (r.partial > 0) {
      spdlog::info(
          "[decode] {} of {} utterances reached no final state: scored by their best partial "
          "path (--allow-partial)",
          r.partial, r.utt_ids.size());
    }
    if (r.no_path > 0) {
      spdlog::warn("[decode] {} of {} utterances had no {} (empty hypothesis); {}", r.no_path,
                   r.utt_ids.size(),
                   args->decode.allow_partial ? "surviving path" : "path to a final state",
                   args->decode.allow_partial ? "try a larger --beam"
                                              : "--allow-partial true scores their best partial "
                                                "path");
    }
    if (!args->out.empty()) {
      std::string text;
      for (const std::string& a : r.alignments) text += a + "\n";
      WriteFileAtomic(args->out, text);
    }
    spdlog::info("[decode] {}: {} utterances, {} frames; network {:.2f}s, decoding {:.2f}s",
                 args->data, r.utt_ids.size(), r.frames, nnet_seconds, r.decode_seconds);
    std::cout << FormatWer(r.stats) << "\n"
              << FormatSer(r.stats) << "\n"
              << RealTimeLine("decode", r.decode_seconds, r.audio_seconds, threads) << "\n"
              << RealTimeLine("total", total.Seconds(), r.audio_seconds, threads) << std::endl;
  });
}

}  // namespace mavg::cli
