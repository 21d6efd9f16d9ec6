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

// The corpus presets by name (`mavg data digits --size`): full is the README's calibration
// corpus, small the quickstart's (sweeps/quickstart.yaml reads data/digits-small). x1, x2, x4
// and x8 are the scaled family for the reproduction's scale study: more voices (the extra
// eSpeak variants), more pseudo-speakers per voice and two more noise conditions than full,
// the same dev and test sets in every member (same speakers, utterances, audio and noise), and k x
// 3000 training utterances, each member's training set holding the smaller ones' (utterance i
// is drawn from the same seed in each).
enum class DigitsSize { kFull, kSmall, kX1, kX2, kX4, kX8 };
inline constexpr EnumText<DigitsSize> kDigitsSizeTexts[] = {
    {DigitsSize::kFull, "full"}, {DigitsSize::kSmall, "small"}, {DigitsSize::kX1, "x1"},
    {DigitsSize::kX2, "x2"},     {DigitsSize::kX4, "x4"},       {DigitsSize::kX8, "x8"}};
MAVG_ENUM_TEXTS(DigitsSize, kDigitsSizeTexts)

// Additive noise conditions: white, pink (1/f), babble (4 talkers of the same set), brown
// (1/f^2, rumble) and crowd (babble of 12 talkers).
enum class NoiseKind { kWhite, kPink, kBabble, kBrown, kCrowd };
inline constexpr EnumText<NoiseKind> kNoiseKindTexts[] = {{NoiseKind::kWhite, "white"},
                                                          {NoiseKind::kPink, "pink"},
                                                          {NoiseKind::kBabble, "babble"},
                                                          {NoiseKind::kBrown, "brown"},
                                                          {NoiseKind::kCrowd, "crowd"}};
MAVG_ENUM_TEXTS(NoiseKind, kNoiseKindTexts)

// Utterances per set.
struct DigitsSetSizes {
  int train = 0, dev = 0, test = 0, test_seen = 0;
};
struct DigitsPreset {
  DigitsSetSizes sets;
  int speakers_per_voice = 0;  // 1 dev, 1 test, the rest train
  bool extra_voices = false;   // Synthesizer::Voices() and Synthesizer::ExtraVoices()
  int noise_kinds = 0;         // the first noise_kinds of NoiseKind, in its order
};
inline constexpr DigitsPreset kDigitsPresets[] = {{{3000, 400, 1000, 400}, 6, false, 3},   // full
                                                  {{1200, 200, 400, 100}, 6, false, 3},    // small
                                                  {{3000, 400, 1000, 400}, 8, true, 5},    // x1
                                                  {{6000, 400, 1000, 400}, 8, true, 5},    // x2
                                                  {{12000, 400, 1000, 400}, 8, true, 5},   // x4
                                                  {{24000, 400, 1000, 400}, 8, true, 5}};  // x8
static_assert(std::size(kDigitsPresets) == std::size(kDigitsSizeTexts),
              "kDigitsPresets: one row per DigitsSize, in enum order");
constexpr const DigitsPreset& PresetOf(DigitsSize size) {
  return kDigitsPresets[static_cast<size_t>(size)];
}
constexpr DigitsSetSizes SizesOf(DigitsSize size) { return PresetOf(size).sets; }

struct DigitsOptions {
  int train_utts = SizesOf(DigitsSize::kFull).train;
  int dev_utts = SizesOf(DigitsSize::kFull).dev;
  int test_utts = SizesOf(DigitsSize::kFull).test;
  int test_seen_utts = SizesOf(DigitsSize::kFull).test_seen;
  int speakers_per_voice = 6;       // per voice: 1 dev, 1 test, the rest train
  std::vector<std::string> voices;  // empty: Synthesizer::Voices()
  std::string held_out_voice;       // this voice's speakers never train (they go to dev/test)
  std::vector<NoiseKind> noises = {NoiseKind::kWhite, NoiseKind::kPink, NoiseKind::kBabble};
  double snr_min = -3.0, snr_max = 10.0;  // dB, uniform per utterance (train, dev, test)
  double clean_fraction = 0.15;           // of train/dev/test utterances left without noise
  int min_words = 1, max_words = 7;
  uint64_t seed = 777;
  int threads = 0;          // synthesis processes and feature threads (0: all cores)
  bool force = false;       // replace an existing output directory
  bool progress = false;    // a progress line per step (synthesis; noise and alignments; features)
  std::string preset;       // the --size it came from, for corpus.json ("" when built by hand)
  bool train_last = false;  // synthesise train after the other sets (the scaled family: see .cpp)
};

// The options of a preset (the defaults of the rest).
DigitsOptions PresetOptions(DigitsSize size);

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
