#pragma once
// The digits corpus: connected digit strings (1-7 words of oh, zero, one, ..., nine) spoken by
// TTS pseudo-speakers (a voice of flite or espeak-ng with its own speaking rate and pitch), with
// additive noise, as Kaldi data dirs with features and frame alignments from the synthesisers'
// own phone timings. Sets:
//   train      seen speakers, noisy
//   dev, test  speakers (voice + prosody) never in train, noisy; dev tunes decoding
//   test_seen  train speakers, clean, other utterances: the easy reference
//   lang/      phones, lexicon, pdfs (3 states per phone), transition probabilities
// Deterministic for a given seed (and independent of the number of threads).

#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "engine/core/enum_text.h"

namespace mavg {

// The corpus sizes by name (`mavg data digits --size`): full is the README's calibration corpus,
// small the quickstart's (sweeps/quickstart.yaml reads data/digits-small).
enum class DigitsSize { kFull, kSmall };
inline constexpr EnumText<DigitsSize> kDigitsSizeTexts[] = {{DigitsSize::kFull, "full"},
                                                            {DigitsSize::kSmall, "small"}};
MAVG_ENUM_TEXTS(DigitsSize, kDigitsSizeTexts)

// Utterances per set.
struct DigitsSetSizes {
  int train = 0, dev = 0, test = 0, test_seen = 0;
};
inline constexpr DigitsSetSizes kDigitsSetSizes[] = {
    {3000, 400, 1000, 400},  // full
    {1200, 200, 400, 100},   // small
};
static_assert(std::size(kDigitsSetSizes) == std::size(kDigitsSizeTexts),
              "kDigitsSetSizes: one row per DigitsSize, in enum order");
constexpr DigitsSetSizes SizesOf(DigitsSize size) {
  return kDigitsSetSizes[static_cast<size_t>(size)];
}

struct DigitsOptions {
  int train_utts = SizesOf(DigitsSize::kFull).train;
  int dev_utts = SizesOf(DigitsSize::kFull).dev;
  int test_utts = SizesOf(DigitsSize::kFull).test;
  int test_seen_utts = SizesOf(DigitsSize::kFull).test_seen;
  int speakers_per_voice = 6;             // per voice: 1 dev, 1 test, the rest train
  std::vector<std::string> voices;        // empty: Synthesizer::Voices()
  std::string held_out_voice;             // this voice's speakers never train (they go to dev/test)
  double snr_min = -3.0, snr_max = 10.0;  // dB, uniform per utterance (train, dev, test)
  double clean_fraction = 0.15;           // of train/dev/test utterances left without noise
  int min_words = 1, max_words = 7;
  uint64_t seed = 777;
  int threads = 0;        // synthesis processes and feature threads (0: all cores)
  bool force = false;     // replace an existing output directory
  bool progress = false;  // a progress line per step (synthesis; noise and alignments; features)
};

struct DigitsSetStats {
  int utterances = 0, speakers = 0, words = 0;
  double hours = 0.0;
  int64_t frames = 0;
};

struct DigitsStats {
  std::map<std::string, DigitsSetStats> sets;
  int uniform_alignments = 0;  // utterances where a word fell back to a uniform phone split
  double build_seconds = 0.0, synth_seconds = 0.0, feature_seconds = 0.0;
};

// Builds the corpus into `out_dir` (via out_dir.tmp-<pid>, renamed at the end).
DigitsStats BuildDigitsCorpus(const std::string& out_dir, const DigitsOptions& options);

}  // namespace mavg
