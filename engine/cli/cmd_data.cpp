// mavg data fmnist --out DIR [--src DIR] [--train-limit N] [--seed S] [--force]
#include <fmt/core.h>

#include <iostream>
#include <thread>

#include "engine/cli/commands.h"
#include "engine/core/error.h"
#include "engine/data/fmnist.h"
#include "engine/speech/digits.h"
#include "engine/speech/fbank_dir.h"

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
  digits->add_option("--train-utts", d->train_utts, "Training utterances")->capture_default_str();
  digits->add_option("--dev-utts", d->dev_utts, "Dev utterances (unseen speakers)")
      ->capture_default_str();
  digits->add_option("--test-utts", d->test_utts, "Test utterances (unseen speakers)")
      ->capture_default_str();
  digits->add_option("--test-seen-utts", d->test_seen_utts, "Clean utterances of training speakers")
      ->capture_default_str();
  digits
      ->add_option("--speakers-per-voice", d->speakers_per_voice,
                   "Pseudo-speakers per voice (1 dev, 1 test, the rest train)")
      ->capture_default_str();
  digits->add_option("--voices", d->voices, "Voices (default: all; see --list-voices)");
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
  digits->callback([dout, d] {
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
  fbank->callback([fdir, fthreads] {
    const int t = *fthreads > 0 ? *fthreads : static_cast<int>(std::thread::hardware_concurrency());
    const FbankDirStats st = ComputeFbankForDataDir(*fdir, FbankOptions{}, t);
    std::cout << fmt::format("{}: {} utterances, {} frames, {:.1f} s of audio in {:.2f} s\n", *fdir,
                             st.utterances, st.frames, st.audio_seconds, st.compute_seconds);
  });
}

}  // namespace mavg::cli
