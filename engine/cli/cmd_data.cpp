// mavg data fmnist|digits|fbank|features: build or import Kaldi data dirs, or read one's features
// through the per-dir pipeline.
#include <fmt/core.h>

#include <iostream>
#include <thread>

#include "engine/cli/commands.h"
#include "engine/cli/wspecifier.h"
#include "engine/config/choices.h"
#include "engine/core/error.h"
#include "engine/core/progress.h"
#include "engine/data/dataset.h"
#include "engine/data/feature_pipeline.h"
#include "engine/data/fmnist.h"
#include "engine/speech/digits.h"
#include "engine/speech/fbank_dir.h"
#include "engine/speech/tts.h"

namespace mavg::cli {

void AddDataCommand(CLI::App& app) {
  auto out = std::make_shared<std::string>();
  auto src = std::make_shared<std::string>("/usr/share/datasets/fashion-mnist");
  auto opts = std::make_shared<FmnistImportOptions>();
  CLI::App* cmd = app.add_subcommand("data", "Build or import datasets as Kaldi data dirs");
  cmd->require_subcommand(1);
  CLI::App* fm = cmd->add_subcommand(
      "fmnist", "Import Fashion-MNIST (Debian's dataset-fashion-mnist) into train/dev/test");
  fm->add_option("--out", *out, "Output directory (gets train/, dev/, test/)")->required();
  fm->add_option("--src", *src, "Directory with the idx(.gz) files")->capture_default_str();
  fm->add_option("--seed", opts->seed, "Seed of the dev hold-out")->capture_default_str();
  fm->add_option("--dev-fraction", opts->dev_fraction, "Fraction of train held out as dev")
      ->capture_default_str();
  fm->add_option("--train-limit", opts->train_limit, "Keep only N training images (0: all)");
  fm->add_option("--test-limit", opts->test_limit, "Keep only N test images (0: all)");
  fm->add_flag("--force", opts->force, "Replace an existing output directory");
  fm->callback([out, src, opts] {
    ImportFashionMnist(*src, *out, *opts);
    std::cout << "wrote " << *out << "/{train,dev,test}" << std::endl;
  });

  auto dout = std::make_shared<std::string>();
  auto d = std::make_shared<DigitsOptions>();
  CLI::App* digits = cmd->add_subcommand(
      "digits", "Synthesise the connected-digits speech corpus (flite + espeak-ng TTS, noise)");
  digits
      ->add_option("--out", *dout, "Output directory (gets train/, dev/, test/, test_seen/, lang/)")
      ->required();
  auto size = std::make_shared<std::string>(std::string(ToString(DigitsSize::kFull)));
  auto no_progress = std::make_shared<bool>(false);
  std::string sizes;
  for (const EnumText<DigitsSize>& row : kDigitsSizeTexts) {
    const DigitsPreset& p = PresetOf(row.value);
    sizes += fmt::format(
        "{}{} ({}/{}/{}/{}, {} speakers a voice, {} voices, {} noises)", sizes.empty() ? "" : "; ",
        row.text, p.sets.train, p.sets.dev, p.sets.test, p.sets.test_seen, p.speakers_per_voice,
        Synthesizer::Voices().size() + (p.extra_voices ? Synthesizer::ExtraVoices().size() : 0),
        p.noise_kinds);
  }
  digits
      ->add_option("--size", *size,
                   fmt::format("Preset, utterances of train/dev/test/test_seen: {}; the options "
                               "below change one thing",
                               sizes))
      ->capture_default_str();
  CLI::Option* train_utts =
      digits->add_option("--train-utts", d->train_utts, "Training utterances (default: --size's)");
  CLI::Option* dev_utts = digits->add_option("--dev-utts", d->dev_utts,
                                             "Dev utterances, unseen speakers (default: --size's)");
  CLI::Option* test_utts = digits->add_option(
      "--test-utts", d->test_utts, "Test utterances, unseen speakers (default: --size's)");
  CLI::Option* test_seen_utts =
      digits->add_option("--test-seen-utts", d->test_seen_utts,
                         "Clean utterances of training speakers (default: --size's)");
  CLI::Option* speakers_per_voice =
      digits->add_option("--speakers-per-voice", d->speakers_per_voice,
                         "Pseudo-speakers per voice (1 dev, 1 test, the rest train; default: "
                         "--size's)");
  CLI::Option* voices = digits->add_option("--voices", d->voices,
                                           "Voices, flite:NAME or espeak:NAME (default: --size's)");
  auto noises = std::make_shared<std::vector<std::string>>();
  CLI::Option* noises_option =
      digits
          ->add_option("--noises", *noises,
                       fmt::format("Noise conditions, comma-separated, of {} (default: --size's)",
                                   EnumNames<NoiseKind>()))
          ->delimiter(',');
  digits->add_option("--held-out-voice", d->held_out_voice,
                     "Keep this voice out of training entirely");
  digits->add_option("--snr-min", d->snr_min, "Lowest SNR in dB")->capture_default_str();
  digits->add_option("--snr-max", d->snr_max, "Highest SNR in dB")->capture_default_str();
  digits
      ->add_option("--clean-fraction", d->clean_fraction,
                   "Fraction of train/dev/test utterances without noise")
      ->capture_default_str();
  digits->add_option("--min-words", d->min_words, "Shortest digit string")->capture_default_str();
  digits->add_option("--max-words", d->max_words, "Longest digit string")->capture_default_str();
  digits->add_option("--seed", d->seed, "Seed")->capture_default_str();
  digits->add_option("--threads", d->threads, "Processes/threads (0: all cores)");
  digits->add_flag("--force", d->force, "Replace an existing output directory");
  digits->add_flag("--no-progress", *no_progress, "Never draw the progress lines");
  digits->callback([=] {
    // The preset gives every option it names; an option on the command line changes one.
    const DigitsOptions p = PresetOptions(ParseAnyOf<DigitsSize>(*size, "--size"));
    if (train_utts->count() == 0) d->train_utts = p.train_utts;
    if (dev_utts->count() == 0) d->dev_utts = p.dev_utts;
    if (test_utts->count() == 0) d->test_utts = p.test_utts;
    if (test_seen_utts->count() == 0) d->test_seen_utts = p.test_seen_utts;
    if (speakers_per_voice->count() == 0) d->speakers_per_voice = p.speakers_per_voice;
    if (voices->count() == 0) d->voices = p.voices;
    d->noises = p.noises;
    if (noises_option->count() > 0) {
      d->noises.clear();
      for (const std::string& n : *noises)
        d->noises.push_back(ParseAnyOf<NoiseKind>(n, "--noises"));
    }
    d->preset = p.preset;
    d->train_last = p.train_last;
    d->progress = !*no_progress && Progress::StderrIsTerminal();
    const DigitsStats st = BuildDigitsCorpus(*dout, *d);
    for (const auto& [set, s] : st.sets) {
      std::cout << fmt::format("{:<10} {:>6} utterances {:>4} speakers {:>7.2f} h {:>9} frames\n",
                               set, s.utterances, s.speakers, s.hours, s.frames);
    }
    std::cout << fmt::format(
        "built {} in {:.1f} s (synthesis {:.1f} s, features {:.1f} s); {} utterances with a "
        "uniform phone split\n",
        *dout, st.build_seconds, st.synth_seconds, st.feature_seconds, st.uniform_alignments);
  });

  auto fdir = std::make_shared<std::string>();
  auto fthreads = std::make_shared<int>(0);
  CLI::App* fbank = cmd->add_subcommand(
      "fbank", "40-dim log mel filterbanks of a data dir's wav.scp into feats.ark/feats.scp");
  fbank->add_option("dir", *fdir, "Kaldi data dir with wav.scp (16 kHz, 16-bit PCM, mono)")
      ->required();
  fbank->add_option("--threads", *fthreads, "Threads (0: all cores)");
  auto fno_progress = std::make_shared<bool>(false);
  fbank->add_flag("--no-progress", *fno_progress, "Never draw the progress line");
  fbank->callback([fdir, fthreads, fno_progress] {
    const int t = *fthreads > 0 ? *fthreads : static_cast<int>(std::thread::hardware_concurrency());
    const bool progress = !*fno_progress && Progress::StderrIsTerminal();
    const FbankDirStats st =
        ComputeFbankForDataDir(*fdir, FbankOptions{}, t, progress ? "[fbank] " + *fdir : "");
    std::cout << fmt::format("{}: {} utterances, {} frames, {:.1f} s of audio in {:.2f} s\n", *fdir,
                             st.utterances, st.frames, st.audio_seconds, st.compute_seconds);
  });

  auto cdir = std::make_shared<std::string>();
  auto cforce = std::make_shared<bool>(false);
  CLI::App* cmvn = cmd->add_subcommand(
      "cmvn",
      "Per-speaker CMVN statistics of a data dir into its cmvn.ark/cmvn.scp (as Kaldi's "
      "steps/compute_cmvn_stats.sh; for data.cmvn speaker)");
  cmvn->add_option("dir", *cdir, "Kaldi data dir (feats.scp or feats.ark; utt2spk)")->required();
  cmvn->add_flag("--force", *cforce, "Replace an existing cmvn.scp");
  cmvn->callback([cdir, cforce] {
    const int speakers = WriteSpeakerCmvnStats(*cdir, *cforce);
    std::cout << fmt::format("{}/cmvn.scp: statistics of {} speakers\n", *cdir, speakers);
  });

  struct FeaturesArgs {
    std::string dir, out, cmvn = "none", ali;
    bool norm_vars = false;
    int deltas = 0;
  };
  auto fa = std::make_shared<FeaturesArgs>();
  CLI::App* feats = cmd->add_subcommand(
      "features",
      "A data dir's features after the per-dir pipeline (speaker CMVN, deltas) as a Kaldi "
      "archive: what training reads before the global normalisation (as copy-feats | apply-cmvn "
      "| add-deltas)");
  feats->add_option("dir", fa->dir, "Kaldi data dir (feats.scp or feats.ark)")->required();
  feats->add_option("--out", fa->out, "Archive: PATH, ark:PATH, ark,t:PATH or ark,scp:ARK,SCP")
      ->required();
  feats->add_option("--cmvn", fa->cmvn, "speaker: apply-cmvn with the dir's cmvn.scp and utt2spk")
      ->check(CLI::IsMember({"none", "speaker"}))
      ->capture_default_str();
  feats->add_flag("--norm-vars", fa->norm_vars, "Speaker CMVN normalises variances too");
  feats->add_option("--deltas", fa->deltas, "add-deltas order (0: none)")
      ->check(CLI::Range(0, 4))
      ->capture_default_str();
  feats->add_option("--ali", fa->ali,
                    "Alignments rspecifier (as data.ali): only aligned utterances are written");
  feats->callback([fa] {
    const Wspecifier w = ParseWspecifier(fa->out);
    LoadOptions o;
    o.require_labels = false;
    o.ignore_labels = fa->ali.empty();
    o.alignments = fa->ali;
    o.alignments_setting = "--ali";
    o.pipeline.speaker_cmvn =
        ParseOneOf(fa->cmvn, {Cmvn::kNone, Cmvn::kSpeaker}, "--cmvn") == Cmvn::kSpeaker;
    MAVG_CHECK(!fa->norm_vars || o.pipeline.speaker_cmvn, "--norm-vars needs --cmvn speaker");
    o.pipeline.norm_vars = fa->norm_vars;
    o.pipeline.delta_order = fa->deltas;
    const Dataset data = LoadDataDir(fa->dir, o);
    std::vector<kaldi::HostMatrix> mats(data.NumUtts());
    for (int u = 0; u < data.NumUtts(); ++u) {
      mats[u].rows = data.UttFrames(u);
      mats[u].cols = data.dim;
      mats[u].data.assign(data.Frame(data.offsets[u]), data.Frame(data.offsets[u + 1]));
    }
    WriteMatrices(w, data.utt_ids, mats);
    std::cout << fmt::format("{}: {} utterances, {} frames x {} dims\n", w.ark, data.NumUtts(),
                             data.NumFrames(), data.dim);
  });
}

}  // namespace mavg::cli
